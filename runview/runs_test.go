package runview

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"agentc.dev/agentc/compile"
	"agentc.dev/agentc/cost"
	"agentc.dev/agentc/manifest"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/filestore"
	"agentc.dev/agentc/runtime/journal"
	"agentc.dev/agentc/runtime/provider/openai"
	"agentc.dev/agentc/runtime/tool"
)

// TestRuns runs each case of testdata/runs with the real runtime: its
// agent.cue, compiled, against an OpenAI Chat Completions server scripted
// by fake.json, its calls that need approval decided as approvals.json
// says, on a clock that moves only as those files say, priced by
// prices.json, recorded in a journal. The page of that journal and the
// run's report, priced by each prices*.json, must show what the
// want*.txt of the same suffix says, and its HTML must match each line
// of the html*.txt of that suffix (regular expressions).
func TestRuns(t *testing.T) {
	files, _ := filepath.Glob("testdata/runs/*.txtar")
	if len(files) == 0 {
		t.Fatal("no cases in testdata/runs")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			j, rep := record(t, ar, prices(t, ar, "prices.json"))
			variants := 0
			for _, f := range ar.Files {
				suffix, ok := strings.CutPrefix(f.Name, "prices")
				if !ok || !strings.HasSuffix(suffix, ".json") {
					continue
				}
				variants++
				suffix = strings.TrimSuffix(suffix, ".json")
				p, err := Build(j, rep, prices(t, ar, f.Name), nil)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := describe(p), section(ar, "want"+suffix+".txt"); got != want {
					t.Errorf("priced by %s, the page shows\n%s\nwant\n%s", f.Name, got, want)
				}
				var buf bytes.Buffer
				if err := p.Write(&buf); err != nil {
					t.Fatal(err)
				}
				checkHTML(t, buf.String())
				for _, re := range strings.Split(strings.TrimSpace(section(ar, "html"+suffix+".txt")), "\n") {
					if !regexp.MustCompile(re).MatchString(buf.String()) {
						t.Errorf("priced by %s, the page does not match %s", f.Name, re)
					}
				}
			}
			if variants == 0 {
				t.Fatal("the case has no prices.json")
			}
		})
	}
}

// prices is the embedded price table extended by the case's file name.
func prices(t *testing.T, ar *txtar.Archive, name string) *cost.Table {
	t.Helper()
	u, err := cost.Parse(name, []byte(section(ar, name)), name)
	if err != nil {
		t.Fatal(err)
	}
	table := cost.Embedded()
	table.Extend(u)
	return table
}

// clock is a run's clock: it moves only when the fake server or the
// approver says.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(ms int) {
	c.mu.Lock()
	c.now = c.now.Add(time.Duration(ms) * time.Millisecond)
	c.mu.Unlock()
}

// turn is one reply of the fake server: tool calls, or an answer (a call
// of the output tool, or in native mode the reply's text), after ms
// milliseconds, with the usage reported. A call's id is call_TURN_N
// unless the turn names it (id, answer_id): a model may give two calls
// one id.
type turn struct {
	MS    int `json:"ms"`
	Calls []struct {
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"calls"`
	Answer   json.RawMessage `json:"answer"`
	AnswerID string          `json:"answer_id"`
	Usage    struct {
		Prompt     int `json:"prompt_tokens"`
		Cached     int `json:"cached_tokens"`
		Completion int `json:"completion_tokens"`
	} `json:"usage"`
}

// decision is what approvals.json says of a call: the decision, after
// wait_ms milliseconds; or, with refuse, that no one could decide.
type decision struct {
	WaitMS   int                      `json:"wait_ms"`
	Decision agentrt.ApprovalDecision `json:"decision"`
	Refuse   string                   `json:"refuse"`
}

// record runs the case's agent and returns its journal and report.
func record(t *testing.T, ar *txtar.Archive, table *cost.Table) (*journal.Journal, *agentrt.Report) {
	t.Helper()
	j, rep, _ := recordInput(t, ar, table, nil)
	return j, rep
}

// recordInput runs the case's agent as record does, on the input that
// input returns, when it is not nil, given the store beside the journal
// (FILE.files, as agentc run --record keeps it) to put its files in; it
// returns the journal's path too.
func recordInput(t *testing.T, ar *txtar.Archive, table *cost.Table, input func(*filestore.Store) json.RawMessage) (*journal.Journal, *agentrt.Report, string) {
	t.Helper()
	dir := t.TempDir()
	for _, f := range ar.Files {
		path := filepath.Join(dir, f.Name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var script map[string][]turn // by the agent's instructions
	if err := json.Unmarshal([]byte(section(ar, "fake.json")), &script); err != nil {
		t.Fatalf("fake.json: %v", err)
	}
	var decisions map[string]decision // by the call's key
	if err := json.Unmarshal([]byte(section(ar, "approvals.json")), &decisions); err != nil {
		t.Fatalf("approvals.json: %v", err)
	}
	clk := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	srv := httptest.NewServer(fakeOpenAI(t, script, clk))
	t.Cleanup(srv.Close)

	comp := compile.New(manifest.NewLoader())
	insts, err := comp.Loader().Load([]string{filepath.Join(dir, "agent.cue")})
	if err != nil || len(insts) != 1 {
		t.Fatalf("loading agent.cue: %v (%d agents)", err, len(insts))
	}
	p, ds, err := comp.Build(insts[0])
	if err != nil || p == nil {
		t.Fatalf("compiling agent.cue: %v %v", err, ds)
	}
	model, err := openai.New(openai.Config{BaseURL: srv.URL, APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	tools, closeTools, err := tool.Build(context.Background(), p, tool.Env{BaseDir: dir,
		ModelFor: func(*plan.Plan) (agentrt.Model, error) { return model, nil }, Prices: table})
	if err != nil {
		t.Fatal(err)
	}
	defer closeTools()
	approver := func(_ context.Context, req *agentrt.ApprovalRequest) (agentrt.ApprovalDecision, error) {
		d, ok := decisions[req.Key]
		if !ok {
			t.Errorf("call %s of %s asked for approval; approvals.json does not decide it", req.Key, req.Tool)
			return agentrt.ApprovalDecision{By: agentrt.ByHost, Reason: "not in approvals.json"}, nil
		}
		clk.advance(d.WaitMS)
		if d.Refuse != "" {
			return agentrt.ApprovalDecision{}, &agentrt.ApprovalRefused{Tool: req.Tool, Key: req.Key, Msg: d.Refuse}
		}
		return d.Decision, nil
	}
	file := filepath.Join(dir, "run.jsonl")
	w, err := journal.Create(file, journal.Header{Plan: string(p.Digests.Plan), Run: "r1", OutputSuffix: p.OutputSuffix(),
		Agent: p.Agent.Name, Started: clk.Now()})
	if err != nil {
		t.Fatal(err)
	}
	store, err := filestore.Open(file + ".files")
	if err != nil {
		t.Fatal(err)
	}
	var in json.RawMessage
	if input != nil {
		in = input(store)
	}
	r, err := agentrt.New(p, agentrt.Options{Model: model, Tools: tools, Approver: approver, Clock: clk, Prices: table,
		Journal: &agentrt.Journal{Writer: w}, Files: store})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	j, err := journal.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	return j, rep, file
}

// fakeOpenAI is a Chat Completions server that answers each agent (known
// by its instructions, the system message) with the turns of its script,
// the Nth reply of a conversation being its Nth turn.
func fakeOpenAI(t *testing.T, script map[string][]turn, clk *clock) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
			Tools []struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tools"`
		}
		if !strings.HasSuffix(r.URL.Path, "/chat/completions") || json.Unmarshal(body, &req) != nil || len(req.Messages) == 0 {
			http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, 400)
			return
		}
		instructions, _ := req.Messages[0].Content.(string)
		n := 0
		for _, m := range req.Messages {
			if m.Role == "assistant" {
				n++
			}
		}
		turns := script[instructions]
		if n >= len(turns) {
			t.Errorf("fake.json has no turn %d for %q", n+1, instructions)
			http.Error(w, `{"error":{"message":"unscripted","type":"invalid_request_error"}}`, 400)
			return
		}
		tr := turns[n]
		clk.advance(tr.MS)
		type call struct {
			ID       string `json:"id"`
			Type     string `json:"type"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		}
		var calls []call
		add := func(id, name string, args json.RawMessage) {
			c := call{ID: id, Type: "function"}
			if id == "" {
				c.ID = fmt.Sprintf("call_%d_%d", n+1, len(calls)+1)
			}
			c.Function.Name, c.Function.Arguments = name, string(args)
			calls = append(calls, c)
		}
		for _, c := range tr.Calls {
			add(c.ID, c.Name, c.Arguments)
		}
		msg := map[string]any{"role": "assistant", "content": nil, "tool_calls": calls}
		finish := "tool_calls"
		if tr.Answer != nil {
			// The output tool, or, in native mode, structured output.
			for _, tl := range req.Tools {
				if strings.HasPrefix(tl.Function.Name, "answer") {
					add(tr.AnswerID, tl.Function.Name, tr.Answer)
				}
			}
			if len(calls) == 0 {
				msg, finish = map[string]any{"role": "assistant", "content": string(tr.Answer)}, "stop"
			} else {
				msg["tool_calls"] = calls
			}
		}
		resp := map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": finish, "message": msg}},
			"usage": map[string]any{"prompt_tokens": tr.Usage.Prompt, "completion_tokens": tr.Usage.Completion,
				"total_tokens": tr.Usage.Prompt + tr.Usage.Completion, "prompt_tokens_details": map[string]any{"cached_tokens": tr.Usage.Cached}},
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(resp)
	}
}
