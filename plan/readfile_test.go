package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadFile: a .json file with a plan format is read as a plan, and
// checked; any other file is not a plan, with no error; a file that
// cannot be read is an error.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	data, err := testPlan(t).Encode()
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := write("good.json", string(data))
	upper := write("good.JSON", string(data))
	damaged := write("damaged.json", strings.Replace(string(data), "Triage the issue.", "Triage it.", 1))
	manifest := write("agent.json", `{"name":"a","model":{"provider":"test","name":"test"}}`)
	notJSON := write("plan.cue", string(data))

	for _, path := range []string{good, upper} {
		if p, ok, err := ReadFile(path); !ok || err != nil || p.Agent.Name != "triage" {
			t.Errorf("ReadFile(%s) = %v, %v, %v; want the plan", filepath.Base(path), p, ok, err)
		}
	}
	if p, ok, err := ReadFile(damaged); !ok || err == nil || p != nil || !strings.Contains(err.Error(), "does not match its digests") {
		t.Errorf("ReadFile(damaged) = %v, %v, %v; want a plan that fails its digests", p, ok, err)
	}
	for _, path := range []string{manifest, notJSON} {
		if p, ok, err := ReadFile(path); ok || err != nil || p != nil {
			t.Errorf("ReadFile(%s) = %v, %v, %v; want not a plan", filepath.Base(path), p, ok, err)
		}
	}
	if _, ok, err := ReadFile(filepath.Join(dir, "missing.json")); ok || !os.IsNotExist(err) {
		t.Errorf("ReadFile(missing) = %v, %v; want a not-exist error", ok, err)
	}
}
