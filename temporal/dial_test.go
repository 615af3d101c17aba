package temporal_test

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"agentc.dev/agentc/temporal"
)

// grpcServer is a TLS server speaking HTTP/2 that answers every gRPC call
// UNAUTHENTICATED, and keeps the headers of the calls it was sent.
type grpcServer struct {
	*httptest.Server
	ca string // its certificate, PEM, in a file

	mu    sync.Mutex
	calls []http.Header
}

func newGRPCServer(t *testing.T) *grpcServer {
	t.Helper()
	g := &grpcServer{}
	g.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		h := r.Header.Clone()
		h.Set(":path", r.URL.Path)
		g.calls = append(g.calls, h)
		g.mu.Unlock()
		// A trailers-only response: the status in the headers.
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Grpc-Status", "16")
		w.Header().Set("Grpc-Message", "not this key")
		w.WriteHeader(http.StatusOK)
	}))
	g.EnableHTTP2 = true
	g.StartTLS()
	t.Cleanup(g.Close)
	g.ca = filepath.Join(t.TempDir(), "ca.pem")
	data := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: g.Certificate().Raw})
	if err := os.WriteFile(g.ca, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return g
}

func (g *grpcServer) first(t *testing.T) http.Header {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.calls) == 0 {
		t.Fatal("the server was sent no call")
	}
	return g.calls[0]
}

// noConfig points Temporal's configuration file at an empty one, so that
// the test's user's own does not count, and clears its variables.
func noConfig(t *testing.T) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "temporal.toml")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TEMPORAL_CONFIG_FILE", file)
	for _, v := range []string{"TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "TEMPORAL_API_KEY", "TEMPORAL_PROFILE", "TEMPORAL_TLS",
		"TEMPORAL_TLS_SERVER_CA_CERT_PATH", "TEMPORAL_TLS_CLIENT_CERT_PATH", "TEMPORAL_TLS_CLIENT_KEY_PATH"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
}

// TestDialTLSAPIKey: the connection's security comes from Temporal's own
// client configuration. With TEMPORAL_API_KEY and a server CA in the
// environment, the client speaks TLS, trusts that CA, and sends the key as
// a bearer token; the key is in no error.
func TestDialTLSAPIKey(t *testing.T) {
	noConfig(t)
	g := newGRPCServer(t)
	t.Setenv("TEMPORAL_API_KEY", "tk-secret-123")
	t.Setenv("TEMPORAL_TLS_SERVER_CA_CERT_PATH", g.ca)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := temporal.Dial(ctx, g.Listener.Addr().String(), "team-a", nil)
	if err == nil {
		c.Close()
		t.Fatal("Dial succeeded against a server that refuses every call")
	}
	if strings.Contains(err.Error(), "tk-secret-123") {
		t.Errorf("the error shows the key: %v", err)
	}
	h := g.first(t)
	if got := h.Get("Authorization"); got != "Bearer tk-secret-123" {
		t.Errorf("authorization %q, want the key as a bearer token", got)
	}
	if p := h.Get(":path"); !strings.HasPrefix(p, "/temporal.api.workflowservice.v1.WorkflowService/") {
		t.Errorf("the call was %s, not to Temporal's workflow service", p)
	}
}

// TestDialProfile: the address, namespace and key may come from a
// profile of Temporal's configuration file alone; the arguments, when
// given, win.
func TestDialProfile(t *testing.T) {
	noConfig(t)
	g := newGRPCServer(t)
	file := filepath.Join(t.TempDir(), "temporal.toml")
	config := "[profile.prod]\naddress = \"" + g.Listener.Addr().String() + "\"\nnamespace = \"prod-ns\"\napi_key = \"tk-from-file\"\n" +
		"[profile.prod.tls]\nserver_ca_cert_path = \"" + filepath.ToSlash(g.ca) + "\"\n"
	if err := os.WriteFile(file, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TEMPORAL_CONFIG_FILE", file)
	t.Setenv("TEMPORAL_PROFILE", "prod")
	hostPort, namespace, err := temporal.Resolve("", "")
	if err != nil || hostPort != g.Listener.Addr().String() || namespace != "prod-ns" {
		t.Fatalf("Resolve: %q %q %v; want the profile's address and namespace", hostPort, namespace, err)
	}
	if _, namespace, _ := temporal.Resolve("", "mine"); namespace != "mine" {
		t.Errorf("Resolve with a namespace: %q", namespace)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if c, err := temporal.Dial(ctx, "", "", nil); err == nil {
		c.Close()
		t.Fatal("Dial succeeded against a server that refuses every call")
	}
	h := g.first(t)
	if got := h.Get("Authorization"); got != "Bearer tk-from-file" {
		t.Errorf("authorization %q, want the profile's key", got)
	}
}

// TestResolveNothing: with no address anywhere, the error says where one
// goes.
func TestResolveNothing(t *testing.T) {
	noConfig(t)
	_, _, err := temporal.Resolve("", "")
	if err == nil || !strings.Contains(err.Error(), "--temporal HOST:PORT") || !strings.Contains(err.Error(), "TEMPORAL_ADDRESS") {
		t.Errorf("Resolve with no address: %v", err)
	}
	if h, ns, err := temporal.Resolve("127.0.0.1:7233", ""); err != nil || h != "127.0.0.1:7233" || ns != temporal.DefaultNamespace {
		t.Errorf("Resolve(127.0.0.1:7233): %q %q %v", h, ns, err)
	}
}
