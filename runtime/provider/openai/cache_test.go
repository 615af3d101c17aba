package openai

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// toFake sends what is addressed to OpenAI's own API to a fake instead,
// so that a Model configured with no base URL (OpenAI itself) can be
// tested: the path keeps its form after /v1.
type toFake struct{ fake *url.URL }

func (t toFake) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host != "api.openai.com" {
		return nil, &url.Error{Op: r.Method, URL: r.URL.String(), Err: http.ErrNotSupported}
	}
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host = t.fake.Scheme, t.fake.Host
	r.URL.Path = strings.TrimPrefix(r.URL.Path, "/v1")
	r.Host = t.fake.Host
	return http.DefaultTransport.RoundTrip(r)
}

// ownAPIModel is a Model of OpenAI's own API whose requests f serves.
func ownAPIModel(t *testing.T, f *fake, api string) *Model {
	t.Helper()
	u, err := url.Parse(f.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(Config{APIKey: testKey, HTTPClient: &http.Client{Transport: toFake{u}}, Retry: (&attempts{}).policy(), API: api})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestPromptCacheKey: a request that asks for caching carries its key as
// prompt_cache_key to OpenAI's own API, on Chat Completions and the
// Responses API; one that does not, and any to another server, carry
// none.
func TestPromptCacheKey(t *testing.T) {
	const key = "5f0c4e0b2a6d9b1c7e3f8a4d2c6b0e9f1a3c5e7d9b2f4a6c8e0d1b3f5a7c9e2d"
	for _, tc := range []struct {
		name  string
		api   string
		own   bool // OpenAI's own API, not a base URL
		cache bool
		want  bool
	}{
		{"chat", APIChat, true, true, true},
		{"chat off", APIChat, true, false, false},
		{"chat at a base URL", APIChat, false, true, false},
		{"responses", APIResponses, true, true, true},
		{"responses off", APIResponses, true, false, false},
		{"responses at a base URL", APIResponses, false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f *fake
			var m *Model
			switch {
			case tc.api == APIResponses:
				f = newResponsesFake(t, responseObject("completed", "", `{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant", "content": [{"type": "output_text", "text": "Paris.", "annotations": []}]}`, ""))
			default:
				f = newFake(t, okAnswer)
			}
			switch {
			case tc.own:
				m = ownAPIModel(t, f, tc.api)
			case tc.api == APIResponses:
				m = newResponsesModel(t, f, nil)
			default:
				m = newModel(t, f, nil)
			}
			req := request()
			req.Cache, req.CacheKey = tc.cache, key
			if _, err := m.Complete(t.Context(), req); err != nil {
				t.Fatal(err)
			}
			got, ok := f.body(0)["prompt_cache_key"]
			switch {
			case tc.want && got != key:
				t.Errorf("prompt_cache_key %v, want %q", got, key)
			case !tc.want && ok:
				t.Errorf("prompt_cache_key %v, want none", got)
			}
		})
	}
}

// TestOwnAPI: only OpenAI's own API, over https, is sent a cache key.
func TestOwnAPI(t *testing.T) {
	for base, want := range map[string]bool{
		"":                             true,
		"https://api.openai.com/v1":    true,
		"https://api.openai.com/v1/":   true,
		"http://api.openai.com/v1":     false,
		"http://localhost:11434/v1":    false,
		"https://openrouter.ai/api/v1": false,
		"https://api.openai.com.evil/": false,
	} {
		if got := ownAPI(base); got != want {
			t.Errorf("ownAPI(%q) = %v, want %v", base, got, want)
		}
	}
}
