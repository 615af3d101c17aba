package plan

import (
	"bytes"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// SchemaURL is the base URL a schema is compiled under. It is never
// fetched: the loader refuses every URL.
const SchemaURL = "agentc:///schema.json"

// hermeticLoader refuses to load anything: an agent's schemas must be
// self-contained, so compiling one reads no file and makes no network call.
type hermeticLoader struct{}

func (hermeticLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("agentc loads no schema from outside the manifest (%s); put it under $defs and refer to it with \"#/$defs/...\"", u)
}

// CompileSchema compiles a schema document under JSON Schema 2020-12 (or
// the draft its $schema declares) with a loader that reads nothing, and
// with format asserted: a contract that says "format": "date" means it.
// The compiler and the runtime both compile schemas here, so a value is
// valid to one exactly when it is valid to the other.
func CompileSchema(doc any) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(hermeticLoader{})
	c.AssertFormat()
	if err := c.AddResource(SchemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(SchemaURL)
}

// CompileSchemaJSON compiles a schema held as JSON text.
func CompileSchemaJSON(data []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("schema is not JSON: %w", err)
	}
	return CompileSchema(doc)
}

// UnmarshalJSONValue decodes JSON text into the value form CompileSchema's
// schemas validate (numbers kept exact).
func UnmarshalJSONValue(data []byte) (any, error) {
	return jsonschema.UnmarshalJSON(bytes.NewReader(data))
}
