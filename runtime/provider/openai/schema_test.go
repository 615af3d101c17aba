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

// spec compiles the OpenAPI spec's schemas.
var spec = sync.OnceValues(func() (*jsonschema.Compiler, error) {
	data, err := os.ReadFile(specPath)
	if err != nil {
		return nil, err
	}
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	lowerRecursiveRefs(doc)
	// An input item is told apart by its type (an OpenAPI discriminator,
	// which the validator does not read), and a message with a list of
	// content matches both EasyInputMessage and InputMessage: either is
	// the one the API reads.
	if item, ok := doc.(map[string]any)["components"].(map[string]any)["schemas"].(map[string]any)["InputItem"].(map[string]any); ok {
		item["anyOf"] = item["oneOf"]
		delete(item, "oneOf")
	}
	// Round-trip through JSON for the validator's value types.
	js, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(specURL, v); err != nil {
		return nil, err
	}
	// CreateResponse is an allOf of open objects: the wrapper makes a
	// field none of them defines an error.
	closed := map[string]any{"$ref": specURL + "#/components/schemas/CreateResponse", "unevaluatedProperties": false}
	if err := c.AddResource("file:///create-response.json", closed); err != nil {
		return nil, err
	}
	return c, nil
})

const specURL = "file:///openapi.json"

// lowerRecursiveRefs rewrites the 2019-09 keywords a few of the spec's
// schemas use ($recursiveAnchor, $recursiveRef "#"), which 2020-12 does
// not define, as plain references to the schema itself.
func lowerRecursiveRefs(doc any) {
	root, _ := doc.(map[string]any)
	comps, _ := root["components"].(map[string]any)
	schemas, _ := comps["schemas"].(map[string]any)
	for name, s := range schemas {
		m, ok := s.(map[string]any)
		if !ok || m["$recursiveAnchor"] == nil {
			continue
		}
		delete(m, "$recursiveAnchor")
		var walk func(v any)
		walk = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				if v["$recursiveRef"] == "#" {
					delete(v, "$recursiveRef")
					v["$ref"] = "#/components/schemas/" + name
				}
				for _, e := range v {
					walk(e)
				}
			case []any:
				for _, e := range v {
					walk(e)
				}
			}
		}
		walk(m)
	}
}

var requestSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	c, err := spec()
	if err != nil {
		return nil, err
	}
	return c.Compile(specURL + "#/components/schemas/CreateChatCompletionRequest")
})

var responsesSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	c, err := spec()
	if err != nil {
		return nil, err
	}
	return c.Compile("file:///create-response.json")
})

// checkRequestSchema validates a request body the client sent against the
// Chat Completions request schema of the OpenAPI spec.
func checkRequestSchema(t *testing.T, body []byte) {
	t.Helper()
	checkBody(t, body, requestSchema, "CreateChatCompletionRequest")
}

// checkResponsesSchema validates a request body against the Responses
// API's CreateResponse.
func checkResponsesSchema(t *testing.T, body []byte) {
	t.Helper()
	checkBody(t, body, responsesSchema, "CreateResponse")
}

func checkBody(t *testing.T, body []byte, schema func() (*jsonschema.Schema, error), name string) {
	t.Helper()
	sch, err := schema()
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
		t.Errorf("request body does not match %s: %v\n%s", name, err, body)
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

func TestResponsesSpecLoads(t *testing.T) {
	sch, err := responsesSchema()
	if err != nil {
		t.Fatalf("loading the OpenAPI spec %s: %v", specPath, err)
	}
	for _, ok := range []string{
		`{"model": "gpt-test", "input": []}`,
		`{"model": "gpt-test", "store": false, "input": [{"type": "message", "role": "user", "content": "x"}]}`,
	} {
		v, _ := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(ok)))
		if err := sch.Validate(v); err != nil {
			t.Errorf("the schema refuses %s: %v", ok, err)
		}
	}
	for _, bad := range []string{
		`{"model": "gpt-test", "input": [], "messages": []}`,
		`{"model": "gpt-test", "input": [], "max_completion_tokens": 5}`,
		`{"model": "gpt-test", "input": [{"type": "function_call_output", "call_id": "c"}]}`,
		`{"model": "gpt-test", "input": [], "include": ["reasoning.content"]}`,
		`{"model": "gpt-test", "input": [], "tool_choice": {"type": "function"}}`,
	} {
		v, _ := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(bad)))
		if sch.Validate(v) == nil {
			t.Errorf("the schema accepts %s", bad)
		}
	}
}
