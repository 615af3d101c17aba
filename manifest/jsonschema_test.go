package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"agentc.dev/agentc/plan"
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
// #Manifest is, tools and test cases included: a misspelt field fails, a
// field of another kind of tool fails, a malformed name fails, as vet
// fails each.
func TestJSONSchemaRejectsMisspelling(t *testing.T) {
	s := compileJSONSchema(t)
	for _, tc := range []struct{ file, from, to string }{
		{"triage.json", `"budgets"`, `"budget"`},
		{"triage.json", `"provider"`, `"provide"`},
		{"triage.json", `"tools": {}`, `"tool": {}`},
		{"triage.json", `"tools": 0`, `"tool": 0`},
		{"tools.yaml", "      max_bytes: 65536", "      max_byte: 65536"},
		{"tools.yaml", "      ops: [read]", "      ops: [read]\n      url: https://example.com/"},
		{"tools.yaml", "      kind: exec", "      kind: shell"},
		{"tools.yaml", "      method: POST", "      method: POTS"},
		{"tools.yaml", "      env: [HOME, PATH]", "      environment: [HOME, PATH]"},
		{"tools.yaml", "        lookup: {approve: never}", "        lookup: {approve: nope}"},
		{"tools.yaml", "      pin: blake3:", "      pinned: blake3:"},
		{"tools.yaml", "    summarize:", "    " + strings.Repeat("s", 65) + ":"},
		{"tools.yaml", "    expect: {verdict", "    expects: {verdict"},
		{"tools.yaml", "  clean-change:", "  Clean-Change:"},
	} {
		data, err := os.ReadFile(filepath.Join("testdata/editor", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		bad := strings.Replace(string(data), tc.from, tc.to, 1)
		if bad == string(data) {
			t.Fatalf("%q is not in %s", tc.from, tc.file)
		}
		doc := decodeManifest(t, tc.file, []byte(bad))
		if err := s.Validate(doc); err == nil {
			t.Errorf("with %q for %q, %s validates; want an error", tc.to, tc.from, tc.file)
		}
		if inst := NewLoader().LoadBytes(tc.file, []byte(bad)); len(inst.Errors) == 0 {
			t.Errorf("with %q for %q, %s loads; the JSON Schema rejects what the loader accepts", tc.to, tc.from, tc.file)
		}
	}
}

// decodeManifest decodes a JSON or YAML manifest for validating.
func decodeManifest(t *testing.T, name string, data []byte) any {
	t.Helper()
	if filepath.Ext(name) == ".yaml" {
		var y any
		if err := yaml.Unmarshal(data, &y); err != nil {
			t.Fatal(err)
		}
		var err error
		if data, err = json.Marshal(y); err != nil {
			t.Fatal(err)
		}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestToolsByKindSameTools checks that #Tool restated by kind, as the
// JSON Schema is generated from, accepts exactly the tools #Tool accepts,
// and fills the same defaults.
func TestToolsByKindSameTools(t *testing.T) {
	src, err := toolsByKind(SchemaSource)
	if err != nil {
		t.Fatal(err)
	}
	ctx := cuecontext.New()
	orig := ctx.CompileBytes(SchemaSource).LookupPath(cue.MakePath(cue.Def("Tool")))
	restated := ctx.CompileBytes(src).LookupPath(cue.MakePath(cue.Def("Tool")))
	if err := restated.Err(); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{
		`{kind: "fs", description: "d", root: "."}`,
		`{kind: "fs", description: "d", root: ".", ops: ["read"], max_bytes: 10, approve: "never"}`,
		`{kind: "fs", description: "d", root: "", }`,
		`{kind: "fs", description: "d", root: ".", url: "https://a.example/"}`,
		`{kind: "fs", description: "d", root: ".", max_bytes: 0}`,
		`{kind: "fs", description: "d"}`,
		`{kind: "http", description: "d", url: "https://a.example/", allow: ["https://a.example/"], input: schema: {}}`,
		`{kind: "http", description: "d", url: "https://a.example/", allow: ["https://a.example/"], input: schema: {}, method: "POST", approve_if: {n: 7}}`,
		`{kind: "http", description: "d", url: "https://a.example/", allow: [], input: schema: {}}`,
		`{kind: "http", description: "d", url: "https://a.example/", allow: ["https://a.example/"], input: schema: {}, method: "GETT"}`,
		`{kind: "exec", description: "d", argv: ["true"], input: schema: {}}`,
		`{kind: "exec", description: "d", argv: [""], input: schema: {}}`,
		`{kind: "exec", description: "d", argv: ["true"], input: schema: {}, root: "."}`,
		`{kind: "mcp", description: "d", command: ["srv"], allow: ["a"], approve_tools: a: {approve: "never"}}`,
		`{kind: "mcp", description: "d", command: ["srv"], allow: ["a"], approve_tools: a: {approve: "nope"}}`,
		`{kind: "agent", description: "d", path: "b.cue"}`,
		`{kind: "agent", description: "d", path: "b.cue", pin: "sha256:00"}`,
		`{kind: "shell", description: "d"}`,
		`{description: "d", root: "."}`,
	} {
		v := ctx.CompileString(tool)
		a, b := orig.Unify(v), restated.Unify(v)
		errA := a.Validate(cue.Concrete(true), cue.Final())
		errB := b.Validate(cue.Concrete(true), cue.Final())
		if (errA == nil) != (errB == nil) {
			t.Errorf("%s: #Tool says %v, restated %v", tool, errA, errB)
			continue
		}
		if errA != nil {
			continue
		}
		ja, _ := a.MarshalJSON()
		jb, _ := b.MarshalJSON()
		if !bytes.Equal(ja, jb) {
			t.Errorf("%s: #Tool gives %s, restated %s", tool, ja, jb)
		}
	}
}

// TestToolsByKindRefusesOtherForms checks that a #Tool the restatement
// does not understand is an error, not a JSON Schema that checks less.
func TestToolsByKindRefusesOtherForms(t *testing.T) {
	for _, tc := range []struct{ from, to string }{
		{`if kind == "fs" {`, `if kind != "fs" {`},
		{`if kind == "fs" {`, `for x in [kind] if x == "fs" {`},
		{`if kind == "fs" {`, `if description == "fs" {`},
		{`#Tool: {`, `#Tool: close({`},
		{`"fs" | "http" | "exec" | "mcp" | "agent"`, `"fs" | "http" | "exec" | "mcp" | "agent" | "grpc"`},
		{`"fs" | "http" | "exec" | "mcp" | "agent"`, `"http" | "exec" | "mcp" | "agent"`},
	} {
		src := strings.Replace(string(SchemaSource), tc.from, tc.to, 1)
		if src == string(SchemaSource) {
			t.Fatalf("%q is not in the schema", tc.from)
		}
		if tc.from == `#Tool: {` {
			// #Tool is the schema's last definition: close its call.
			end := strings.LastIndex(src, "\n}")
			src = src[:end] + "\n})" + src[end+2:]
		}
		_, err := toolsByKind([]byte(src))
		if err == nil {
			t.Errorf("with %q for %q, the restatement succeeds; want an error", tc.to, tc.from)
			continue
		}
		if !strings.Contains(err.Error(), "#Tool") {
			t.Errorf("with %q for %q: %v; want an error about #Tool", tc.to, tc.from, err)
		}
	}
}

// TestJSONSchemaToolErrorsByKind: a mistake in a tool is reported against
// the schema of the kind written, not once for every kind.
func TestJSONSchemaToolErrorsByKind(t *testing.T) {
	s := compileJSONSchema(t)
	data, err := os.ReadFile("testdata/editor/tools.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(data), "      max_bytes: 65536", "      max_byte: 65536", 1)
	err = s.Validate(decodeManifest(t, "tools.yaml", []byte(bad)))
	if err == nil {
		t.Fatal("a misspelt field of an fs tool validates")
	}
	msg := fmt.Sprintf("%v", err)
	if !strings.Contains(msg, "additional properties 'max_byte' not allowed") {
		t.Errorf("the error does not name the misspelt field:\n%s", msg)
	}
	// One complaint, under the tool: not one for each kind it is not.
	if n := strings.Count(msg, "- at "); n != 2 {
		t.Errorf("%d complaints, want the tool's and its field's:\n%s", n, msg)
	}
}

// TestJSONSchemaNoOpenTuples: the generated schema holds no tuple (which
// strict validators refuse open) and no {type: number} beside an integer
// (which marks a mistake twice). Where the tuple said more than items, the
// first element of an exec tool's argv and an mcp tool's command, the
// JSON Schema accepts what vet refuses; this test says so, so that no
// other place loses a check unnoticed.
func TestJSONSchemaNoOpenTuples(t *testing.T) {
	b, err := JSONSchema()
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(path string, x any)
	walk = func(path string, x any) {
		switch x := x.(type) {
		case map[string]any:
			if _, ok := x["prefixItems"]; ok {
				t.Errorf("%s holds prefixItems", path)
			}
			if all, ok := x["allOf"].([]any); ok {
				for _, m := range all {
					if m, ok := m.(map[string]any); ok && len(m) == 1 && m["type"] == "number" {
						t.Errorf("%s holds allOf [{type: number}, ...]", path)
					}
				}
			}
			for k, v := range x {
				walk(path+"/"+k, v)
			}
		case []any:
			for i, v := range x {
				walk(fmt.Sprintf("%s/%d", path, i), v)
			}
		}
	}
	walk("#", doc)
	s := compileJSONSchema(t)
	for _, tc := range []struct {
		tool string
		want bool // the JSON Schema accepts it; vet never does
	}{
		{`{"kind": "exec", "description": "d", "argv": [""], "input": {"schema": {}}}`, true},
		{`{"kind": "exec", "description": "d", "argv": [], "input": {"schema": {}}}`, false},
		{`{"kind": "exec", "description": "d", "argv": [1], "input": {"schema": {}}}`, false},
		{`{"kind": "mcp", "description": "d", "command": [""], "allow": ["a"]}`, true},
		{`{"kind": "mcp", "description": "d", "command": ["s"], "allow": [""]}`, false},
		{`{"kind": "http", "description": "d", "url": "https://a.example/", "allow": ["ftp://a"], "input": {"schema": {}}}`, false},
	} {
		m := `{"name": "t", "model": {"provider": "test", "name": "test"}, "instructions": "i", "capabilities": {"tools": {"t": ` + tc.tool + `}}}`
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(m))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(doc); (err == nil) != tc.want {
			t.Errorf("%s: the JSON Schema says %v, want accepted %v", tc.tool, err, tc.want)
		}
		if inst := NewLoader().LoadBytes("t.json", []byte(m)); len(inst.Errors) == 0 {
			t.Errorf("%s: vet accepts it", tc.tool)
		}
	}
}

// TestJSONSchemaModelNames: the JSON Schema an editor checks with refuses
// the model names #Manifest refuses (a control character or one not
// shown, in the model's name, a fallback's or an escalation's) and takes the names providers
// and OpenAI-compatible servers use.
func TestJSONSchemaModelNames(t *testing.T) {
	s := compileJSONSchema(t)
	l := NewLoader()
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"gpt-4o-2024-08-06", true},
		{"meta-llama/Llama-3.1-8B-Instruct", true},
		{"models/gemini-2.0-flash", true},
		{"arn:aws:bedrock:us-east-1:123:inference-profile/x", true},
		{"qwen2.5:7b", true},
		{"modèle", true},
		{"gpt-4o\n::error::x", false},
		{"gpt-4o\t", false},
		{"gpt\x1b[2J", false},
		{"gpt\x00", false},
		{"gpt\x7f", false},
		{"gpt\u009b31m", false},
		{"gpt-4o\u202e", false},
		{"gpt\u200b-4o", false},
		{"\ufeffgpt-4o", false},
		{"gpt\u00ad4o", false},
		{"gpt\u2066x\u2069", false},
	} {
		for _, at := range []string{`"model": {"provider": "openai", "name": %s}`,
			`"model": {"provider": "openai", "name": "m", "fallback": {"models": [%s]}}`,
			`"model": {"provider": "openai", "name": "m"}, "strategy": {"escalate": {"after_invalid": 1, "model": %s}}`} {
			name, _ := json.Marshal(tc.name)
			ref := string(name)
			if strings.Contains(at, "fallback") {
				ref = strings.Replace(ref, `"`, `"anthropic:`, 1)
			}
			doc := fmt.Sprintf(`{"name": "a", `+at+`, "instructions": "I.", "budgets": {"deadline": "60s"}}`, ref)
			err := s.Validate(decodeManifest(t, "a.json", []byte(doc)))
			if (err == nil) != tc.ok {
				t.Errorf("%s: %v, want ok %v", doc, err, tc.ok)
			}
			if inst := l.LoadBytes("a.json", []byte(doc)); (len(inst.Errors) == 0) != tc.ok {
				t.Errorf("%s: #Manifest says %v, want ok %v", doc, inst.Errors, tc.ok)
			}
		}
	}
}

// TestModelNameRunes: #ModelName's patterns, as schema.cue writes them,
// refuse a character exactly where plan.CheckModelName does, for every
// character of Unicode, and vet says each in words (boundReadings): the
// schema and the plan's reader never part. The JSON Schema writes the
// characters as escapes.
func TestModelNameRunes(t *testing.T) {
	src, err := os.ReadFile("schema.cue")
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`(?m)^#ModelName: .*$`).Find(src)
	quoted := regexp.MustCompile(`=~("(?:[^"\\]|\\.)*")`).FindAllSubmatch(line, -1)
	if len(quoted) != 2 {
		t.Fatalf("#ModelName: %d patterns in %q, want 2", len(quoted), line)
	}
	var patterns []*regexp.Regexp
	for _, q := range quoted {
		if _, ok := boundReadings["=~"+string(q[1])]; !ok {
			t.Errorf("vet says the bound %s of #ModelName only as a pattern: no reading of it in boundReadings", q[1])
		}
		p, err := strconv.Unquote(string(q[1]))
		if err != nil {
			t.Fatal(err)
		}
		patterns = append(patterns, regexp.MustCompile(p))
	}
	// The JSON Schema says them as escapes, which an editor shows.
	js, err := JSONSchema()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsFunc(js, plan.Hidden) || !bytes.Contains(js, []byte(`\u200b-\u200f`)) {
		t.Errorf("the JSON Schema holds characters not shown, or not their escapes")
	}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if utf8.ValidRune(r) {
			name := "gpt" + string(r)
			schema := patterns[0].MatchString(name) && patterns[1].MatchString(name)
			if read := plan.CheckModelName(name) == nil; read != schema {
				t.Errorf("%U: the schema takes it %v, plan.CheckModelName %v", r, schema, read)
			}
		}
	}
}
