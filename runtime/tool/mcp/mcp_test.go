package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/filestore"
	"agentc.dev/agentc/runtime/testmodel"
)

// stdio declares the test server over stdio, allowing the named tools,
// and sets up the parent's environment: the server switch (passed through
// by env), the variant, and a canary that env does not name.
func stdio(t *testing.T, variant string, allow ...string) plan.Tool {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(serverVar, "1")
	t.Setenv(variantVar, variant)
	t.Setenv(canaryVar, "tweet")
	// A server built with -race would sleep a second before it exits.
	t.Setenv("GORACE", "atexit_sleep_ms=0")
	return plan.Tool{
		Kind:        "mcp",
		Description: "The test server.",
		Command:     []string{exe},
		Env:         []string{serverVar, variantVar, "GORACE"},
		Allow:       allow,
		// These tests are of the session and the process; confined.go's
		// of its confinement.
		Confine: &plan.Confine{Enforce: "off"},
	}
}

func connect(t *testing.T, decl plan.Tool) *Server {
	t.Helper()
	s, err := Connect(context.Background(), "srv", decl, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func names(tools []agentrt.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Spec().Name)
	}
	return out
}

// listed returns the test server's own input schemas, in canonical form,
// as a client of the SDK sees them.
func listed(t *testing.T) map[string]string {
	t.Helper()
	ct, st := sdk.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := testServer("").Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	out := map[string]string{}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		data, err := digest.CanonicalValue(tool.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		out[tool.Name] = string(data)
	}
	return out
}

// TestConnect: what a server exposes, and what Connect refuses.
func TestConnect(t *testing.T) {
	server := listed(t)
	for _, tc := range []struct {
		name    string
		variant string
		allow   []string
		edit    func(*plan.Tool)
		want    []string // tool names; nil when Connect fails
		errs    []string // in Connect's error
	}{
		{name: "allowed tools", allow: []string{"echo", "add"}, want: []string{"add", "echo"}},
		{name: "secret is not exposed", allow: []string{"echo"}, want: []string{"echo"}},
		{name: "a name twice", allow: []string{"echo", "echo"}, want: []string{"echo"}},
		{name: "missing tools", allow: []string{"echo", "nosuch", "other"},
			errs: []string{`mcp server "srv"`, `allow names "nosuch", "other", which the server does not have`, `it has: "add", "annotations_only", "big",`}},
		{name: "empty schema", allow: []string{"echo", "empty_schema"},
			errs: []string{`mcp server "srv"`, `tool "empty_schema": its input schema is the empty schema {}, which accepts anything`}},
		{name: "annotations only", allow: []string{"annotations_only"},
			errs: []string{`tool "annotations_only": its input schema has no keyword that constrains the arguments (only description, title)`}},
		{name: "not an object", allow: []string{"not_object", "empty_schema"},
			errs: []string{`tool "not_object": its input schema is the boolean true`, `tool "empty_schema"`}},
		{name: "server fails to start", variant: "crash", allow: []string{"echo"},
			errs: []string{`mcp server "srv": starting the session:`, "its stderr ends with:\ntest server: refusing to start (variant crash)"}},
		{name: "no such program", allow: []string{"echo"}, edit: func(d *plan.Tool) { d.Command = []string{"./no-such-server"} },
			errs: []string{`mcp server "srv": starting "./no-such-server": no such file or directory`}},
		{name: "not on PATH", allow: []string{"echo"}, edit: func(d *plan.Tool) { d.Command = []string{"no-such-server-on-path"} },
			errs: []string{`program "no-such-server-on-path" is not found on PATH`}},
		{name: "command and url", allow: []string{"echo"}, edit: func(d *plan.Tool) { d.URL = "http://127.0.0.1:1/" },
			errs: []string{"needs exactly one of command (a server over stdio) and url (streamable HTTP)"}},
		{name: "bad env name", allow: []string{"echo"}, edit: func(d *plan.Tool) { d.Env = []string{"A-B"} },
			errs: []string{`env: "A-B" is not a variable name`}},
		{name: "empty allow", edit: func(d *plan.Tool) {}, errs: []string{"allow names no tool"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			decl := stdio(t, tc.variant, tc.allow...)
			if tc.edit != nil {
				tc.edit(&decl)
			}
			base := t.TempDir()
			s, err := Connect(context.Background(), "srv", decl, base)
			if tc.want == nil {
				if err == nil {
					s.Close()
					t.Fatal("Connect succeeded")
				}
				for _, want := range tc.errs {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error lacks %q:\n%v", want, err)
					}
				}
				if strings.Contains(err.Error(), base) {
					t.Errorf("error shows the base directory: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got := names(s.Tools()); !slices.Equal(got, tc.want) {
				t.Fatalf("tools %v, want %v", got, tc.want)
			}
			for _, tool := range s.Tools() {
				spec := tool.Spec()
				if string(spec.Schema) != server[spec.Name] {
					t.Errorf("%s: schema %s, want the server's %s", spec.Name, spec.Schema, server[spec.Name])
				}
				if !strings.HasSuffix(spec.Description, "\n\nServer: The test server.") {
					t.Errorf("%s: description %q lacks the manifest's", spec.Name, spec.Description)
				}
			}
		})
	}
}

// TestCall: results as the model reads them.
func TestCall(t *testing.T) {
	s := connect(t, stdio(t, "", "echo", "add", "fail", "image", "big"))
	tools := map[string]agentrt.Tool{}
	for _, tool := range s.Tools() {
		tools[tool.Spec().Name] = tool
	}
	note := "[result cut: the first 1048576 of 2097152 bytes are shown]"
	for _, tc := range []struct {
		name, tool, args string
		want             string // the content, or a prefix of it ending in "..."
		isError          bool
		err              string // in the returned error
	}{
		{name: "text", tool: "echo", args: `{"text":"hello, world"}`, want: "hello, world"},
		{name: "integers", tool: "add", args: `{"a":2,"b":40}`, want: "42"},
		{name: "an error result", tool: "fail", args: `{}`, want: "it failed on purpose", isError: true},
		{name: "empty arguments", tool: "fail", args: ``, want: "it failed on purpose", isError: true},
		{name: "non-text content", tool: "image", args: `{}`, want: "[image content: image/png, 4 bytes]\na caption"},
		{name: "capped", tool: "big", args: `{}`, want: "éé..."},
		{name: "arguments the server refuses", tool: "add", args: `{"a":"two"}`, want: "...", isError: true},
		{name: "not an object", tool: "echo", args: `["hi"]`, err: `mcp server "srv": tool "echo": arguments must be a JSON object, not an array`},
		{name: "not JSON", tool: "echo", args: `{`, err: "arguments are not valid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tools[tc.tool].Call(context.Background(), json.RawMessage(tc.args))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError != tc.isError {
				t.Errorf("IsError %v, want %v (content %.200q)", res.IsError, tc.isError, res.Content)
			}
			if prefix, ok := strings.CutSuffix(tc.want, "..."); ok {
				if !strings.HasPrefix(res.Content, prefix) {
					t.Errorf("content %.200q, want it to start with %q", res.Content, prefix)
				}
			} else if res.Content != tc.want {
				t.Errorf("content %.200q, want %q", res.Content, tc.want)
			}
			if tc.tool == "big" {
				if !strings.HasSuffix(res.Content, "\n"+note) || len(res.Content) > MaxResultBytes+len(note)+1 {
					t.Errorf("a big result is not cut at %d bytes with a note: %d bytes ending %q", MaxResultBytes, len(res.Content), res.Content[max(0, len(res.Content)-80):])
				}
			}
		})
	}

	// A name outside the allow list never reaches the server.
	if _, err := s.call(context.Background(), "secret", nil); err == nil || !strings.Contains(err.Error(), `tool "secret": not in the server's allow list`) {
		t.Errorf("a call of secret: %v", err)
	}
}

// TestCallDeadline: a call ends with its context, and the session
// survives it.
func TestCallDeadline(t *testing.T) {
	s := connect(t, stdio(t, "", "sleep", "echo"))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := s.Tools()[1].Call(ctx, json.RawMessage(`{}`))
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), `mcp server "srv": tool "sleep"`) {
		t.Fatalf("a call past its deadline: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the call took %s to honour a 200ms deadline", d)
	}
	res, err := s.Tools()[0].Call(context.Background(), json.RawMessage(`{"text":"still here"}`))
	if err != nil || res.Content != "still here" {
		t.Errorf("a call after the deadline: %v, %v", res, err)
	}
}

// TestEnvironment: the server gets PATH and the variables env names,
// nothing else, and runs in the base directory; a relative program path
// resolves against it.
func TestEnvironment(t *testing.T) {
	decl := stdio(t, "", "env", "cwd")
	exe := decl.Command[0]
	base := filepath.Dir(exe)
	decl.Command = []string{"./" + filepath.Base(exe)}
	s, err := Connect(context.Background(), "srv", decl, base)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	call := func(name, args string) string {
		t.Helper()
		for _, tool := range s.Tools() {
			if tool.Spec().Name == name {
				res, err := tool.Call(context.Background(), json.RawMessage(args))
				if err != nil || res.IsError {
					t.Fatalf("%s: %v, %v", name, res, err)
				}
				return res.Content
			}
		}
		t.Fatalf("no tool %s", name)
		return ""
	}
	for _, c := range []struct{ name, want string }{
		{serverVar, "1"},
		{"PATH", os.Getenv("PATH")},
		{canaryVar, "(unset)"},
		{"HOME", "(unset)"},
	} {
		if got := call("env", `{"name":"`+c.name+`"}`); got != c.want {
			t.Errorf("the server's %s is %q, want %q", c.name, got, c.want)
		}
	}
	wd, err := filepath.EvalSymlinks(call("cwd", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := filepath.EvalSymlinks(base); wd != want {
		t.Errorf("the server runs in %s, want %s", wd, want)
	}
}

// TestFingerprint: stable for the same tools, different when a tool the
// agent may call changes.
func TestFingerprint(t *testing.T) {
	fp := func(variant string, allow ...string) string {
		t.Helper()
		s := connect(t, stdio(t, variant, allow...))
		defer s.Close()
		if _, err := digest.Parse(s.Fingerprint()); err != nil {
			t.Fatal(err)
		}
		return s.Fingerprint()
	}
	a, b := fp("", "echo", "add"), fp("", "add", "echo")
	if a != b {
		t.Errorf("two connects to the same server: %s and %s", a, b)
	}
	if c := fp("changed", "echo", "add"); c == a {
		t.Errorf("echo's description changed, the fingerprint did not: %s", c)
	}
	if d := fp("", "echo"); d == a {
		t.Errorf("the allowed tools changed, the fingerprint did not: %s", d)
	}
}

// TestClose: Close ends the session and the server process.
func TestClose(t *testing.T) {
	s := connect(t, stdio(t, "", "echo"))
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > closeGrace {
		t.Errorf("Close took %s: the server did not exit when its stdin closed", d)
	}
	if ps := s.cmd.ProcessState; ps == nil || !ps.Exited() {
		t.Fatalf("the server process has not exited after Close: %v", ps)
	}
	if err := s.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
	if _, err := s.Tools()[0].Call(context.Background(), json.RawMessage(`{"text":"x"}`)); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("a call after Close: %v", err)
	}
}

// TestStartTimeout: a server that never answers fails Connect in time.
func TestStartTimeout(t *testing.T) {
	start := time.Now()
	_, err := Connect(context.Background(), "srv", stdio(t, "mute", "echo"), t.TempDir(), WithStartTimeout(300*time.Millisecond))
	if err == nil || !strings.Contains(err.Error(), `mcp server "srv": starting the session: the server did not answer in time`) {
		t.Errorf("a mute server: %v", err)
	}
	if d := time.Since(start); d > closeGrace {
		t.Errorf("Connect took %s to give up after 300ms", d)
	}
}

// TestServerExits: a server that dies mid-run fails the calls that
// follow, and Close says how it ended.
func TestServerExits(t *testing.T) {
	s := connect(t, stdio(t, "", "echo", "exit"))
	echo, exit := s.Tools()[0], s.Tools()[1]
	if _, err := exit.Call(context.Background(), json.RawMessage(`{}`)); err == nil || !strings.Contains(err.Error(), `mcp server "srv": tool "exit": the connection to the server is closed`) {
		t.Errorf("the call the server died in: %v", err)
	}
	if _, err := echo.Call(context.Background(), json.RawMessage(`{"text":"x"}`)); err == nil || !strings.Contains(err.Error(), `mcp server "srv": tool "echo": the connection to the server is closed`) {
		t.Errorf("a call after the server died: %v", err)
	}
	if err := s.Close(); err == nil || !strings.Contains(err.Error(), "exit status 2") || !strings.Contains(err.Error(), "test server: exiting on request") {
		t.Errorf("Close after the server died: %v", err)
	}
}

// TestConcurrentCalls: one session serves calls from many goroutines.
func TestConcurrentCalls(t *testing.T) {
	s := connect(t, stdio(t, "", "add"))
	add := s.Tools()[0]
	errs := make(chan error, 16)
	for i := range 16 {
		go func() {
			res, err := add.Call(context.Background(), json.RawMessage(fmt.Sprintf(`{"a":%d,"b":1}`, i)))
			if err == nil && res.Content != fmt.Sprint(i+1) {
				err = fmt.Errorf("%d+1 = %q", i, res.Content)
			}
			errs <- err
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestStreamableHTTP: a server reached by URL.
func TestStreamableHTTP(t *testing.T) {
	srv := testServer("")
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	defer ts.Close()
	decl := plan.Tool{Kind: "mcp", Description: "The test server.", URL: ts.URL, Allow: []string{"echo", "add"}}
	s, err := Connect(context.Background(), "srv", decl, t.TempDir(), WithHTTPClient(ts.Client()))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := names(s.Tools()); !slices.Equal(got, []string{"add", "echo"}) {
		t.Fatalf("tools %v", got)
	}
	res, err := s.Tools()[0].Call(context.Background(), json.RawMessage(`{"a":1,"b":2}`))
	if err != nil || res.Content != "3" {
		t.Fatalf("a call: %v, %v", res, err)
	}
	local := connect(t, stdio(t, "", "echo", "add"))
	if s.Fingerprint() != local.Fingerprint() {
		t.Errorf("the same tools over HTTP and stdio: fingerprints %s and %s", s.Fingerprint(), local.Fingerprint())
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}

	notMCP := httptest.NewServer(http.NotFoundHandler())
	defer notMCP.Close()
	decl.URL = notMCP.URL
	_, err = Connect(context.Background(), "srv", decl, t.TempDir(), WithHTTPClient(notMCP.Client()))
	if err == nil || !strings.Contains(err.Error(), `mcp server "srv": starting the session`) {
		t.Errorf("a URL that serves no MCP: %v", err)
	}
}

// TestRun: an agent runs the server's tools through the runtime, with
// the offline test model.
func TestRun(t *testing.T) {
	decl := stdio(t, "", "echo", "add")
	s := connect(t, decl)
	p := &plan.Plan{Agent: plan.Agent{
		Name: "mcp-user", Model: plan.Model{Provider: "test", Name: "test"}, Instructions: "Use the tools.",
		Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{"srv": decl}},
		Output:       &plan.Output{Name: "answer", Description: "Say done.", Schema: json.RawMessage(`{"type":"boolean"}`), Retries: 2},
		Strategy:     plan.Strategy{OnProse: "remind", Reminders: 2},
	}}
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	tools := map[string]agentrt.Tool{}
	for _, tool := range s.Tools() {
		tools[tool.Spec().Name] = tool
	}
	r, err := agentrt.New(p, agentrt.Options{Model: testmodel.Model{}, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcome != "ok" || rep.ToolCalls != 2 {
		t.Fatalf("outcome %s, %d tool calls: %s", rep.Outcome, rep.ToolCalls, rep.Error)
	}
	for _, rd := range rep.Rounds {
		for _, c := range rd.ToolCalls {
			if c.IsError {
				t.Errorf("%s failed: %s", c.Name, c.Error)
			}
		}
	}
}

// TestCallFiles: a result's image, and an embedded resource whose bytes
// are a PDF, go to the run's file store and come back as the result's
// files; a text blob, and an image of a type agentc does not know, stay
// text, and the store holds nothing of them. The text names every block
// either way.
func TestCallFiles(t *testing.T) {
	s := connect(t, stdio(t, "", "photo"))
	store, err := filestore.Open(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.call(agentrt.WithFileStore(context.Background(), store), "photo", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 2 || res.Files[0].MediaType != "image/png" || res.Files[1].MediaType != "application/pdf" || res.Files[0].Name != "photo" {
		t.Fatalf("files %+v", res.Files)
	}
	named := map[string]bool{}
	for _, f := range res.Files {
		if b, err := store.Stat(f.Digest, 1<<30); err != nil || b.Size != f.Size {
			t.Errorf("%+v not in the store: %v", f, err)
		}
		named[strings.TrimPrefix(f.Digest, filestore.Prefix)] = true
	}
	// With --record, the journal's store: a blob no result names would
	// stay there for good.
	entries, err := os.ReadDir(store.Dir())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") && !named[e.Name()] {
			t.Errorf("the store holds %s, which the result does not name", e.Name())
		}
	}
	if !strings.Contains(res.Content, "[image content: image/png,") || !strings.Contains(res.Content, "a caption") {
		t.Errorf("content %q", res.Content)
	}
	// Without a store the result is its text alone.
	res, err = s.call(context.Background(), "photo", nil)
	if err != nil || len(res.Files) != 0 {
		t.Errorf("without a store: %+v, %v", res.Files, err)
	}
}

// TestSessionRenewed: a server over HTTP may end a session at any time,
// and then answers its requests 404 (agentc serve ends idle ones): the
// call is made again in a new session, which must offer the same tools.
// A new session that offers others is refused, and the call not made.
func TestSessionRenewed(t *testing.T) {
	srv := testServer("")
	sdkh := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	var mu sync.Mutex
	ended := map[string]bool{} // sessions the server has ended
	sessions := map[string]bool{}
	var other http.Handler // once set, new sessions are its server's
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		id := r.Header.Get("Mcp-Session-Id")
		gone, o := ended[id], other
		mu.Unlock()
		if gone {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		h := http.Handler(sdkh)
		if o != nil {
			h = o
		}
		h.ServeHTTP(w, r)
		if sid := w.Header().Get("Mcp-Session-Id"); sid != "" {
			mu.Lock()
			sessions[sid] = true
			mu.Unlock()
		}
	}))
	defer ts.Close()
	endAll := func() {
		mu.Lock()
		defer mu.Unlock()
		for id := range sessions {
			ended[id] = true
		}
	}
	decl := plan.Tool{Kind: "mcp", Description: "The test server.", URL: ts.URL, Allow: []string{"echo", "add"}}
	s, err := Connect(context.Background(), "srv", decl, t.TempDir(), WithHTTPClient(ts.Client()))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	add := s.Tools()[0]
	if res, err := add.Call(context.Background(), json.RawMessage(`{"a":1,"b":2}`)); err != nil || res.Content != "3" {
		t.Fatalf("a call: %v, %v", res, err)
	}
	endAll()
	// Calls at once: one new session serves them all.
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			res, err := add.Call(context.Background(), json.RawMessage(fmt.Sprintf(`{"a":%d,"b":1}`, i)))
			if err == nil && res.Content != fmt.Sprint(i+1) {
				err = fmt.Errorf("%d+1 = %q", i, res.Content)
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Errorf("a call after the session ended: %v", err)
		}
	}
	mu.Lock()
	n := len(sessions)
	mu.Unlock()
	if n != 2 {
		t.Errorf("%d sessions made, want the first and one new one", n)
	}
	// The server's tools change, and it ends the session again.
	mu.Lock()
	changed := testServer("changed")
	other = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return changed }, nil)
	mu.Unlock()
	endAll()
	if _, err := add.Call(context.Background(), json.RawMessage(`{"a":1,"b":2}`)); err == nil || !strings.Contains(err.Error(), "offers other tools than when the run began") {
		t.Errorf("a call to a server whose tools changed: %v", err)
	}
}

// TestSessionRenewedTakenNotMadeAgain: a call the server took, in a
// session it then ended, is not made again in the new session another
// call renews: the server may have run it. It fails.
func TestSessionRenewedTakenNotMadeAgain(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "agentc-test-server", Version: "1"}, nil)
	type none struct{}
	var mu sync.Mutex
	runs := 0
	started, release := make(chan struct{}), make(chan struct{})
	sdk.AddTool(srv, &sdk.Tool{Name: "slow", Description: "Answer once released."}, func(ctx context.Context, req *sdk.CallToolRequest, _ none) (*sdk.CallToolResult, any, error) {
		mu.Lock()
		runs++
		first := runs == 1
		mu.Unlock()
		if first {
			// A ping on the call's stream: its answer is under way
			// (the POST answered 200) once the client has answered.
			if err := req.Session.Ping(ctx, nil); err != nil {
				return nil, nil, err
			}
			close(started)
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil, nil
	})
	sdk.AddTool(srv, &sdk.Tool{Name: "quick", Description: "Answer at once."}, func(context.Context, *sdk.CallToolRequest, none) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "quick"}}}, nil, nil
	})
	sdkh := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	var first string // the first session, once the server has ended it
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gone := first != "" && r.Header.Get("Mcp-Session-Id") == first
		mu.Unlock()
		if gone {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		sdkh.ServeHTTP(w, r)
	}))
	defer ts.Close()
	defer close(release)
	decl := plan.Tool{Kind: "mcp", Description: "The test server.", URL: ts.URL, Allow: []string{"quick", "slow"}}
	s, err := Connect(context.Background(), "srv", decl, t.TempDir(), WithHTTPClient(ts.Client()))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	quick, slow := s.Tools()[0], s.Tools()[1]
	slowErr := make(chan error, 1)
	go func() {
		_, err := slow.Call(context.Background(), json.RawMessage(`{}`))
		slowErr <- err
	}()
	<-started
	session, _ := s.current()
	mu.Lock()
	first = session.ID()
	mu.Unlock()
	if res, err := quick.Call(context.Background(), json.RawMessage(`{}`)); err != nil || res.Content != "quick" {
		t.Fatalf("a call after the session ended: %v, %v", res, err)
	}
	if err := <-slowErr; err == nil || !strings.Contains(err.Error(), "the server ended its session while the call was under way") {
		t.Errorf("the call the server took, in the session it ended: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if runs != 1 {
		t.Errorf("the server ran the call %d times, want once", runs)
	}
}

// TestCloseFlooded: a stdio server that floods its client with pings and
// reads nothing more does not hold Close, and the run's end, for good:
// the answers to its pings filled its input, and the SDK's Close waited
// on their handlers with no bound (a run past its deadline and SIGTERM,
// 600 MB and rising). Past a grace the server is killed and Close ends.
func TestCloseFlooded(t *testing.T) {
	s, err := Connect(context.Background(), "srv", stdio(t, "flood", "echo"), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a bound, not a measure
	defer cancel()
	// Its 5,000 pings are more than agentc holds unanswered: the call
	// ends there, saying why, and later calls fail the same way.
	for range 2 {
		if _, err := s.call(ctx, "echo", json.RawMessage(`{}`)); err == nil || !strings.Contains(err.Error(), "whose answers it has not read") {
			t.Errorf("a call while the server floods: %v", err)
		}
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case <-closed:
	case <-time.After(time.Minute): // a bound, not a measure: the grace is seconds
		t.Fatal("Close did not end")
	}
}

// TestInputRequired: a server of the newest revision (2026-07-28, by
// server/discover) that answers a call by asking for input — a result of
// type input_required, the revision's multi-round-trip requests — fails
// the call, which reaches it once: the SDK, left to itself, answered what
// it asked and made the call again, ten times for one call of the model.
func TestInputRequired(t *testing.T) {
	s := connect(t, stdio(t, "ask", "ask", "busy"))
	if v := s.session.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("the session's protocol version is %q, want 2026-07-28 (the revision that asks so)", v)
	}
	_, err := callTool(s, "ask", `{}`)
	if err == nil || !strings.Contains(err.Error(), `tool "ask": the server asked for input before it answers (a result of type input_required), which agentc does not give; the call is not made again`) {
		t.Errorf("a call the server answers asking for input: %v", err)
	}
	// Asking nothing, the server says it is busy: the SDK made the call
	// again, three times.
	_, err = callTool(s, "busy", `{}`)
	if err == nil || !strings.Contains(err.Error(), `tool "busy": the server answered that it is busy`) {
		t.Errorf("a call the server answers busy: %v", err)
	}
	// Close waits for the server, and for what it wrote to stderr.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"ask", "busy"} {
		if n := strings.Count(s.stderr.String(), tool+" called"); n != 1 {
			t.Errorf("%s was called %d times, want once; the server's stderr:\n%s", tool, n, s.stderr.String())
		}
	}
}

// TestNewerVersionRefused: a server that does not take server/discover,
// and answers agentc's initialize (which asks for 2025-11-25) with the
// newest revision, 2026-07-28, which the SDK would take, is refused at
// the start, saying so.
func TestNewerVersionRefused(t *testing.T) {
	_, err := Connect(context.Background(), "srv", stdio(t, "newer", "echo"), t.TempDir())
	if err == nil || !strings.Contains(err.Error(), `the server answered initialize with MCP protocol version "2026-07-28", newer than the "2025-11-25" agentc asked for in it: refused`) {
		t.Errorf("a server answering with a newer version than asked: %v", err)
	}
	// A server answering with the version asked for is taken, as ever.
	s := connect(t, stdio(t, "flood", "echo"))
	if v := s.session.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Errorf("a server of 2025-11-25: the session's version is %q", v)
	}
}

// TestStartFlooded: a server that answers the start with requests (pings)
// and reads nothing more fails the start once its timeout has passed,
// within the grace Close gives: the SDK closes a session it failed to
// start, and its close waits for the answers to be written, which held
// Connect, and the run's start, for good.
func TestStartFlooded(t *testing.T) {
	startTimesOut(t, stdio(t, "floodstart", "echo"))
}

// startTimesOut connects to the server decl declares with a start timeout
// of 300ms, and wants the start to fail on it, within a minute.
func startTimesOut(t *testing.T, decl plan.Tool, opts ...Option) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		s, err := Connect(context.Background(), "srv", decl, t.TempDir(), append(opts, WithStartTimeout(300*time.Millisecond))...)
		if err == nil {
			s.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), `mcp server "srv": starting the session: the server did not answer in time`) {
			t.Errorf("a server flooding its start: %v", err)
		}
	case <-time.After(time.Minute): // a bound, not a measure: the grace is seconds
		t.Fatal("Connect did not end a minute after its start timeout of 300ms")
	}
}
