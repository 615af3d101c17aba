package compile_test

import (
	"slices"
	"testing"

	"cuelang.org/go/cue/token"

	"agentc.dev/agentc/compile"
)

// TestSeverityString names each severity, and a value past the last by
// its number.
func TestSeverityString(t *testing.T) {
	for s, want := range map[compile.Severity]string{
		compile.Error:    "error",
		compile.Warning:  "warning",
		compile.Note:     "note",
		compile.Note + 1: "severity(3)",
		-1:               "severity(-1)",
	} {
		if got := s.String(); got != want {
			t.Errorf("Severity(%d).String() = %q, want %q", int(s), got, want)
		}
	}
}

// TestSortDiagnostics orders findings by file, line and column, and keeps
// the order of findings at one position.
func TestSortDiagnostics(t *testing.T) {
	content := []byte("ab\ncd\n")
	file := func(name string) *token.File {
		f := token.NewFile(name, -1, len(content))
		f.SetLinesForContent(content)
		return f
	}
	a, b := file("a.cue"), file("b.cue")
	d := func(f *token.File, offset int, code string) compile.Diagnostic {
		return compile.Diagnostic{Pos: f.Pos(offset, token.NoRelPos), Code: code}
	}
	ds := []compile.Diagnostic{
		d(b, 0, "B1"), d(a, 4, "A2-2-first"), d(a, 1, "A1-2"), d(a, 4, "A2-2-second"),
		d(a, 3, "A2-1"), d(a, 0, "A1-1"), d(a, 4, "A2-2-third"),
	}
	compile.SortDiagnostics(ds)
	var got []string
	for _, x := range ds {
		got = append(got, x.Code)
	}
	want := []string{"A1-1", "A1-2", "A2-1", "A2-2-first", "A2-2-second", "A2-2-third", "B1"}
	if !slices.Equal(got, want) {
		t.Errorf("sorted: %v, want %v", got, want)
	}
}
