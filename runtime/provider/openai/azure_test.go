package openai

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	agentrt "agentc.dev/agentc/runtime"
)

// azureFake is an Azure OpenAI resource: it answers a chat completion at
// /openai/deployments/DEPLOYMENT/chat/completions?api-version=VERSION, a
// response at /openai/responses?api-version=VERSION (the deployment named
// as the model), and keeps what each request carried.
type azureFake struct {
	t       *testing.T
	srv     *httptest.Server
	mu      sync.Mutex
	seen    []azureRequest
	replies []http.HandlerFunc
}

type azureRequest struct {
	path, version, apiKey, auth string
	body                        []byte
}

func newAzureFake(t *testing.T, replies ...http.HandlerFunc) *azureFake {
	f := &azureFake{t: t, replies: replies}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		n := len(f.seen)
		f.seen = append(f.seen, azureRequest{r.URL.Path, r.URL.Query().Get("api-version"), r.Header.Get("Api-Key"), r.Header.Get("Authorization"), body})
		f.mu.Unlock()
		switch {
		case r.URL.Path == "/openai/responses":
			checkResponsesSchema(t, body)
		case strings.HasPrefix(r.URL.Path, "/openai/deployments/") && strings.HasSuffix(r.URL.Path, "/chat/completions"):
			checkRequestSchema(t, body)
		default:
			http.Error(w, "no such path "+r.URL.Path, http.StatusNotFound)
			return
		}
		if n >= len(f.replies) {
			http.Error(w, "no more replies", http.StatusTeapot)
			return
		}
		f.replies[n](w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *azureFake) request(n int) azureRequest {
	f.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if n >= len(f.seen) {
		f.t.Fatalf("request %d was never made (%d made)", n, len(f.seen))
	}
	return f.seen[n]
}

// An Azure resource is sent the request at its deployment's path, with
// the API version asked for and the one credential given: the key as
// Api-Key, or the Entra ID token as a bearer token.
func TestAzure(t *testing.T) {
	for _, c := range []struct {
		name             string
		az               Azure
		path, key, token string
	}{
		{"key, deployment named", Azure{APIVersion: "2024-10-21", Deployment: "prod-4o", APIKey: "az-key-SECRET"}, "/openai/deployments/prod-4o/chat/completions", "az-key-SECRET", ""},
		{"token, deployment from the model", Azure{APIVersion: "2025-01-01-preview", Token: "eyJ-token-SECRET"}, "/openai/deployments/gpt-test/chat/completions", "", "Bearer eyJ-token-SECRET"},
	} {
		f := newAzureFake(t, okAnswer)
		c.az.Endpoint = f.srv.URL
		m, err := New(Config{Azure: &c.az, Retry: (&attempts{}).policy()})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		resp, err := m.Complete(context.Background(), request())
		if err != nil || resp.Message.Content != "Paris." {
			t.Fatalf("%s: %v %+v", c.name, err, resp)
		}
		got := f.request(0)
		if got.path != c.path || got.version != c.az.APIVersion || got.apiKey != c.key || got.auth != c.token {
			t.Errorf("%s: sent %s?api-version=%s Api-Key %q Authorization %q, want %s?api-version=%s %q %q", c.name, got.path, got.version, got.apiKey, got.auth, c.path, c.az.APIVersion, c.key, c.token)
		}
		if !strings.Contains(string(got.body), `"model":"`+strings.Split(c.path, "/")[3]+`"`) {
			t.Errorf("%s: the body names another model: %s", c.name, got.body)
		}
	}
}

// An Azure error that echoes the credential never shows it; a 429 is
// retried as from OpenAI.
func TestAzureErrors(t *testing.T) {
	f := newAzureFake(t,
		apiError(429, "rate_limit", "", "slow down", "Retry-After", "0"),
		apiError(401, "invalid_request_error", "401", "Access denied due to invalid subscription key az-key-SECRET."))
	a := &attempts{}
	m, err := New(Config{Azure: &Azure{Endpoint: f.srv.URL, APIVersion: "2024-10-21", APIKey: "az-key-SECRET"}, Retry: a.policy()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Complete(context.Background(), request())
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != 401 || strings.Contains(err.Error(), "az-key-SECRET") || !strings.Contains(err.Error(), "[redacted]") {
		t.Errorf("got %v, want a 401 with the key redacted", err)
	}
	if len(a.errs) < 2 {
		t.Errorf("the 429 was not retried: %v", a.errs)
	}
}

// A redirect to another origin is not followed: the credential goes to
// the resource only.
func TestAzureRedirectRefused(t *testing.T) {
	var elsewhere sync.Map
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Store("key", r.Header.Get("Api-Key"))
		okAnswer(w, r)
	}))
	defer other.Close()
	f := newAzureFake(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	})
	m, err := New(Config{Azure: &Azure{Endpoint: f.srv.URL, APIVersion: "2024-10-21", APIKey: "az-key-SECRET"}, Retry: (&attempts{}).policy()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Complete(context.Background(), request()); err == nil {
		t.Error("a redirect to another origin was followed")
	}
	if k, ok := elsewhere.Load("key"); ok {
		t.Errorf("the other origin was sent a request (Api-Key %q)", k)
	}
}

func TestAzureConfig(t *testing.T) {
	for _, c := range []struct {
		az   Azure
		want string
	}{
		{Azure{APIVersion: "v", APIKey: "k"}, "no endpoint"},
		{Azure{Endpoint: "https://r.openai.azure.com", APIKey: "k"}, "no API version"},
		{Azure{Endpoint: "https://r.openai.azure.com", APIVersion: "v"}, "give exactly one credential"},
		{Azure{Endpoint: "https://r.openai.azure.com", APIVersion: "v", APIKey: "k", Token: "t"}, "give exactly one credential"},
		{Azure{Endpoint: "http://r.openai.azure.com", APIVersion: "v", APIKey: "k"}, "a credential goes only over https"},
		{Azure{Endpoint: "https://user:pw@r.openai.azure.com", APIVersion: "v", APIKey: "k"}, "is not a URL of a resource"},
		{Azure{Endpoint: "r.openai.azure.com", APIVersion: "v", APIKey: "k"}, "is not a URL of a resource"},
	} {
		_, err := New(Config{Azure: &c.az})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "pw@") {
			t.Errorf("%+v: got %v, want %q", c.az, err, c.want)
		}
	}
	var _ agentrt.Model = (*Model)(nil)
}
