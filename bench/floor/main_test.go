package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"
	"text/template"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	"go.yaml.in/yaml/v3"
)

const (
	agentFile   = "../testdata/agent.cue"
	requestFile = "../testdata/floor.json"
	schemaFile  = "../testdata/schema.json"
	inputFile   = "../testdata/input.json"
	answerFile  = "../testdata/answer.json"
	peerFile    = "../testdata/bench.prompt"
)

// TestSameAsAgent checks that the floor's request says what the bench agent
// says: the same model, instructions, rendered prompt, output tool and
// schema. (run.sh also checks the bytes on the wire, through the server's
// -same.)
func TestSameAsAgent(t *testing.T) {
	agent, str := loadAgent(t)
	var req Request
	readJSON(t, requestFile, &req)

	if got := str("model.name"); got != req.Model {
		t.Errorf("model: agent %q, floor %q", got, req.Model)
	}
	if got := str("instructions"); got != req.System {
		t.Errorf("system message: agent %q, floor %q", got, req.System)
	}
	if got := str("output.description"); got != req.Description {
		t.Errorf("tool description: agent %q, floor %q", got, req.Description)
	}
	// The output name defaults to "answer" in agentc's schema.
	if v := agent.LookupPath(cue.ParsePath("output.name")); v.Exists() || req.Tool != "answer" {
		t.Errorf("the agent names its output tool, or the floor's is not \"answer\" (%q)", req.Tool)
	}
	if got := str("output.mode"); got != "tool" {
		t.Errorf("output.mode is %q; the floor sends a forced tool call", got)
	}

	var input map[string]any
	readJSON(t, inputFile, &input)
	tmpl, err := template.New("prompt").Parse(str("prompt"))
	if err != nil {
		t.Fatal(err)
	}
	var user strings.Builder
	if err := tmpl.Execute(&user, input); err != nil {
		t.Fatal(err)
	}
	if user.String() != req.User {
		t.Errorf("user message: agent %q, floor %q", user.String(), req.User)
	}

	raw, err := agent.LookupPath(cue.ParsePath("output.schema")).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var fromAgent, fromFile any
	if err := json.Unmarshal(raw, &fromAgent); err != nil {
		t.Fatal(err)
	}
	readJSON(t, schemaFile, &fromFile)
	if !reflect.DeepEqual(fromAgent, fromFile) {
		t.Errorf("output schema: agent %s, floor's %s differs", raw, schemaFile)
	}
}

// TestPeerSameAsAgent checks that the peer's prompt file (bench/peer, a
// Genkit program) declares what the bench agent does: the same model,
// input and output schemas, instructions and prompt. (The peer's own test
// checks the messages it sends against the floor's.)
func TestPeerSameAsAgent(t *testing.T) {
	agent, str := loadAgent(t)
	data, err := os.ReadFile(peerFile)
	if err != nil {
		t.Fatal(err)
	}
	// A prompt file is YAML front matter between two lines of "---", then
	// the template.
	parts := strings.SplitN(string(data), "---\n", 3)
	if len(parts) != 3 || parts[0] != "" {
		t.Fatalf("%s: no front matter between two lines of ---", peerFile)
	}
	var front struct {
		Model  string
		Input  struct{ Schema any }
		Output struct {
			Format string
			Schema any
		}
	}
	// Only these keys: a config (a temperature, a token limit) or tools
	// would make the peer's run another agent's.
	dec := yaml.NewDecoder(strings.NewReader(parts[1]))
	dec.KnownFields(true)
	if err := dec.Decode(&front); err != nil {
		t.Fatalf("%s: %v", peerFile, err)
	}
	if want := str("model.provider") + "/" + str("model.name"); front.Model != want {
		t.Errorf("model: agent %q, peer %q", want, front.Model)
	}
	if front.Output.Format != "json" {
		t.Errorf("output format %q, want json", front.Output.Format)
	}
	for _, s := range []struct {
		path string
		peer any
	}{{"input.schema", front.Input.Schema}, {"output.schema", front.Output.Schema}} {
		raw, err := agent.LookupPath(cue.ParsePath(s.path)).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var fromAgent, fromPeer any
		if err := json.Unmarshal(raw, &fromAgent); err != nil {
			t.Fatal(err)
		}
		// YAML's numbers and maps, as JSON's.
		peer, err := json.Marshal(s.peer)
		if err != nil {
			t.Fatalf("%s: %s: %v", peerFile, s.path, err)
		}
		if err := json.Unmarshal(peer, &fromPeer); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fromAgent, fromPeer) {
			t.Errorf("%s: agent %s, peer %s", s.path, raw, peer)
		}
	}
	// Handlebars names the input's fields as {{id}}, text/template as {{.id}}.
	want := "{{role \"system\"}}\n" + str("instructions") + "\n{{role \"user\"}}\n" +
		strings.ReplaceAll(str("prompt"), "{{.", "{{") + "\n"
	if parts[2] != want {
		t.Errorf("%s: template %q, want %q", peerFile, parts[2], want)
	}
}

// loadAgent compiles the bench agent, and returns it with a function
// that looks a string up in it.
func loadAgent(t *testing.T) (cue.Value, func(path string) string) {
	t.Helper()
	src, err := os.ReadFile(agentFile)
	if err != nil {
		t.Fatal(err)
	}
	agent := cuecontext.New().CompileBytes(src, cue.Filename(agentFile))
	if err := agent.Err(); err != nil {
		t.Fatal(err)
	}
	str := func(path string) string {
		s, err := agent.LookupPath(cue.ParsePath(path)).String()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return s
	}
	return agent, str
}

func readJSON(t *testing.T, name string, v any) {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// fake answers every request with a call of the forced tool, arguments
// given.
func fake(t *testing.T, arguments string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ToolChoice struct {
				Function struct{ Name string } `json:"function"`
			} `json:"tool_choice"`
		}
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/chat/completions" || json.Unmarshal(body, &req) != nil {
			http.Error(w, `{"error": {"message": "bad request"}}`, http.StatusBadRequest)
			return
		}
		call := map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": req.ToolChoice.Function.Name, "arguments": arguments}}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "c", "object": "chat.completion", "created": 1, "model": "bench-model",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "tool_calls",
				"message": map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{call}}}},
		})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func TestRun(t *testing.T) {
	answer, err := os.ReadFile(answerFile)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("OPENAI_API_KEY", "sk-test")
	for _, tc := range []struct {
		name, arguments, want, err string
	}{
		{"valid", string(answer), strings.TrimSpace(string(answer)) + "\n", ""},
		{"spaced", `{"area": "ui", "urgency": 1, "summary": "ok"}`, `{"area":"ui","urgency":1,"summary":"ok"}` + "\n", ""},
		{"invalid", `{"area": "ui", "urgency": 9, "summary": "two\nlines"}`, "", "the answer is invalid"},
		{"not JSON", `{"area": `, "", "not JSON"},
	} {
		var stdout, stderr bytes.Buffer
		err := run([]string{"-base-url", fake(t, tc.arguments), "-request", requestFile, "-schema", schemaFile}, &stdout, &stderr)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
		}
		if stdout.String() != tc.want {
			t.Errorf("%s: printed %q, want %q", tc.name, stdout.String(), tc.want)
		}
	}
}
