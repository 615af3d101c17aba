package openai

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// specPath is OpenAI's OpenAPI spec in the repository's test corpora.
var specPath = filepath.Join("..", "..", "..", "testdata", "corpora", "openai-openapi", "openapi.yaml")

var requestSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	data, err := os.ReadFile(specPath)
	if err != nil {
		return nil, err
	}
	var spec any
	if err := yaml.Unmarshal(data, &spec); err != nil {
		return nil, err
	}
	// Round-trip through JSON for the validator's value types.
	js, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	const url = "file:///openapi.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url + "#/components/schemas/CreateChatCompletionRequest")
})

// checkRequestSchema validates a request body the client sent against the
// Chat Completions request schema of the OpenAPI spec.
func checkRequestSchema(t *testing.T, body []byte) {
	t.Helper()
	sch, err := requestSchema()
	if err != nil {
		// Errorf, not Fatalf: the fake server calls this off the test's goroutine.
		t.Errorf("loading the OpenAPI spec %s: %v", specPath, err)
		return
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Errorf("request body is not JSON: %v", err)
		return
	}
	if err := sch.Validate(v); err != nil {
		t.Errorf("request body does not match CreateChatCompletionRequest: %v\n%s", err, body)
	}
}

func TestSpecLoads(t *testing.T) {
	sch, err := requestSchema()
	if err != nil {
		t.Fatalf("loading the OpenAPI spec %s: %v", specPath, err)
	}
	// The check has teeth: bodies the API would reject fail it.
	for _, bad := range []string{
		`{"model": "gpt-test", "messages": []}`,
		`{"model": "gpt-test", "messages": [{"role": "narrator", "content": "x"}]}`,
		`{"model": "gpt-test", "messages": [{"role": "user", "content": "x"}], "tool_choice": {"type": "function"}}`,
		`{"model": "gpt-test", "messages": [{"role": "tool", "content": "x"}]}`,
	} {
		v, _ := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(bad)))
		if sch.Validate(v) == nil {
			t.Errorf("the schema accepts %s", bad)
		}
	}
}
