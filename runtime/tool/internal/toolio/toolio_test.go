package toolio

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestArguments(t *testing.T) {
	m, err := Arguments(json.RawMessage(`{"n": 1234567, "s": "x"}`))
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := m["n"].(json.Number); !ok || n.String() != "1234567" {
		t.Errorf("numbers must stay as written: %#v", m["n"])
	}
	for in, want := range map[string]string{
		``:          "arguments are empty",
		`[1]`:       "not an array",
		`"x"`:       "not a string",
		`null`:      "not null",
		`{"a":1} 2`: "data after the JSON object",
		`{"a":`:     "not valid JSON",
	} {
		_, err := Arguments(json.RawMessage(in))
		if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(want, "not ")) {
			t.Errorf("%q: got %v, want %q", in, err, want)
		}
	}
}

func TestReasonHidesPaths(t *testing.T) {
	dir := t.TempDir()
	_, err := os.Open(filepath.Join(dir, "missing"))
	got := Reason(err)
	if got != "no such file or directory" || strings.Contains(got, dir) {
		t.Errorf("Reason = %q", got)
	}
}
