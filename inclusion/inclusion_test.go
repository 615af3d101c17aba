package inclusion_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"agentc.dev/agentc/inclusion"
	"agentc.dev/agentc/plan"
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

// TestConflict: the keywords named are a smallest set that accepts no
// value, the values of an enum judged against the keywords of each trial.
func TestConflict(t *testing.T) {
	for _, tc := range []struct {
		schema string
		want   string
	}{
		{`{"type": "string", "enum": ["x", "y"], "pattern": "^a"}`, "enum pattern"},
		{`{"$schema": "http://json-schema.org/draft-07/schema#", "type": "string", "enum": ["x"], "pattern": "^a"}`, "enum pattern"},
		{`{"type": "integer", "multipleOf": 2, "minimum": 3, "maximum": 3, "title": "t"}`, "maximum minimum multipleOf type"},
		{`{"type": "array", "items": {"type": "string"}, "contains": {"type": "integer"}, "maxItems": 3}`, "contains items type"},
		{`{"type": "string", "enum": ["x", "ab"], "pattern": "^a"}`, ""},
	} {
		doc, err := plan.UnmarshalJSONValue([]byte(tc.schema))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(inclusion.Analyze(doc).Conflict(""), " "); got != tc.want {
			t.Errorf("Conflict(%s) = %q, want %q", tc.schema, got, tc.want)
		}
	}
}

// TestIncludesSound: for each pair, a value the validator accepts against
// sub and rejects against super, so Includes must never answer Yes.
func TestIncludesSound(t *testing.T) {
	readJSONL(t, "testdata/includes.jsonl", func(line int, c map[string]any) {
		sub, err := plan.CompileSchema(c["sub"])
		if err != nil {
			t.Fatalf("includes.jsonl:%d: %v", line, err)
		}
		super, err := plan.CompileSchema(c["super"])
		if err != nil {
			t.Fatalf("includes.jsonl:%d: %v", line, err)
		}
		if plan.Validate(sub, c["value"]) != nil || plan.Validate(super, c["value"]) == nil {
			t.Fatalf("includes.jsonl:%d: %s: %v does not separate the schemas", line, c["why"], c["value"])
		}
		if inclusion.Includes(c["sub"], c["super"]) == inclusion.Yes {
			t.Errorf("includes.jsonl:%d: %s: proved included, but sub accepts %v and super rejects it", line, c["why"], c["value"])
		}
		if inclusion.Unsatisfiable(c["sub"]) == inclusion.Yes {
			t.Errorf("includes.jsonl:%d: %s: sub proved unsatisfiable, but it accepts %v", line, c["why"], c["value"])
		}
	})
}
