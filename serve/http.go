package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MinTokenLen is the shortest bearer token a server takes: a token a
// person could guess protects nothing.
const MinTokenLen = 16

// MaxBodyBytes bounds an HTTP request's body.
const MaxBodyBytes = 8 << 20

// MaxOpeningBytes bounds the body of the MCP request that opens a session
// (an initialize: the client's name and capabilities, a kilobyte or so).
const MaxOpeningBytes = 1 << 20

// CheckToken reports why a bearer token cannot protect a server: too
// short, or not printable on one line.
func CheckToken(token string) error {
	switch {
	case len(token) < MinTokenLen:
		return errors.New("the token is shorter than 16 bytes")
	case !utf8.ValidString(token) || strings.ContainsFunc(token, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		return errors.New("the token holds a space, a control character or bytes that are not UTF-8")
	}
	return nil
}

// Bounds on the MCP sessions of a server over HTTP (SessionBounds).
const (
	// DefaultSessionIdle is how long an MCP session may go without a
	// request before the server closes it. A client's next request in it
	// is then 404, and MCP's clients are to open a new session on a 404
	// (not every SDK's client does so on its own: the Go SDK's reports
	// that the session is gone, and its program connects again): an
	// hour keeps a client that pauses between calls in its session.
	DefaultSessionIdle = time.Hour
	// DefaultSessionsPerToken is how many MCP sessions the clients of one
	// token may hold open at once.
	DefaultSessionsPerToken = 256
)

// SessionBounds bound the MCP sessions a server over HTTP keeps: each is
// closed once it has had no request for Idle (an open event stream is no
// request), and the clients of one token hold at most PerToken at once;
// a request that would open another is refused 429 until one is closed
// (by its client, DELETE, or for being idle). A zero field is its
// default: DefaultSessionIdle, DefaultSessionsPerToken.
type SessionBounds struct {
	Idle     time.Duration
	PerToken int
}

// MCPHTTP is MCPHandler's handler: MCP over the streamable HTTP
// transport, for the clients of the server's tokens. Close ends its
// sessions when the server stops.
type MCPHTTP struct {
	h        http.Handler
	sdk      *mcp.StreamableHTTPHandler
	servers  map[*Access]*mcp.Server
	limits   map[*Access]int64
	runs     *Runs
	perToken int

	mu      sync.Mutex
	opened  map[string]*tokenSessions // by the token's user (grant.user)
	closing bool
	calls   sync.WaitGroup // the requests in flight, but event streams (GET)
}

// tokenSessions is what a token's clients hold: the ids of the sessions
// they opened, and the sessions being opened.
type tokenSessions struct {
	ids     map[string]bool
	opening int
}

// MCPHandler serves the agents over MCP's streamable HTTP transport to
// clients that send one of the bearer tokens (Authorization: Bearer
// TOKEN); any other request is refused 401 before a server reads it. Each
// set of agents a token admits to has an MCP server of its own (MCP's,
// made once), holding only those agents' tools: a client lists and calls
// those alone. An MCP session is bound to the token that opened it: a
// request of another token is refused 403 in it. Request bodies are
// bounded to MaxBodyBytes, or, where the token admits to an agent that
// takes files, to room for its files in base64 (MaxRequestBytes), as the
// HTTP API's are. The sessions are bounded by b. version names the
// servers in their handshake.
func MCPHandler(version string, agents []Agent, runs *Runs, tokens *Tokens, b SessionBounds) (*MCPHTTP, error) {
	if b.Idle <= 0 {
		b.Idle = DefaultSessionIdle
	}
	if b.PerToken <= 0 {
		b.PerToken = DefaultSessionsPerToken
	}
	m := &MCPHTTP{servers: map[*Access]*mcp.Server{}, limits: map[*Access]int64{}, runs: runs, perToken: b.PerToken, opened: map[string]*tokenSessions{}}
	most := int64(MaxBodyBytes)
	for _, a := range tokens.sets {
		s, err := MCP(version, a.Of(agents), runs)
		if err != nil {
			return nil, err
		}
		m.servers[a] = s
		limit := int64(MaxBodyBytes)
		for _, ag := range a.Of(agents) {
			limit = max(limit, MaxRequestBytes(ag.Plan))
		}
		m.limits[a], most = limit, max(most, limit)
	}
	// Idle sessions are closed: a client that opens sessions and leaves
	// them does not hold the server's memory for ever.
	m.sdk = mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		return m.servers[AccessOf(r.Context())] // nil, refused, for none
	}, &mcp.StreamableHTTPOptions{MaxRequestBodyBytes: most, SessionTimeout: b.Idle})
	// The SDK binds a session to the user its TokenInfo names, and
	// refuses the session to a request of another.
	bound := auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		g := grantOf(ctx)
		if g == nil {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: g.user}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})
	m.h = Authorized(runs.BoundReads(bound(http.HandlerFunc(m.serve))), tokens)
	return m, nil
}

func (m *MCPHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) { m.h.ServeHTTP(w, r) }

// sessionHeader names an MCP session in a request and in the answer that
// opened it.
const sessionHeader = "Mcp-Session-Id"

// serve passes a request of a token the server takes on to the SDK:
// held to the bound of the token's agents, and, where it would open a
// session, to the token's sessions.
func (m *MCPHTTP) serve(w http.ResponseWriter, r *http.Request) {
	g := grantOf(r.Context())
	limit, ok := m.limits[g.access]
	if !ok {
		limit = MaxBodyBytes
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	// Only the server names a share; a client's header naming one is
	// dropped.
	r.Header.Del(shareHeader)
	if r.Method == http.MethodGet {
		// An event stream, which lasts as long as its session: Close
		// ends it by closing the session.
		m.sdk.ServeHTTP(w, r)
		return
	}
	m.mu.Lock()
	if m.closing {
		m.mu.Unlock()
		http.Error(w, "the server is stopping", http.StatusServiceUnavailable)
		return
	}
	m.calls.Add(1)
	m.mu.Unlock()
	defer m.calls.Done()
	opening := r.Method == http.MethodPost && r.Header.Get(sessionHeader) == ""
	if opening {
		// A request without a session opens one.
		if !m.reserve(g) {
			http.Error(w, fmt.Sprintf("too many MCP sessions: this token's clients hold %d open, the most the server keeps; close one (DELETE /mcp with its Mcp-Session-Id), or wait for an idle one to be closed", m.perToken), http.StatusTooManyRequests)
			return
		}
		// The session is counted as open from its answer's header on,
		// before its client reads the answer and goes on.
		ow := &openingWriter{ResponseWriter: w, opened: func() { m.opens(g, w.Header().Get(sessionHeader)) }}
		defer ow.answered()
		w = ow
		// Its message is an initialize, which is small; calls come in
		// the session. Read whole by the SDK, outside the bound on
		// reading and up to the token's bound, the bodies of the
		// sessions a token may open held 2 GiB.
		limit = min(limit, MaxOpeningBytes)
		r.Body = http.MaxBytesReader(w, r.Body, limit)
	}
	if r.Method == http.MethodPost {
		// The body is read, and checked, within the bound on reading, as
		// much of it taken as its input may weigh (readingBody); once
		// read, as much as the message weighs (a call's arguments are
		// within it), held while the SDK decodes it, and lent to the call
		// the message makes, whose run checks its input under it (lent):
		// given back and taken again, the body was held outside the bound
		// in between.
		sh, err := m.runs.readingBody(r, limit)
		if err != nil {
			return // its client went while it waited
		}
		body, err := io.ReadAll(r.Body)
		var slow *SlowBodyError
		if errors.As(err, &slow) {
			// The share goes back before the answer is written, and the
			// rest of the body is not read.
			sh.Release()
			w.Header().Set("Connection", "close")
			http.Error(w, err.Error(), http.StatusRequestTimeout)
			return
		}
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) && opening {
			sh.Release()
			http.Error(w, fmt.Sprintf("the message opening an MCP session is larger than the %d bytes the server reads of one: a session opens with initialize alone, and its calls come in the session", MaxOpeningBytes), http.StatusRequestEntityTooLarge)
			return
		}
		body, checked := answersChecked(w, r, body, err)
		if !checked {
			sh.Release()
			return
		}
		sh.Shrink(min(Weight(body), MaxReading))
		id, unlend := m.runs.lend(sh)
		defer unlend()
		r.Header.Set(shareHeader, id)
	}
	m.sdk.ServeHTTP(w, r)
}

// answersChecked checks body, read from a POST in a session (err, the
// error that ended its reading), and returns it; where it is not I-JSON
// (RFC 7493: a member named twice, a lone surrogate, bytes that are not
// UTF-8) it refuses it, as it would not read one way: a client's answer to the server (a JSON-RPC response: to an approval's
// form) is replaced by an error for the same request, which refuses the
// call saying why (answerNotIJSON), and it reports true; anything else (a
// request, a batch) is refused 400, and it reports false. Every body is
// checked, whatever it holds: deciding first whether it is an answer read
// it as the SDK does not (encoding/json took a member "Method" for
// "method", and passed the answer unchecked as a request). The SDK reads
// the body as it came otherwise, the error of reading it too, and what is
// not JSON.
func answersChecked(w http.ResponseWriter, r *http.Request, body []byte, err error) ([]byte, bool) {
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errorReader{err}))
	if err != nil || !json.Valid(body) {
		return body, true
	}
	fault := notIJSON(body)
	if fault == nil {
		return body, true
	}
	// An answer is a message without a member named "method", exactly,
	// as the SDK reads it (jsonrpc.DecodeMessage).
	var members map[string]json.RawMessage
	if json.Unmarshal(body, &members) == nil {
		if _, request := members["method"]; !request {
			msg, err := jsonrpc.DecodeMessage(body)
			if resp, ok := msg.(*jsonrpc.Response); err == nil && ok {
				refused, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: resp.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: answerNotIJSON(body).Error()}})
				if err == nil {
					r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(refused)), int64(len(refused))
					return body, true
				}
			}
		}
	}
	http.Error(w, fmt.Sprintf("the message is not I-JSON (RFC 7493), which a message in an MCP session must be, so that every reader reads it one way: %v", fault), http.StatusBadRequest)
	return nil, false
}

// errorReader is a reader that returns err, or io.EOF for none.
type errorReader struct{ err error }

func (r errorReader) Read([]byte) (int, error) {
	if r.err == nil {
		return 0, io.EOF
	}
	return 0, r.err
}

// openingWriter is the writer of an answer that may open a session: it
// calls opened once, as the answer's header goes out (or as the handler
// returns without one).
type openingWriter struct {
	http.ResponseWriter
	opened func()
	once   sync.Once
}

func (w *openingWriter) answered() { w.once.Do(w.opened) }

func (w *openingWriter) WriteHeader(code int) {
	w.answered()
	w.ResponseWriter.WriteHeader(code)
}

func (w *openingWriter) Write(b []byte) (int, error) {
	w.answered()
	return w.ResponseWriter.Write(b)
}

func (w *openingWriter) Flush() {
	w.answered()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (w *openingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// reserve counts a session being opened for g's token, and reports
// whether its clients may open another: fewer than perToken open. The
// sessions closed since (by their client, or idle) are counted out first.
func (m *MCPHTTP) reserve(g *grant) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	ts := m.opened[g.user]
	if ts == nil {
		ts = &tokenSessions{ids: map[string]bool{}}
		m.opened[g.user] = ts
	}
	if len(ts.ids)+ts.opening >= m.perToken {
		live := map[string]bool{}
		for ss := range m.servers[g.access].Sessions() {
			live[ss.ID()] = true
		}
		for id := range ts.ids {
			if !live[id] {
				delete(ts.ids, id)
			}
		}
		if len(ts.ids)+ts.opening >= m.perToken {
			return false
		}
	}
	ts.opening++
	return true
}

// opens counts the session the SDK opened for g's token (its id, "" for
// none) in place of its reservation: it is counted until it is seen
// closed.
func (m *MCPHTTP) opens(g *grant, id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ts := m.opened[g.user]
	ts.opening--
	if id != "" {
		ts.ids[id] = true
	}
}

// Close ends the MCP sessions, for a server that stops: it takes no new
// request but event streams (GET), waits for the requests in flight (a
// call's answer is written before its session closes), then closes every
// session, which ends their event streams, which would otherwise hold the
// HTTP server's shutdown until its clients went away. Stop the runs
// first: a call's request ends with its run. It returns ctx's error if
// ctx ends first, the sessions left open.
func (m *MCPHTTP) Close(ctx context.Context) error {
	m.mu.Lock()
	m.closing = true
	m.mu.Unlock()
	answered := make(chan struct{})
	go func() { m.calls.Wait(); close(answered) }()
	select {
	case <-answered:
	case <-ctx.Done():
		return ctx.Err()
	}
	var closed sync.WaitGroup
	for _, s := range m.servers {
		for ss := range s.Sessions() {
			closed.Go(func() { ss.Close() })
		}
	}
	done := make(chan struct{})
	go func() { closed.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Authorized passes on to h the requests that carry one of the bearer
// tokens, with what the token admits to in their context (AccessOf), and
// refuses the rest 401 before h reads them.
func Authorized(h http.Handler, tokens *Tokens) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The digests are compared, in constant time: neither a token's
		// length nor its bytes show in how long a refusal takes.
		g := tokens.match(r)
		if g == nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="agentc"`)
			http.Error(w, `{"error":"unauthorized: send the server's token as Authorization: Bearer TOKEN","exit":2}`, http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), grantKey{}, g)))
	})
}

// Mux serves h at /mcp, api (API's handler; nil for none) at /v1/ and
// /openapi.json, and the probes an orchestrator asks without a token:
// /healthz (200 while the process serves) and /readyz (200 until draining
// says the server is stopping, then 503). The probes say nothing of the
// agents.
func Mux(h, api http.Handler, draining func() bool) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	if api != nil {
		mux.Handle("/v1/", api)
		mux.Handle("/openapi.json", api)
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if draining() {
			http.Error(w, "stopping", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ready\n"))
	})
	return mux
}

// DefaultWriteWait is the wait agentc serve gives BoundWrites.
const DefaultWriteWait = 30 * time.Second

// BoundWrites serves h with each write of an answer, and each flush,
// bounded by wait: a client that stops reading (its connection's buffers
// full) fails the write once it has waited that long, rather than hold
// the handler, its connection and what it was writing for ever. Only a
// write in progress is bounded, not the time between writes, so an event
// stream may be quiet for as long as its run is; what the server writes
// after the handler returns (the rest of a buffered answer) is bounded
// too. The SDKs' handlers (MCP's, A2A's) write their event streams
// themselves, so the bound is the server's, around every handler.
func BoundWrites(h http.Handler, wait time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		// A deadline the connection's last answer left is not this one's.
		_ = rc.SetWriteDeadline(time.Time{})
		defer func() { _ = rc.SetWriteDeadline(time.Now().Add(wait)) }()
		h.ServeHTTP(&boundedWriter{ResponseWriter: w, rc: rc, wait: wait}, r)
	})
}

// boundedWriter is BoundWrites' writer: a deadline set before each write
// and flush, and cleared after it.
type boundedWriter struct {
	http.ResponseWriter
	rc   *http.ResponseController
	wait time.Duration
}

func (b *boundedWriter) bounded(write func() error) error {
	_ = b.rc.SetWriteDeadline(time.Now().Add(b.wait)) // where the connection has none, as a test's recorder
	err := write()
	_ = b.rc.SetWriteDeadline(time.Time{})
	return err
}

func (b *boundedWriter) Write(p []byte) (n int, err error) {
	err = b.bounded(func() error {
		n, err = b.ResponseWriter.Write(p)
		return err
	})
	return n, err
}

// FlushError and Flush flush what is buffered, bounded as a write is.
func (b *boundedWriter) FlushError() error {
	return b.bounded(b.rc.Flush)
}

func (b *boundedWriter) Flush() { _ = b.FlushError() }

// Unwrap gives http.ResponseController the writer beneath.
func (b *boundedWriter) Unwrap() http.ResponseWriter { return b.ResponseWriter }
