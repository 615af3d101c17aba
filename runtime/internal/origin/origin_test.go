package origin_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/internal/origin"
	"agentc.dev/agentc/runtime/provider/anthropic"
	"agentc.dev/agentc/runtime/provider/openai"
	"agentc.dev/agentc/runtime/provider/retry"
)

const key = "sk-planted-redirect-Qw3e4r5t"

// TestRedirectKeepsTheKey: a provider's base URL answering with any
// redirect to another port, another host or another scheme, directly or
// after a redirect on its own origin, gets the call refused, and the
// other origin never sees a request, let alone the key. Both providers.
func TestRedirectKeepsTheKey(t *testing.T) {
	var mu sync.Mutex
	var leaked []string
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		leaked = append(leaked, fmt.Sprintf("%s %s authorization=%q x-api-key=%q", r.Method, r.URL, r.Header.Get("Authorization"), r.Header.Get("X-Api-Key")))
		mu.Unlock()
		w.WriteHeader(http.StatusTeapot)
	}))
	defer sink.Close()
	sinkPort := sink.URL[strings.LastIndex(sink.URL, ":")+1:]

	targets := map[string]string{
		"another port":   sink.URL,                        // 127.0.0.1, another port
		"another host":   "http://localhost:" + sinkPort,  // the same listener, by another name
		"another scheme": "https://127.0.0.1:" + sinkPort, // refused before any connection
	}
	models := map[string]func(base string) (agentrt.Model, error){
		"openai": func(base string) (agentrt.Model, error) {
			return openai.New(openai.Config{APIKey: key, BaseURL: base, Retry: retry.Policy{Attempts: 1}})
		},
		"anthropic": func(base string) (agentrt.Model, error) {
			return anthropic.New(anthropic.Config{APIKey: key, BaseURL: base, Retry: retry.Policy{Attempts: 1}})
		},
	}
	for provider, newModel := range models {
		for _, code := range []int{301, 302, 303, 307, 308} {
			for target, to := range targets {
				for _, chain := range []bool{false, true} {
					name := fmt.Sprintf("%s/%d/%s/chain=%v", provider, code, target, chain)
					t.Run(name, func(t *testing.T) {
						var srv *httptest.Server
						srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
							if chain && !strings.HasPrefix(r.URL.Path, "/hop") {
								// First a redirect on the same origin.
								http.Redirect(w, r, srv.URL+"/hop"+r.URL.Path, code)
								return
							}
							http.Redirect(w, r, to+r.URL.Path, code)
						}))
						defer srv.Close()
						m, err := newModel(srv.URL + "/v1")
						if err != nil {
							t.Fatal(err)
						}
						_, err = m.Complete(context.Background(), &agentrt.Request{
							Model:    "m",
							Messages: []agentrt.Message{{Role: agentrt.User, Content: "hi"}},
						})
						if !errors.Is(err, origin.ErrRedirect) {
							t.Errorf("Complete: %v, want a refused redirect", err)
						}
						if err != nil && strings.Contains(err.Error(), key) {
							t.Errorf("the error holds the key: %v", err)
						}
					})
				}
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(leaked) > 0 {
		t.Errorf("the other origin was sent %d requests:\n%s", len(leaked), strings.Join(leaked, "\n"))
	}
}

// TestRedirectOnTheSameOrigin: a redirect to the base URL's own origin is
// followed, with the key.
func TestRedirectOnTheSameOrigin(t *testing.T) {
	c := origin.Client(nil)
	var got string
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, srv.URL+"/new", http.StatusTemporaryRedirect)
			return
		}
		got = r.Header.Get("X-Api-Key")
	}))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/old", strings.NewReader("{}"))
	req.Header.Set("X-Api-Key", key)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got != key {
		t.Errorf("the redirect on the same origin carried key %q, want %q", got, key)
	}
}
