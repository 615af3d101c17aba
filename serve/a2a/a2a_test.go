package a2a_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/a2asrv"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/journal"
	"agentc.dev/agentc/runtime/testmodel"
	"agentc.dev/agentc/serve"
	a2aserve "agentc.dev/agentc/serve/a2a"
	"agentc.dev/agentc/serve/internal/servetest"
)

const token = "s3cret-token-of-the-a2a-server"

type bearer struct{ next http.RoundTripper }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+token)
	return b.next.RoundTrip(r)
}

func labeler(t *testing.T) serve.Agent {
	t.Helper()
	p := &plan.Plan{Agent: plan.Agent{
		Name: "labeler", Description: "Labels an issue.", Model: plan.Model{Provider: "test", Name: "m"}, Instructions: "Label the issue.",
		Input:        &plan.Input{Schema: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string","minLength":1}},"required":["title"]}`)},
		Prompt:       "{{.title}}",
		Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{}},
		Output: &plan.Output{Name: "answer", Description: "The label.", Mode: "tool", Enforce: "local", Retries: 2,
			Schema: json.RawMessage(`{"type":"object","properties":{"label":{"enum":["bug","feature"]}},"required":["label"],"additionalProperties":false}`)},
		Strategy: plan.Strategy{OnProse: "remind", Reminders: 2},
	}}
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	r, err := agentrt.New(p, agentrt.Options{Model: &testmodel.Model{}})
	if err != nil {
		t.Fatal(err)
	}
	return serve.Agent{Plan: p, Runner: r}
}

// TestA2A: the A2A SDK's own client fetches the agent's card (the skill,
// JSON modes, the bearer scheme, the digests) and sends it a message
// holding the input; the reply holds the answer, valid by the contract,
// as data. A message the input contract refuses is answered with the
// reason; a client without the token is refused.
func TestA2A(t *testing.T) {
	ag := labeler(t)
	srv, card, client := served(t, ag)
	ctx := context.Background()
	if card.Name != "labeler" || card.URL != srv.URL+"/a2a/labeler" || card.DefaultInputModes[0] != "application/json" || len(card.Skills) != 1 ||
		!strings.Contains(strings.Join(card.Skills[0].Tags, " "), "contract:"+string(ag.Plan.Digests.Contract)) || card.SecuritySchemes["bearer"] == nil {
		t.Errorf("card %+v", card)
	}
	if !card.Capabilities.Streaming {
		t.Errorf("the card does not say it streams")
	}
	res, err := client.SendMessage(ctx, &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.DataPart{Data: map[string]any{"title": "Crash on start"}})})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 || len(task.Artifacts[0].Parts) != 2 {
		t.Fatalf("result %#v", res)
	}
	data, ok := task.Artifacts[0].Parts[0].(a2a.DataPart)
	if !ok || (data.Data["label"] != "bug" && data.Data["label"] != "feature") || len(data.Data) != 1 || task.Artifacts[0].Name != "answer" {
		t.Errorf("the answer %#v", task.Artifacts[0])
	}
	// The task is kept: tasks/get finds it, completed.
	got, err := client.GetTask(ctx, &a2a.TaskQueryParams{ID: task.ID})
	if err != nil || got.Status.State != a2a.TaskStateCompleted {
		t.Errorf("tasks/get: %v %+v", err, got)
	}
	// Streamed: submitted, working, the answer, completed, in that order.
	var states []string
	for ev, err := range client.SendStreamingMessage(ctx, &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.DataPart{Data: map[string]any{"title": "Crash on start"}})}) {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.(type) {
		case *a2a.Task:
			states = append(states, "task:"+string(e.Status.State))
		case *a2a.TaskStatusUpdateEvent:
			states = append(states, string(e.Status.State))
		case *a2a.TaskArtifactUpdateEvent:
			states = append(states, "artifact:"+e.Artifact.Name)
		}
	}
	if got := strings.Join(states, " "); got != "task:submitted working artifact:answer completed" {
		t.Errorf("the stream: %s", got)
	}
	// Refused before anything runs: an input, and bounds.
	for _, m := range []*a2a.MessageSendParams{
		{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: `{"title": ""}`})},
		{Message: withMeta(a2a.NewMessage(a2a.MessageRoleUser, a2a.DataPart{Data: map[string]any{"title": "x"}}), map[string]any{serve.MetaBudgets: map[string]any{"rounds": 0}})},
	} {
		res, err = client.SendMessage(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		task, ok := res.(*a2a.Task)
		if !ok || task.Status.State != a2a.TaskStateRejected || task.Status.Message == nil || !strings.Contains(task.Status.Message.Parts[0].(a2a.TextPart).Text, "error: ") {
			t.Errorf("refused: %#v", res)
		}
	}
	// Bounds narrowed: one token is spent at once, and the task fails.
	res, err = client.SendMessage(ctx, &a2a.MessageSendParams{Message: withMeta(a2a.NewMessage(a2a.MessageRoleUser, a2a.DataPart{Data: map[string]any{"title": "x"}}),
		map[string]any{serve.MetaBudgets: map[string]any{"tokens": 1}})})
	if task, ok := res.(*a2a.Task); err != nil || !ok || task.Status.State != a2a.TaskStateFailed {
		t.Errorf("tokens 1: %v %#v", err, res)
	}
	if _, err := agentcard.NewResolver(http.DefaultClient).Resolve(ctx, srv.URL+a2aserve.Prefix+"labeler"); err == nil {
		t.Error("the card was given without the token")
	}
}

// TestA2ATokens: a token for some agents reaches their cards and
// endpoints alone: another agent's card and endpoint are not found, as
// those of an agent not served.
func TestA2ATokens(t *testing.T) {
	lab := labeler(t)
	p := *lab.Plan
	p.Agent.Name = "other"
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	r, err := agentrt.New(&p, agentrt.Options{Model: &testmodel.Model{}})
	if err != nil {
		t.Fatal(err)
	}
	const otherToken = "s3cret-token-of-the-other-agent"
	tokens, err := serve.NewTokens([]serve.Token{{Token: token, Agents: []string{"labeler"}}, {Token: otherToken, Agents: []string{"other"}}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	runs, err := serve.NewRuns("", 0, false)
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle(a2aserve.Prefix, a2aserve.Handler([]serve.Agent{lab, {Plan: &p, Runner: r}}, runs, srv.URL, tokens))
	do := func(method, path, tok, body string) (int, string) {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	send := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"data","data":{"title":"Crash on start"}}]}}}`
	card := a2asrv.WellKnownAgentCardPath
	for _, tc := range []struct{ tok, reach, not string }{{token, "labeler", "other"}, {otherToken, "other", "labeler"}} {
		if code, body := do(http.MethodGet, a2aserve.Prefix+tc.reach+card, tc.tok, ""); code != 200 || !strings.Contains(body, `"name":"`+tc.reach+`"`) {
			t.Errorf("the card of %s, with its token: %d %s", tc.reach, code, body)
		}
		if code, body := do(http.MethodPost, a2aserve.Prefix+tc.reach, tc.tok, send); code != 200 || !strings.Contains(body, `"label"`) {
			t.Errorf("a message to %s, with its token: %d %s", tc.reach, code, body)
		}
		noCode, noBody := do(http.MethodGet, a2aserve.Prefix+"nobody"+card, tc.tok, "")
		for _, req := range [][2]string{{http.MethodGet, a2aserve.Prefix + tc.not + card}, {http.MethodPost, a2aserve.Prefix + tc.not}} {
			body := ""
			if req[0] == http.MethodPost {
				body = send
			}
			if code, got := do(req[0], req[1], tc.tok, body); code != 404 || code != noCode || got != noBody {
				t.Errorf("%s %s with the token of %s: %d %q; want %d %q, as for no such agent", req[0], req[1], tc.reach, code, got, noCode, noBody)
			}
		}
	}
}

func withMeta(m *a2a.Message, meta map[string]any) *a2a.Message {
	m.Metadata = meta
	return m
}

// stuck is a model that answers nothing until its call is cancelled,
// saying when a call has reached it.
type stuck struct{ reached chan struct{} }

func (m stuck) Complete(ctx context.Context, _ *agentrt.Request) (*agentrt.Response, error) {
	m.reached <- struct{}{}
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestA2ACancel: tasks/cancel ends a task's run in flight, and the task
// ends canceled.
func TestA2ACancel(t *testing.T) {
	ag := labeler(t)
	m := stuck{reached: make(chan struct{}, 1)}
	r, err := agentrt.New(ag.Plan, agentrt.Options{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	ag.Runner = r
	_, _, client := served(t, ag)
	ctx := context.Background()
	var last a2a.TaskState
	for ev, err := range client.SendStreamingMessage(ctx, &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.DataPart{Data: map[string]any{"title": "x"}})}) {
		if err != nil {
			t.Fatal(err)
		}
		if e, ok := ev.(*a2a.TaskStatusUpdateEvent); ok {
			last = e.Status.State
			if last == a2a.TaskStateWorking {
				<-m.reached // the run's model call is in flight
				if _, err := client.CancelTask(ctx, &a2a.TaskIDParams{ID: e.TaskID}); err != nil {
					t.Fatalf("tasks/cancel: %v", err)
				}
			}
		}
	}
	if last != a2a.TaskStateCanceled {
		t.Errorf("the task ended %s, want canceled", last)
	}
}

// TestA2AFiles: an agent that takes a file names its media types among
// the card's input modes, and takes it as a file part, its bytes in
// base64, beside or without a data part; a file by URI (never fetched),
// of another type, given twice or for no file input is refused before
// anything runs.
func TestA2AFiles(t *testing.T) {
	_, card, client := served(t, servetest.Reader(t))
	ctx := context.Background()
	if got := strings.Join(card.DefaultInputModes, " "); got != "application/json text/plain" {
		t.Errorf("the card's input modes: %s", got)
	}
	note := base64.StdEncoding.EncodeToString([]byte("Lunch is at noon."))
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n an image"))
	file := func(b64 string, meta map[string]any) a2a.FilePart {
		return a2a.FilePart{File: a2a.FileBytes{Bytes: b64, FileMeta: a2a.FileMeta{Name: "note.txt", MimeType: "text/plain"}}, Metadata: meta}
	}
	for _, c := range []struct {
		name  string
		parts []a2a.Part
		state a2a.TaskState
		says  string
	}{
		{"beside a data part", []a2a.Part{a2a.DataPart{Data: map[string]any{"title": "Lunch"}}, file(note, nil)}, a2a.TaskStateCompleted, ""},
		{"alone", []a2a.Part{file(note, nil)}, a2a.TaskStateCompleted, ""},
		{"named", []a2a.Part{file(note, map[string]any{a2aserve.MetaInput: "note"})}, a2a.TaskStateCompleted, ""},
		{"by URI", []a2a.Part{a2a.FilePart{File: a2a.FileURI{URI: "http://169.254.169.254/latest/meta-data/"}}}, a2a.TaskStateRejected, "a file by URI is not fetched"},
		{"of another type", []a2a.Part{file(png, nil)}, a2a.TaskStateRejected, "its media type is image/png, not text/plain"},
		{"for no file input", []a2a.Part{file(note, map[string]any{a2aserve.MetaInput: "photo"})}, a2a.TaskStateRejected, `the agent has no file input "photo" (it has note)`},
		{"twice", []a2a.Part{file(note, nil), file(note, nil)}, a2a.TaskStateRejected, "file input note is given twice"},
		{"both ways", []a2a.Part{a2a.DataPart{Data: map[string]any{"note": note}}, file(note, nil)}, a2a.TaskStateRejected, "given both as a file part and in the input"},
		{"beside a text part of null", []a2a.Part{a2a.TextPart{Text: "null"}, file(note, nil)}, a2a.TaskStateRejected, "the message's text is not a JSON object"},
	} {
		res, err := client.SendMessage(ctx, &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, c.parts...)})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		task, ok := res.(*a2a.Task)
		if !ok || task.Status.State != c.state {
			t.Errorf("%s: %#v, want %s", c.name, res, c.state)
			continue
		}
		if c.says != "" && (task.Status.Message == nil || !strings.Contains(task.Status.Message.Parts[0].(a2a.TextPart).Text, c.says)) {
			t.Errorf("%s: %#v, want it to say %q", c.name, task.Status.Message, c.says)
		}
		// The ended task is kept without the file's bytes.
		kept, err := client.GetTask(ctx, &a2a.TaskQueryParams{ID: task.ID})
		if err != nil {
			t.Fatalf("%s: tasks/get: %v", c.name, err)
		}
		raw, _ := json.Marshal(kept)
		if strings.Contains(string(raw), note) || strings.Contains(string(raw), png) {
			t.Errorf("%s: the ended task kept holds the file's bytes: %s", c.name, raw)
		}
		if c.state == a2a.TaskStateCompleted && !strings.Contains(string(raw), `"`+a2aserve.MetaBytesDropped+`":true`) {
			t.Errorf("%s: the ended task kept does not say its file was dropped: %s", c.name, raw)
		}
	}
}

// TestA2ALargeNumbers: a data part reaches the server decoded into 64-bit
// floats, so an integer of 2^53 or more may have changed on the way
// (9007199254740993 arrives as 9007199254740992): such a message is
// refused, naming where, rather than run with another number. The same
// number in a text part's JSON runs as written.
func TestA2ALargeNumbers(t *testing.T) {
	runs, err := serve.NewRuns("", 0, false)
	if err != nil {
		t.Fatal(err)
	}
	_, _, client := servedBy(t, labeler(t), runs)
	send := func(p a2a.Part) *a2a.Task {
		res, err := client.SendMessage(context.Background(), &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, p)})
		if err != nil {
			t.Fatal(err)
		}
		task, ok := res.(*a2a.Task)
		if !ok {
			t.Fatalf("%#v", res)
		}
		return task
	}
	task := send(a2a.DataPart{Data: map[string]any{"title": "x", "order": map[string]any{"ids": []any{1.0, 9007199254740993.0}}}})
	if task.Status.State != a2a.TaskStateRejected || !strings.Contains(task.Status.Message.Parts[0].(a2a.TextPart).Text, "the number at /order/ids/1 is 2^53 or more") {
		t.Errorf("a data part with 2^53+1: %s %+v", task.Status.State, task.Status.Message)
	}
	task = send(a2a.TextPart{Text: `{"title": "x", "n": 9007199254740993}`})
	if task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) == 0 {
		t.Fatalf("a text part with 2^53+1: %s %+v", task.Status.State, task.Status.Message)
	}
	rec := runs.Get(task.Artifacts[0].Metadata["run"].(string))
	if rec == nil || !strings.Contains(string(rec.Input), "9007199254740993") {
		t.Errorf("the run's input: %+v", rec)
	}
	task = send(a2a.DataPart{Data: map[string]any{"title": "x", "n": 9007199254740991.0}})
	if task.Status.State != a2a.TaskStateCompleted {
		t.Errorf("a data part with 2^53-1: %s %+v", task.Status.State, task.Status.Message)
	}
}

// answers is a model that answers through the output tool with its text.
type answers string

func (a answers) Complete(_ context.Context, req *agentrt.Request) (*agentrt.Response, error) {
	return &agentrt.Response{Message: agentrt.Message{Role: agentrt.Assistant,
		ToolCalls: []agentrt.ToolCall{{ID: "a", Name: req.OutputTool, Arguments: json.RawMessage(a)}}}}, nil
}

// TestA2AAnswerArtifact: the artifact's data part is the answer as
// validated, or is left out where it would not be: its data holds
// doubles, and the SDK copies it by a gob round trip, which makes an
// empty array null. The text part holds the answer as validated always.
func TestA2AAnswerArtifact(t *testing.T) {
	for _, c := range []struct {
		answer string
		data   bool
	}{
		{`{"n":3,"p":0.1,"tags":["a"],"o":{}}`, true},
		{`{"p":0.1,"tags":[]}`, false},
		{`{"p":0.1,"deep":[1,[]]}`, false},
	} {
		ag := labeler(t)
		ag.Plan.Agent.Output.Schema = json.RawMessage(`{"type":"object"}`)
		ag.Plan.Output = nil
		if err := ag.Plan.Seal(); err != nil {
			t.Fatal(err)
		}
		r, err := agentrt.New(ag.Plan, agentrt.Options{Model: answers(c.answer)})
		if err != nil {
			t.Fatal(err)
		}
		_, _, client := served(t, serve.Agent{Plan: ag.Plan, Runner: r})
		res, err := client.SendMessage(context.Background(), &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.DataPart{Data: map[string]any{"title": "x"}})})
		if err != nil {
			t.Fatal(err)
		}
		task, ok := res.(*a2a.Task)
		if !ok || task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 {
			t.Fatalf("%s: %#v", c.answer, res)
		}
		parts := task.Artifacts[0].Parts
		text, ok := parts[len(parts)-1].(a2a.TextPart)
		if !ok || !sameJSON(t, text.Text, c.answer) {
			t.Errorf("%s: the text part %#v", c.answer, parts[len(parts)-1])
		}
		if !c.data {
			if len(parts) != 1 {
				t.Errorf("%s: a data part that is not the answer: %#v", c.answer, parts[0])
			}
			continue
		}
		data, ok := parts[0].(a2a.DataPart)
		if b, _ := json.Marshal(data.Data); len(parts) != 2 || !ok || !sameJSON(t, string(b), c.answer) {
			t.Errorf("%s: the data part %s", c.answer, b)
		}
	}
	// Numbers no double reads back as written: the runtime refuses such an
	// answer, and the artifact never rounds one.
	parts := a2aserve.AnswerParts(json.RawMessage(`{"n":9007199254740993,"p":0.1}`))
	if len(parts) != 1 || parts[0].(a2a.TextPart).Text != `{"n":9007199254740993,"p":0.1}` {
		t.Errorf("the artifact of 2^53+1: %#v", parts)
	}
}

// sameJSON says whether two JSON texts are one value.
func sameJSON(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

// TestA2AFileName: a file part's name is kept in the run's input, as
// agentc run --input-file keeps the file's base name: its last element
// when the client sent a path, nothing when it is not a plain name.
func TestA2AFileName(t *testing.T) {
	runs, err := serve.NewRuns("", 0, false)
	if err != nil {
		t.Fatal(err)
	}
	_, _, client := servedBy(t, servetest.Reader(t), runs)
	note := base64.StdEncoding.EncodeToString([]byte("Lunch is at noon."))
	for name, want := range map[string]string{
		"lunch.txt":                       `"file_name":"lunch.txt"`,
		`C:\\Users\\ann\\lunch notes.txt`: `"file_name":"lunch notes.txt"`,
		"../../etc/passwd":                `"file_name":"passwd"`,
		"lunch\x1b[2J.txt":                `^{"note":{"digest":"blake3:[0-9a-f]{64}"}}$`,
		"":                                `^{"note":{"digest":"blake3:[0-9a-f]{64}"}}$`,
	} {
		part := a2a.FilePart{File: a2a.FileBytes{Bytes: note, FileMeta: a2a.FileMeta{Name: name, MimeType: "text/plain"}}}
		res, err := client.SendMessage(context.Background(), &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, part)})
		if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		task, ok := res.(*a2a.Task)
		if !ok || task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) == 0 {
			t.Fatalf("%q: %#v", name, res)
		}
		id, _ := task.Artifacts[0].Metadata["run"].(string)
		rec := runs.Get(id)
		if rec == nil {
			t.Fatalf("%q: no record of run %q", name, id)
		}
		if !regexp.MustCompile(want).Match(rec.Input) {
			t.Errorf("%q: the run's input %s, want %s", name, rec.Input, want)
		}
	}
}

// served serves ag over A2A to the token's holders, until the test ends,
// and returns the server, the card its client fetched with the token and
// the A2A SDK's client made from it.
func served(t *testing.T, ag serve.Agent) (*httptest.Server, *a2a.AgentCard, *a2aclient.Client) {
	return servedBy(t, ag, nil)
}

// servedBy is served, the runs kept by runs.
func servedBy(t *testing.T, ag serve.Agent, runs *serve.Runs) (*httptest.Server, *a2a.AgentCard, *a2aclient.Client) {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	mux.Handle(a2aserve.Prefix, a2aserve.Handler([]serve.Agent{ag}, runs, srv.URL, serve.AllAgents(token)))
	ctx := context.Background()
	httpc := &http.Client{Transport: bearer{http.DefaultTransport}}
	card, err := agentcard.NewResolver(httpc).Resolve(ctx, srv.URL+a2aserve.Prefix+ag.Plan.Agent.Name)
	if err != nil {
		t.Fatal(err)
	}
	client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(httpc))
	if err != nil {
		t.Fatal(err)
	}
	return srv, card, client
}

// TestA2AServerFailure: a task the server fails for its own reasons ends
// failed, its message naming the reference its log has the error under,
// never the error (a path of the server's); tasks/get finds it ended.
// An agent that takes no input is served too.
func TestA2AServerFailure(t *testing.T) {
	ag := labeler(t)
	ag.Remote = func(context.Context, string, json.RawMessage, agentrt.Overrides, func(agentrt.Event)) (*agentrt.Report, error) {
		return nil, errors.New("dial unix /srv/agentc/secret.sock: connection refused")
	}
	runs, err := serve.NewRuns("", 0, false)
	if err != nil {
		t.Fatal(err)
	}
	logged := servetest.Log(runs)
	_, _, client := servedBy(t, ag, runs)
	ctx := context.Background()
	res, err := client.SendMessage(ctx, &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.DataPart{Data: map[string]any{"title": "Crash"}})})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateFailed || task.Status.Message == nil {
		t.Fatalf("result %#v", res)
	}
	text := task.Status.Message.Parts[0].(a2a.TextPart).Text
	ref := regexp.MustCompile(`under reference ([0-9a-f]{12})$`).FindStringSubmatch(text)
	if ref == nil || strings.Contains(text, "/srv") {
		t.Fatalf("the task's message: %q", text)
	}
	if got, err := client.GetTask(ctx, &a2a.TaskQueryParams{ID: task.ID}); err != nil || got.Status.State != a2a.TaskStateFailed {
		t.Errorf("tasks/get: %v %+v", err, got)
	}
	if log := logged(); len(log) != 1 || !strings.Contains(log[0], "(reference "+ref[1]+"): the run elsewhere: dial unix /srv/agentc/secret.sock") {
		t.Errorf("the server's log: %q", log)
	}

	// No input: the card, and a task that runs.
	plain := labeler(t)
	p := *plain.Plan
	p.Agent.Input, p.Agent.Prompt = nil, ""
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	r, err := agentrt.New(&p, agentrt.Options{Model: &testmodel.Model{}})
	if err != nil {
		t.Fatal(err)
	}
	_, _, client = served(t, serve.Agent{Plan: &p, Runner: r})
	res, err = client.SendMessage(ctx, &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "go"})})
	if task, ok := res.(*a2a.Task); err != nil || !ok || task.Status.State != a2a.TaskStateCompleted {
		t.Errorf("an agent without input: %v %#v", err, res)
	}
}

// TestA2ABodyBound: a request past the agent's bound is refused, 413,
// before the SDK reads it; one that does not say its length is cut there.
func TestA2ABodyBound(t *testing.T) {
	srv, _, _ := served(t, labeler(t))
	big := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"data","data":{"title":"x","pad":"` + strings.Repeat("a", serve.MaxBodyBytes) + `"}}]}}}`
	for _, chunked := range []bool{false, true} {
		var body io.Reader = strings.NewReader(big)
		if chunked {
			body = io.MultiReader(body) // no length known: sent chunked
		}
		req, err := http.NewRequest(http.MethodPost, srv.URL+a2aserve.Prefix+"labeler", body)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !chunked && resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("a body past the bound: %d %s", resp.StatusCode, out)
		}
		if chunked && (resp.StatusCode == http.StatusOK && !strings.Contains(string(out), `"error"`) || strings.Contains(string(out), `"state":"completed"`)) {
			t.Errorf("a chunked body past the bound: %d %.300s", resp.StatusCode, out)
		}
	}
}

// interruptedTask serves ag, its model never answering, with runs, sends
// it a task and stops runs while the task's model call is in flight: the
// run is interrupted, as a server's stop interrupts one. It returns the
// task's last status event.
func interruptedTask(t *testing.T, ag serve.Agent, runs *serve.Runs) *a2a.TaskStatusUpdateEvent {
	t.Helper()
	m := stuck{reached: make(chan struct{}, 1)}
	var err error
	if ag.Runner, err = agentrt.New(ag.Plan, agentrt.Options{Model: m}); err != nil {
		t.Fatal(err)
	}
	_, _, client := servedBy(t, ag, runs)
	var last *a2a.TaskStatusUpdateEvent
	for ev, err := range client.SendStreamingMessage(context.Background(), &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.DataPart{Data: map[string]any{"title": "Slow"}})}) {
		if err != nil {
			t.Fatal(err)
		}
		if e, ok := ev.(*a2a.TaskStatusUpdateEvent); ok {
			last = e
			if e.Status.State == a2a.TaskStateWorking {
				<-m.reached // its model call is in flight
				runs.Stop()
			}
		}
	}
	runs.Wait()
	if last == nil {
		t.Fatal("no status event")
	}
	return last
}

// TestA2AKeptPastServer: with a journal directory, a server started
// again on it answers tasks/get for the tasks an earlier one made: one
// that completed, as it was; one whose run the earlier server's stop
// interrupted (the task ended failed, saying so), once the new server
// has resumed that run, completed, with the resumed run's answer.
func TestA2AKeptPastServer(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	runs1, err := serve.NewRuns(dir, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	ag := labeler(t)
	// The first server: a task that completes (the test model answers),
	// and one whose run the server's stop interrupts.
	_, _, client1 := servedBy(t, ag, runs1)
	res, err := client1.SendMessage(ctx, &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.DataPart{Data: map[string]any{"title": "Crash on start"}})})
	if err != nil {
		t.Fatal(err)
	}
	done := res.(*a2a.Task)
	if done.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("the first task: %+v", done.Status)
	}
	last := interruptedTask(t, ag, runs1)
	stopped := last.TaskID
	if last.Status.State != a2a.TaskStateFailed || !strings.Contains(fmt.Sprint(last.Status.Message.Parts), "resumes it") {
		t.Fatalf("the interrupted task ended %+v", last)
	}

	// The server started again: it resumes the run, held at its model
	// call, and answers for both tasks.
	g := gated{reached: make(chan struct{}, 1), release: make(chan struct{})}
	runs2, client2 := startedAgain(t, dir, ag, g)
	<-g.reached
	got, err := client2.GetTask(ctx, &a2a.TaskQueryParams{ID: done.ID})
	if err != nil || got.Status.State != a2a.TaskStateCompleted || len(got.Artifacts) != 1 || got.Artifacts[0].Name != "answer" {
		t.Fatalf("the completed task read back: %v %+v", err, got)
	}
	// While the resumed run runs, the interrupted task is as it ended;
	// once the run has ended, it is as the run ended.
	got, err = client2.GetTask(ctx, &a2a.TaskQueryParams{ID: stopped})
	if err != nil || got.Status.State != a2a.TaskStateFailed {
		t.Fatalf("the interrupted task, its run resumed and running: %v %+v", err, got)
	}
	close(g.release)
	runs2.Wait()
	got, err = client2.GetTask(ctx, &a2a.TaskQueryParams{ID: stopped})
	if err != nil || got.Status.State != a2a.TaskStateCompleted || len(got.Artifacts) != 1 {
		t.Fatalf("the interrupted task, its run resumed: %v %+v", err, got)
	}
	data, ok := got.Artifacts[0].Parts[0].(a2a.DataPart)
	if !ok || (data.Data["label"] != "bug" && data.Data["label"] != "feature") || got.Artifacts[0].Metadata["run"] == "" {
		t.Errorf("the resumed run's answer: %#v", got.Artifacts[0])
	}
	// A task no server made is not found.
	if _, err := client2.GetTask(ctx, &a2a.TaskQueryParams{ID: "no-such-task"}); err == nil {
		t.Error("tasks/get found a task no server made")
	}
}

// gated answers as the test model does, once released, saying when a
// call has reached it.
type gated struct{ reached, release chan struct{} }

func (m gated) Complete(ctx context.Context, req *agentrt.Request) (*agentrt.Response, error) {
	m.reached <- struct{}{}
	select {
	case <-m.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return testmodel.Model{}.Complete(ctx, req)
}

// TestA2AMessageToResumedTask: a task an earlier server kept in flight
// (it died before the task ended) whose run the new server has resumed
// belongs to that run: a message to it waits for the run, and the task
// ends as the run does, without a second run of the agent.
func TestA2AMessageToResumedTask(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	ag := labeler(t)
	last := diedMidRun(t, ag, dir)
	id, contextID := last.TaskID, last.ContextID

	// The new server resumes the run, held at its model call.
	g := gated{reached: make(chan struct{}, 1), release: make(chan struct{})}
	runs2, client2 := startedAgain(t, dir, ag, g)
	<-g.reached
	got, err := client2.GetTask(ctx, &a2a.TaskQueryParams{ID: id})
	if err != nil || got.Status.State != a2a.TaskStateWorking {
		t.Fatalf("the task, its run resumed and running: %v %+v", err, got)
	}
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.DataPart{Data: map[string]any{"title": "Again"}})
	msg.TaskID, msg.ContextID = id, contextID
	type sent struct {
		res a2a.SendMessageResult
		err error
	}
	answered := make(chan sent, 1)
	go func() {
		res, err := client2.SendMessage(ctx, &a2a.MessageSendParams{Message: msg})
		answered <- sent{res, err}
	}()
	// The run is released once the message has reached the task (the
	// SDK keeps it in the task's history before the task's executor
	// runs), so that the message meets the run still running.
	for deadline := time.Now().Add(30 * time.Second); ; {
		got, err := client2.GetTask(ctx, &a2a.TaskQueryParams{ID: id})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.History) > 0 && got.History[len(got.History)-1].ID == msg.ID {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the message never reached the task")
		}
	}
	close(g.release)
	a := <-answered
	task, ok := a.res.(*a2a.Task)
	if a.err != nil || !ok || task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 {
		t.Fatalf("the message to the task: %v %#v", a.err, a.res)
	}
	runs2.Wait()
	journals, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(journals) != 1 {
		t.Errorf("%d runs were journaled, want the one resumed", len(journals))
	}
	select {
	case <-g.reached:
		t.Error("the model was called again: a second run")
	default:
	}
}

// startedAgain is a server started again on journal directory dir,
// serving ag with its runner's model replaced by model (nil keeps it),
// which resumes the runs its directory holds. It returns its runs and
// the A2A SDK's client of it.
func startedAgain(t *testing.T, dir string, ag serve.Agent, model agentrt.Model) (*serve.Runs, *a2aclient.Client) {
	t.Helper()
	runs, err := serve.NewRuns(dir, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if model != nil {
		if ag.Runner, err = agentrt.New(ag.Plan, agentrt.Options{Model: model}); err != nil {
			t.Fatal(err)
		}
	}
	if err := runs.Resume([]serve.Agent{ag}, func(string) {}); err != nil {
		t.Fatal(err)
	}
	_, _, client := servedBy(t, ag, runs)
	return runs, client
}

// diedMidRun is a server on journal directory dir, serving ag, that died
// while a task's run was in flight, before the task's end was kept: its
// run interrupted, its task kept working. It returns the task's last
// status event.
func diedMidRun(t *testing.T, ag serve.Agent, dir string) *a2a.TaskStatusUpdateEvent {
	t.Helper()
	runs, err := serve.NewRuns(dir, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	last := interruptedTask(t, ag, runs)
	editJSON(t, filepath.Join(dir, "a2a", ag.Plan.Agent.Name, "*.json"), func(k map[string]any) {
		k["task"].(map[string]any)["status"] = map[string]any{"state": "working"}
		delete(k, "interrupted")
	})
	return last
}

// editJSON changes, by edit, the one JSON file that matches pattern.
func editJSON(t *testing.T, pattern string, edit func(map[string]any)) {
	t.Helper()
	file := mustGlob(t, pattern)
	var k map[string]any
	b, err := os.ReadFile(file)
	if err != nil || json.Unmarshal(b, &k) != nil {
		t.Fatalf("%s: %v %s", file, err, b)
	}
	edit(k)
	if b, err = json.Marshal(k); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestA2AMessageToRunElsewhere: a message to a task whose run another
// server on the journal directory runs (it holds the run's journal) ends
// the task failed, saying so, and runs nothing: no second run.
func TestA2AMessageToRunElsewhere(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	ag := labeler(t)
	last := diedMidRun(t, ag, dir)
	// Its record says running; another server has the run's journal.
	editJSON(t, filepath.Join(dir, "*.json"), func(k map[string]any) { k["state"] = "running" })
	lock, err := journal.Acquire(mustGlob(t, filepath.Join(dir, "*.jsonl")))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()

	runs2, client2 := startedAgain(t, dir, ag, nil)
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.DataPart{Data: map[string]any{"title": "Again"}})
	msg.TaskID, msg.ContextID = last.TaskID, last.ContextID
	res, err := client2.SendMessage(ctx, &a2a.MessageSendParams{Message: msg})
	task, ok := res.(*a2a.Task)
	if err != nil || !ok || task.Status.State != a2a.TaskStateFailed || !strings.Contains(fmt.Sprint(task.Status.Message.Parts), "running in another server") {
		t.Fatalf("the message to the task: %v %#v", err, res)
	}
	runs2.Wait()
	if journals, _ := filepath.Glob(filepath.Join(dir, "*.jsonl")); len(journals) != 1 {
		t.Errorf("%d runs were journaled, want the one", len(journals))
	}
	// Asked again, it is settled again by its run: still running.
	got, err := client2.GetTask(ctx, &a2a.TaskQueryParams{ID: last.TaskID})
	if err != nil || got.Status.State != a2a.TaskStateFailed {
		t.Errorf("tasks/get: %v %+v", err, got)
	}
}

// TestA2ACancelResumedTask: tasks/cancel of a task whose message waits
// for the run a later server resumed ends that run, cancelled, as it
// ends a run the task made in its own server; the task ends canceled.
func TestA2ACancelResumedTask(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	ag := labeler(t)
	last := diedMidRun(t, ag, dir)
	m := stuck{reached: make(chan struct{}, 1)}
	runs2, client2 := startedAgain(t, dir, ag, m)
	<-m.reached
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.DataPart{Data: map[string]any{"title": "Again"}})
	msg.TaskID, msg.ContextID = last.TaskID, last.ContextID
	var states []string
	for ev, err := range client2.SendStreamingMessage(ctx, &a2a.MessageSendParams{Message: msg}) {
		if err != nil {
			t.Fatal(err)
		}
		if e, ok := ev.(*a2a.TaskStatusUpdateEvent); ok {
			states = append(states, string(e.Status.State))
			if e.Status.State == a2a.TaskStateWorking {
				if _, err := client2.CancelTask(ctx, &a2a.TaskIDParams{ID: e.TaskID}); err != nil {
					t.Fatalf("tasks/cancel: %v", err)
				}
			}
		}
	}
	if got := strings.Join(states, " "); got != "working canceled" {
		t.Errorf("the stream: %s", got)
	}
	run, _ := strings.CutSuffix(filepath.Base(mustGlob(t, filepath.Join(dir, "*.jsonl"))), ".jsonl")
	if done := runs2.Done(run); done != nil {
		select {
		case <-done:
		case <-time.After(60 * time.Second): // a bound, not a wait: it ends at once
			t.Fatal("the resumed run goes on after its task was cancelled")
		}
	}
	if rec := runs2.Get(run); rec == nil || rec.State != serve.StateCancelled {
		t.Errorf("the resumed run's record: %+v", rec)
	}
}

// mustGlob is the one file that matches pattern.
func mustGlob(t *testing.T, pattern string) string {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) != 1 {
		t.Fatalf("%s: %v, %v", pattern, files, err)
	}
	return files[0]
}

// TestA2ARunCancelled: a task whose run is cancelled from elsewhere (the
// HTTP API's POST /v1/runs/ID/cancel) ends canceled, not failed.
func TestA2ARunCancelled(t *testing.T) {
	dir := t.TempDir()
	runs, err := serve.NewRuns(dir, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	ag := labeler(t)
	m := stuck{reached: make(chan struct{}, 1)}
	if ag.Runner, err = agentrt.New(ag.Plan, agentrt.Options{Model: m}); err != nil {
		t.Fatal(err)
	}
	_, _, client := servedBy(t, ag, runs)
	var last a2a.TaskState
	for ev, err := range client.SendStreamingMessage(context.Background(), &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.DataPart{Data: map[string]any{"title": "x"}})}) {
		if err != nil {
			t.Fatal(err)
		}
		if e, ok := ev.(*a2a.TaskStatusUpdateEvent); ok {
			last = e.Status.State
			if last == a2a.TaskStateWorking {
				<-m.reached
				run, _ := strings.CutSuffix(filepath.Base(mustGlob(t, filepath.Join(dir, "*.jsonl"))), ".jsonl")
				if !runs.Cancel(run) {
					t.Fatal("the task's run is not in flight")
				}
			}
		}
	}
	if last != a2a.TaskStateCanceled {
		t.Errorf("the task ended %s, want canceled", last)
	}
}

// TestA2ARunsPerToken: a message past its token's bound of runs going at
// once (serve.Runs.SetRunsPerToken) ends its task rejected, saying why,
// and nothing of it runs; once the run holding the bound ends, the next
// message runs.
func TestA2ARunsPerToken(t *testing.T) {
	ag := labeler(t)
	m := gated{reached: make(chan struct{}, 4), release: make(chan struct{})}
	r, err := agentrt.New(ag.Plan, agentrt.Options{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	ag.Runner = r
	runs, err := serve.NewRuns("", 0, false)
	if err != nil {
		t.Fatal(err)
	}
	runs.SetRunsPerToken(1)
	_, _, client := servedBy(t, ag, runs)
	t.Cleanup(func() { runs.Stop(); runs.Wait() })
	ctx := context.Background()
	send := func() (*a2a.Task, error) {
		res, err := client.SendMessage(ctx, &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.DataPart{Data: map[string]any{"title": "x"}})})
		if err != nil {
			return nil, err
		}
		task, ok := res.(*a2a.Task)
		if !ok {
			return nil, fmt.Errorf("the answer is a %T, not a task", res)
		}
		return task, nil
	}
	held := make(chan *a2a.Task, 1)
	go func() {
		task, err := send()
		if err != nil {
			t.Error(err)
		}
		held <- task
	}()
	<-m.reached // the first run's model call is in flight
	second := make(chan *a2a.Task, 1)
	go func() {
		task, err := send()
		if err != nil {
			t.Error(err)
		}
		second <- task
	}()
	var task *a2a.Task
	select {
	case task = <-second:
	case <-m.reached:
		t.Fatal("a message past the token's bound started a run")
	}
	if task == nil {
		t.FailNow()
	}
	const busy = "the clients of this token have as many runs going as the server allows at once (1)"
	if task.Status.State != a2a.TaskStateRejected || task.Status.Message == nil || !strings.Contains(fmt.Sprint(task.Status.Message.Parts), busy) {
		t.Errorf("a second message of one token: %s %+v", task.Status.State, task.Status.Message)
	}
	close(m.release)
	if first := <-held; first == nil || first.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("the first message's task: %+v", first)
	}
	if task, err := send(); err != nil || task.Status.State != a2a.TaskStateCompleted {
		t.Errorf("a message once the first run ended: %v %+v", err, task)
	}
}
