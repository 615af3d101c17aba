package plan

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// MaxSchemaValues is the most JSON values (objects, arrays, strings,
// numbers, booleans and nulls, counted at every depth) one schema may
// hold. The validator's compiler takes time that grows faster than the
// schema: a flat object of 10,000 properties (20,000 values) compiles in
// about 2 s, one of 50,000 in minutes. No realistic contract comes close:
// the largest of a sample of 149 SchemaStore schemas holds 2,003 values.
// Both vet and the runtime refuse a schema past the limit before
// compiling it.
const MaxSchemaValues = 20000

// SchemaValues counts the JSON values of a decoded schema document (the
// form CompileSchema takes), stopping once the count passes limit.
func SchemaValues(doc any, limit int) int {
	n := 0
	var walk func(v any)
	walk = func(v any) {
		if n > limit {
			return
		}
		n++
		switch v := v.(type) {
		case map[string]any:
			for _, sub := range v {
				walk(sub)
			}
		case []any:
			for _, sub := range v {
				walk(sub)
			}
		}
	}
	walk(doc)
	return n
}

// SchemaTooLargeError reports a schema with more than MaxSchemaValues
// JSON values.
type SchemaTooLargeError struct {
	// Where names the schema, e.g. "output schema".
	Where string
}

func (e *SchemaTooLargeError) Error() string {
	return fmt.Sprintf("%s: more than %d JSON values; agentc refuses schemas this large (split the contract, or share parts through $defs and $ref)", e.Where, MaxSchemaValues)
}

// CheckLimits refuses a plan whose schemas exceed MaxSchemaValues, so
// that reading a plan compiled elsewhere, or edited and resealed, costs
// bounded time before any schema is compiled. A schema that is not JSON
// is left to the compiler, which reports it.
func CheckLimits(p *Plan) error {
	a := &p.Agent
	check := func(where string, data json.RawMessage) error {
		if len(data) == 0 {
			return nil
		}
		doc, err := UnmarshalJSONValue(data)
		if err != nil {
			return nil
		}
		if SchemaValues(doc, MaxSchemaValues) > MaxSchemaValues {
			return &SchemaTooLargeError{Where: where}
		}
		return nil
	}
	if a.Input != nil {
		if err := check("input schema", a.Input.Schema); err != nil {
			return err
		}
	}
	if a.Output != nil {
		if err := check("output schema", a.Output.Schema); err != nil {
			return err
		}
	}
	if p.Output != nil {
		if err := check("output schema lowered for "+p.Output.Provider, p.Output.Schema); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(a.Capabilities.Tools)) {
		if t := a.Capabilities.Tools[name]; t.Input != nil {
			if err := check(fmt.Sprintf("tool %q: input schema", name), t.Input.Schema); err != nil {
				return err
			}
		}
	}
	return nil
}
