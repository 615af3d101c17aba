package serve_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/filestore"
	"agentc.dev/agentc/serve"
	"agentc.dev/agentc/serve/internal/servetest"
)

// reader is an agent that takes a text file, of at most 66 bytes.
func reader(t *testing.T) serve.Agent { return servetest.Reader(t) }

// form is a multipart body of parts, each a name and its content.
func form(t *testing.T, parts ...string) (string, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for i := 0; i < len(parts); i += 2 {
		var w interface{ Write([]byte) (int, error) }
		var err error
		if parts[i] == "input" {
			w, err = mw.CreateFormField("input")
		} else {
			w, err = mw.CreateFormFile(parts[i], parts[i]+".txt")
		}
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(parts[i+1]))
	}
	mw.Close()
	return b.String(), mw.FormDataContentType()
}

// TestFileInputs: an agent that takes a file is served: its file comes as
// a multipart part or in base64 in JSON, over the HTTP API and MCP; a
// reference to a stored file, a part that is not the agent's, a part
// given twice and a file past its bound are refused before anything
// runs, and an agent without files takes no multipart body.
func TestFileInputs(t *testing.T) {
	ag, lab := reader(t), labeler(t)
	runs := newRuns(t, "", true)
	h, err := serve.API([]serve.Agent{ag, lab}, runs, serve.AllAgents(apiToken))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	post := func(path, body, contentType string) (int, string) {
		return postAs(t, srv.URL+path, body, contentType)
	}
	body, ct := form(t, "input", `{"title": "Lunch"}`, "note", "Lunch is at noon on Friday.")
	code, out := post("/v1/agents/reader/runs", body, ct)
	if code != 200 || !strings.Contains(out, `"outcome":"ok"`) {
		t.Fatalf("multipart: %d %s", code, out)
	}
	// The part's file name is kept, as --input-file keeps the file's.
	var mrec struct {
		ID string `json:"id"`
	}
	json.Unmarshal([]byte(out), &mrec)
	if code, got := call(t, srv, http.MethodGet, "/v1/runs/"+mrec.ID, apiToken, ""); code != 200 || !strings.Contains(string(got), `"file_name":"note.txt"`) {
		t.Errorf("the multipart run's record: %d %s", code, got)
	}
	note := base64.StdEncoding.EncodeToString([]byte("Lunch is at noon."))
	code, out = post("/v1/agents/reader/runs", `{"note": "`+note+`"}`, "application/json")
	if code != 200 || !strings.Contains(out, `"outcome":"ok"`) {
		t.Fatalf("base64: %d %s", code, out)
	}
	// The run's record, kept in memory, names the file by digest: a
	// server keeping a thousand records does not keep a thousand files.
	var rec struct {
		ID string `json:"id"`
	}
	json.Unmarshal([]byte(out), &rec)
	if code, got := call(t, srv, http.MethodGet, "/v1/runs/"+rec.ID, apiToken, ""); code != 200 || !strings.Contains(string(got), `"input":{"note":{"digest":"blake3:`) || strings.Contains(string(got), note) {
		t.Errorf("the run's record: %d %s", code, got)
	}
	for _, tc := range []struct {
		name, body, ct string
		code           int
		says           string
	}{
		{"a stored file's digest", `{"note": {"digest": "blake3:` + strings.Repeat("ab", 32) + `", "file_name": "x.txt"}}`, "application/json", 422, "give the file's bytes in base64"},
		{"a part not the agent's", "", "", 400, `part \"photo\" is neither input nor one of the agent's file inputs`},
		{"a part twice", "", "", 400, `part \"note\" is given twice`},
		{"a file past its bound", "", "", 413, "file note is larger than the 66 bytes"},
		{"a file both ways", "", "", 400, "file input note is given both as a part and in the input"},
		{"input not an object", "", "", 400, "part input is not a JSON object"},
		{"no boundary", "x", "multipart/form-data", 400, "needs a boundary"},
	} {
		body, ct := tc.body, tc.ct
		switch tc.name {
		case "a part not the agent's":
			body, ct = form(t, "photo", "x")
		case "a part twice":
			body, ct = form(t, "note", "a", "note", "b")
		case "a file past its bound":
			body, ct = form(t, "note", strings.Repeat("a", 200))
		case "a file both ways":
			body, ct = form(t, "input", `{"note": "`+note+`"}`, "note", "b")
		case "input not an object":
			body, ct = form(t, "input", `[1]`, "note", "b")
		}
		if code, out := post("/v1/agents/reader/runs", body, ct); code != tc.code || !strings.Contains(out, tc.says) {
			t.Errorf("%s: %d %s, want %d saying %q", tc.name, code, out, tc.code, tc.says)
		}
	}
	if code, out := post("/v1/agents/labeler/runs", body, ct); code != 415 || !strings.Contains(out, "takes no files") {
		t.Errorf("multipart to an agent without files: %d %s", code, out)
	}

	s, err := serve.MCP("test", []serve.Agent{ag}, runs)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cs := session(t, s)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "reader", Arguments: map[string]any{"note": note}})
	if err != nil || res.IsError {
		t.Fatalf("over MCP: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "reader", Arguments: map[string]any{"note": map[string]any{"digest": "blake3:" + strings.Repeat("ab", 32)}}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "give the file's bytes in base64") {
		t.Errorf("a stored file's digest over MCP: %v %+v", err, res)
	}
}

// TestRemoteFileInputs: an agent run elsewhere (agentc serve --temporal)
// is handed an input that names its files by digest in the store its
// workers read, over the HTTP API and MCP; the run's record names them so
// too; a file refused, alone or beside one that passes, is refused before
// the run is handed on, and leaves nothing in the store.
func TestRemoteFileInputs(t *testing.T) {
	local := reader(t)
	dir := t.TempDir()
	store, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var inputs []string
	handed := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(inputs)
	}
	ag := serve.Agent{Plan: local.Plan, Files: store, Remote: func(ctx context.Context, id string, input json.RawMessage, b agentrt.Overrides, _ func(agentrt.Event)) (*agentrt.Report, error) {
		mu.Lock()
		inputs = append(inputs, string(input))
		mu.Unlock()
		return &agentrt.Report{Outcome: agentrt.OutcomeOK, Bound: agentrt.BoundNone, Answer: json.RawMessage(`{"topic":"lunch"}`)}, nil
	}}
	runs := newRuns(t, "", true)
	h, err := serve.API([]serve.Agent{ag}, runs, serve.AllAgents(apiToken))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	post := func(body, contentType string) (int, string) {
		return postAs(t, srv.URL+"/v1/agents/reader/runs", body, contentType)
	}
	stored := func() int {
		es, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		return len(es)
	}
	blob, err := filestore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	want, err := blob.Put(strings.NewReader("Lunch is at noon."), 100)
	if err != nil {
		t.Fatal(err)
	}
	ref := `"note":{"digest":"` + want.Digest + `"}`
	// A multipart part's file name goes with it; base64 has none.
	named := `"note":{"digest":"` + want.Digest + `","file_name":"note.txt"}`

	body, ct := form(t, "input", `{"title": "Lunch"}`, "note", "Lunch is at noon.")
	code, out := post(body, ct)
	if code != 200 || !strings.Contains(out, `"outcome":"ok"`) {
		t.Fatalf("multipart: %d %s", code, out)
	}
	if len(handed()) != 1 || handed()[0] != `{`+named+`,"title":"Lunch"}` {
		t.Errorf("handed on %q, want the file by digest", handed())
	}
	var rec struct {
		ID string `json:"id"`
	}
	json.Unmarshal([]byte(out), &rec)
	if code, got := call(t, srv, http.MethodGet, "/v1/runs/"+rec.ID, apiToken, ""); code != 200 || !strings.Contains(string(got), `"input":{`+named+`,"title":"Lunch"}`) {
		t.Errorf("the run's record: %d %s", code, got)
	}
	note := base64.StdEncoding.EncodeToString([]byte("Lunch is at noon."))
	if code, out := post(`{"note": "`+note+`"}`, "application/json"); code != 200 || len(handed()) != 2 || handed()[1] != `{`+ref+`}` {
		t.Errorf("base64: %d %s, handed on %q", code, out, handed())
	}
	if n := stored(); n != 1 {
		t.Errorf("the store holds %d files, want 1", n)
	}

	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n an image"))
	for _, tc := range []struct{ name, body, says string }{
		{"a file of another type", `{"note": "` + png + `"}`, "file note: its media type is image/png, not text/plain"},
		{"not base64", `{"note": "@/etc/passwd"}`, "file note: not base64"},
		{"past its bound", `{"note": "` + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("a", 100))) + `"}`, "maxLength"},
	} {
		if code, out := post(tc.body, "application/json"); code != 422 || !strings.Contains(out, tc.says) {
			t.Errorf("%s: %d %s, want 422 saying %q", tc.name, code, out, tc.says)
		}
	}
	if len(handed()) != 2 || stored() != 1 {
		t.Errorf("after the refusals: handed on %d, the store holds %d files", len(handed()), stored())
	}

	s, err := serve.MCP("test", []serve.Agent{ag}, runs)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cs := session(t, s)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "reader", Arguments: map[string]any{"note": note}})
	if err != nil || res.IsError || len(handed()) != 3 || handed()[2] != `{`+ref+`}` {
		t.Fatalf("over MCP: %v %+v, handed on %q", err, res, handed())
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "reader", Arguments: map[string]any{"note": png}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "its media type is image/png") || len(handed()) != 3 {
		t.Errorf("a file of another type over MCP: %v %+v", err, res)
	}

	// Without the workers' store, nothing is handed on. The client is
	// told the server failed, by a reference to its log, which says why.
	logged := servetest.Log(runs)
	ag.Files = nil
	h, err = serve.API([]serve.Agent{ag}, runs, serve.AllAgents(apiToken))
	if err != nil {
		t.Fatal(err)
	}
	srv2 := httptest.NewServer(h)
	defer srv2.Close()
	code, got := call(t, srv2, http.MethodPost, "/v1/agents/reader/runs", apiToken, `{"note": "`+note+`"}`)
	logRef := regexp.MustCompile(`under reference ([0-9a-f]{12})"`).FindSubmatch(got)
	if code != 500 || logRef == nil || strings.Contains(string(got), "store") || len(handed()) != 3 {
		t.Fatalf("no store: %d %s", code, got)
	}
	// Over MCP, the call's error names a reference too.
	s, err = serve.MCP("test", []serve.Agent{ag}, runs)
	if err != nil {
		t.Fatal(err)
	}
	_, err = session(t, s).CallTool(ctx, &mcp.CallToolParams{Name: "reader", Arguments: map[string]any{"note": note}})
	if err == nil || !strings.Contains(err.Error(), "under reference") || strings.Contains(err.Error(), "store") {
		t.Errorf("no store, over MCP: %v", err)
	}
	if log := logged(); len(log) != 2 || !strings.Contains(log[0], "(reference "+string(logRef[1])+"): agent reader takes files, and the server has no store its workers read") {
		t.Errorf("the server's log holds %q", log)
	}
}

// session is a session of the SDK's own client with s, over the SDK's
// in-memory transports, closed when the test ends.
func session(t *testing.T, s *mcp.Server) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// postAs posts body, of contentType, to url with the API's token, and
// returns the status and the body of the response.
func postAs(t *testing.T, url, body, contentType string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+apiToken)
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}
