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

// models are the four providers' clients against url, each with policy,
// stall (Config.Stall: 0, the default) and its default HTTP client.
func models(policy retry.Policy, stall time.Duration) map[string]func(url string) (agentrt.Model, error) {
	creds := aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: "secret-test", Source: "test"}, nil
	})
	return map[string]func(url string) (agentrt.Model, error){
		"openai": func(url string) (agentrt.Model, error) {
			return openai.New(openai.Config{APIKey: "sk-test", BaseURL: url, Retry: policy, Stall: stall})
		},
		"anthropic": func(url string) (agentrt.Model, error) {
			return anthropic.New(anthropic.Config{APIKey: "sk-ant-test", BaseURL: url, Retry: policy, Stall: stall})
		},
		"google": func(url string) (agentrt.Model, error) {
			return google.New(google.Config{APIKey: "test-key", BaseURL: url, Retry: policy, Stall: stall})
		},
		"bedrock": func(url string) (agentrt.Model, error) {
			return bedrock.New(bedrock.Config{Region: "us-east-1", Credentials: creds, BaseURL: url, Retry: policy, Stall: stall})
		},
	}
}

var hi = &agentrt.Request{Model: "m", Messages: []agentrt.Message{{Role: agentrt.User, Content: "hi"}}}

// TestDroppedConnectionRetried: for every provider, a connection the
// server closes before it answers is tried again, until the attempts run
// out.
func TestDroppedConnectionRetried(t *testing.T) {
	for name, model := range models(retry.Policy{Attempts: 3, Base: time.Millisecond, Max: 2 * time.Millisecond}, 0) {
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
	for name, model := range models(retry.Policy{Attempts: 3, Base: time.Millisecond, Max: 2 * time.Millisecond}, 0) {
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

// TestProviderNamedOnce: for every provider, an attempt that stalls, is
// cut short, runs past its request's output limit or is not the API's
// JSON fails with an error that begins with the provider's name and says
// it once. (A stall, whose error names the provider itself, read
// "google: doRequest: error sending request: Post "…": google: the server
// sent nothing for 10m0s; …", and "openai: openai: …".)
func TestProviderNamedOnce(t *testing.T) {
	const stall = 100 * time.Millisecond
	// hold keeps a response open until the client gives it up.
	hold := func(r *http.Request) { <-r.Context().Done() }
	// cut drops the connection under what was written.
	cut := func(t *testing.T, w http.ResponseWriter) {
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		buf.Flush()
		conn.Close()
	}
	for _, sc := range []struct {
		name   string
		stream bool
		tokens int
		says   string
		// serve answers with ct, the provider's content type for a
		// stream or a body.
		serve func(t *testing.T, w http.ResponseWriter, r *http.Request, ct string)
	}{
		{"no response", false, 0, "the server sent nothing for 100ms", func(_ *testing.T, _ http.ResponseWriter, r *http.Request, _ string) {
			hold(r)
		}},
		{"body too slow", false, 0, "the body came too slowly", func(_ *testing.T, w http.ResponseWriter, r *http.Request, ct string) {
			w.Header().Set("Content-Type", ct)
			w.Header().Set("Content-Length", "1000")
			io.WriteString(w, `{"id": "x",`)
			w.(http.Flusher).Flush()
			hold(r)
		}},
		{"stream of nothing", true, 0, "the stream sent keep-alives at most", func(_ *testing.T, w http.ResponseWriter, r *http.Request, ct string) {
			w.Header().Set("Content-Type", ct)
			w.(http.Flusher).Flush()
			hold(r)
		}},
		{"body cut", false, 0, "EOF", func(t *testing.T, w http.ResponseWriter, _ *http.Request, ct string) {
			w.Header().Set("Content-Type", ct)
			w.Header().Set("Content-Length", "1000")
			io.WriteString(w, `{"id": "x",`)
			cut(t, w)
		}},
		{"stream cut", true, 0, "", func(t *testing.T, w http.ResponseWriter, _ *http.Request, ct string) {
			w.Header().Set("Content-Type", ct)
			io.WriteString(w, `data: {"id"`)
			cut(t, w)
		}},
		{"not JSON", false, 0, "", func(_ *testing.T, w http.ResponseWriter, _ *http.Request, ct string) {
			w.Header().Set("Content-Type", ct)
			io.WriteString(w, "not JSON")
		}},
		{"stream not JSON", true, 0, "", func(_ *testing.T, w http.ResponseWriter, _ *http.Request, ct string) {
			w.Header().Set("Content-Type", ct)
			io.WriteString(w, "data: not JSON\n\n")
		}},
		{"past the output limit", false, 1, "the request's limit", func(_ *testing.T, w http.ResponseWriter, _ *http.Request, ct string) {
			w.Header().Set("Content-Type", ct)
			io.WriteString(w, `{"id": "`+strings.Repeat("x", 1<<20)+`"}`)
		}},
	} {
		clients := models(retry.Policy{Attempts: 1}, stall)
		clients["openai-responses"] = func(url string) (agentrt.Model, error) {
			return openai.New(openai.Config{APIKey: "sk-test", BaseURL: url, Retry: retry.Policy{Attempts: 1}, Stall: stall, API: openai.APIResponses})
		}
		for name, model := range clients {
			t.Run(sc.name+"/"+name, func(t *testing.T) {
				ct := "application/json"
				if sc.stream {
					ct = "text/event-stream"
					if name == "bedrock" {
						ct = "application/vnd.amazon.eventstream"
					}
				}
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					io.Copy(io.Discard, r.Body)
					sc.serve(t, w, r, ct)
				}))
				defer srv.Close()
				m, err := model(srv.URL)
				if err != nil {
					t.Fatal(err)
				}
				req := *hi
				req.MaxOutputTokens = sc.tokens
				if sc.stream {
					req.Stream = func(agentrt.Delta) {}
				}
				_, err = m.Complete(t.Context(), &req)
				if err == nil {
					t.Fatal("the call succeeded")
				}
				provider, _, _ := strings.Cut(name, "-")
				msg := err.Error()
				if !strings.HasPrefix(msg, provider+": ") || strings.Count(msg, provider+":") != 1 || !strings.Contains(msg, sc.says) {
					t.Errorf("error %q: want it to begin with %q, said once, and to say %q", msg, provider+": ", sc.says)
				}
			})
		}
	}
}

// TestConnectTimeoutRetried: for every provider, a connection that could
// not be made within the dialer's timeout ("dial tcp …: i/o timeout", a
// server that drops the connection's first packet) is tried again, as a
// dropped connection is. The error of such a dial is context.DeadlineExceeded to errors.Is,
// and openai's client took it for the call's own deadline, and ended the
// call at once.
func TestConnectTimeoutRetried(t *testing.T) {
	policy := retry.Policy{Attempts: 3, Base: time.Millisecond, Max: 2 * time.Millisecond}
	for name, model := range map[string]func(url string, c *http.Client) (agentrt.Model, error){
		"openai": func(url string, c *http.Client) (agentrt.Model, error) {
			return openai.New(openai.Config{APIKey: "sk-test", BaseURL: url, Retry: policy, HTTPClient: c})
		},
		"openai responses": func(url string, c *http.Client) (agentrt.Model, error) {
			return openai.New(openai.Config{APIKey: "sk-test", BaseURL: url, Retry: policy, HTTPClient: c, API: openai.APIResponses})
		},
		"anthropic": func(url string, c *http.Client) (agentrt.Model, error) {
			return anthropic.New(anthropic.Config{APIKey: "sk-ant-test", BaseURL: url, Retry: policy, HTTPClient: c})
		},
		"google": func(url string, c *http.Client) (agentrt.Model, error) {
			return google.New(google.Config{APIKey: "test-key", BaseURL: url, Retry: policy, HTTPClient: c})
		},
		"bedrock": func(url string, c *http.Client) (agentrt.Model, error) {
			creds := aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
				return aws.Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: "secret-test", Source: "test"}, nil
			})
			return bedrock.New(bedrock.Config{Region: "us-east-1", Credentials: creds, BaseURL: url, Retry: policy, HTTPClient: c})
		},
	} {
		t.Run(name, func(t *testing.T) {
			var requests atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				http.Error(w, `{"error": {"message": "no more"}}`, http.StatusTeapot)
			}))
			defer srv.Close()
			var dials atomic.Int32
			tr := http.DefaultTransport.(*http.Transport).Clone()
			tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
				d := &net.Dialer{}
				if dials.Add(1) == 1 {
					// The first connection is not made in time.
					d.Timeout = time.Nanosecond
				}
				return d.DialContext(ctx, network, addr)
			}
			defer tr.CloseIdleConnections()
			m, err := model(srv.URL, &http.Client{Transport: tr})
			if err != nil {
				t.Fatal(err)
			}
			_, err = m.Complete(context.Background(), hi)
			if err == nil || !strings.Contains(err.Error(), "418") {
				t.Fatalf("error %v, want the second attempt's answer, 418", err)
			}
			if n := requests.Load(); n != 1 || dials.Load() != 2 {
				t.Errorf("%d dials, %d requests, want 2 and 1: a connection not made in time is tried again", dials.Load(), n)
			}
		})
	}
}
