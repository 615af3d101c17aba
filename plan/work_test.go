package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// doubling is a schema whose definitions each refer twice to the next,
// k deep: its last one is applied 2^k times to one value.
func doubling(k int, at string) string {
	var defs []string
	for i := range k {
		defs = append(defs, fmt.Sprintf(`"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i+1, i+1))
	}
	defs = append(defs, fmt.Sprintf(`"d%d":{"type":"string"}`, k))
	return `{"type":"object","$defs":{` + strings.Join(defs, ",") + `},"properties":{"` + at + `":{"$ref":"#/$defs/d0"}}}`
}

func validateJSON(t *testing.T, schema, value string) error {
	t.Helper()
	s, err := CompileSchemaJSON([]byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal([]byte(value), &v); err != nil {
		t.Fatal(err)
	}
	return Validate(s, v)
}

// nested is {"k":{"k":...{"k":leaf}}}, depth deep.
func nested(k string, depth int, leaf string) string {
	return strings.Repeat(`{"`+k+`":`, depth) + leaf + strings.Repeat("}", depth)
}

// TestValidationWork: a value whose check would apply a schema's parts
// past MaxValidationWork times is refused with a *WorkError, at once,
// where the validator would never end: a schema whose parts refer twice
// to the next (2^60 applications), and one that doubles at every level of
// the value. Schemas written to describe their values pass values far
// larger than those, recursive ones included.
func TestValidationWork(t *testing.T) {
	var we *WorkError
	if err := validateJSON(t, doubling(60, "q"), `{"q":"x"}`); !errors.As(err, &we) {
		t.Errorf("2^60 applications: %v, want a *WorkError", err)
	}
	// Each level applies the next twice, through allOf, to the member.
	const twice = `{"$defs":{"s":{"allOf":[{"$ref":"#/$defs/t"},{"$ref":"#/$defs/t"}]},"t":{"type":["object","string"],"properties":{"p":{"$ref":"#/$defs/s"}}}},"$ref":"#/$defs/s"}`
	if err := validateJSON(t, twice, nested("p", 40, `"x"`)); !errors.As(err, &we) {
		t.Errorf("doubling at each of 40 levels: %v, want a *WorkError", err)
	}
	if err := validateJSON(t, twice, nested("p", 8, `"x"`)); err != nil {
		t.Errorf("doubling at each of 8 levels (256 applications): %v", err)
	}
	// A $ref loop that never moves into the value is refused, not a
	// stack overflow.
	if err := validateJSON(t, `{"$defs":{"a":{"allOf":[{"$ref":"#/$defs/a"}]}},"$ref":"#/$defs/a"}`, `"x"`); err == nil {
		t.Error("a $ref loop in place was accepted")
	}

	// A binary tree, and any JSON value, recursive schemas both: a tree
	// of 2^12 leaves, a value nested 5,000 deep and an array of 20,000
	// objects are checked.
	const tree = `{"$defs":{"n":{"type":"object","properties":{"left":{"$ref":"#/$defs/n"},"right":{"$ref":"#/$defs/n"},"v":{"type":"integer"}}}},"$ref":"#/$defs/n"}`
	leaf := `{"v":1}`
	for range 12 {
		leaf = `{"left":` + leaf + `,"right":` + leaf + `}`
	}
	if err := validateJSON(t, tree, leaf); err != nil {
		t.Errorf("a tree of 2^12 leaves: %v", err)
	}
	const value = `{"$defs":{"v":{"anyOf":[{"type":["string","number","boolean","null"]},{"type":"array","items":{"$ref":"#/$defs/v"}},{"type":"object","additionalProperties":{"$ref":"#/$defs/v"}}]}},"$ref":"#/$defs/v"}`
	if err := validateJSON(t, value, nested("a", 5000, `[1,"x",{"b":null}]`)); err != nil {
		t.Errorf("a value nested 5,000 deep: %v", err)
	}
	items := "[" + strings.Repeat(`{"a":[1,2,3],"b":"x"},`, 20_000) + `{"a":[],"b":"y"}]`
	if err := validateJSON(t, value, items); err != nil {
		t.Errorf("an array of 20,000 objects: %v", err)
	}
}
