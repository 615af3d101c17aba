// Package mcp is the mcp tool kind: it connects to a Model Context Protocol
// server, over stdio or streamable HTTP, and exposes the server's tools
// that the manifest allows as tools of the agent, each under the server
// tool's own name.
//
// # Connecting
//
// Connect starts or reaches the server, initialises the session and lists
// the server's tools, all within a start timeout (DefaultStartTimeout). It
// keeps only the tools the manifest's allow list names; a name the server
// lacks is an error naming it, and so is an allowed tool whose input schema
// accepts anything: a schema that is not a JSON object, is {}, or has no
// keyword that constrains the arguments (only annotations such as title,
// description, $comment, examples, default, deprecated, readOnly or
// writeOnly) — the essence of the compiler's non-empty schema rule, applied
// here because a server's schemas are known only once it runs. Every
// allowed schema must also compile as the runtime compiles schemas. A
// server that answers initialize with a protocol version newer than the one
// agentc asked for in it is refused (noNewerVersion).
//
// A stdio server (command) runs with an empty environment but for PATH and
// the variables env lists, copied from agentc's environment where they are
// set, and AGENTC_TOOL_PROCESS, a random value of its own that marks what
// it starts: no HOME, no provider key, unless the manifest names it. Its
// working directory is the base directory (the manifest's or plan's
// directory). A program written without a slash is looked up on PATH, and
// one found through a relative PATH entry (such as ".") is refused; a
// relative path with a slash resolves against the base directory. The
// server runs in a process group of its own (on Unix); Close closes its
// stdin, gives it two seconds to exit, sends SIGTERM, gives it two more,
// then kills it, and kills whatever it left running in its group and, on
// Linux, every process that still carries its mark, as the exec tool does
// after a call. On Linux the server is also killed if this process dies.
// The last 2 KiB it wrote to stderr end the errors of a failed start, of a
// call that finds the server gone, and of Close after the server died: the
// server's own output, passed on as it is.
//
// A streamable HTTP server (url) is reached with the client WithHTTPClient
// gives, or http.DefaultClient: a copy of it, with its redirect policy
// (within one rule: a redirect to another origin is not followed), cookie
// jar and timeout, whose transport wraps the client's own. The
// wrapper holds each message the server sends to MaxMessageBytes, as the
// SDK holds a stdio server's: a response body read whole (application/json,
// or anything but an event stream) and each event of a text/event-stream
// body, counted from the blank line that ended the event before it, so a
// long stream of small events is never cut. Reading stops at the byte past
// the bound, and the call the message answers fails with an error saying
// so (a JSON body past it also ends the session, as the SDK ends one whose
// answer it cannot read; an event past it ends only its call). agentc opens
// no standalone event stream: it only calls tools, and needs none of the
// server's own notifications. Each answer to a request the server sends (a
// ping) is a request of its own, which holds a connection until the server
// answers it: past MaxUnansweredHTTP of them the session ends.
//
// # Tools
//
// Each allowed tool's spec has the server tool's name, its description
// followed by the manifest's description of the server (on a line of its
// own, "Server: ..."): the server's text says what the tool does, and the
// manifest's, reviewed with the agent, says what the server is for. The
// schema is the server's input schema in canonical JSON (RFC 8785).
//
// A call sends the arguments as they are (one JSON object; empty arguments
// count as {}) and renders the result as text: text content as it is,
// text resources with their URI, and other content described by type,
// MIME type and size, the parts joined by newlines; structured content
// when there is no other content; "(no content)" when there is nothing.
// The result is cut at MaxResultBytes with a note. A result the server
// marks as an error becomes an IsError result, and one that asks for input
// first (input_required) fails the call, which is not made again. A call
// that fails in the protocol or the transport returns an error naming the
// server (the manifest's tool name) and the tool; a call whose context
// ends returns an error wrapping the context's error. A name outside the
// allow list is refused, although no such tool is ever exposed.
//
// Fingerprint digests what the server says of the allowed tools — their
// names, descriptions and input schemas — so a host can tell a server
// whose tools changed from the one a run was recorded against.
package mcp

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zeebo/blake3"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/internal/leaf/buildinfo"
	"agentc.dev/agentc/internal/leaf/textcut"
	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/filestore"
	"agentc.dev/agentc/runtime/redact"
	"agentc.dev/agentc/runtime/tool/internal/confine"
	"agentc.dev/agentc/runtime/tool/internal/proc"
	"agentc.dev/agentc/runtime/tool/internal/toolio"
)

// DefaultStartTimeout bounds starting a server, initialising the session
// and listing its tools, when WithStartTimeout does not say otherwise.
const DefaultStartTimeout = 30 * time.Second

// MaxListPages bounds the pages of a server's tool listing agentc reads.
// Each page is one message, held to MaxMessageBytes, and of a page only
// the allowed tools are kept: a server whose listing never ends (each
// page naming the next) is refused here rather than read until the start
// times out.
const MaxListPages = 100

// MaxResultBytes caps the text of one call's result.
const MaxResultBytes = 1 << 20

// closeGrace is how long Close waits for a stdio server to exit after its
// stdin is closed, and again after SIGTERM, before killing it.
const closeGrace = 2 * time.Second

// stderrTail is how much of a stdio server's stderr is kept.
const stderrTail = 2048

// fingerprintContext is the blake3 derive-key context of Fingerprint.
const fingerprintContext = "agentc.dev 2026-11-30 mcp server tools fingerprint v1"

// Option configures Connect.
type Option func(*options)

type options struct {
	httpClient   *http.Client
	startTimeout time.Duration
	secrets      *redact.Set
}

// WithSecrets gives the secrets to replace in a result, and in what a
// stdio server wrote to stderr, before they are cut, so that a cut never
// shows part of one (the run replaces them in what is not cut).
func WithSecrets(s *redact.Set) Option {
	return func(o *options) { o.secrets = s }
}

// WithHTTPClient sets the client that carries a streamable HTTP server's
// requests: Connect uses a copy of it, its transport wrapped to hold each
// message to MaxMessageBytes, and leaves c as it is.
func WithHTTPClient(c *http.Client) Option {
	return func(o *options) { o.httpClient = c }
}

// WithStartTimeout bounds starting the server, initialising the session and
// listing its tools; d <= 0 means DefaultStartTimeout.
func WithStartTimeout(d time.Duration) Option {
	return func(o *options) { o.startTimeout = d }
}

// Server is a connected MCP server and the tools an agent may call on it.
// It is safe for concurrent use; Close it when the run ends.
type Server struct {
	name string
	// session is the session calls go to; renew replaces it, for a
	// server over streamable HTTP that ended it (renewSession).
	mu          sync.Mutex
	session     *mcp.ClientSession
	conn        *heldConn                                                            // session's connection
	renewal     int                                                                  // sessions replaced so far
	renew       func(context.Context) (*mcp.ClientSession, *heldConn, string, error) // nil over stdio
	cmd         *osexec.Cmd                                                          // nil for a streamable HTTP server
	group       *proc.Group                                                          // nil for a streamable HTTP server
	stderr      *tail                                                                // nil for a streamable HTTP server
	thread      func()                                                               // releases the thread that started the server
	confined    *confine.Run                                                         // nil for an unconfined or HTTP server
	policy      confine.Policy
	tools       []*Tool // sorted by name
	allowed     map[string]bool
	fingerprint string
	secrets     *redact.Set

	closed atomic.Bool
	lost   atomic.Pointer[lostSession] // what ended the session: a body past the bound over HTTP, requests unanswered past theirs
	// endedIDs holds the IDs of the sessions the server over HTTP has
	// ended (it answered a request 404): one for each renewal at most.
	endedIDs sync.Map
	// cut ends every request under way to a server over HTTP: Close's
	// last resort (see Close).
	cut       context.CancelFunc
	closeOnce sync.Once
	closeErr  error
}

// Tool is one allowed tool of a Server: a runtime.Tool.
type Tool struct {
	server *Server
	spec   runtime.ToolSpec
}

var _ runtime.Tool = (*Tool)(nil)

// Connect connects to the MCP server that t declares, under the manifest's
// tool name name, and keeps the tools t.Allow names. baseDir is the
// directory of the agent's manifest or plan. ctx bounds connecting only,
// not the session.
func Connect(ctx context.Context, name string, t plan.Tool, baseDir string, opts ...Option) (*Server, error) {
	fail := func(format string, args ...any) (*Server, error) {
		return nil, fmt.Errorf("mcp server %q: "+format, append([]any{name}, args...)...)
	}
	o := options{startTimeout: DefaultStartTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	if o.startTimeout <= 0 {
		o.startTimeout = DefaultStartTimeout
	}
	if t.Kind != "" && t.Kind != "mcp" {
		return fail("kind is %q, not mcp", t.Kind)
	}
	if (len(t.Command) == 0) == (t.URL == "") {
		return fail("needs exactly one of command (a server over stdio) and url (streamable HTTP)")
	}
	if len(t.Allow) == 0 {
		return fail("allow names no tool")
	}
	for _, a := range t.Allow {
		if a == "" {
			return fail("allow holds an empty name")
		}
	}
	s := &Server{name: name, allowed: map[string]bool{}, secrets: o.secrets}
	for _, a := range t.Allow {
		s.allowed[a] = true
	}

	var transport heldTransport
	if t.URL != "" {
		u, err := url.Parse(t.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fail("url %q is not an http or https URL", t.URL)
		}
		hc, cut := boundedClient(o.httpClient, MaxMessageBytes, s.sessionEnded)
		s.cut = cut
		// Each answer to a request the server sends is a request of its
		// own, which holds a connection until the server answers it: they
		// are held to a bound, MaxUnansweredHTTP (heldTransport).
		transport = heldTransport{Transport: shapedTransport{Transport: &mcp.StreamableClientTransport{
			Endpoint:             t.URL,
			HTTPClient:           hc,
			DisableStandaloneSSE: true,
			// The SDK's own bound on an event, counted as the transport
			// counts it; the transport sees each byte first, and ends the
			// call with its own error.
			MaxEventSize: MaxMessageBytes,
		}, lost: s.setLost}, max: MaxUnansweredHTTP, flooded: s.setLost}
	} else {
		cmd, err := command(t, baseDir)
		if err != nil {
			return fail("%v", err)
		}
		s.cmd, s.group = cmd, proc.New(cmd)
		base, _ := filepath.Abs(baseDir) // command has checked it
		policy, err := confine.ForTool(name, t.Confine, base)
		if err != nil {
			return fail("%v", err)
		}
		if s.confined, err = policy.Wrap(cmd); err != nil {
			policy.Close()
			return fail("starting %q: %s", t.Command[0], toolio.Reason(err))
		}
		s.policy = policy
		s.stderr = &tail{max: stderrTail, secrets: o.secrets}
		cmd.Stderr = s.stderr
		// Requests the server sends whose answers it does not read are
		// held to a bound (heldTransport).
		transport = heldTransport{Transport: shapedTransport{Transport: &mcp.CommandTransport{Command: cmd, TerminateDuration: closeGrace}, lost: s.setLost}, flooded: s.setLost}
	}

	sctx, cancel := context.WithTimeout(ctx, o.startTimeout)
	defer cancel()
	sctx, stop := watchSize(sctx)
	defer stop()
	client := mcp.NewClient(&mcp.Implementation{Name: "agentc", Version: version()}, &mcp.ClientOptions{
		// A result asking for input (the newest revision's multi-round-trip
		// requests) fails its call: left on, the SDK answered what the
		// server asked and made the call again, ten times for each call
		// the model made (and was approved for).
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	})
	client.AddSendingMiddleware(noNewerVersion)
	if t.URL != "" {
		// A server over HTTP may end a session at any time, and then
		// answers its requests 404: a new one is made, with the same
		// tools, for the calls after (see renewSession).
		s.renew = func(ctx context.Context) (*mcp.ClientSession, *heldConn, string, error) {
			ctx, cancel := context.WithTimeout(ctx, o.startTimeout)
			defer cancel()
			ctx, stop := watchSize(ctx)
			defer stop()
			session, conn, err := connectSession(ctx, client, transport)
			if err != nil {
				return nil, nil, "", err
			}
			_, fp, err := s.listed(ctx, session, t)
			if err != nil {
				conn.cut()
				session.Close()
				return nil, nil, "", err
			}
			return session, conn, fp, nil
		}
	}
	var session *mcp.ClientSession
	var err error
	connect := func() { session, s.conn, err = connectSession(sctx, client, transport) }
	if s.group != nil {
		// The server dies with the thread that starts it (Linux): one
		// kept for it until Close.
		started := s.group.Starting()
		s.thread = proc.OnThread(connect)
		started()
		s.confined.Started()
	} else {
		connect()
	}
	if err != nil {
		s.reap()
		if _, cerr := s.confined.Result(); cerr != nil {
			return fail("starting %q: %s", t.Command[0], strings.TrimPrefix(cerr.Error(), confine.ErrStart.Error()+": "))
		}
		switch {
		case tooLarge(sctx) != nil:
			return fail("starting the session: %v", tooLarge(sctx))
		case s.cmd != nil && s.cmd.Process == nil:
			return fail("starting %q: %s", t.Command[0], toolio.Reason(unwrapExec(err)))
		case ctx.Err() != nil:
			return fail("starting the session: %w", ctx.Err())
		case sctx.Err() != nil:
			err = errors.New("the server did not answer in time")
		case errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			err = errors.New("the server closed the connection")
			if st, ok := s.confined.Ended(0); ok {
				// reap has waited for it: a limit it passed is named.
				if s.policy.Explain(st) != "" {
					err = fmt.Errorf("the server closed the connection (the server ended: %s)", s.policy.Said(st))
				}
			}
		}
		return fail("starting the session: %s%s", s.said(err), s.stderrNote())
	}
	s.session = session

	if s.tools, s.fingerprint, err = s.listed(sctx, session, t); err != nil {
		s.Close()
		switch {
		case tooLarge(sctx) != nil:
			return fail("listing its tools: %v", tooLarge(sctx))
		case ctx.Err() != nil:
			return fail("listing its tools: %w", ctx.Err())
		case sctx.Err() != nil:
			return fail("listing its tools: the server did not answer in time")
		}
		return fail("%v%s", err, s.stderrNote())
	}
	return s, nil
}

// connectSession starts a session of client over t within ctx. The SDK
// closes a session it fails to start, and its close waits for the answers
// to what the server asked (a ping) to be written: a server that asked and
// then read nothing more (a stdio server) or answered none of the requests
// carrying them (over HTTP) held the start, past its timeout and the run's
// interrupt, for good. Once ctx has ended, those writes are given
// closeGrace twice over, as Close gives them, then ended.
func connectSession(ctx context.Context, client *mcp.Client, t heldTransport) (*mcp.ClientSession, *heldConn, error) {
	var conn atomic.Pointer[heldConn]
	t.opened = conn.Store
	done := make(chan struct{})
	defer close(done)
	defer context.AfterFunc(ctx, func() {
		grace := time.NewTimer(2 * closeGrace)
		defer grace.Stop()
		select {
		case <-done:
		case <-grace.C:
			if c := conn.Load(); c != nil {
				c.abort()
			}
		}
	})()
	session, err := client.Connect(ctx, t, nil)
	if err != nil {
		return nil, nil, err
	}
	return session, conn.Load(), nil
}

// noNewerVersion is a sending middleware that refuses an answer to
// initialize naming a protocol version newer than the one agentc asked
// for in it. agentc asks for the newest the SDK speaks by server/discover
// first, and falls back to initialize, asking for an older one, when the
// server does not take it: a server that then answers with the newest
// (which the SDK takes, as one it supports) chose the revision agentc had
// not asked for there, and with it what the SDK does in that revision.
func noNewerVersion(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "initialize" || err != nil {
			return res, err
		}
		asked, _ := req.GetParams().(*mcp.InitializeParams)
		got, _ := res.(*mcp.InitializeResult)
		if asked != nil && got != nil && got.ProtocolVersion > asked.ProtocolVersion && slices.Contains(mcp.SupportedProtocolVersions(), got.ProtocolVersion) {
			return nil, fmt.Errorf("the server answered initialize with MCP protocol version %q, newer than the %q agentc asked for in it: refused", got.ProtocolVersion, asked.ProtocolVersion)
		}
		return res, nil
	}
}

// command builds the command of a stdio server, not yet started.
func command(t plan.Tool, baseDir string) (*osexec.Cmd, error) {
	prog := t.Command[0]
	if prog == "" {
		return nil, errors.New("command needs a program as its first element")
	}
	for _, a := range t.Command {
		if strings.IndexByte(a, 0) >= 0 {
			return nil, errors.New("command contains a NUL byte")
		}
	}
	env := []string{"PATH"}
	for _, v := range t.Env {
		if !proc.EnvName(v) {
			return nil, fmt.Errorf("env: %q is not a variable name", v)
		}
		if !slices.Contains(env, v) {
			env = append(env, v)
		}
	}
	base, err := filepath.Abs(baseDir)
	if err != nil {
		return nil, fmt.Errorf("base directory: %s", toolio.Reason(err))
	}
	path := filepath.FromSlash(prog)
	switch {
	case !strings.ContainsRune(prog, '/') && !strings.ContainsRune(prog, filepath.Separator):
		path, err = osexec.LookPath(prog)
		switch {
		case errors.Is(err, osexec.ErrDot):
			return nil, fmt.Errorf("program %q is found only through a relative entry of PATH (such as \".\"), which is refused", prog)
		case err != nil:
			return nil, fmt.Errorf("program %q is not found on PATH", prog)
		}
	case !filepath.IsAbs(path):
		path = filepath.Join(base, path)
	}
	cmd := osexec.Command(path, t.Command[1:]...)
	cmd.Args[0] = prog
	cmd.Dir = base
	cmd.Env = []string{} // never nil, which would pass everything
	for _, name := range env {
		if v, ok := os.LookupEnv(name); ok {
			cmd.Env = append(cmd.Env, name+"="+v)
		}
	}
	// The stderr copier must not wait for a process that left the group
	// and holds the pipe open.
	cmd.WaitDelay = time.Second
	return cmd, nil
}

// unwrapExec drops the *exec.Error wrapper of a start failure, which
// names the host path of the program.
func unwrapExec(err error) error {
	var e *osexec.Error
	if errors.As(err, &e) {
		return e.Err
	}
	return err
}

// listed lists the server's tools in session and returns the allowed
// ones, and their fingerprint.
func (s *Server) listed(ctx context.Context, session *mcp.ClientSession, t plan.Tool) ([]*Tool, string, error) {
	// Only the allowed tools are kept, and the first names of the others
	// for an error: a listing of any length holds no more than a page.
	listed := map[string]*mcp.Tool{}
	others := map[string]bool{}
	more := 0
	cursors := map[string]bool{}
	params := &mcp.ListToolsParams{}
	for page := 1; ; page++ {
		if page > MaxListPages {
			return nil, "", fmt.Errorf("listing its tools: the server's listing goes on past %d pages, the most agentc reads", MaxListPages)
		}
		res, err := session.ListTools(ctx, params)
		if err != nil {
			return nil, "", fmt.Errorf("listing its tools: %s", s.said(err))
		}
		for _, tool := range res.Tools {
			// Only the start of a name the allow list lacks is kept: a
			// name may be as long as a message.
			other := textcut.Marked(tool.Name, maxNameShown)
			switch {
			case s.allowed[tool.Name] && listed[tool.Name] != nil:
				return nil, "", fmt.Errorf("the server lists tool %q twice", tool.Name)
			case s.allowed[tool.Name]:
				listed[tool.Name] = tool
			case len(others) < haveLimit:
				others[other] = true
			case !others[other]:
				more++
			}
		}
		if res.NextCursor == "" {
			break
		}
		if cursors[res.NextCursor] {
			return nil, "", errors.New("listing its tools: the server's listing comes back to a page it gave before")
		}
		cursors[res.NextCursor] = true
		params = &mcp.ListToolsParams{Cursor: res.NextCursor}
	}
	var missing []string
	for name := range s.allowed {
		if listed[name] == nil {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, "", fmt.Errorf("allow names %s, which the server does not have (it has: %s)", quoteAll(missing), haveList(listed, others, more))
	}

	type entry struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	var entries []entry
	var errs []error
	var tools []*Tool
	for _, name := range slices.Sorted(maps.Keys(s.allowed)) {
		tool := listed[name]
		schema, err := inputSchema(tool.InputSchema)
		if err != nil {
			// Why may quote the schema, which may be as long as a message.
			errs = append(errs, fmt.Errorf("tool %q: its input schema %s", name, textcut.Marked(err.Error(), maxSchemaError)))
			continue
		}
		desc := tool.Description
		if t.Description != "" {
			if desc != "" {
				desc += "\n\n"
			}
			desc += "Server: " + t.Description
		}
		tools = append(tools, &Tool{server: s, spec: runtime.ToolSpec{Name: name, Description: desc, Schema: schema}})
		entries = append(entries, entry{name, tool.Description, schema})
	}
	if len(errs) > 0 {
		return nil, "", errors.Join(errs...)
	}
	data, err := digest.CanonicalValue(entries)
	if err != nil {
		return nil, "", fmt.Errorf("fingerprinting its tools: %w", err)
	}
	h := blake3.NewDeriveKey(fingerprintContext)
	h.Write(data)
	return tools, digest.Prefix + hex.EncodeToString(h.Sum(nil)), nil
}

// inputSchema checks a listed input schema and returns its canonical JSON.
// The SDK decodes it into map[string]any, numbers as float64; those
// re-encode as the shortest text of the same double.
func inputSchema(v any) (json.RawMessage, error) {
	if why := checkSchema(v); why != "" {
		return nil, errors.New(why)
	}
	data, err := digest.CanonicalValue(v)
	if err != nil {
		return nil, fmt.Errorf("is not canonical JSON: %w", err)
	}
	if _, err := plan.CompileSchemaJSON(data); err != nil {
		return nil, fmt.Errorf("does not compile: %w", err)
	}
	return data, nil
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// haveLimit is how many names of the tools a server has an error lists,
// and maxNameShown how much of each.
const (
	haveLimit    = 20
	maxNameShown = 128
)

// maxSchemaError is how much of why an input schema is refused an error
// shows.
const maxSchemaError = 4096

// haveList names the tools a server has, up to haveLimit of them (and
// how many more), quoted and escaped: the names are the server's.
func haveList(listed map[string]*mcp.Tool, others map[string]bool, more int) string {
	names := slices.Collect(maps.Keys(others))
	for n := range listed {
		names = append(names, n)
	}
	if len(names) == 0 {
		return "no tools"
	}
	sort.Strings(names)
	if len(names) > haveLimit {
		more += len(names) - haveLimit
		names = names[:haveLimit]
	}
	for i, n := range names {
		names[i] = strconv.Quote(n)
	}
	if more > 0 {
		return fmt.Sprintf("%s and %d more", strings.Join(names, ", "), more)
	}
	return strings.Join(names, ", ")
}

// version is agentc's version, for the server's logs.
func version() string { return buildinfo.Version() }

// Tools returns the allowed tools, sorted by name.
func (s *Server) Tools() []runtime.Tool {
	out := make([]runtime.Tool, len(s.tools))
	for i, t := range s.tools {
		out[i] = t
	}
	return out
}

// Fingerprint is "blake3:" and 64 hex digits over the allowed tools'
// names, the server's descriptions of them and their canonical input
// schemas, sorted by name: it changes exactly when what the agent may
// call on the server changes.
func (s *Server) Fingerprint() string { return s.fingerprint }

// Close ends the session and, for a stdio server, the server and what it
// left running. It is safe to call more than once; calls made after it
// fail.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		var err error
		s.mu.Lock()
		session := s.session
		s.mu.Unlock()
		if session != nil {
			err = s.closeSession(session)
		}
		s.reap()
		if err != nil {
			s.closeErr = fmt.Errorf("mcp server %q: closing: %v%s", s.name, err, s.stderrNote())
		}
	})
	return s.closeErr
}

// closeSession closes session, within closeGrace twice over. The SDK's
// Close waits for the handlers of what the server asked (a ping) to have
// answered, and an answer waits on a server that does not read: a stdio
// server that stopped reading its input, or an HTTP server that never
// answers the requests carrying the answers, held Close, and the run's
// end, for good (and a SIGTERM with it). Past the grace, a stdio server
// is killed (reap), which breaks its pipe, and an HTTP server's requests
// are cut; Close then ends, or is left behind after another grace.
func (s *Server) closeSession(session *mcp.ClientSession) error {
	done := make(chan error, 1)
	go func() { done <- session.Close() }()
	t := time.NewTimer(2 * closeGrace)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
	}
	if s.cut != nil {
		s.cut()
	}
	s.reap()
	t.Reset(closeGrace)
	select {
	case err := <-done:
		return err
	case <-t.C:
		return errors.New("the session did not close: the server neither read nor answered what agentc sent it")
	}
}

// reap kills what is left of a stdio server: its process group and, on
// Linux, whatever it started that left the group.
func (s *Server) reap() {
	if s.group != nil {
		s.group.Sweep()
	}
	if s.thread != nil {
		s.thread()
	}
	s.confined.Close()
	s.policy.Close()
}

// ended says how a stdio server whose connection closed ended: as its
// trampoline reported it for a confined server, with the limit it passed,
// waiting for that at most closeGrace; that it may have exited otherwise.
func (s *Server) ended() string {
	st, ok := s.confined.Ended(closeGrace)
	if !ok {
		return "the server may have exited"
	}
	return "the server ended: " + s.policy.Said(st)
}

// said is the text of an error that may hold what the server wrote (the
// message of its error answering a request), cut as a result is: the
// model reads it, and a message may be up to MaxMessageBytes.
func (s *Server) said(err error) string { return cut(err.Error(), MaxResultBytes, s.secrets) }

// stderrNote is what a stdio server last wrote to stderr, for an error.
func (s *Server) stderrNote() string {
	if s.stderr == nil {
		return ""
	}
	text := s.stderr.String()
	if text == "" {
		return ""
	}
	return "; its stderr ends with:\n" + text
}

// Spec describes the tool to a model: the server tool's name, its
// description with the manifest's, and its input schema.
func (t *Tool) Spec() runtime.ToolSpec {
	s := t.spec
	s.Schema = bytes.Clone(s.Schema)
	return s
}

// Call calls the tool on the server once.
func (t *Tool) Call(ctx context.Context, args json.RawMessage) (runtime.ToolResult, error) {
	return t.server.call(ctx, t.spec.Name, args)
}

// call calls one of the server's tools. Its errors are meant for the
// model.
func (s *Server) call(ctx context.Context, name string, args json.RawMessage) (runtime.ToolResult, error) {
	fail := func(format string, a ...any) (runtime.ToolResult, error) {
		return runtime.ToolResult{}, fmt.Errorf("mcp server %q: tool %q: "+format, append([]any{s.name, name}, a...)...)
	}
	if !s.allowed[name] {
		return fail("not in the server's allow list")
	}
	if err := ctx.Err(); err != nil {
		return fail("%w", err)
	}
	if s.closed.Load() {
		return fail("the connection to the server is closed")
	}
	if e := s.lostErr(); e != nil {
		return fail("the connection to the server is closed: %v", e)
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	} else if _, err := toolio.Arguments(args); err != nil {
		return fail("%v", err)
	}
	ctx, stop := watchSize(ctx)
	defer stop()
	session, renewal := s.current()
	pctx, post := watchPosts(ctx)
	res, err := session.CallTool(pctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil && s.renew != nil && ctx.Err() == nil && !s.closed.Load() && s.unmade(err, session, post) {
		// The server ended the session (answering 404), so the call was
		// not made: it is made once more, in a new session with the
		// same tools.
		if session, err = s.renewSession(ctx, renewal); err != nil {
			return fail("%s", s.said(err))
		}
		res, err = session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	}
	if err != nil {
		switch {
		case tooLarge(ctx) != nil:
			e := tooLarge(ctx)
			if !e.event {
				// The SDK ends a session whose answer it cannot read, in
				// its own time: later calls fail from now on.
				s.setLost(e)
			}
			return fail("%v", e)
		case ctx.Err() != nil:
			return fail("%w", ctx.Err())
		case s.closed.Load():
			return fail("the connection to the server is closed")
		case s.lostErr() != nil:
			return fail("the connection to the server is closed: %v", s.lostErr())
		case s.endedSession(session) && (errors.Is(err, mcp.ErrSessionMissing) || errors.Is(err, mcp.ErrConnectionClosed)):
			return fail("the server ended its session while the call was under way; it is not made again, as the server may have run it")
		case errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			return fail("the connection to the server is closed (%s)%s", s.ended(), s.stderrNote())
		}
		return fail("%s", s.said(err))
	}
	if res.NeedsInput() || len(res.InputRequests) > 0 {
		// Answering would make the call again: a call the model made once
		// reaches the server once.
		if len(res.InputRequests) == 0 {
			return fail("the server answered that it is busy and the call should be made again later (a result of type input_required asking nothing); it is not made again")
		}
		return fail("the server asked for input before it answers (a result of type input_required), which agentc does not give; the call is not made again")
	}
	out := runtime.ToolResult{Content: render(res, MaxResultBytes, s.secrets), IsError: res.IsError}
	if store := runtime.FileStore(ctx); store != nil {
		out.Files = attach(res, store, name)
	}
	return out, nil
}

// lostSession is what ended a server's session for good.
type lostSession struct{ err error }

// setLost keeps err as what ended the session, unless something has been
// kept before it.
func (s *Server) setLost(err error) { s.lost.CompareAndSwap(nil, &lostSession{err}) }

// lostErr is what ended the session for good, or nil.
func (s *Server) lostErr() error {
	if l := s.lost.Load(); l != nil {
		return l.err
	}
	return nil
}

// unmade says whether a call that failed with err in session was not made
// because the server had ended the session, so that making it in a new one
// cannot make it twice. None of its POSTs may have reached the server but
// to be answered 404 (post); and the SDK says the session is missing, or,
// for calls it failed as another's 404 ended the session (as the
// connection closed), the server answered a request of that session 404.
// A call the server took, in a session it ended later, is not made again.
func (s *Server) unmade(err error, session *mcp.ClientSession, post *postRecord) bool {
	if !post.unrun() {
		return false
	}
	if errors.Is(err, mcp.ErrSessionMissing) {
		return true
	}
	return errors.Is(err, mcp.ErrConnectionClosed) && s.endedSession(session)
}

// sessionEnded keeps id as a session the server has ended.
func (s *Server) sessionEnded(id string) { s.endedIDs.Store(id, true) }

// endedSession says whether the server answered a request of session 404.
func (s *Server) endedSession(session *mcp.ClientSession) bool {
	_, ended := s.endedIDs.Load(session.ID())
	return ended
}

// current is the session calls go to, and how many were replaced before it.
func (s *Server) current() (*mcp.ClientSession, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.session, s.renewal
}

// renewSession replaces the session a call found ended (the renewal-th
// replacement's), unless another call has replaced it already: a new
// session is made, and it must offer the same tools (its fingerprint), as
// a run's journal recorded them and its model was told. Calls wait for
// it; one that ends first goes on waiting until it is made.
func (s *Server) renewSession(ctx context.Context, renewal int) (*mcp.ClientSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.renewal != renewal {
		return s.session, nil
	}
	if s.closed.Load() {
		return nil, errors.New("the connection to the server is closed")
	}
	session, conn, fp, err := s.renew(ctx)
	if err != nil {
		return nil, fmt.Errorf("the server ended its session, and a new one could not be made: %v", err)
	}
	if fp != s.fingerprint {
		conn.cut()
		session.Close()
		return nil, errors.New("the server ended its session, and in a new one it offers other tools than when the run began (their fingerprint differs): not called")
	}
	old, oldConn := s.session, s.conn
	s.session, s.conn, s.renewal = session, conn, s.renewal+1
	// The server has ended the old session: answers to what it asked in
	// it, which the SDK's close waits for, are cut rather than left to a
	// server that may never answer the requests carrying them.
	oldConn.cut()
	go old.Close() // already gone on the server: no DELETE is sent
	return session, nil
}

// attach puts the images and documents of a result in the run's file
// store, for the model to be sent as files where its provider takes them:
// image content, and embedded resources whose bytes are an image or a
// PDF. Each is held to plan.DefaultMaxFileBytes and all of them to
// plan.DefaultMaxRunFileBytes; what is past them, or of another type,
// stays the text render describes.
func attach(res *mcp.CallToolResult, store *filestore.Store, tool string) []runtime.File {
	var out []runtime.File
	var total int64
	for _, c := range res.Content {
		var data []byte
		switch c := c.(type) {
		case *mcp.ImageContent:
			data = c.Data
		case *mcp.EmbeddedResource:
			if c.Resource != nil {
				data = c.Resource.Blob
			}
		}
		if len(data) == 0 || int64(len(data)) > plan.DefaultMaxFileBytes || total+int64(len(data)) > plan.DefaultMaxRunFileBytes {
			continue
		}
		// Sniffed before it is stored: a blob put and then not kept
		// would stay in the store (a journal's, with --record), named by
		// nothing, up to 32 MiB a call.
		if mt := plan.SniffMediaType(data); mt == "" || mt == "text/plain" {
			continue
		}
		b, err := store.Put(bytes.NewReader(data), plan.DefaultMaxFileBytes)
		if err != nil {
			continue
		}
		total += b.Size
		out = append(out, runtime.File{Name: tool, MediaType: b.MediaType, Size: b.Size, Digest: b.Digest})
	}
	return out
}

// render turns a result into the text a model reads, cut at max bytes
// with the secrets replaced first.
func render(res *mcp.CallToolResult, max int, secrets *redact.Set) string {
	var parts []string
	for _, c := range res.Content {
		parts = append(parts, part(c))
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if data, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(data))
		}
	}
	text := strings.Join(parts, "\n")
	if text == "" {
		return "(no content)"
	}
	return cut(text, max, secrets)
}

// part renders one content block.
func part(c mcp.Content) string {
	switch c := c.(type) {
	case *mcp.TextContent:
		return c.Text
	case *mcp.ImageContent:
		return fmt.Sprintf("[image content: %s, %d bytes]", mimeOr(c.MIMEType), len(c.Data))
	case *mcp.AudioContent:
		return fmt.Sprintf("[audio content: %s, %d bytes]", mimeOr(c.MIMEType), len(c.Data))
	case *mcp.ResourceLink:
		s := "[resource link: " + c.URI
		if c.Name != "" {
			s += fmt.Sprintf(" (%s)", c.Name)
		}
		if c.MIMEType != "" {
			s += ", " + c.MIMEType
		}
		if c.Size != nil {
			s += fmt.Sprintf(", %d bytes", *c.Size)
		}
		return s + "]"
	case *mcp.EmbeddedResource:
		r := c.Resource
		if r == nil {
			return "[resource content: empty]"
		}
		if r.Blob != nil || r.Text == "" {
			return fmt.Sprintf("[resource content: %s, %s, %d bytes]", r.URI, mimeOr(r.MIMEType), len(r.Blob))
		}
		return fmt.Sprintf("[resource %s, %s]\n%s", r.URI, mimeOr(r.MIMEType), r.Text)
	}
	kind := "unknown"
	if data, err := c.MarshalJSON(); err == nil {
		var w struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(data, &w) == nil && w.Type != "" {
			kind = w.Type
		}
		return fmt.Sprintf("[%s content, %d bytes of JSON]", kind, len(data))
	}
	return fmt.Sprintf("[%s content]", kind)
}

func mimeOr(m string) string {
	if m == "" {
		return "no MIME type"
	}
	return m
}

// cut shortens text to at most max bytes, on a rune boundary, with a
// note. The secrets are replaced first: the cut never shows part of one.
func cut(text string, max int, secrets *redact.Set) string {
	if len(text) <= max {
		return text
	}
	kept, n := secrets.Prefix(text, max)
	if !strings.HasSuffix(kept, "\n") {
		kept += "\n"
	}
	return kept + fmt.Sprintf("[result cut: the first %d of %d bytes are shown]", n, len(text))
}

// tail keeps the last max bytes written to it, and before them as much
// as a secret's longest form, so that one ending in them is replaced
// whole.
type tail struct {
	mu      sync.Mutex
	max     int
	secrets *redact.Set
	buf     []byte
	cut     bool // bytes before buf were dropped
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max - t.secrets.Lookahead(); over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.cut = true
	}
	return len(p), nil
}

// String returns what was kept as UTF-8, its secrets replaced, without a
// rune or a secret the cut split and without trailing white space.
func (t *tail) String() string {
	t.mu.Lock()
	text, cut := string(t.buf), t.cut
	t.mu.Unlock()
	if cut || len(text) > t.max {
		text, _ = t.secrets.Suffix(text, t.max)
	} else {
		text = t.secrets.String(text)
	}
	return strings.TrimRight(strings.ToValidUTF8(text, "\uFFFD"), " \t\r\n")
}
