package testmodel

import (
	"context"
	"encoding/json"
	"errors"
	"go/parser"
	"go/token"
	"io/fs"
	"reflect"
	"strings"
	"testing"

	agentrt "agentc.dev/agentc/runtime"
)

var (
	searchTool = agentrt.ToolSpec{Name: "search", Description: "Search the docs.",
		Schema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["query"],"properties":{"query":{"type":"string","minLength":3},"limit":{"type":"integer","minimum":1,"maximum":10}}}`)}
	fetchTool = agentrt.ToolSpec{Name: "fetch", Description: "Fetch a page.",
		Schema: json.RawMessage(`{"type":"object","required":["url"],"properties":{"url":{"type":"string","format":"uri"}}}`)}
	answerSchema = `{"type":"object","additionalProperties":false,"required":["label","confidence"],"properties":{"label":{"enum":["bug","feature","question"]},"confidence":{"type":"number","minimum":0,"maximum":1}}}`
	answerTool   = agentrt.ToolSpec{Name: "triage_answer_x1", Description: "The answer.", Schema: json.RawMessage(answerSchema)}
)

func request(msgs ...agentrt.Message) *agentrt.Request {
	return &agentrt.Request{
		Model:      "test",
		Messages:   append([]agentrt.Message{{Role: agentrt.User, Content: "Triage issue 42."}}, msgs...),
		Tools:      []agentrt.ToolSpec{searchTool, fetchTool, answerTool},
		ToolChoice: agentrt.ToolChoice{Mode: "auto"},
		OutputTool: answerTool.Name,
	}
}

func callNames(msg agentrt.Message) []string {
	var out []string
	for _, c := range msg.ToolCalls {
		out = append(out, c.Name)
	}
	return out
}

// results answers every call of msg, each with an error if failed.
func results(msg agentrt.Message, failed bool) []agentrt.Message {
	var out []agentrt.Message
	for _, c := range msg.ToolCalls {
		out = append(out, agentrt.Message{Role: agentrt.ToolRole, ToolCallID: c.ID, Name: c.Name, Content: "ok", IsError: failed})
	}
	return out
}

func complete(t *testing.T, m Model, req *agentrt.Request) *agentrt.Response {
	t.Helper()
	resp, err := m.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Role != agentrt.Assistant {
		t.Errorf("role %q, want assistant", resp.Message.Role)
	}
	if resp.Usage.Input < 1 || resp.Usage.Output < 1 {
		t.Errorf("usage %+v: want at least 1 each", resp.Usage)
	}
	for _, c := range resp.Message.ToolCalls {
		for _, spec := range req.Tools {
			if spec.Name == c.Name && len(spec.Schema) > 0 {
				mustValidate(t, string(spec.Schema), c.Arguments)
			}
		}
	}
	return resp
}

// TestConversation: the model calls each tool once, then answers through
// the output tool with a valid answer.
func TestConversation(t *testing.T) {
	m := Model{}
	first := complete(t, m, request())
	if got, want := callNames(first.Message), []string{"search", "fetch"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("first turn calls %v, want %v", got, want)
	}
	if first.Message.ToolCalls[0].ID != "call_1" || first.Message.ToolCalls[1].ID != "call_2" {
		t.Errorf("call IDs %q, %q; want call_1, call_2", first.Message.ToolCalls[0].ID, first.Message.ToolCalls[1].ID)
	}
	if got, want := string(first.Message.ToolCalls[0].Arguments), `{"query":"example query"}`; got != want {
		t.Errorf("search arguments %s, want the simplest %s", got, want)
	}

	history := append([]agentrt.Message{first.Message}, results(first.Message, false)...)
	second := complete(t, m, request(history...))
	if got, want := callNames(second.Message), []string{answerTool.Name}; !reflect.DeepEqual(got, want) {
		t.Fatalf("second turn calls %v, want %v", got, want)
	}
	answer := second.Message.ToolCalls[0]
	if answer.ID != "call_3" {
		t.Errorf("answer call ID %q, want call_3", answer.ID)
	}
	mustValidate(t, answerSchema, answer.Arguments)

	// A rejected answer is retried with another seed, so it can differ.
	seen := map[string]bool{string(answer.Arguments): true}
	for range 4 {
		history = append(history, second.Message)
		history = append(history, results(second.Message, true)...)
		second = complete(t, m, request(history...))
		if got := callNames(second.Message); len(got) != 1 || got[0] != answerTool.Name {
			t.Fatalf("retry calls %v, want the output tool", got)
		}
		seen[string(second.Message.ToolCalls[0].Arguments)] = true
	}
	if len(seen) < 2 {
		t.Errorf("four retries of a rejected answer all repeated %v", seen)
	}
	ids := map[string]bool{}
	for _, msg := range append(history, second.Message) {
		for _, c := range msg.ToolCalls {
			if ids[c.ID] {
				t.Errorf("call ID %q used twice", c.ID)
			}
			ids[c.ID] = true
		}
	}
}

func TestToolChoiceForcesTool(t *testing.T) {
	req := request()
	req.ToolChoice = agentrt.ToolChoice{Mode: "tool", Name: "fetch"}
	resp := complete(t, Model{}, req)
	if got := callNames(resp.Message); !reflect.DeepEqual(got, []string{"fetch"}) {
		t.Errorf("calls %v, want [fetch]", got)
	}
	req.ToolChoice = agentrt.ToolChoice{Mode: "tool", Name: answerTool.Name}
	resp = complete(t, Model{}, req)
	if got := callNames(resp.Message); !reflect.DeepEqual(got, []string{answerTool.Name}) {
		t.Errorf("calls %v, want the output tool", got)
	}
	req.ToolChoice = agentrt.ToolChoice{Mode: "tool", Name: "nope"}
	if _, err := (Model{}).Complete(context.Background(), req); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("forcing an unknown tool: got %v, want an error naming it", err)
	}
}

func TestProseWithoutTools(t *testing.T) {
	resp := complete(t, Model{}, &agentrt.Request{Model: "test", Messages: []agentrt.Message{{Role: agentrt.User, Content: "Hi."}}})
	if resp.Message.Content != Prose || len(resp.Message.ToolCalls) != 0 {
		t.Errorf("got %+v, want the prose answer %q", resp.Message, Prose)
	}
}

// TestProseAfterTools: without an output tool, the model answers in prose
// once every tool has been called; with mode "required" it calls a tool.
func TestProseAfterTools(t *testing.T) {
	req := request()
	req.Tools, req.OutputTool = []agentrt.ToolSpec{searchTool}, ""
	first := complete(t, Model{}, req)
	req.Messages = append(append(req.Messages, first.Message), results(first.Message, false)...)
	if resp := complete(t, Model{}, req); resp.Message.Content != Prose {
		t.Errorf("got %+v, want prose", resp.Message)
	}
	req.ToolChoice.Mode = "required"
	if resp := complete(t, Model{}, req); !reflect.DeepEqual(callNames(resp.Message), []string{"search"}) {
		t.Errorf("mode required: got %+v, want a call of search", resp.Message)
	}
}

func TestToolWithoutSchema(t *testing.T) {
	req := &agentrt.Request{Tools: []agentrt.ToolSpec{{Name: "ping"}, {Name: "any", Schema: json.RawMessage(`{}`)}}}
	resp := complete(t, Model{}, req)
	for _, c := range resp.Message.ToolCalls {
		if string(c.Arguments) != `{}` {
			t.Errorf("%s: arguments %s, want {}", c.Name, c.Arguments)
		}
	}
}

func TestUsageDeterministic(t *testing.T) {
	a := complete(t, Model{Seed: 3}, request())
	b := complete(t, Model{Seed: 3}, request())
	if !reflect.DeepEqual(a, b) {
		t.Errorf("two runs differ:\n%+v\n%+v", a, b)
	}
	in, _ := json.Marshal(request().Messages)
	tools, _ := json.Marshal(request().Tools)
	out, _ := json.Marshal(a.Message)
	want := agentrt.Usage{Input: (len(in) + len(tools) + 3) / 4, Output: (len(out) + 3) / 4}
	if a.Usage != want {
		t.Errorf("usage %+v, want %+v", a.Usage, want)
	}
}

func TestCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (Model{}).Complete(ctx, request()); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

func TestUnsatisfiableTool(t *testing.T) {
	req := request()
	req.Tools = append(req.Tools, agentrt.ToolSpec{Name: "broken", Schema: json.RawMessage(`{"type":"object","required":["a"],"properties":{"a":{"type":"string","pattern":"^x$","minLength":2}}}`)})
	_, err := Model{}.Complete(context.Background(), req)
	var ue *UnsatisfiableError
	if !errors.As(err, &ue) || ue.Keyword != "pattern" {
		t.Fatalf("got %v, want an *UnsatisfiableError naming pattern", err)
	}
	if !strings.Contains(err.Error(), `"broken"`) {
		t.Errorf("error %q does not name the tool", err)
	}
}

// TestImports: the test model links neither CUE nor the compiler, only the
// standard library, the runtime, the plan and the validator.
func TestImports(t *testing.T) {
	pkgs, err := parser.ParseDir(token.NewFileSet(), ".", func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	const validator = "github.com/santhosh-tekuri/jsonschema/v6"
	for _, pkg := range pkgs {
		for name, f := range pkg.Files {
			for _, imp := range f.Imports {
				path := strings.Trim(imp.Path.Value, `"`)
				std := !strings.Contains(strings.Split(path, "/")[0], ".")
				ours := path == "agentc.dev/agentc/runtime" || path == "agentc.dev/agentc/plan"
				if !std && !ours && path != validator && !strings.HasPrefix(path, validator+"/") {
					t.Errorf("%s imports %s", name, path)
				}
			}
		}
	}
}
