package plan

import (
	"strings"
	"testing"
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
