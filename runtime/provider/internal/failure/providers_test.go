package failure_test

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/provider/anthropic"
	"agentc.dev/agentc/runtime/provider/bedrock"
	"agentc.dev/agentc/runtime/provider/google"
	"agentc.dev/agentc/runtime/provider/openai"
	"agentc.dev/agentc/runtime/provider/retry"
)

// models are the four providers' clients against url, each with policy and
// its default HTTP client.
func models(policy retry.Policy) map[string]func(url string) (agentrt.Model, error) {
	creds := aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: "secret-test", Source: "test"}, nil
	})
	return map[string]func(url string) (agentrt.Model, error){
		"openai": func(url string) (agentrt.Model, error) {
			return openai.New(openai.Config{APIKey: "sk-test", BaseURL: url, Retry: policy})
		},
		"anthropic": func(url string) (agentrt.Model, error) {
			return anthropic.New(anthropic.Config{APIKey: "sk-ant-test", BaseURL: url, Retry: policy})
		},
		"google": func(url string) (agentrt.Model, error) {
			return google.New(google.Config{APIKey: "test-key", BaseURL: url, Retry: policy})
		},
		"bedrock": func(url string) (agentrt.Model, error) {
			return bedrock.New(bedrock.Config{Region: "us-east-1", Credentials: creds, BaseURL: url, Retry: policy})
		},
	}
}

var hi = &agentrt.Request{Model: "m", Messages: []agentrt.Message{{Role: agentrt.User, Content: "hi"}}}

// TestDroppedConnectionRetried: for every provider, a connection the
// server closes before it answers is tried again, until the attempts run
// out.
func TestDroppedConnectionRetried(t *testing.T) {
	for name, model := range models(retry.Policy{Attempts: 3, Base: time.Millisecond, Max: 2 * time.Millisecond}) {
		t.Run(name, func(t *testing.T) {
			var requests atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				conn, _, err := w.(http.Hijacker).Hijack()
				if err != nil {
					t.Error(err)
					return
				}
				conn.Close()
			}))
			defer srv.Close()
			m, err := model(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := m.Complete(context.Background(), hi); err == nil {
				t.Fatal("a call whose every connection was dropped succeeded")
			}
			if n := requests.Load(); n != 3 {
				t.Errorf("%d requests, want 3: a dropped connection is tried again", n)
			}
		})
	}
}

// TestCertificateNotRetried: for every provider, a server whose
// certificate the client refuses fails the call at once, on one
// connection: every other attempt would meet the same certificate. (The
// HTTP client wraps the refusal in a *url.Error, itself a net.Error;
// openai's and anthropic's clients once took it for a dropped connection
// and tried again.)
func TestCertificateNotRetried(t *testing.T) {
	// Each with the default HTTP client, which does not trust the test
	// server's certificate.
	for name, model := range models(retry.Policy{Attempts: 3, Base: time.Millisecond, Max: 2 * time.Millisecond}) {
		t.Run(name, func(t *testing.T) {
			var conns atomic.Int32
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
				t.Error("a request was served")
			}))
			srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					conns.Add(1)
				}
			}
			srv.Config.ErrorLog = log.New(io.Discard, "", 0)
			srv.StartTLS()
			defer srv.Close()
			m, err := model(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			_, err = m.Complete(context.Background(), hi)
			if err == nil || !strings.Contains(err.Error(), "certificate") {
				t.Fatalf("error %v, want the certificate refused", err)
			}
			if n := conns.Load(); n != 1 {
				t.Errorf("%d connections, want 1: the refused certificate was tried again", n)
			}
		})
	}
}
