package plan

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentc.dev/agentc/internal/leaf/pattern"
)

// TestCompileSchema: a schema compiles under 2020-12 with formats
// asserted, and refers to nothing outside itself; text that is not JSON
// is refused as such.
func TestCompileSchema(t *testing.T) {
	s, err := CompileSchemaJSON([]byte(`{"type":"object","required":["day"],"properties":{"day":{"$ref":"#/$defs/day"}},"$defs":{"day":{"type":"string","format":"date"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		value string
		valid bool
	}{
		{`{"day":"2026-12-01"}`, true},
		{`{"day":"yesterday"}`, false},
		{`{"day":1}`, false},
		{`{}`, false},
	} {
		v, err := UnmarshalJSONValue([]byte(tt.value))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(v); (err == nil) != tt.valid {
			t.Errorf("%s: valid %v, want %v (%v)", tt.value, err == nil, tt.valid, err)
		}
	}
	_, err = CompileSchemaJSON([]byte(`{"$ref":"https://example.com/schema.json"}`))
	if want := `agentc loads no schema from outside the manifest (https://example.com/schema.json)`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("external $ref: %v, want an error saying %q", err, want)
	}
	_, err = CompileSchemaJSON([]byte(`{"type":`))
	if want := "schema is not JSON: "; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("truncated schema: %v, want an error starting %q", err, want)
	}
}

// TestPatternSuite runs the JSON Schema Test Suite's pattern tests, the
// optional ECMA-262 ones included, through CompileSchema and Validate:
// patterns are read as ECMA-262. known lists the tests regexp2 answers
// otherwise, each with why.
func TestPatternSuite(t *testing.T) {
	// regexp2 in ECMAScript mode still reads .NET syntax, and a pattern
	// it refuses is read by Go's regexp: format "regex" accepts these,
	// which ECMA-262 refuses. Accepting more patterns rejects no value a
	// stricter reader accepts.
	const fr = "optional/format/ecmascript-regex.json: "
	known := map[string]string{
		fr + `\a is not an ECMA 262 control escape: when used as a pattern`:                                                      ".NET's bell escape",
		fr + "Python-specific regular expression syntax is not valid ECMA 262: Python named group (?P<name>...) is not ECMA 262": "read by Go's regexp",
		fr + "Python-specific regular expression syntax is not valid ECMA 262: inline comment group (?#...) is not ECMA 262":     ".NET's comment group",
		fr + "global inline flag groups are not valid ECMA 262: a single global inline flag (?i)":                                ".NET's inline flags",
		fr + "global inline flag groups are not valid ECMA 262: multiple global inline flags (?ims)":                             ".NET's inline flags",
	}
	dir := filepath.Join("..", "testdata", "corpora", "json-schema-test-suite", "tests", "draft2020-12")
	files := []string{"pattern.json", "patternProperties.json", "optional/ecmascript-regex.json", "optional/format/ecmascript-regex.json", "optional/format/regex.json"}
	ran := 0
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		var groups []struct {
			Description string          `json:"description"`
			Schema      json.RawMessage `json:"schema"`
			Tests       []struct {
				Description string          `json:"description"`
				Data        json.RawMessage `json:"data"`
				Valid       bool            `json:"valid"`
			} `json:"tests"`
		}
		if err := json.Unmarshal(data, &groups); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, g := range groups {
			s, err := CompileSchemaJSON(g.Schema)
			if err != nil {
				t.Errorf("%s: %s: does not compile: %v", f, g.Description, err)
				continue
			}
			for _, tc := range g.Tests {
				name := f + ": " + g.Description + ": " + tc.Description
				v, err := UnmarshalJSONValue(tc.Data)
				if err != nil {
					t.Fatal(err)
				}
				ran++
				err = Validate(s, v)
				switch right := (err == nil) == tc.Valid; {
				case !right && known[name] == "":
					t.Errorf("%s: valid %v, want %v (%v)", name, err == nil, tc.Valid, err)
				case right && known[name] != "":
					t.Errorf("%s: answered as the suite has it now; drop it from known (%s)", name, known[name])
				}
			}
		}
	}
	if ran < 100 {
		t.Errorf("ran %d tests; the suite's files hold more", ran)
	}
}

// TestValidateUndecided: a pattern that backtracks catastrophically on a
// value cannot be decided within the bound, and the value is rejected
// with a message naming the pattern and the bound, wherever the pattern
// stands, under "not" and in patternProperties too, where no match would
// otherwise accept it.
func TestValidateUndecided(t *testing.T) {
	bad := strings.Repeat("a", 40) + "!"
	for _, c := range []struct{ schema, value, at string }{
		{`{"type":"string","pattern":"^(a+)+$"}`, `"` + bad + `"`, "at /: the string"},
		{`{"not":{"pattern":"^(a+)+$"}}`, `"` + bad + `"`, "at /: the string"},
		{`{"type":"object","patternProperties":{"^(a+)+$":false}}`, `{"` + bad + `":1}`, "at /" + bad + ": the member name"},
		{`{"type":"array","items":{"oneOf":[{"pattern":"^(a+)+$"},{"maxLength":3}]}}`, `["ok","` + bad + `"]`, "at /1: the string"},
	} {
		s, err := CompileSchemaJSON([]byte(c.schema))
		if err != nil {
			t.Fatal(err)
		}
		v, err := UnmarshalJSONValue([]byte(c.value))
		if err != nil {
			t.Fatal(err)
		}
		err = Validate(s, v)
		var ue *UndecidedError
		if !errors.As(err, &ue) {
			t.Errorf("%s: %v, want an UndecidedError", c.schema, err)
			continue
		}
		for _, want := range []string{c.at, `pattern "^(a+)+$"`, "within 100ms", "rejected"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %q does not say %q", c.schema, err, want)
			}
		}
	}
}

// TestValidateLookahead: the lookahead patterns of real-world schemas
// compile and decide as ECMA-262 says.
func TestValidateLookahead(t *testing.T) {
	s, err := CompileSchemaJSON([]byte(`{"type":"object","required":["password","user"],"properties":{
		"password":{"type":"string","pattern":"^(?=.*[A-Z])(?=.*\\d)(?!.*\\s).{8,}$"},
		"user":{"type":"string","pattern":"^(?!root$)[a-z_][a-z0-9_-]*$"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		value string
		valid bool
	}{
		{`{"password":"Secret123","user":"alice"}`, true},
		{`{"password":"secret123","user":"alice"}`, false},
		{`{"password":"Secret 123","user":"alice"}`, false},
		{`{"password":"Secret123","user":"root"}`, false},
		{`{"password":"Secret123","user":"rooted"}`, true},
	} {
		v, err := UnmarshalJSONValue([]byte(c.value))
		if err != nil {
			t.Fatal(err)
		}
		if err := Validate(s, v); (err == nil) != c.valid {
			t.Errorf("%s: valid %v, want %v (%v)", c.value, err == nil, c.valid, err)
		}
	}
}

// TestValidateManyPatterns: a value checked against many backtracking
// patterns (a hundred in allOf, an MCP server's schema) is rejected after
// the first match that runs out of time, not after every one: the check
// makes a single undecided match, where the validator alone made a
// hundred, past the run's deadline. A value of many strings matched
// quickly passes, each match made before and by the validator.
func TestValidateManyPatterns(t *testing.T) {
	branch := `{"pattern":"^(a+)+$"}`
	s, err := CompileSchemaJSON([]byte(`{"type":"object","properties":{"q":{"type":"string","allOf":[` + strings.TrimSuffix(strings.Repeat(branch+",", 100), ",") + `]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	before := pattern.Undecided()
	err = Validate(s, map[string]any{"q": strings.Repeat("a", 40) + "!"})
	var ue *UndecidedError
	if !errors.As(err, &ue) || ue.At != "/q" {
		t.Fatalf("err = %v, want the value rejected, undecided at /q", err)
	}
	if n := pattern.Undecided() - before; n != 1 {
		t.Errorf("%d undecided matches, want 1", n)
	}
	if err := Validate(s, map[string]any{"q": "aaaa"}); err != nil {
		t.Errorf("a string every pattern matches at once: %v", err)
	}
	if err := Validate(s, map[string]any{"q": "b"}); err == nil {
		t.Error("a string no pattern matches passed")
	}
}
