package serve_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"agentc.dev/agentc/serve"
)

// TestOpenAPIDocumentValid: /openapi.json validates against the OpenAPI
// 3.1 specification's own JSON Schema of documents (testdata/openapi,
// with its licence and origin), for agents with and without inputs and
// files; a document that breaks it (no info) is refused, so the check
// can fail.
func TestOpenAPIDocumentValid(t *testing.T) {
	raw, err := os.ReadFile("testdata/openapi/openapi-3.1-schema.json")
	if err != nil {
		t.Fatalf("the OpenAPI 3.1 schema is kept in the repository: %v", err)
	}
	meta, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("openapi-3.1-schema.json", meta); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("openapi-3.1-schema.json")
	if err != nil {
		t.Fatal(err)
	}
	h, err := serve.API([]serve.Agent{labeler(t), reader(t)}, nil, serve.AllAgents(apiToken))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	code, body := call(t, srv, http.MethodGet, "/openapi.json", apiToken, "")
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(doc); err != nil {
		t.Errorf("the document is not a valid OpenAPI 3.1 document: %v", err)
	}
	var broken map[string]any
	if err := json.Unmarshal(body, &broken); err != nil {
		t.Fatal(err)
	}
	delete(broken, "info")
	if err := schema.Validate(broken); err == nil {
		t.Error("a document without info passed")
	}
}
