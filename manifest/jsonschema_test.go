package manifest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// compileJSONSchema compiles the generated schema for validating with.
func compileJSONSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	b, err := JSONSchema()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the generated schema is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("agentc.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("agentc.schema.json")
	if err != nil {
		t.Fatalf("the generated schema does not compile: %v", err)
	}
	return s
}

// TestJSONSchemaValidatesExamples checks every example, and the YAML and
// JSON manifests that name the schema in "$schema", against the generated
// JSON Schema; each must also load.
func TestJSONSchemaValidatesExamples(t *testing.T) {
	s := compileJSONSchema(t)
	files, _ := filepath.Glob("../examples/*.cue")
	editor, _ := filepath.Glob("testdata/editor/*")
	files = append(files, editor...)
	if len(files) < 6 {
		t.Fatalf("found %d manifests, want the examples and testdata/editor", len(files))
	}
	l := NewLoader()
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			insts, err := l.Load([]string{file})
			if err != nil {
				t.Fatal(err)
			}
			if len(insts) != 1 || len(insts[0].Errors) != 0 {
				t.Fatalf("%s does not load: %v", file, insts[0].Errors)
			}
			doc := asJSON(t, file, insts[0].Value)
			if err := s.Validate(doc); err != nil {
				t.Errorf("%s does not validate against the JSON Schema:\n%v", file, err)
			}
		})
	}
}

// asJSON is a manifest as a JSON or YAML file holds it: JSON and YAML as
// read, CUE exported. A test case's constraints need not be concrete, and
// a CUE manifest's test cases are kept with the fields that are.
func asJSON(t *testing.T, file string, v cue.Value) any {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	switch filepath.Ext(file) {
	case ".json":
	case ".yaml":
		var y any
		if err := yaml.Unmarshal(data, &y); err != nil {
			t.Fatal(err)
		}
		if data, err = json.Marshal(y); err != nil {
			t.Fatal(err)
		}
	default:
		out := map[string]any{}
		it, err := v.Fields()
		if err != nil {
			t.Fatal(err)
		}
		for it.Next() {
			name := it.Selector().String()
			if name != "tests" {
				out[name] = it.Value()
				continue
			}
			cases := map[string]map[string]any{}
			ct, _ := it.Value().Fields()
			for ct.Next() {
				fields := map[string]any{}
				ft, _ := ct.Value().Fields()
				for ft.Next() {
					if _, err := ft.Value().MarshalJSON(); err == nil {
						fields[ft.Selector().String()] = ft.Value()
					}
				}
				cases[ct.Selector().String()] = fields
			}
			out[name] = cases
		}
		if data, err = json.Marshal(out); err != nil {
			t.Fatalf("exporting %s: %v", file, err)
		}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestJSONSchemaRejectsMisspelling checks that the schema is closed where
// #Manifest is: a misspelt field fails, as vet fails it.
func TestJSONSchemaRejectsMisspelling(t *testing.T) {
	s := compileJSONSchema(t)
	data, err := os.ReadFile("testdata/editor/triage.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ from, to string }{
		{`"budgets"`, `"budget"`},
		{`"provider"`, `"provide"`},
		{`"tools": {}`, `"tool": {}`},
		{`"tools": 0`, `"tool": 0`},
	} {
		bad := strings.Replace(string(data), tc.from, tc.to, 1)
		if bad == string(data) {
			t.Fatalf("%s is not in triage.json", tc.from)
		}
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(doc); err == nil {
			t.Errorf("with %s for %s, triage.json validates; want an error", tc.to, tc.from)
		}
	}
}
