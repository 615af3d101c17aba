package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/journal"
	"agentc.dev/agentc/runtime/provider/anthropic"
	"agentc.dev/agentc/runtime/provider/openai"
	"agentc.dev/agentc/runtime/provider/retry"
)

// fallbackPlan is an agent on OpenAI whose calls fall back to Anthropic.
func fallbackPlan(t *testing.T, alsoOn ...string) *plan.Plan {
	t.Helper()
	out := &plan.Output{Name: "answer", Description: "The label.", Mode: "tool", Enforce: "local", Retries: 2,
		Schema: json.RawMessage(`{"type":"object","properties":{"label":{"enum":["a","b"]}},"required":["label"]}`)}
	p := &plan.Plan{Agent: plan.Agent{
		Name:         "labeler",
		Model:        plan.Model{Provider: "openai", Name: "gpt-4o-2024-08-06", MaxOutputTokens: 100, Fallback: &plan.Fallback{Models: []string{"anthropic:claude-sonnet-4-5"}, AlsoOn: alsoOn}},
		Instructions: "Label.",
		Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{}},
		Output:       out,
		Strategy:     plan.Strategy{OnProse: "remind", Reminders: 2},
	}, Fallbacks: []plan.FallbackModel{{Model: plan.Model{Provider: "anthropic", Name: "claude-sonnet-4-5", MaxOutputTokens: 100}}}}
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	return p
}

// statusServer answers every Chat Completions request with status and
// OpenAI's error body for it, counting them.
func statusServer(t *testing.T, status int, code string, n *atomic.Int32) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"message":"%s (test server)","type":"server_error","param":null,"code":%q}}`, http.StatusText(status), code)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// messagesServer answers every Messages request by calling the tool it
// is forced to, with {"label":"b"}, as Anthropic's API does.
func messagesServer(t *testing.T, n *atomic.Int32) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		var req struct {
			Model      string `json:"model"`
			ToolChoice struct {
				Name string `json:"name"`
			} `json:"tool_choice"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil || req.ToolChoice.Name == "" {
			w.WriteHeader(400)
			io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"tool_choice"}}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"msg_1","type":"message","role":"assistant","model":%q,"stop_reason":"tool_use","stop_sequence":null,
"content":[{"type":"tool_use","id":"toolu_1","name":%q,"input":{"label":"b"}}],
"usage":{"input_tokens":30,"output_tokens":7}}`, req.Model, req.ToolChoice.Name)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

var fastRetry = retry.Policy{Attempts: 3, Base: time.Millisecond, Max: 2 * time.Millisecond}

// TestFallbackAfter503: OpenAI answers 503 to every attempt; once the
// call's attempts are spent, Anthropic answers, in its wire format, and
// the run goes on there. The pool is charged the answering call alone,
// the failed call's reservation given back; the report says who served;
// a replay of the journal makes no call.
func TestFallbackAfter503(t *testing.T) {
	var openaiCalls, anthropicCalls atomic.Int32
	primary, err := openai.New(openai.Config{BaseURL: statusServer(t, 503, "", &openaiCalls), APIKey: "sk-test", Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	fallback, err := anthropic.New(anthropic.Config{BaseURL: messagesServer(t, &anthropicCalls), APIKey: "sk-ant-test", Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	p := fallbackPlan(t)
	pool := agentrt.NewPool(10000)
	path := filepath.Join(t.TempDir(), "run.jsonl")
	w, err := journal.Create(path, journal.Header{Plan: string(p.Digests.Plan), Run: "r1", Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	var events []agentrt.Event
	r, err := agentrt.New(p, agentrt.Options{Model: primary, Pool: pool, Journal: &agentrt.Journal{Writer: w},
		Events: func(e agentrt.Event) { events = append(events, e) },
		FallbackModel: func(q *plan.Plan) (agentrt.Model, error) {
			if q.Agent.Model.Provider != "anthropic" || q.Agent.Model.Name != "claude-sonnet-4-5" {
				t.Errorf("the fallback's plan names %s %s", q.Agent.Model.Provider, q.Agent.Model.Name)
			}
			return fallback, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background(), nil)
	w.Close()
	if err != nil || rep.Outcome != agentrt.OutcomeOK || string(rep.Answer) != `{"label":"b"}` {
		t.Fatalf("run: %v, %+v", err, rep)
	}
	if openaiCalls.Load() != 3 || anthropicCalls.Load() != 1 {
		t.Errorf("%d OpenAI attempts and %d Anthropic calls, want 3 and 1", openaiCalls.Load(), anthropicCalls.Load())
	}
	if len(rep.Fallbacks) != 1 || rep.Fallbacks[0].Class != agentrt.FailureUnavailable || rep.Fallbacks[0].To.Provider != "anthropic" {
		t.Errorf("fallbacks %+v", rep.Fallbacks)
	}
	if rr := rep.Rounds[0]; rr.Provider != "anthropic" || rr.Model != "claude-sonnet-4-5" || len(rr.Fallbacks) != 1 {
		t.Errorf("round %+v", rr)
	}
	if got := pool.Spent(); got != int64(rep.Usage.Total()) || got != 37 {
		t.Errorf("the pool spent %d, the run used %d; want 37", got, rep.Usage.Total())
	}
	seen := false
	for _, e := range events {
		seen = seen || e.Type == agentrt.EventModelFallback && e.Provider == "anthropic" && e.Name == "claude-sonnet-4-5"
	}
	if !seen {
		t.Error("no model_fallback event")
	}

	// The replay serves the failure and the fallback's answer.
	rec, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	openaiCalls.Store(0)
	anthropicCalls.Store(0)
	r2, err := agentrt.New(p, agentrt.Options{Model: primary, Journal: &agentrt.Journal{Recorded: rec, Replay: true},
		FallbackModel: func(*plan.Plan) (agentrt.Model, error) { return fallback, nil }})
	if err != nil {
		t.Fatal(err)
	}
	rep2, err := r2.Run(context.Background(), nil)
	if err != nil || rep2.Outcome != agentrt.OutcomeOK || string(rep2.Answer) != `{"label":"b"}` || rep2.Divergence != nil || len(rep2.Fallbacks) != 1 {
		t.Fatalf("replay: %v, %+v", err, rep2)
	}
	if openaiCalls.Load()+anthropicCalls.Load() != 0 {
		t.Errorf("the replay made %d calls", openaiCalls.Load()+anthropicCalls.Load())
	}
}

// TestFallbackClasses: which failures fall back. A 400 (a request the
// server refused as it was) and a 401 do not; a 401 does where the plan
// says auth; a spent quota only where it says quota.
func TestFallbackClasses(t *testing.T) {
	for _, tc := range []struct {
		status int
		code   string
		alsoOn []string
		falls  bool
	}{
		{400, "", nil, false},
		{401, "invalid_api_key", nil, false},
		{401, "invalid_api_key", []string{"auth"}, true},
		{429, "insufficient_quota", nil, false},
		{429, "insufficient_quota", []string{"quota"}, true},
		{404, "model_not_found", nil, true},
		{400, "context_length_exceeded", nil, true},
		{500, "", nil, true},
	} {
		t.Run(fmt.Sprintf("%d-%s-%v", tc.status, tc.code, tc.alsoOn), func(t *testing.T) {
			var openaiCalls, anthropicCalls atomic.Int32
			primary, err := openai.New(openai.Config{BaseURL: statusServer(t, tc.status, tc.code, &openaiCalls), APIKey: "sk-test", Retry: fastRetry})
			if err != nil {
				t.Fatal(err)
			}
			fallback, err := anthropic.New(anthropic.Config{BaseURL: messagesServer(t, &anthropicCalls), APIKey: "sk-ant-test", Retry: fastRetry})
			if err != nil {
				t.Fatal(err)
			}
			r, err := agentrt.New(fallbackPlan(t, tc.alsoOn...), agentrt.Options{Model: primary,
				FallbackModel: func(*plan.Plan) (agentrt.Model, error) { return fallback, nil }})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := r.Run(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := rep.Outcome == agentrt.OutcomeOK && len(rep.Fallbacks) == 1; got != tc.falls {
				t.Errorf("fell back: %v, want %v (%s: %s)", got, tc.falls, rep.Outcome, rep.Error)
			}
			if !tc.falls && anthropicCalls.Load() != 0 {
				t.Errorf("Anthropic was called %d times", anthropicCalls.Load())
			}
		})
	}
}

// TestResumeAfterFallback: a run's call failed and its fallback answered;
// the run was cut off later. A resume serves the failure and the
// fallback's answer, as the run went on from them, rather than making the
// failed call again: the primary model, well again, is sent nothing, and
// the resume goes on where the recorded run did, without diverging, nor
// reserving in its pool for a call it does not make.
func TestResumeAfterFallback(t *testing.T) {
	var openaiCalls, anthropicCalls atomic.Int32
	var healthy atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		openaiCalls.Add(1)
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if !healthy.Load() {
			w.WriteHeader(503)
			io.WriteString(w, `{"error":{"message":"Service Unavailable (test server)","type":"server_error","param":null,"code":null}}`)
			return
		}
		var req struct {
			ToolChoice struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tool_choice"`
		}
		json.Unmarshal(body, &req)
		fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-2024-08-06",
"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":%q,"arguments":"{\"label\":\"a\"}"}}]}}],
"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`, req.ToolChoice.Function.Name)
	}))
	t.Cleanup(srv.Close)
	primary, err := openai.New(openai.Config{BaseURL: srv.URL, APIKey: "sk-test", Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	fallback, err := anthropic.New(anthropic.Config{BaseURL: messagesServer(t, &anthropicCalls), APIKey: "sk-ant-test", Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	p := fallbackPlan(t)
	path := filepath.Join(t.TempDir(), "run.jsonl")
	w, err := journal.Create(path, journal.Header{Plan: string(p.Digests.Plan), Run: "r1", Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	opts := func(j *agentrt.Journal) agentrt.Options {
		return agentrt.Options{Model: primary, Journal: j,
			FallbackModel: func(*plan.Plan) (agentrt.Model, error) { return fallback, nil }}
	}
	r, err := agentrt.New(p, opts(&agentrt.Journal{Writer: w}))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background(), nil)
	w.Close()
	if err != nil || string(rep.Answer) != `{"label":"b"}` || len(rep.Fallbacks) != 1 {
		t.Fatalf("run: %v, %+v", err, rep)
	}

	healthy.Store(true)
	openaiCalls.Store(0)
	anthropicCalls.Store(0)
	rec, w2, err := journal.Resume(path)
	if err != nil {
		t.Fatal(err)
	}
	// A pool that could hold no live call: every call of the resume is
	// served, and reserves nothing.
	o := opts(&agentrt.Journal{Recorded: rec, Writer: w2})
	o.Pool = agentrt.NewPool(1)
	r2, err := agentrt.New(p, o)
	if err != nil {
		t.Fatal(err)
	}
	rep2, err := r2.Run(context.Background(), nil)
	w2.Close()
	if err != nil || rep2.Divergence != nil || string(rep2.Answer) != `{"label":"b"}` || len(rep2.Fallbacks) != 1 {
		t.Fatalf("resume: %v, answer %s, divergence %+v, fallbacks %+v", err, rep2.Answer, rep2.Divergence, rep2.Fallbacks)
	}
	if openaiCalls.Load()+anthropicCalls.Load() != 0 {
		t.Errorf("the resume sent %d requests to OpenAI and %d to Anthropic, want none", openaiCalls.Load(), anthropicCalls.Load())
	}
}

// TestNoEscalationAcrossProviders: strategy.escalate names a model of the
// agent's own provider. Once a fallback of another provider serves the
// run, an answer that fails validation is sent back to the fallback's
// model, which corrects it; the escalation's model, sent to Anthropic,
// was not one it serves (a 404), and the run failed with no fallback left.
func TestNoEscalationAcrossProviders(t *testing.T) {
	var openaiCalls atomic.Int32
	primary, err := openai.New(openai.Config{BaseURL: statusServer(t, 503, "", &openaiCalls), APIKey: "sk-test", Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	var models []string
	labels := []string{"c", "a"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model      string `json:"model"`
			ToolChoice struct {
				Name string `json:"name"`
			} `json:"tool_choice"`
		}
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &req)
		models = append(models, req.Model)
		w.Header().Set("Content-Type", "application/json")
		if !strings.HasPrefix(req.Model, "claude-") || len(labels) == 0 {
			w.WriteHeader(404)
			fmt.Fprintf(w, `{"type":"error","error":{"type":"not_found_error","message":"model: %s"}}`, req.Model)
			return
		}
		label := labels[0]
		labels = labels[1:]
		fmt.Fprintf(w, `{"id":"msg_1","type":"message","role":"assistant","model":%q,"stop_reason":"tool_use","stop_sequence":null,
"content":[{"type":"tool_use","id":"toolu_%d","name":%q,"input":{"label":%q}}],
"usage":{"input_tokens":30,"output_tokens":7}}`, req.Model, len(models), req.ToolChoice.Name, label)
	}))
	t.Cleanup(srv.Close)
	fallback, err := anthropic.New(anthropic.Config{BaseURL: srv.URL, APIKey: "sk-ant-test", Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	p := fallbackPlan(t)
	p.Agent.Strategy.Escalate = &plan.Escalate{AfterInvalid: 1, Model: "gpt-4.1-2025-04-14"}
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	r, err := agentrt.New(p, agentrt.Options{Model: primary,
		FallbackModel: func(*plan.Plan) (agentrt.Model, error) { return fallback, nil }})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcome != agentrt.OutcomeOK || string(rep.Answer) != `{"label":"a"}` || rep.InvalidAnswers != 1 {
		t.Errorf("outcome %s (%s), answer %s, %d invalid answers; want ok, {\"label\":\"a\"}, 1", rep.Outcome, rep.Error, rep.Answer, rep.InvalidAnswers)
	}
	if want := []string{"claude-sonnet-4-5", "claude-sonnet-4-5"}; !slices.Equal(models, want) {
		t.Errorf("Anthropic was asked for models %q, want %q", models, want)
	}
}
