package confine

import (
	"path/filepath"
	"strings"
	"testing"
)

// FuzzResolve: any declared path resolves to a clean absolute path, shown
// as written, or is refused; any enforce level is one of the four or
// refused. Nothing panics.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{".", "..", "data", "/etc", "a/../../b", "", "a\x00b", "./x/", "//x"} {
		f.Add(s, "best")
	}
	f.Add("data", "strict")
	f.Fuzz(func(t *testing.T, path, enforce string) {
		base := "/base/dir"
		p, err := Resolve([]string{path}, []string{path}, false, enforce, base)
		switch {
		case path == "" || strings.IndexByte(path, 0) >= 0:
			if err == nil {
				t.Fatalf("%q was taken", path)
			}
			return
		case enforce != "" && enforce != Best && enforce != Require && enforce != Off:
			if err == nil {
				t.Fatalf("enforce %q was taken", enforce)
			}
			return
		case err != nil:
			t.Fatalf("%q, %q: %v", path, enforce, err)
		}
		for _, l := range [][]string{p.Read, p.Write} {
			if len(l) != 1 || !filepath.IsAbs(l[0]) || filepath.Clean(l[0]) != l[0] {
				t.Fatalf("%q resolved to %q", path, l)
			}
			if p.Shown[l[0]] != path {
				t.Fatalf("%q is shown as %q", path, p.Shown[l[0]])
			}
		}
	})
}

// TestStatus: the trampoline's report reads back as the program's status,
// or as why it did not start; a report cut short is no status.
func TestStatus(t *testing.T) {
	for _, tt := range []struct {
		msg, text string
		known     bool
		err       string
	}{
		{"status 0", "exit status 0", true, ""},
		{"status 768", "exit status 3", true, ""},
		{"status 9", "signal: killed", true, ""},
		{"status 9 cpu 2010", "signal: killed", true, ""},
		{"status 9 cpu", "", false, ""},
		{"status 9 cpu 0", "", false, ""},
		{"status 9 gpu 5", "", false, ""},
		{"status ", "", false, ""},
		{"status 9 cpu 5 6", "", false, ""},
		{"error confine.read path \"x\": no such file or directory", "", false, `confine.read path "x"`},
		{"", "", false, ""},
		{"status x", "", false, ""},
	} {
		st, err := parseStatus(tt.msg)
		if st.Known != tt.known || st.Text != tt.text || (tt.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%q: got %+v, %v", tt.msg, st, err)
		}
	}
}
