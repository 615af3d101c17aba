package contractdiff_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"

	"agentc.dev/agentc/contractdiff"
	"agentc.dev/agentc/plan"
)

// readJSONL reads one JSON object per line, numbers kept exact.
func readJSONL(t *testing.T, path string, each func(line int, raw []byte, v map[string]any)) {
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
		v, err := plan.UnmarshalJSONValue(sc.Bytes())
		if err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		each(n, bytes.Clone(sc.Bytes()), v.(map[string]any))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// agentWith returns an agent whose output schema or input schema is s.
func agentWith(t *testing.T, s any, asInput bool) *plan.Agent {
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if asInput {
		return &plan.Agent{Input: &plan.Input{Schema: raw}}
	}
	return &plan.Agent{Output: &plan.Output{Name: "answer", Description: "d", Schema: raw}}
}

// TestSchemaRules checks each schema rule on a change of the output
// schema and the same change of the input schema: the one finding, its
// pointer and its class, and that a breaking one carries its example.
func TestSchemaRules(t *testing.T) {
	seen := map[string]bool{}
	readJSONL(t, "testdata/rules.jsonl", func(line int, _ []byte, c map[string]any) {
		// A rule's first case is its plain one: the classes its table row
		// and docs/diff.md give.
		if r, _ := contractdiff.RuleOf(c["rule"].(string)); !seen[r.ID] && (string(r.Output) != c["output"] || string(r.Input) != c["input"]) {
			t.Errorf("rules.jsonl:%d: %s: the rule's classes are %s and %s, its first case's %s and %s", line, r.ID, r.Output, r.Input, c["output"], c["input"])
		}
		for _, dir := range []struct {
			name, prefix string
			input        bool
		}{{"output", "/output/schema", false}, {"input", "/input/schema", true}} {
			fs, err := contractdiff.Compare(agentWith(t, c["old"], dir.input), agentWith(t, c["new"], dir.input))
			if err != nil {
				t.Fatalf("rules.jsonl:%d: %v", line, err)
			}
			if len(fs) != 1 {
				t.Errorf("rules.jsonl:%d: %s (%s): %d findings %+v, want one", line, c["why"], dir.name, len(fs), fs)
				continue
			}
			f := fs[0]
			want := contractdiff.Finding{Rule: c["rule"].(string), Class: contractdiff.Class(c[dir.name].(string)), Pointer: dir.prefix + c["pointer"].(string)}
			if f.Rule != want.Rule || f.Class != want.Class || f.Pointer != want.Pointer {
				t.Errorf("rules.jsonl:%d: %s (%s): got %s %s at %s, want %s %s at %s", line, c["why"], dir.name, f.Rule, f.Class, f.Pointer, want.Rule, want.Class, want.Pointer)
			}
			if f.HasExample != (f.Class == contractdiff.Breaking) {
				t.Errorf("rules.jsonl:%d: %s (%s): %s finding with example %v", line, c["why"], dir.name, f.Class, f.HasExample)
			}
			seen[f.Rule] = true
		}
	})
	for _, r := range contractdiff.Rules {
		if r.Category == contractdiff.CategorySchema && !seen[r.ID] {
			t.Errorf("rule %s has no case in rules.jsonl", r.ID)
		}
	}
}

// TestContractRules checks the rules on the contract outside its
// schemas, each on agents that differ in that one field; a case's others
// are the rules of the other findings that field's change makes (a file
// input's media types are in its schema too).
func TestContractRules(t *testing.T) {
	seen := map[string]bool{}
	readJSONL(t, "testdata/contract.jsonl", func(line int, raw []byte, _ map[string]any) {
		var c struct {
			Rule, Pointer, Class string
			Old, New             *plan.Agent
			Others               []string
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatalf("contract.jsonl:%d: %v", line, err)
		}
		fs, err := contractdiff.Compare(c.Old, c.New)
		if err != nil {
			t.Fatalf("contract.jsonl:%d: %v", line, err)
		}
		var mine, others []string
		for _, f := range fs {
			if f.Rule == c.Rule && f.Pointer == c.Pointer && string(f.Class) == c.Class {
				mine = append(mine, f.Rule)
			} else {
				others = append(others, f.Rule)
			}
		}
		if len(mine) != 1 || !slices.Equal(others, c.Others) {
			t.Errorf("contract.jsonl:%d: got %+v, want one %s %s at %s, and others %v", line, fs, c.Rule, c.Class, c.Pointer, c.Others)
		}
		seen[c.Rule] = true
	})
	for _, r := range contractdiff.Rules {
		if (r.Category == contractdiff.CategoryContract || r.Category == contractdiff.CategoryAnnotation && r.ID != contractdiff.AnnotationChanged) && !seen[r.ID] {
			t.Errorf("rule %s has no case in contract.jsonl", r.ID)
		}
	}
}

// TestChangesCombined checks two changes of a schema each proved
// compatible alone, that together widen an output, and in a not, narrow
// an input: each is listed, and the whole is breaking, with its example.
func TestChangesCombined(t *testing.T) {
	// Alone, the type changed leaves no value (t must be a string in an
	// empty enum); alone, the enum dropped leaves any number.
	old := map[string]any{"type": "number", "properties": map[string]any{"t": map[string]any{"type": "string", "enum": []any{nil}}}, "required": []any{"t"}}
	new := map[string]any{"type": "object", "properties": map[string]any{"t": map[string]any{"type": "string"}}, "required": []any{"t"}}
	for _, c := range []struct {
		name    string
		old     any
		new     any
		asInput bool
		prefix  string
	}{
		{"output", old, new, false, "/output/schema"},
		{"input", map[string]any{"not": old}, map[string]any{"not": new}, true, "/input/schema"},
	} {
		fs, err := contractdiff.Compare(agentWith(t, c.old, c.asInput), agentWith(t, c.new, c.asInput))
		if err != nil {
			t.Fatal(err)
		}
		if len(fs) != 3 {
			t.Fatalf("%s: %d findings %+v, want the two changes and their combination", c.name, len(fs), fs)
		}
		for _, f := range fs[:2] {
			if f.Class != contractdiff.Compatible {
				t.Errorf("%s: %+v, want compatible alone", c.name, f)
			}
		}
		f := fs[2]
		if f.Rule != contractdiff.ChangesCombined || f.Class != contractdiff.Breaking || f.Pointer != c.prefix || !f.HasExample {
			t.Errorf("%s: %+v, want %s breaking at %s with an example", c.name, f, contractdiff.ChangesCombined, c.prefix)
		}
	}
}

// TestChangesComposed checks changes each proved compatible in its own
// object, apart from one another, on a schema the engine cannot compare
// whole (a pattern): they are proved together, with no combined finding;
// two changes that touch one proof's keywords are not.
func TestChangesComposed(t *testing.T) {
	schema := func(maxLen int, levels []any, required []any) map[string]any {
		return map[string]any{"type": "object", "required": required, "properties": map[string]any{
			"code":  map[string]any{"type": "string", "pattern": "^[a-z]+$", "maxLength": maxLen},
			"level": map[string]any{"enum": levels},
		}}
	}
	old := schema(40, []any{"low", "high"}, []any{"code"})
	for _, c := range []struct {
		name     string
		new      any
		combined bool
	}{
		{"a bound tightened and a value removed, in two members", schema(30, []any{"low"}, []any{"code"}), false},
		{"and a member required at the root", schema(30, []any{"low"}, []any{"code", "level"}), false},
	} {
		fs, err := contractdiff.Compare(agentWith(t, old, false), agentWith(t, c.new, false))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			if f.Class != contractdiff.Compatible || f.Rule == contractdiff.ChangesCombined {
				t.Errorf("%s: %+v, want each change compatible and no combined finding", c.name, f)
			}
		}
		if len(fs) < 2 {
			t.Errorf("%s: %d findings, want each change", c.name, len(fs))
		}
	}
	// The bound and the pattern of one member are compared by one proof
	// each, both keeping type: a type change beside a bound change in
	// the same object is not composed.
	typed := map[string]any{"type": "object", "properties": map[string]any{"code": map[string]any{"type": []any{"string", "integer"}, "pattern": "^[a-z]+$", "maxLength": 40}}}
	retyped := map[string]any{"type": "object", "properties": map[string]any{"code": map[string]any{"type": "string", "pattern": "^[a-z]+$", "maxLength": 30}}}
	fs, err := contractdiff.Compare(agentWith(t, typed, false), agentWith(t, retyped, false))
	if err != nil {
		t.Fatal(err)
	}
	if last := fs[len(fs)-1]; last.Rule != contractdiff.ChangesCombined {
		t.Errorf("a type change beside a bound change in one object: %+v, want the combination judged whole", fs)
	}
}

// TestUnchanged checks that an agent compared with itself has no finding.
func TestUnchanged(t *testing.T) {
	readJSONL(t, "testdata/rules.jsonl", func(line int, _ []byte, c map[string]any) {
		a := agentWith(t, c["new"], false)
		if fs, err := contractdiff.Compare(a, a); err != nil || len(fs) != 0 {
			t.Errorf("rules.jsonl:%d: %v %+v, want no finding", line, err, fs)
		}
	})
}

// TestRulesDocumented checks that docs/diff.md has a section per rule,
// and a row in its table of rules, whose classes are the rule's.
func TestRulesDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/diff.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range contractdiff.Rules {
		if !bytes.Contains(doc, []byte("\n### "+r.ID+"\n")) {
			t.Errorf("docs/diff.md has no section for %s", r.ID)
		}
		row := fmt.Sprintf("\n| `%s` | %s | %s | %s | %s |\n", r.ID, r.Category, r.Output, r.Input, r.Doc)
		if !bytes.Contains(doc, []byte(row)) {
			t.Errorf("docs/diff.md's table of rules has no row%s", row)
		}
	}
}

// TestLocalRefused checks that a change is not decided in its object when
// a reference elsewhere reaches it: under a not, the value removed from
// level makes x: "high" valid again, so the output widens.
func TestLocalRefused(t *testing.T) {
	schema := func(levels ...any) map[string]any {
		return map[string]any{"type": "object", "properties": map[string]any{
			"code":  map[string]any{"type": "string", "pattern": "^[a-z]+$"},
			"level": map[string]any{"enum": levels},
		}, "not": map[string]any{"properties": map[string]any{"x": map[string]any{"$ref": "#/properties/level"}}, "required": []any{"x"}}}
	}
	fs, err := contractdiff.Compare(agentWith(t, schema("low", "high"), false), agentWith(t, schema("low"), false))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if f.Class == contractdiff.Compatible {
			t.Errorf("%+v: a change a reference under a not reaches was called compatible", f)
		}
	}
	if len(fs) == 0 {
		t.Error("no finding")
	}
}

// TestUnproved: what keeps a compatible_with pin from holding is every
// change not proved compatible, in either direction, said in a line.
func TestUnproved(t *testing.T) {
	old := agentWith(t, map[string]any{"enum": []any{"a", "b"}}, false)
	old.Input = &plan.Input{Schema: []byte(`{"type":"object"}`)}
	tests := []struct {
		name   string
		output any
		input  string
		want   []string
	}{
		{"output narrowed, input the same", map[string]any{"enum": []any{"a"}}, `{"type":"object"}`, nil},
		{"output widened", map[string]any{"enum": []any{"a", "b", "c"}}, `{"type":"object"}`, []string{"breaking ENUM_VALUE_ADDED at /output/schema/enum"}},
		{"input narrowed", map[string]any{"enum": []any{"a", "b"}}, `{"type":"object","required":["x"]}`, []string{"breaking REQUIRED_ADDED at /input/schema/required"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			new := agentWith(t, tt.output, false)
			new.Input = &plan.Input{Schema: []byte(tt.input)}
			got, err := contractdiff.Unproved(old, new)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Unproved = %q, want %q", got, tt.want)
			}
		})
	}
}
