package google

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/auth"

	"agentc.dev/agentc/runtime/provider/internal/echotest"
	"agentc.dev/agentc/runtime/redact"
)

// rotating is Vertex AI credentials that give a new access token each
// time they are asked, as a refresh does, and remember them all.
type rotating struct {
	mu     sync.Mutex
	tokens []string
}

func (r *rotating) Token(context.Context) (*auth.Token, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	tok := fmt.Sprintf("ya29.a0AfB_vertex-access-token-%02d-Zq8Kx", len(r.tokens)+1)
	r.tokens = append(r.tokens, tok)
	return &auth.Token{Value: tok, Type: "Bearer", Expiry: time.Now().Add(time.Hour)}, nil
}

func (r *rotating) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.tokens...)
}

// credential is what a request authenticated with: its bearer token or
// its API key.
func credential(r *http.Request) string {
	if k := r.Header.Get("x-goog-api-key"); k != "" {
		return k
	}
	return r.Header.Get("Authorization")
}

// echoing is a server's reply that echoes the request's credential, after
// checking the run's secrets hold it already: a provider adds a
// credential to them before a request carries it, so before any response
// that could echo it is read.
func echoing(t *testing.T, secrets *redact.Set, reply func(cred string) http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		cred := strings.TrimPrefix(credential(r), "Bearer ")
		if secrets.String(cred) != redact.Marker {
			t.Errorf("a request carried %q before the run's secrets held it", cred)
		}
		reply(credential(r))(w, r)
	}
}

// TestCredentialsRedacted: a server that echoes the credential it was
// sent — in a retried error, in a final one, in the answer — shows it in
// nothing the run writes: not the report (its answer and error), the
// events, the journal, nor the errors the retry policy hears. On Vertex
// AI each access token the credentials give (here a new one for each
// request, as refreshes give) joins the run's secrets before a request
// carries it; on the Gemini API, the key does.
func TestCredentialsRedacted(t *testing.T) {
	const vertexPath = "/v1beta1/projects/my-project/locations/europe-west4/publishers/google/models/gemini-test:generateContent"
	for _, backend := range []string{BackendVertex, BackendGemini} {
		t.Run(backend, func(t *testing.T) {
			secrets := redact.Of("sk-some-other-secret-of-the-run")
			tokens := &rotating{}
			a := &attempts{}
			retried := echoing(t, secrets, func(cred string) http.HandlerFunc {
				return apiError(503, "UNAVAILABLE", "Overloaded; your credential was "+cred)
			})
			answered := echoing(t, secrets, func(cred string) http.HandlerFunc {
				note, _ := json.Marshal(map[string]string{"note": "seen " + cred})
				text, _ := json.Marshal(string(note))
				return candidate(`[{"text": `+string(text)+`}]`, "STOP", okUsage)
			})
			failed := echoing(t, secrets, func(cred string) http.HandlerFunc {
				return apiError(400, "INVALID_ARGUMENT", "Bad request; your credential was "+cred)
			})
			path := vertexPath
			if backend == BackendGemini {
				path = "/v1beta/models/gemini-test:generateContent"
			}
			f := newFakeAt(t, path, retried, answered, failed)
			cfg := Config{Backend: BackendVertex, Project: "my-project", Location: "europe-west4", BaseURL: f.srv.URL,
				Credentials: auth.NewCredentials(&auth.CredentialsOptions{TokenProvider: tokens}), Retry: a.policy(), Secrets: secrets}
			if backend == BackendGemini {
				cfg = Config{APIKey: testKey, BaseURL: f.srv.URL, Retry: a.policy(), Secrets: secrets}
			}
			m, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			p := echotest.Plan(t, "google", "gemini-test")

			ok := echotest.Run(t, p, m, secrets)
			if ok.Rep.Outcome != "ok" || string(ok.Rep.Answer) != `{"note":"seen [redacted]"}` && string(ok.Rep.Answer) != `{"note":"seen Bearer [redacted]"}` {
				t.Errorf("outcome %s (%s), answer %s; want the answer, its credential redacted", ok.Rep.Outcome, ok.Rep.Error, ok.Rep.Answer)
			}
			bad := echotest.Run(t, p, m, secrets)
			if bad.Rep.Outcome != "error" || !strings.Contains(bad.Rep.Error, "your credential was "+map[string]string{BackendVertex: "Bearer "}[backend]+redact.Marker) {
				t.Errorf("outcome %s, error %q; want the 400, its credential redacted", bad.Rep.Outcome, bad.Rep.Error)
			}
			creds := tokens.all()
			if backend == BackendVertex && len(creds) != 3 {
				t.Fatalf("%d tokens given, want one for each of 3 requests", len(creds))
			}
			if backend == BackendGemini {
				creds = []string{testKey}
			}
			for _, out := range []echotest.Outputs{ok, bad} {
				out.NoneShows(t, creds...)
			}
			if len(a.errs) != 2 {
				t.Fatalf("the policy heard %d failures, want 2", len(a.errs))
			}
			for _, err := range a.errs {
				for _, c := range creds {
					if strings.Contains(err.Error(), c) {
						t.Errorf("a failed attempt's error shows %q: %v", c, err)
					}
				}
			}
			if f.requests() != 3 {
				t.Errorf("%d requests, want 3", f.requests())
			}
		})
	}
}

// TestTokensJoinConcurrently: calls made at once, each with a new token,
// each add theirs to the one set the runs share while others redact with
// it (run with -race); every token is there before its request goes, so
// each answer that echoes one is redacted.
func TestTokensJoinConcurrently(t *testing.T) {
	secrets := &redact.Set{}
	tokens := &rotating{}
	answered := echoing(t, secrets, func(cred string) http.HandlerFunc {
		text, _ := json.Marshal("seen " + cred)
		return candidate(`[{"text": `+string(text)+`}]`, "STOP", okUsage)
	})
	const calls = 16
	replies := make([]http.HandlerFunc, calls)
	for i := range replies {
		replies[i] = answered
	}
	f := newFakeAt(t, "/v1beta1/projects/my-project/locations/europe-west4/publishers/google/models/gemini-test:generateContent", replies...)
	m, err := New(Config{Backend: BackendVertex, Project: "my-project", Location: "europe-west4", BaseURL: f.srv.URL,
		Credentials: auth.NewCredentials(&auth.CredentialsOptions{TokenProvider: tokens}), Retry: (&attempts{}).policy(), Secrets: secrets})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var redacting sync.WaitGroup
	redacting.Add(1)
	go func() {
		defer redacting.Done()
		for {
			select {
			case <-stop:
				return
			default:
				_ = secrets.String("seen Bearer ya29.a0AfB_vertex-access-token-01-Zq8Kx")
				_ = secrets.Lookahead()
			}
		}
	}()
	var wg sync.WaitGroup
	for range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := m.Complete(t.Context(), request())
			if err != nil {
				t.Error(err)
				return
			}
			if got := secrets.String(resp.Message.Content); got != "seen Bearer "+redact.Marker {
				t.Errorf("an answer redacted as %q", got)
			}
		}()
	}
	wg.Wait()
	close(stop)
	redacting.Wait()
	if n := len(tokens.all()); n != calls || secrets.Len() != calls {
		t.Errorf("%d tokens given, %d in the secrets; want %d", n, secrets.Len(), calls)
	}
}
