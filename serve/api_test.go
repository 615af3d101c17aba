package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/serve"
)

const apiToken = "s3cret-token-of-the-api"

// call makes a request of the API with the token (auth "" for none).
func call(t *testing.T, srv *httptest.Server, method, path, auth, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestAPIRun: POST /v1/agents/{name}/runs runs the agent with the body as
// its input and answers with the run; what the API refuses says why, with
// the status that means it, and runs nothing.
func TestAPIRun(t *testing.T) {
	ag := labeler(t)
	h, err := serve.API([]serve.Agent{ag}, nil, serve.AllAgents(apiToken))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	code, body := call(t, srv, http.MethodPost, "/v1/agents/labeler/runs", apiToken, `{"title": "Crash on start"}`)
	var res serve.RunResult
	if err := json.Unmarshal(body, &res); err != nil || code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	if res.Outcome != agentrt.OutcomeOK || res.Bound != agentrt.BoundNone || !strings.Contains(string(res.Answer), `"label":`) || res.Digests != ag.Plan.Digests {
		t.Errorf("result %+v", res)
	}
	for _, tc := range []struct {
		method, path, auth, body string
		code                     int
		says                     string
	}{
		{"POST", "/v1/agents/labeler/runs", "", `{"title": "x"}`, 401, "unauthorized"},
		{"POST", "/v1/agents/labeler/runs", "another-token-entirely", `{"title": "x"}`, 401, "unauthorized"},
		{"POST", "/v1/agents/nobody/runs", apiToken, `{}`, 404, `no agent is named \"nobody\"`},
		{"POST", "/v1/agents/labeler/runs", apiToken, `{"title": `, 400, "not one JSON value"},
		{"POST", "/v1/agents/labeler/runs", apiToken, strings.Repeat("[", 20_000) + strings.Repeat("]", 20_000), 400, "nests arrays and objects deeper than the 10,000 levels"},
		{"POST", "/v1/agents/labeler/runs", apiToken, `{"title": ""}`, 422, "input:"},
		{"POST", "/v1/agents/labeler/runs", apiToken, `{"title": "` + strings.Repeat("x", serve.MaxBodyBytes) + `"}`, 413, "larger than"},
	} {
		code, body := call(t, srv, tc.method, tc.path, tc.auth, tc.body)
		if code != tc.code || !strings.Contains(string(body), tc.says) {
			t.Errorf("%s %s (auth %q): %d %.200s; want %d saying %q", tc.method, tc.path, tc.auth, code, body, tc.code, tc.says)
		}
	}
}

// TestOpenAPI: the OpenAPI document has a path per agent whose request
// body is the input contract and whose answer is the output contract,
// with the digests; the listing says the same.
func TestOpenAPI(t *testing.T) {
	ag := labeler(t)
	h, err := serve.API([]serve.Agent{ag}, nil, serve.AllAgents(apiToken))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	code, body := call(t, srv, http.MethodGet, "/openapi.json", apiToken, "")
	var doc struct {
		OpenAPI string `json:"openapi"`
		Paths   map[string]struct {
			Post struct {
				RequestBody struct {
					Content map[string]struct {
						Schema json.RawMessage `json:"schema"`
					} `json:"content"`
				} `json:"requestBody"`
				Responses map[string]struct {
					Content map[string]struct {
						Schema struct {
							Properties map[string]json.RawMessage `json:"properties"`
						} `json:"schema"`
					} `json:"content"`
				} `json:"responses"`
				Contract string `json:"x-agentc-contract"`
			} `json:"post"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(body, &doc); err != nil || code != 200 || doc.OpenAPI != "3.1.0" {
		t.Fatalf("%d %v %.300s", code, err, body)
	}
	op := doc.Paths["/v1/agents/labeler/runs"].Post
	if in := compact(op.RequestBody.Content["application/json"].Schema); !strings.Contains(in, `"minLength":1`) {
		t.Errorf("request schema %s", in)
	}
	if out := compact(op.Responses["200"].Content["application/json"].Schema.Properties["answer"]); !strings.Contains(out, `"maximum":1`) {
		t.Errorf("answer schema %s", out)
	}
	if op.Contract != string(ag.Plan.Digests.Contract) {
		t.Errorf("contract %q", op.Contract)
	}
	for _, path := range []string{"/v1/runs/{id}", "/v1/approvals", "/v1/runs/{id}/approvals/{key}"} {
		if _, ok := doc.Paths[path]; !ok {
			t.Errorf("the document has no path %s", path)
		}
	}
	if code, body := call(t, srv, http.MethodGet, "/openapi.json", "", ""); code != 401 || strings.Contains(string(body), "labeler") {
		t.Errorf("without the token: %d %s", code, body)
	}
	code, body = call(t, srv, http.MethodGet, "/v1/agents", apiToken, "")
	if code != 200 || !strings.Contains(string(body), `"name":"labeler"`) || !strings.Contains(string(body), string(ag.Plan.Digests.Plan)) {
		t.Errorf("listing: %d %s", code, body)
	}
}

func compact(b []byte) string {
	var out bytes.Buffer
	_ = json.Compact(&out, b)
	return out.String()
}

// TestAPIStream: with Accept: text/event-stream, a run's events come as
// they happen, each named by its type, and the run last, as a result
// event; an input refused before the run is still a 422.
func TestAPIStream(t *testing.T) {
	ag := labeler(t)
	var heard []string
	ag.Events = func(e agentrt.Event) { heard = append(heard, e.Type) }
	h, err := serve.API([]serve.Agent{ag}, nil, serve.AllAgents(apiToken))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	stream := func(body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/agents/labeler/runs", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+apiToken)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := stream(`{"title": "Crash on start"}`)
	if code != 200 || !strings.HasPrefix(body, "event: run_start\ndata: {") || !strings.Contains(body, "event: model_call\n") {
		t.Fatalf("%d %.300s", code, body)
	}
	last := body[strings.LastIndex(body, "event: "):]
	if !strings.HasPrefix(last, "event: result\ndata: ") || !strings.Contains(last, `"outcome":"ok"`) {
		t.Errorf("the last event: %q", last)
	}
	if len(heard) == 0 || heard[0] != agentrt.EventRunStart {
		t.Errorf("the server's own events: %v", heard)
	}
	if code, body := stream(`{"title": ""}`); code != 422 || !strings.Contains(body, "input:") {
		t.Errorf("a refused input: %d %s", code, body)
	}
}

// TestAPICancel: POST /v1/runs/{id}/cancel ends a run in flight (here one
// waiting on a person's approval), as its client's going away would, and
// answers with its record once it has ended; the run's own client is
// answered too. A run that has ended is 409; a run the token does not
// admit to, or none, is 404.
func TestAPICancel(t *testing.T) {
	runs := newRuns(t, "", true)
	waiting := pendings(runs)
	ag, _ := actor(t, runs.Ask)
	tokens, err := serve.NewTokens([]serve.Token{{Token: apiToken}, {Token: "other-token-of-the-api", Agents: []string{"other"}}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := serve.API([]serve.Agent{ag}, runs, tokens)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	answered := make(chan []byte, 1)
	go func() {
		_, body := call(t, srv, http.MethodPost, "/v1/agents/actor/runs", apiToken, `{"task": "list"}`)
		answered <- body
	}()
	id := (<-waiting).Run
	if status, body := call(t, srv, http.MethodPost, "/v1/runs/"+id+"/cancel", "other-token-of-the-api", ""); status != http.StatusNotFound {
		t.Errorf("another agent's token: %d %s", status, body)
	}
	status, body := call(t, srv, http.MethodPost, "/v1/runs/"+id+"/cancel", apiToken, "")
	if status != http.StatusOK || !strings.Contains(string(body), `"state":"cancelled"`) {
		t.Fatalf("cancel: %d %s", status, body)
	}
	if got := <-answered; !strings.Contains(string(got), `"error":"the run was cancelled (POST /v1/runs/ID/cancel`) {
		t.Errorf("the run's client was told %s", got)
	}
	if status, body := call(t, srv, http.MethodPost, "/v1/runs/"+id+"/cancel", apiToken, ""); status != http.StatusConflict || !strings.Contains(string(body), "is not in flight here (it is cancelled)") {
		t.Errorf("cancel again: %d %s", status, body)
	}
	for _, bad := range []string{strings.Repeat("0", 32), "../x", "short"} {
		if status, _ := call(t, srv, http.MethodPost, "/v1/runs/"+bad+"/cancel", apiToken, ""); status != http.StatusNotFound {
			t.Errorf("%s: %d", bad, status)
		}
	}
}

// TestAPICancelRemote: a run on Temporal is not ended by the API, whose
// server only waits on it: 409, naming its workflow.
func TestAPICancelRemote(t *testing.T) {
	runs := newRuns(t, "", true)
	ag := labeler(t)
	started := make(chan string, 1)
	ag.Remote = func(ctx context.Context, workflow string, _ json.RawMessage, _ agentrt.Overrides, _ func(agentrt.Event)) (*agentrt.Report, error) {
		started <- workflow
		<-ctx.Done()
		return nil, ctx.Err()
	}
	h, err := serve.API([]serve.Agent{ag}, runs, serve.AllAgents(apiToken))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/agents/labeler/runs", strings.NewReader(`{"title": "x"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+apiToken)
	go func() {
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	workflow := <-started
	id := strings.TrimPrefix(workflow, "labeler-")
	status, body := call(t, srv, http.MethodPost, "/v1/runs/"+id+"/cancel", apiToken, "")
	if status != http.StatusConflict || !strings.Contains(string(body), "runs on Temporal, as workflow "+workflow) {
		t.Errorf("cancel: %d %s", status, body)
	}
}
