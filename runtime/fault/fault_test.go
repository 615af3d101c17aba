package fault_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/fault"
	"agentc.dev/agentc/runtime/provider/anthropic"
	"agentc.dev/agentc/runtime/provider/openai"
	"agentc.dev/agentc/runtime/provider/retry"
)

// script is a recorded run: a tool call, then the answer through the
// output tool.
func script() *fault.Script {
	return &fault.Script{
		Models: []agentrt.Response{
			{Message: agentrt.Message{Role: agentrt.Assistant, ToolCalls: []agentrt.ToolCall{{ID: "call_1", Name: "lookup", Arguments: json.RawMessage(`{"q":"disk"}`)}}}, Usage: agentrt.Usage{Input: 100, Output: 10, Cached: 40}},
			{Message: agentrt.Message{Role: agentrt.Assistant, Content: "Here it is.", ToolCalls: []agentrt.ToolCall{{ID: "call_2", Name: "answer_ab12", Arguments: json.RawMessage(`{"status":"done"}`)}}}, Usage: agentrt.Usage{Input: 150, Output: 12}},
		},
		Tools: []fault.ToolResult{
			{Tool: "lookup", Arguments: json.RawMessage(`{"q":"other"}`), Result: agentrt.ToolResult{Content: "other"}},
			{Tool: "lookup", Arguments: json.RawMessage(`{ "q" : "disk" }`), Result: agentrt.ToolResult{Content: "the disk is full"}},
		},
	}
}

func agentPlan() *plan.Plan {
	return &plan.Plan{Output: &plan.Lowering{Mode: plan.ModeTool, Tool: "answer_ab12"}, Agent: plan.Agent{
		Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{"lookup": {Kind: "exec", Timeout: "20s"}}},
		Output:       &plan.Output{Name: "answer", Retries: 2, Schema: json.RawMessage(`{"type":"object","properties":{"status":{"enum":["done"]}},"required":["status"]}`)},
	}}
}

// attempts records a client's failed attempts.
type attempts struct {
	mu   sync.Mutex
	errs []error
	wait []time.Duration
}

func (a *attempts) policy() retry.Policy {
	return retry.Policy{Attempts: 3, Base: time.Millisecond, Max: time.Millisecond, RetryAfterCap: 5 * time.Second,
		OnAttempt: func(_ int, err error, wait time.Duration) {
			a.mu.Lock()
			defer a.mu.Unlock()
			a.errs, a.wait = append(a.errs, err), append(a.wait, wait)
		}}
}

// client is the real provider client of a wire, pointed at url.
func client(t *testing.T, wire, url string, a *attempts) agentrt.Model {
	t.Helper()
	var m agentrt.Model
	var err error
	if wire == fault.WireOpenAI {
		m, err = openai.New(openai.Config{BaseURL: url, Retry: a.policy()})
	} else {
		m, err = anthropic.New(anthropic.Config{BaseURL: url, Retry: a.policy()})
	}
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func request(maxTokens int) *agentrt.Request {
	return &agentrt.Request{
		Model:           "claude-sonnet-4-5",
		MaxOutputTokens: maxTokens,
		Messages:        []agentrt.Message{{Role: agentrt.System, Content: "Be brief."}, {Role: agentrt.User, Content: "Status?"}},
		Tools: []agentrt.ToolSpec{
			{Name: "lookup", Description: "Look up.", Schema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)},
			{Name: "answer_ab12", Description: "Answer.", Schema: json.RawMessage(`{"type":"object","properties":{"status":{"type":"string"}}}`)},
		},
		ToolChoice: agentrt.ToolChoice{Mode: agentrt.ChooseAuto},
		OutputTool: "answer_ab12",
	}
}

func serve(t *testing.T, wire, name string) *fault.Server {
	t.Helper()
	k, ok := fault.Lookup(name)
	if name != "" && !ok {
		t.Fatalf("no fault %q", name)
	}
	sv, err := fault.NewServer(wire, script(), k, agentPlan())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sv.Close() })
	return sv
}

// sameMessage fails unless got is the recorded response want, as the
// client read it.
func sameMessage(t *testing.T, got *agentrt.Response, want agentrt.Response) {
	t.Helper()
	g, _ := json.Marshal(got.Message)
	w, _ := json.Marshal(want.Message)
	if string(g) != string(w) {
		t.Errorf("message:\n got %s\nwant %s", g, w)
	}
	if got.Usage != want.Usage {
		t.Errorf("usage: got %+v, want %+v", got.Usage, want.Usage)
	}
}

// Each model fault, against the real client of each wire format, plain
// and (Anthropic, with a large max_tokens) streamed: the retried faults
// are retried and then served the response the call would have had; the
// answer faults come before the recorded answer; the script's responses
// follow, as the clients parse them.
func TestModelFaults(t *testing.T) {
	type wire struct {
		name      string
		maxTokens int
	}
	wires := []wire{{fault.WireOpenAI, 0}, {fault.WireAnthropic, 0}, {fault.WireAnthropic, 64000}}
	retried := map[string]string{
		fault.RateLimit:   "429",
		fault.ServerError: "500",
		fault.Dropped:     "",
		fault.Truncated:   "",
	}
	for _, w := range wires {
		for _, k := range fault.Kinds {
			if k.Name == fault.ToolError || k.Name == fault.ToolHang {
				continue
			}
			t.Run(w.name+"/"+k.Name+"/"+map[bool]string{true: "stream", false: "plain"}[w.maxTokens > 0], func(t *testing.T) {
				sv := serve(t, w.name, k.Name)
				a := &attempts{}
				m := client(t, w.name, sv.URL, a)
				ctx := context.Background()
				s := script()
				switch k.Name {
				case fault.Timeout:
					ctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
					defer cancel()
					_, err := m.Complete(ctx, request(w.maxTokens))
					if !errors.Is(err, context.DeadlineExceeded) {
						t.Fatalf("the call ended with %v, want the deadline", err)
					}
					if !sv.Injected() {
						t.Errorf("the fault is not said injected")
					}
					return
				case fault.InvalidAnswer, fault.Prose:
					got, err := m.Complete(ctx, request(w.maxTokens))
					if err != nil {
						t.Fatal(err)
					}
					sameMessage(t, got, s.Models[0])
					got, err = m.Complete(ctx, request(w.maxTokens))
					if err != nil {
						t.Fatal(err)
					}
					if k.Name == fault.Prose {
						if len(got.Message.ToolCalls) > 0 || !strings.Contains(got.Message.Content, "rather explain in words") {
							t.Errorf("the prose fault answered %+v", got.Message)
						}
					} else if len(got.Message.ToolCalls) != 1 || got.Message.ToolCalls[0].Name != "answer_ab12" || string(got.Message.ToolCalls[0].Arguments) != "{}" {
						t.Errorf("the invalid answer is %+v, want the output tool called with {}", got.Message)
					}
				default:
					got, err := m.Complete(ctx, request(w.maxTokens))
					if err != nil {
						t.Fatal(err)
					}
					sameMessage(t, got, s.Models[0])
					want, isRetried := retried[k.Name]
					if isRetried != (len(a.errs) == 1) {
						t.Fatalf("failed attempts: %v, want one for %s", a.errs, k.Name)
					}
					if isRetried && !strings.Contains(a.errs[0].Error(), want) {
						t.Errorf("the failed attempt: %v, want %q", a.errs[0], want)
					}
					if k.Name == fault.RateLimit && a.wait[0] < time.Second {
						t.Errorf("waited %s after the 429, want its Retry-After of 1s", a.wait[0])
					}
				}
				got, err := m.Complete(ctx, request(w.maxTokens))
				if err != nil {
					t.Fatal(err)
				}
				sameMessage(t, got, s.Models[1])
				_, err = m.Complete(ctx, request(w.maxTokens))
				if err == nil || !strings.Contains(err.Error(), "more model calls than the journal recorded (2)") {
					t.Errorf("a call past the script: %v", err)
				}
				// An outage refuses the agent's own model only, which
				// these requests do not name.
				if injected := sv.Injected(); injected != (k.Name != fault.Outage) {
					t.Errorf("the fault said injected: %v", injected)
				}
			})
		}
	}
}

// The server reads what a request says however it is written: white
// space and key order do not matter, and a body that is not JSON is a
// 400 in the provider's error shape.
func TestServerRequests(t *testing.T) {
	for _, tc := range []struct {
		wire, path, body string
		status           int
		want             string
	}{
		{fault.WireOpenAI, "/v1/chat/completions", `{"model":"gpt-4o","messages":[]}`, 200, `"object":"chat.completion"`},
		{fault.WireOpenAI, "/v1/chat/completions", "{\n\t\"messages\" : [ ] ,\r\n  \"model\" :\"gpt-4o\" }", 200, `"model":"gpt-4o"`},
		{fault.WireOpenAI, "/v1/chat/completions", `{"model": "gpt-4o", "stream": true}`, 400, `"error":{`},
		{fault.WireOpenAI, "/v1/chat/completions", `{"model":`, 400, `"type":"invalid_request_error"`},
		{fault.WireOpenAI, "/v1/embeddings", `{}`, 404, `"error":{`},
		{fault.WireAnthropic, "/v1/messages", `{"stream":false,"max_tokens":10,"model":"claude-x"}`, 200, `"type":"message"`},
		{fault.WireAnthropic, "/v1/messages", "{ \"model\"\t:\t\"claude-x\" ,\n \"stream\" : true }", 200, "event: message_start\ndata: "},
		{fault.WireAnthropic, "/v1/messages", `[]`, 400, `{"error":{"message":`},
	} {
		sv := serve(t, tc.wire, "")
		base := strings.TrimSuffix(sv.URL, "/v1")
		resp, err := http.Post(base+tc.path, "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s %s %q: %d %s, want %d with %q", tc.wire, tc.path, tc.body, resp.StatusCode, body, tc.status, tc.want)
		}
	}
}

// Tools are answered from the script, by tool and arguments (as JSON, not
// as written), the first call failing as the tool fault says.
func TestTools(t *testing.T) {
	lookup := map[string]agentrt.Tool{"lookup": specOnly{}}
	ctx := context.Background()
	played, none := fault.Tools(lookup, script(), fault.Kind{}, agentPlan())
	res, err := played["lookup"].Call(ctx, json.RawMessage(`{"q":"disk"}`))
	if err != nil || res.Content != "the disk is full" {
		t.Errorf("a call with recorded arguments: %+v, %v", res, err)
	}
	if none() {
		t.Errorf("no tool fault, yet one was injected")
	}
	res, err = played["lookup"].Call(ctx, json.RawMessage(`{"q":"new"}`))
	if err != nil || res.Content != "other" {
		t.Errorf("a call with other arguments gets the next recorded call: %+v, %v", res, err)
	}
	if _, err = played["lookup"].Call(ctx, json.RawMessage(`{}`)); err == nil || !strings.Contains(err.Error(), "recorded no more calls of lookup") {
		t.Errorf("a call past the script: %v", err)
	}

	k, _ := fault.Lookup(fault.ToolError)
	played, injected := fault.Tools(lookup, script(), k, agentPlan())
	if injected() {
		t.Errorf("tool_error: injected before any call")
	}
	if _, err := played["lookup"].Call(ctx, json.RawMessage(`{"q":"disk"}`)); err == nil || !injected() {
		t.Errorf("tool_error: the first call did not fail (%v), or was not said injected (%v)", err, injected())
	}
	if res, err := played["lookup"].Call(ctx, json.RawMessage(`{"q":"disk"}`)); err != nil || res.Content != "the disk is full" {
		t.Errorf("tool_error: the call after: %+v, %v", res, err)
	}

	k, _ = fault.Lookup(fault.ToolHang)
	played, _ = fault.Tools(lookup, script(), k, agentPlan())
	start := time.Now()
	res, err = played["lookup"].Call(ctx, json.RawMessage(`{"q":"disk"}`))
	if err != nil || !res.IsError || !strings.Contains(res.Content, "timed out after 20s") || time.Since(start) < fault.HangFor {
		t.Errorf("tool_hang: %+v, %v after %s", res, err, time.Since(start))
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	played, _ = fault.Tools(lookup, script(), k, agentPlan())
	if _, err := played["lookup"].Call(cctx, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("tool_hang ends with the call's context: %v", err)
	}
}

type specOnly struct{}

func (specOnly) Spec() agentrt.ToolSpec { return agentrt.ToolSpec{Name: "lookup"} }
func (specOnly) Call(context.Context, json.RawMessage) (agentrt.ToolResult, error) {
	return agentrt.ToolResult{}, errors.New("the real tool was called")
}

func TestLoad(t *testing.T) {
	s, err := fault.Load("../../examples/testdata/code-reviewer/focus.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Models) != 3 || len(s.Tools) != 1 || s.Tools[0].Tool != "git_diff" || s.Tools[0].Result.Content != "(no output)" {
		t.Errorf("script: %d models, tools %+v", len(s.Models), s.Tools)
	}
	if s.Models[0].Message.ToolCalls[0].Name != "git_diff" {
		t.Errorf("first model response: %+v", s.Models[0])
	}
	if _, err := fault.Load("testdata/none.jsonl"); err == nil {
		t.Errorf("a missing journal loads")
	}
}

// Invalid finds an answer the contract rejects, and Default and Applies
// say what is expected of each fault.
func TestExpectations(t *testing.T) {
	p := agentPlan()
	if v, err := fault.Invalid(p); err != nil || string(v) != "{}" {
		t.Errorf("Invalid: %s, %v", v, err)
	}
	p.Agent.Output.Schema = json.RawMessage(`{"type":"object"}`)
	if v, err := fault.Invalid(p); err != nil || string(v) != "[]" {
		t.Errorf("Invalid of an object schema: %s, %v", v, err)
	}
	want := map[string]string{fault.Timeout: "deadline", fault.InvalidAnswer: "recovered", fault.Truncated: "recovered", fault.ToolHang: "recovered"}
	for name, w := range want {
		k, _ := fault.Lookup(name)
		if got := fault.Default(k, p); got != w {
			t.Errorf("Default(%s) = %s, want %s", name, got, w)
		}
	}
	p.Agent.Output.Retries = 0
	if k, _ := fault.Lookup(fault.InvalidAnswer); fault.Default(k, p) != fault.Failed {
		t.Errorf("invalid_answer with no retries is not expected to fail the run")
	}
	k, _ := fault.Lookup(fault.Prose)
	p.Output = &plan.Lowering{Mode: plan.ModeTool}
	if fault.Default(k, p) != fault.Recovered {
		t.Errorf("prose in tool mode is not expected to recover")
	}
	p.Output.Mode = plan.ModeNative
	if fault.Default(k, p) != fault.Failed {
		t.Errorf("prose as a native answer with no retries is not expected to fail the run")
	}
	k, _ = fault.Lookup(fault.ToolError)
	if ok, why := fault.Applies(k, p, &fault.Script{}); ok || why != "the run calls no tool" {
		t.Errorf("Applies(tool_error) to a run without tools: %v %q", ok, why)
	}
	k, _ = fault.Lookup(fault.Prose)
	p.Agent.Output = nil
	if ok, _ := fault.Applies(k, p, script()); ok {
		t.Errorf("prose applies to an agent without an output contract")
	}
}

// TestOutage: in each wire format, a call of the agent's own model is
// refused 503 with a Retry-After past what a call waits, the model named
// in the body or (Gemini, Bedrock) the path; a call of another model, a
// fallback's, is served the script.
func TestOutage(t *testing.T) {
	k, ok := fault.Lookup(fault.Outage)
	if !ok {
		t.Fatal("no outage fault")
	}
	p := agentPlan()
	p.Agent.Model = plan.Model{Provider: "openai", Name: "own-1"}
	for _, wire := range []string{fault.WireOpenAI, fault.WireAnthropic, fault.WireGoogle, fault.WireBedrock} {
		t.Run(wire, func(t *testing.T) {
			sv, err := fault.NewServer(wire, script(), k, p)
			if err != nil {
				t.Fatal(err)
			}
			defer sv.Close()
			call := func(model string) *http.Response {
				t.Helper()
				url := sv.URL + "/chat/completions"
				switch wire {
				case fault.WireAnthropic:
					url = sv.URL + "/v1/messages"
				case fault.WireGoogle:
					url = sv.URL + "/v1beta/models/" + model + ":generateContent"
				case fault.WireBedrock:
					url = sv.URL + "/model/" + model + "/converse"
				}
				body := `{}`
				if wire == fault.WireOpenAI || wire == fault.WireAnthropic {
					body = `{"model":"` + model + `"}`
				}
				resp, err := http.Post(url, "application/json", strings.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				return resp
			}
			for range 2 {
				if r := call("own-1"); r.StatusCode != http.StatusServiceUnavailable || r.Header.Get("Retry-After") != "300" {
					t.Errorf("the agent's own model: %d, Retry-After %q", r.StatusCode, r.Header.Get("Retry-After"))
				}
			}
			if r := call("other-2"); r.StatusCode != http.StatusOK {
				t.Errorf("a fallback's model: %d", r.StatusCode)
			}
		})
	}
}

// TestLoadSuperseded: a model call that failed and was made again (a
// resume after a 503) is played back as the call that stood, not as an
// empty response before it; a failed call that stands is refused.
func TestLoadSuperseded(t *testing.T) {
	data, err := os.ReadFile("../../examples/testdata/code-reviewer/focus.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	var out []string
	for _, l := range lines {
		var e map[string]json.RawMessage
		if json.Unmarshal([]byte(l), &e) == nil && string(e["effect"]) == `"1.0"` {
			failed := maps.Clone(e)
			failed["error"] = json.RawMessage(`"openai: 503 Service Unavailable"`)
			failed["response"] = json.RawMessage(`{"deadline":false,"class":"server_error"}`)
			delete(failed, "usage")
			b, _ := json.Marshal(failed)
			out = append(out, string(b)+"\n")
		}
		out = append(out, l)
	}
	file := filepath.Join(t.TempDir(), "retried.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(out, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := fault.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Models) != 3 || len(s.Models[0].Message.ToolCalls) == 0 || s.Models[0].Message.ToolCalls[0].Name != "git_diff" {
		t.Errorf("script of a retried call: %d models, the first %+v", len(s.Models), s.Models[0])
	}
	// The failed call alone, standing: refused.
	var only []string
	for _, l := range out {
		if !strings.Contains(l, `"effect":"1.0"`) || strings.Contains(l, `"error"`) {
			only = append(only, l)
		}
	}
	if err := os.WriteFile(file, []byte(strings.Join(only, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := fault.Load(file); err == nil || !strings.Contains(err.Error(), "failed when it was recorded") {
		t.Errorf("a failed call that stands: %v", err)
	}
}

// TestAnswerFaultsHitTheAnswer: invalid_answer and prose replace the
// answer the journal recorded, wherever it is. An answering turn that
// also calls a tool (keeps_tools) had the tool's arguments replaced and
// its answer left as recorded, so the run answered validly and
// "recovered" without meeting the fault; a recorded run that ended
// without an answer (a bound) had its last model call replaced instead,
// and the fault was said to apply.
func TestAnswerFaultsHitTheAnswer(t *testing.T) {
	p := agentPlan()
	s := script()
	// The answer comes with a call of lookup first.
	s.Models[1].Message.ToolCalls = append([]agentrt.ToolCall{{ID: "call_3", Name: "lookup", Arguments: json.RawMessage(`{"q":"more"}`)}}, s.Models[1].Message.ToolCalls...)
	k, _ := fault.Lookup(fault.InvalidAnswer)
	if ok, why := fault.Applies(k, p, s); !ok {
		t.Fatalf("invalid_answer does not apply: %s", why)
	}
	sv, err := fault.NewServer(fault.WireOpenAI, s, k, p)
	if err != nil {
		t.Fatal(err)
	}
	defer sv.Close()
	m := client(t, fault.WireOpenAI, sv.URL, &attempts{})
	ctx := context.Background()
	if _, err := m.Complete(ctx, request(0)); err != nil {
		t.Fatal(err)
	}
	got, err := m.Complete(ctx, request(0))
	if err != nil {
		t.Fatal(err)
	}
	calls := got.Message.ToolCalls
	if len(calls) != 2 || string(calls[0].Arguments) != `{"q":"more"}` || calls[1].Name != "answer_ab12" || string(calls[1].Arguments) != "{}" {
		t.Errorf("the answering turn with the fault: %+v, want lookup as recorded and the answer {}", calls)
	}
	sameMessage(t, mustComplete(t, m), s.Models[1])

	// A recorded run that gave no answer (it ended on its tool budget
	// after its first turn) has none to replace.
	s.Models = s.Models[:1]
	for _, name := range []string{fault.InvalidAnswer, fault.Prose} {
		k, _ := fault.Lookup(name)
		if ok, why := fault.Applies(k, p, s); ok || why != "the recorded run gives no answer" {
			t.Errorf("Applies(%s) to a run without an answer: %v %q", name, ok, why)
		}
	}
}

func mustComplete(t *testing.T, m agentrt.Model) *agentrt.Response {
	t.Helper()
	r, err := m.Complete(context.Background(), request(0))
	if err != nil {
		t.Fatal(err)
	}
	return r
}
