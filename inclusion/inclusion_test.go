package inclusion_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"agentc.dev/agentc/inclusion"
)

// readJSONL reads one JSON value per line, numbers kept exact.
func readJSONL(t *testing.T, path string, each func(line int, v map[string]any)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.UseNumber()
		var v map[string]any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		each(n, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

func TestVerdicts(t *testing.T) {
	readJSONL(t, "testdata/verdicts.jsonl", func(line int, c map[string]any) {
		a := inclusion.Analyze(c["schema"])
		got := "neither"
		switch vac, uns := a.Vacuous(""), a.Unsatisfiable(""); {
		case vac == inclusion.Yes && uns == inclusion.Yes:
			got = "both"
		case vac == inclusion.Yes:
			got = "vacuous"
		case uns == inclusion.Yes:
			got = "unsatisfiable"
		}
		if got != c["verdict"] {
			t.Errorf("verdicts.jsonl:%d: %s: got %s, want %s", line, c["why"], got, c["verdict"])
		}
	})
}
