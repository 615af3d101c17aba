package diskfree

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestFreeAsDf holds Free to what df says is available, where df is the
// GNU one: the two read the same count, which other writers on the
// machine move a little between the two readings.
func TestFreeAsDf(t *testing.T) {
	dir := t.TempDir()
	free, ok, err := Free(dir)
	if err != nil || !ok {
		t.Fatalf("Free(%s) = %d, %v, %v", dir, free, ok, err)
	}
	if runtime.GOOS != "linux" {
		return
	}
	out, err := exec.Command("df", "--output=avail", "-B1", dir).Output()
	if err != nil {
		t.Fatalf("df: %v", err)
	}
	fields := strings.Fields(string(out))
	df, err := strconv.ParseUint(fields[len(fields)-1], 10, 64)
	if err != nil {
		t.Fatalf("df said %q: %v", out, err)
	}
	diff := int64(free) - int64(df)
	if diff < -64<<20 || diff > 64<<20 {
		t.Errorf("Free = %d, df says %d available", free, df)
	}
}

func TestFreeMissing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gone")
	if _, ok, err := Free(dir); ok && err == nil {
		t.Errorf("Free of a missing directory gave no error")
	}
}
