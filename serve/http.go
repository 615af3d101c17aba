package serve

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"

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

// MCPHandler serves s over MCP's streamable HTTP transport to clients
// that send the bearer token (Authorization: Bearer TOKEN); any other
// request is refused 401 before the server reads it. Request bodies are
// bounded to MaxBodyBytes.
func MCPHandler(s *mcp.Server, token string) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{MaxRequestBodyBytes: MaxBodyBytes})
	return Authorized(h, token)
}

// Authorized passes on to h the requests that carry the bearer token,
// and refuses the rest 401 before h reads them.
func Authorized(h http.Handler, token string) http.Handler {
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		sum := sha256.Sum256([]byte(got))
		// The digests are compared, in constant time: neither the
		// token's length nor its bytes show in how long a refusal takes.
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="agentc"`)
			http.Error(w, `{"error":"unauthorized: send the server's token as Authorization: Bearer TOKEN"}`, http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
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
