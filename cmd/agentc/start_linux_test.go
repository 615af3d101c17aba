package main

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestConfinedStartsEarly: the trampoline and the stage, agentc started
// again for every confined call, become what they are before agentc's
// libraries initialise: the packages Go initialises first allocate less
// than maxAllocs in all (GODEBUG=inittrace=1 counts them, where a time
// would vary), where agentc's whole start allocates about 35,000 (the JSON
// Schema validator's meta-schemas alone 21,000). Package tramp taking on an
// import that Go initialises late (path/filepath did) would let them run
// first, and cost each call their start.
func TestConfinedStartsEarly(t *testing.T) {
	const maxAllocs = 5000
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	for _, c := range []struct{ argv0, marker, spec string }{
		{"agentc-confine", "--agentc-confine-v1", `{"path":"/bin/true","program":"/bin/true","status":3}`},
		{"agentc-limits", "--agentc-limits-v1", `{"path":"/bin/true","limits":{"cpu":10},"err":3}`},
	} {
		cmd := exec.Command(self, c.marker, c.spec, "true")
		cmd.Args[0] = c.argv0
		cmd.ExtraFiles = []*os.File{devnull}
		cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", c.argv0, err, stderr.String())
		}
		// init PKG @T ms, T ms clock, N bytes, N allocs
		pkgs, allocs, heaviest, most := 0, 0, "", 0
		for _, line := range strings.Split(stderr.String(), "\n") {
			f := strings.Fields(line)
			if len(f) != 11 || f[0] != "init" || f[10] != "allocs" {
				continue
			}
			n, err := strconv.Atoi(f[9])
			if err != nil {
				t.Fatalf("%s: %q: %v", c.argv0, line, err)
			}
			pkgs++
			allocs += n
			if n > most {
				heaviest, most = f[1], n
			}
		}
		if pkgs == 0 {
			t.Fatalf("%s: no package initialisation traced:\n%s", c.argv0, stderr.String())
		}
		if allocs >= maxAllocs {
			t.Errorf("%s: the %d packages initialised before it took over allocated %d times, %s %d of them; want fewer than %d", c.argv0, pkgs, allocs, heaviest, most, maxAllocs)
		}
	}
}
