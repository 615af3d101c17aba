package plan

import (
	"strings"
	"testing"
	"time"
)

// FuzzCPUSeconds: a CPU time limit is a positive duration rounded up to
// whole seconds, never less than it nor a second more, or it is refused
// naming the field; Check takes what CPUSeconds takes.
func FuzzCPUSeconds(f *testing.F) {
	for _, s := range []string{"1s", "1500ms", "1ns", "2562047h47m16.854775807s", "0s", "-1s", "soon", "", "1e3s", "90m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := Limits{CPU: s}.CPUSeconds()
		if cerr := (Limits{CPU: s}).Check(); (cerr == nil) != (err == nil) {
			t.Fatalf("%q: CPUSeconds says %v, Check %v", s, err, cerr)
		}
		d, perr := time.ParseDuration(s)
		switch {
		case s == "":
			if n != 0 || err != nil {
				t.Fatalf("empty: %d, %v", n, err)
			}
		case perr != nil || d <= 0:
			if err == nil || !strings.HasPrefix(err.Error(), "confine.limits.cpu: ") {
				t.Fatalf("%q taken as %d s (%v)", s, n, err)
			}
		case err != nil:
			t.Fatalf("%q: %v", s, err)
		case n < 1 || time.Duration(n-1)*time.Second >= d || n < int64(d/time.Second):
			t.Fatalf("%q (%v) rounded to %d s", s, d, n)
		}
	})
}
