package serve

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MinTokenLen is the shortest bearer token a server takes: a token a
// person could guess protects nothing.
const MinTokenLen = 16

// MaxBodyBytes bounds an HTTP request's body.
const MaxBodyBytes = 8 << 20

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

// MCPHandler serves the agents over MCP's streamable HTTP transport to
// clients that send one of the bearer tokens (Authorization: Bearer
// TOKEN); any other request is refused 401 before a server reads it. Each
// set of agents a token admits to has an MCP server of its own (MCP's,
// made once), holding only those agents' tools: a client lists and calls
// those alone. An MCP session is bound to the token that opened it: a
// request of another token is refused 403 in it. Request bodies are
// bounded to MaxBodyBytes, or, where the token admits to an agent that
// takes files, to room for its files in base64 (MaxRequestBytes), as the
// HTTP API's are. version names the servers in their handshake.
func MCPHandler(version string, agents []Agent, runs *Runs, tokens *Tokens) (http.Handler, error) {
	servers := map[*Access]*mcp.Server{}
	limits := map[*Access]int64{}
	most := int64(MaxBodyBytes)
	for _, a := range tokens.sets {
		s, err := MCP(version, a.Of(agents), runs)
		if err != nil {
			return nil, err
		}
		servers[a] = s
		limit := int64(MaxBodyBytes)
		for _, ag := range a.Of(agents) {
			limit = max(limit, MaxRequestBytes(ag.Plan))
		}
		limits[a], most = limit, max(most, limit)
	}
	sdk := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		return servers[AccessOf(r.Context())] // nil, refused, for none
	}, &mcp.StreamableHTTPOptions{MaxRequestBodyBytes: most})
	// Each token's requests are held to the bound of its agents.
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if limit, ok := limits[AccessOf(r.Context())]; ok {
			r.Body = http.MaxBytesReader(w, r.Body, limit)
		}
		sdk.ServeHTTP(w, r)
	})
	// The SDK binds a session to the user its TokenInfo names, and
	// refuses the session to a request of another.
	bound := auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		g := grantOf(ctx)
		if g == nil {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: g.user}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})
	return Authorized(bound(h), tokens), nil
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
