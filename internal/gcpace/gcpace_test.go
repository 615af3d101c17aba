package gcpace

import (
	"os"
	"runtime/debug"
	"testing"
)

func TestPercent(t *testing.T) {
	if _, set := os.LookupEnv("GOGC"); set {
		t.Skip("GOGC is set in the environment, which rules")
	}
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	if old != Percent {
		t.Errorf("the collector's percent is %d, want %d", old, Percent)
	}
}
