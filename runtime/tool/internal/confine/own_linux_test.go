package confine

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOwnPathNotFollowed: a path agentc gives a program for one call (a
// file of the run, in its store) is held as what is at its name, never
// where a link put there leads: a link swapped in for a blob, between
// the store's check and the hold, is refused rather than let the program
// read /etc/shadow.
func TestOwnPathNotFollowed(t *testing.T) {
	if abi, _ := Support(); abi < 1 {
		t.Skip("this kernel has no Landlock")
	}
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("private"), 0o600); err != nil {
		t.Fatal(err)
	}
	blob := filepath.Join(dir, "store", "0123")
	if err := os.MkdirAll(filepath.Dir(blob), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, blob); err != nil {
		t.Fatal(err)
	}
	p, err := Declared(nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.Read = append(p.Read, blob)
	_, err = p.Wrap(exec.Command("cat", blob))
	if !errors.Is(err, ErrStart) || !strings.Contains(err.Error(), errOwnLinked.Error()) {
		t.Fatalf("Wrap with a file of the run that is a link: %v; want it refused", err)
	}

	// The blob itself is held.
	if err := os.Remove(blob); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(blob, []byte("the file"), 0o400); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("cat", blob)
	r, err := p.Wrap(cmd)
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.Output()
	r.Started()
	r.Close()
	if err != nil || string(out) != "the file" {
		t.Errorf("reading the blob: %q, %v", out, err)
	}
}
