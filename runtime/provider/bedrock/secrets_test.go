package bedrock

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/provider/internal/echotest"
	"agentc.dev/agentc/runtime/redact"
)

// chain is a credential chain's provider that gives new credentials
// each time it is asked, as a refresh of a role's, a profile's session or
// single sign-on's does, and remembers them all.
type chain struct {
	mu    sync.Mutex
	given []aws.Credentials
}

func (c *chain) Retrieve(context.Context) (aws.Credentials, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.given) + 1
	cr := aws.Credentials{
		AccessKeyID:     fmt.Sprintf("ASIACHAINKEY%08d", n),
		SecretAccessKey: fmt.Sprintf("chainSecretAccessKey/%02d/wJalrXUtnFEMI", n),
		SessionToken:    fmt.Sprintf("IQoJb3JpZ2luX2VjChainSessionToken%02dEXAMPLE", n),
		Source:          "SharedConfigCredentials", CanExpire: true, Expires: time.Now().Add(time.Hour),
	}
	c.given = append(c.given, cr)
	return cr, nil
}

// values are the secrets of every credentials given.
func (c *chain) values() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, cr := range c.given {
		out = append(out, cr.AccessKeyID, cr.SecretAccessKey, cr.SessionToken)
	}
	return out
}

// byKey finds the credentials given with an access key ID.
func (c *chain) byKey(id string) aws.Credentials {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cr := range c.given {
		if cr.AccessKeyID == id {
			return cr
		}
	}
	return aws.Credentials{}
}

var credentialRE = regexp.MustCompile(`Credential=([^/]+)/`)

// echoServer is Bedrock's Converse endpoint, over TLS as a bearer token
// demands, answering each request as the next of replies does, with
// what it was sent: the request's access key ID, session token and (the
// worst a server could know) the secret key of the same credentials, or
// its bearer token. Each request first checks that the run's secrets
// held all of those already.
func echoServer(t *testing.T, secrets *redact.Set, c *chain, replies ...func(w http.ResponseWriter, echo string)) (*httptest.Server, func() int) {
	var mu sync.Mutex
	n := 0
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if !pathRE.MatchString(r.URL.EscapedPath()) {
			http.Error(w, "no such path", 404)
			return
		}
		var sent []string
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			sent = []string{tok}
		} else if m := credentialRE.FindStringSubmatch(r.Header.Get("Authorization")); m != nil {
			cr := c.byKey(m[1])
			sent = []string{m[1], r.Header.Get("X-Amz-Security-Token"), cr.SecretAccessKey}
		}
		if len(sent) == 0 || sent[0] == "" {
			t.Errorf("a request without credentials: %q", r.Header.Get("Authorization"))
		}
		for _, v := range sent {
			if secrets.String(v) != redact.Marker {
				t.Errorf("a request carried %q before the run's secrets held it", v)
			}
		}
		mu.Lock()
		reply := replies[min(n, len(replies)-1)]
		n++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		reply(w, strings.Join(sent, " "))
	}))
	t.Cleanup(srv.Close)
	return srv, func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}

func echoError(status int, code string) func(http.ResponseWriter, string) {
	return func(w http.ResponseWriter, echo string) {
		w.Header().Set("X-Amzn-ErrorType", code)
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"message":%q}`, "your credentials were "+echo)
	}
}

func echoAnswer(w http.ResponseWriter, echo string) {
	io.WriteString(w, textReply(`{"note":`+quote("seen "+echo)+`}`, "end_turn"))
}

// TestCredentialsRedacted: a server that echoes the credentials it was
// sent — in a retried error, in the answer, in a final error — shows them
// in nothing the run writes: not the report (its answer and error), the
// events, the journal, nor the errors the retry policy hears. Every
// credentials the chain hands the signer (new ones for each request
// here, as refreshes bring) join the run's secrets before a request is
// signed with them; so does a Bedrock API key the SDK reads from
// AWS_BEARER_TOKEN_BEDROCK.
func TestCredentialsRedacted(t *testing.T) {
	for _, auth := range []string{"chain", "bearer"} {
		t.Run(auth, func(t *testing.T) {
			secrets := redact.Of("sk-some-other-secret-of-the-run")
			c := &chain{}
			const apiKey = "ABSKQmVkcm9ja0FQSUtleS1leGFtcGxlLWJlYXJlci10b2tlbg"
			if auth == "bearer" {
				t.Setenv("AWS_BEARER_TOKEN_BEDROCK", apiKey)
			} else {
				t.Setenv("AWS_BEARER_TOKEN_BEDROCK", "")
			}
			srv, requests := echoServer(t, secrets, c, echoError(503, "ServiceUnavailableException"), echoAnswer, echoError(400, "ValidationException"))
			var heard []error
			var mu sync.Mutex
			p := fastPolicy(3)
			p.OnAttempt = func(_ int, err error, _ time.Duration) {
				mu.Lock()
				heard = append(heard, err)
				mu.Unlock()
			}
			m, err := New(Config{Region: testRegion, Credentials: c, BaseURL: srv.URL, HTTPClient: srv.Client(), Retry: p, Secrets: secrets})
			if err != nil {
				t.Fatal(err)
			}
			plan := echotest.Plan(t, "bedrock", nova)
			ok := echotest.Run(t, plan, m, secrets)
			if ok.Rep.Outcome != "ok" || !strings.HasPrefix(string(ok.Rep.Answer), `{"note":"seen [redacted]`) {
				t.Errorf("outcome %s (%s), answer %s; want the answer, its credentials redacted", ok.Rep.Outcome, ok.Rep.Error, ok.Rep.Answer)
			}
			bad := echotest.Run(t, plan, m, secrets)
			if bad.Rep.Outcome != "error" || !strings.Contains(bad.Rep.Error, "your credentials were [redacted]") {
				t.Errorf("outcome %s, error %q; want the 400, its credentials redacted", bad.Rep.Outcome, bad.Rep.Error)
			}
			creds := c.values()
			switch {
			case auth == "bearer" && len(creds) > 0:
				t.Fatalf("the chain was asked for credentials: the API key should have stood for them")
			case auth == "bearer":
				creds = []string{apiKey}
			case len(creds) != 9:
				t.Fatalf("%d secrets of credentials given, want those of one for each of 3 requests", len(creds))
			}
			for _, out := range []echotest.Outputs{ok, bad} {
				out.NoneShows(t, creds...)
			}
			if len(heard) != 2 {
				t.Fatalf("the policy heard %d failures, want 2", len(heard))
			}
			for _, err := range heard {
				for _, v := range creds {
					if strings.Contains(err.Error(), v) {
						t.Errorf("a failed attempt's error shows %q: %v", v, err)
					}
				}
			}
			if requests() != 3 {
				t.Errorf("%d requests, want 3", requests())
			}
		})
	}
}

// TestSignatureRedacted: a server that echoes the Authorization header it
// was sent, in an error's message and request ID, has the request's
// signature shown in neither (the key ID is a secret of the run too).
func TestSignatureRedacted(t *testing.T) {
	var sig string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		a := r.Header.Get("Authorization")
		if m := authRE.FindStringSubmatch(a); m != nil {
			sig = m[6]
		}
		w.Header().Set("X-Amzn-ErrorType", "AccessDeniedException")
		w.Header().Set("X-Amzn-RequestId", a)
		w.WriteHeader(403)
		fmt.Fprintf(w, `{"message":%q}`, "bad signature: "+a)
	}))
	defer srv.Close()
	m, err := New(Config{Region: testRegion, Credentials: staticCreds, BaseURL: srv.URL, Retry: fastPolicy(1)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Complete(t.Context(), &agentrt.Request{Model: nova, Messages: []agentrt.Message{{Role: agentrt.User, Content: "x"}}})
	if sig == "" || err == nil {
		t.Fatalf("no signed request, or no error: %v", err)
	}
	if strings.Contains(err.Error(), sig) || !strings.Contains(err.Error(), "Signature=[redacted]") {
		t.Errorf("the error shows the signature, or does not say it was removed: %v", err)
	}
	noSecret(t, err.Error())
}
