package http

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	nethttp "net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/redact"
)

// headerSecret is a declared header value: it must never show in a result
// or an error.
const headerSecret = "HEADER-SECRET-4d1c"

func newTool(t testing.TB, pt plan.Tool, opts ...Option) *Tool {
	t.Helper()
	pt.Kind = "http"
	if pt.Description == "" {
		pt.Description = "Fetch from the API."
	}
	if pt.Input == nil {
		pt.Input = &plan.Input{Schema: json.RawMessage(`{"type":"object"}`)}
	}
	tool, err := New("fetch", pt, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

func call(tool *Tool, args string) (runtime.ToolResult, error) {
	return tool.Call(context.Background(), json.RawMessage(args))
}

// noConnect is a transport that fails the test if it is ever asked to
// send: a refusal must come before any connection.
type noConnect struct{ t *testing.T }

func (n noConnect) RoundTrip(req *nethttp.Request) (*nethttp.Response, error) {
	n.t.Errorf("a request was sent to %s; it should have been refused first", req.URL)
	return nil, errors.New("no connection allowed in this test")
}

// recorder is a transport that answers 200 to everything without a
// network and records the URLs it was asked for.
type recorder struct{ urls []string }

func (r *recorder) RoundTrip(req *nethttp.Request) (*nethttp.Response, error) {
	r.urls = append(r.urls, req.URL.String())
	return &nethttp.Response{
		StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: nethttp.Header{}, Body: io.NopCloser(strings.NewReader("ok")), ContentLength: 2, Request: req,
	}, nil
}

// checkNoSecret fails if a result or error shows a request header value.
func checkNoSecret(t *testing.T, res runtime.ToolResult, err error) {
	t.Helper()
	if strings.Contains(res.Content, headerSecret) || err != nil && strings.Contains(err.Error(), headerSecret) {
		t.Errorf("a request header value shows: %q, %v", res.Content, err)
	}
}

func TestSpec(t *testing.T) {
	schema := `{"type":"object","properties":{"q":{"type":"string"}}}`
	tool := newTool(t, plan.Tool{
		Description: "Search the docs.", URL: "https://docs.example.com/search?q={{urlquery .q}}",
		Allow: []string{"https://docs.example.com/"}, Input: &plan.Input{Schema: json.RawMessage(schema)},
	})
	s := tool.Spec()
	if s.Name != "fetch" || s.Description != "Search the docs." || string(s.Schema) != schema {
		t.Errorf("Spec() = %+v", s)
	}
	s.Schema[0] = 'X'
	if string(tool.Spec().Schema) != schema {
		t.Error("Spec's schema aliases the tool's")
	}
}

func TestGet(t *testing.T) {
	var got *nethttp.Request
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		got = r
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"issues":[]}`)
	}))
	defer srv.Close()
	tool := newTool(t, plan.Tool{
		URL:     srv.URL + "/repos/{{.owner}}/{{.repo}}/issues?state={{urlquery .state}}&per_page={{.n}}",
		Allow:   []string{srv.URL + "/repos/"},
		Headers: map[string]string{"Authorization": "Bearer " + headerSecret},
	})
	res, err := call(tool, `{"owner":"golang","repo":"go","state":"open & closed","n":100}`)
	if err != nil {
		t.Fatal(err)
	}
	if want := "HTTP/1.1 200 OK\n\n" + `{"issues":[]}`; res.Content != want || res.IsError {
		t.Errorf("result %+v, want %q", res, want)
	}
	if got.Method != "GET" || got.URL.Path != "/repos/golang/go/issues" || got.URL.RawQuery != "state=open+%26+closed&per_page=100" {
		t.Errorf("the server got %s %s", got.Method, got.URL)
	}
	if got.Header.Get("Authorization") != "Bearer "+headerSecret || got.Header.Get("User-Agent") != "agentc" {
		t.Errorf("the server got headers %v", got.Header)
	}
	if got.Header.Get("Content-Type") != "" || got.ContentLength != 0 {
		t.Errorf("a GET without a body sent Content-Type %q, length %d", got.Header.Get("Content-Type"), got.ContentLength)
	}
	checkNoSecret(t, res, err)
}

func TestPost(t *testing.T) {
	type seen struct {
		method, ctype, token, ua string
		body                     map[string]any
	}
	var got seen
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		got = seen{method: r.Method, ctype: r.Header.Get("Content-Type"), token: r.Header.Get("X-Token"), ua: r.Header.Get("User-Agent")}
		if err := json.NewDecoder(r.Body).Decode(&got.body); err != nil {
			t.Errorf("the body is not JSON: %v", err)
		}
		w.WriteHeader(nethttp.StatusCreated)
		fmt.Fprint(w, "created #7\n")
	}))
	defer srv.Close()
	tool := newTool(t, plan.Tool{
		Method: "POST",
		URL:    srv.URL + "/repos/{{.repo}}/issues",
		Allow:  []string{srv.URL + "/repos"},
		Body:   `{"title": {{json .title}}, "labels": {{json .labels}}, "weight": {{.weight}}}`,
		Headers: map[string]string{
			"x-token":    headerSecret + "-{{.repo}}",
			"User-Agent": "triage-bot/1",
			"X-Optional": "{{if .optional}}yes{{end}}",
		},
	})
	// "method" is not an argument the tool knows: it cannot change the
	// declared method.
	res, err := call(tool, `{"repo":"go","title":"crash \"quoted\" <b>","labels":["bug"],"weight":1.50,"method":"DELETE","optional":false}`)
	if err != nil {
		t.Fatal(err)
	}
	if want := "HTTP/1.1 201 Created\n\ncreated #7\n"; res.Content != want || res.IsError {
		t.Errorf("result %+v, want %q", res, want)
	}
	want := seen{method: "POST", ctype: "application/json", token: headerSecret + "-go", ua: "triage-bot/1",
		body: map[string]any{"title": `crash "quoted" <b>`, "labels": []any{"bug"}, "weight": 1.5}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the server saw %+v, want %+v", got, want)
	}
	checkNoSecret(t, res, err)
}

func TestDeclaredMethods(t *testing.T) {
	var method atomic.Value
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		method.Store(r.Method)
	}))
	defer srv.Close()
	for _, m := range []string{"", "GET", "POST", "PUT", "PATCH", "DELETE"} {
		tool := newTool(t, plan.Tool{Method: m, URL: srv.URL + "/x", Allow: []string{srv.URL}})
		if _, err := call(tool, `{"method":"TRACE"}`); err != nil {
			t.Fatal(err)
		}
		if want := cmpOr(m, "GET"); method.Load() != want {
			t.Errorf("declared %q: the server saw %v", m, method.Load())
		}
	}
	for _, m := range []string{"get", "TRACE", "CONNECT", "HEAD", "OPTIONS", "POST "} {
		_, err := New("fetch", plan.Tool{Kind: "http", Method: m, URL: srv.URL, Allow: []string{srv.URL},
			Input: &plan.Input{Schema: json.RawMessage(`{}`)}})
		if err == nil || !strings.Contains(err.Error(), "method") {
			t.Errorf("method %q: got %v", m, err)
		}
	}
}

func cmpOr(a, b string) string {
	if a == "" {
		return b
	}
	return a
}

// TestRefusedBeforeConnecting tries to leave the allow list every way we
// know; each attempt must be refused without a connection.
func TestRefusedBeforeConnecting(t *testing.T) {
	allow := []string{"https://api.example.com/repos/", "http://127.0.0.1:8080/v1", "http://[::1]:9000/six/"}
	tool := newTool(t, plan.Tool{URL: "{{.url}}", Allow: allow, Headers: map[string]string{"X-Key": headerSecret}},
		WithTransport(noConnect{t}))
	tests := []struct{ name, url, why string }{
		{"other host", "https://evil.com/repos/x", `host "evil.com" is not allowed`},
		{"other host, same path", "https://evil.com/repos/", "not allowed"},
		{"https to http", "http://api.example.com/repos/x", `scheme "http" is not allowed`},
		{"http to https", "https://127.0.0.1:8080/v1", `scheme "https" is not allowed`},
		{"ftp", "ftp://api.example.com/repos/x", `scheme "ftp"`},
		{"file", "file:///etc/passwd", `scheme "file"`},
		{"javascript", "javascript:alert(1)", `scheme "javascript"`},
		{"data", "data:text/plain,hi", `scheme "data"`},
		{"upper-case other scheme", "FILE:///etc/passwd", `scheme "file"`},
		{"host suffix", "https://api.example.com.evil.com/repos/x", "not allowed"},
		{"host prefix", "https://evilapi.example.com/repos/x", "not allowed"},
		{"subdomain", "https://x.api.example.com/repos/x", "not allowed"},
		{"parent domain", "https://example.com/repos/x", "not allowed"},
		{"host in path", "https://evil.com/api.example.com/repos/x", "not allowed"},
		{"host in query", "https://evil.com?https://api.example.com/repos/", "not allowed"},
		{"host in fragment", "https://evil.com#https://api.example.com/repos/", "not allowed"},
		{"trailing dot", "https://api.example.com./repos/x", "not allowed"},
		{"host with underscore", "https://api_example.com/repos/x", "not allowed"},
		{"allowed host as user", "https://api.example.com@evil.com/repos/x", "user information"},
		{"allowed host and port as user", "https://api.example.com:443@evil.com/repos/x", "user information"},
		{"user and password", "https://user:pw@api.example.com/repos/x", "user information"},
		{"user", "https://user@api.example.com/repos/x", "user information"},
		{"empty user", "https://@api.example.com/repos/x", "user information"},
		{"encoded at", "https://api.example.com%40evil.com/repos/x", "malformed"},
		{"backslash before at", `https://api.example.com\@evil.com/repos/x`, "malformed"},
		{"other port", "https://api.example.com:8443/repos/x", "port 8443 is not allowed"},
		{"http port on https", "https://api.example.com:80/repos/x", "port 80"},
		{"neighbour port", "http://127.0.0.1:8081/v1", "port 8081"},
		{"default port for a non-default prefix", "http://127.0.0.1/v1", "port 80"},
		{"port out of range", "https://api.example.com:65536/repos/x", "port"},
		{"port overflow", "https://api.example.com:99999999999999999999/repos/x", "port"},
		{"port zero", "https://api.example.com:0/repos/x", "port"},
		{"negative port", "https://api.example.com:-1/repos/x", "malformed"},
		{"double port", "https://api.example.com:443:443/repos/x", "host"},
		{"IP where a name is allowed", "https://93.184.216.34/repos/x", `host "93.184.216.34" is not allowed`},
		{"IPv6 where a name is allowed", "https://[2606:2800:220:1::]/repos/x", "not allowed"},
		{"name where an IP is allowed", "http://localhost:8080/v1", "not allowed"},
		{"IPv4-mapped IPv6", "http://[::ffff:127.0.0.1]:8080/v1", "not allowed"},
		{"short IPv4", "http://127.1:8080/v1", "not allowed"},
		{"decimal IPv4", "http://2130706433:8080/v1", "not allowed"},
		{"hex IPv4", "http://0x7f.0.0.1:8080/v1", "not allowed"},
		{"octal IPv4", "http://0177.0.0.1:8080/v1", "not allowed"},
		{"zero-padded IPv4", "http://127.000.000.001:8080/v1", "not allowed"},
		{"other IPv4", "http://127.0.0.2:8080/v1", "not allowed"},
		{"IPv6 with zone", "http://[::1%25lo]:9000/six/", "zone"},
		{"bracketed IPv4", "http://[127.0.0.1]:8080/v1", "malformed"},
		{"bracketed name", "https://[api.example.com]/repos/x", "malformed"},
		{"dot-dot", "https://api.example.com/repos/../admin", `".."`},
		{"dot-dot at the end", "https://api.example.com/repos/x/../..", `".."`},
		{"dot-dot deeper", "https://api.example.com/repos/a/b/../../../admin", `".."`},
		{"dot", "https://api.example.com/repos/./x", `"."`},
		{"encoded dot-dot", "https://api.example.com/repos/%2e%2e/admin", `".."`},
		{"encoded dot-dot, upper case", "https://api.example.com/repos/%2E%2E/admin", `".."`},
		{"half-encoded dot-dot", "https://api.example.com/repos/.%2e/admin", `".."`},
		{"double-encoded dot-dot", "https://api.example.com/repos/%252e%252e/admin", `".."`},
		{"triple-encoded dot-dot", "https://api.example.com/repos/%25252e%25252e/admin", `".."`},
		{"encoded slashes around dot-dot", "https://api.example.com/repos/x%2F..%2F..%2Fadmin", `".."`},
		{"double-encoded slashes", "https://api.example.com/repos/x%252F..%252F..%252Fadmin", `".."`},
		{"encoded slash after the prefix name", "https://api.example.com/repos%2Fx", "not under"},
		{"encoded backslash", "https://api.example.com/repos/%5C..%5Cadmin", `".."`},
		{"dot-dot with a parameter", "https://api.example.com/repos/..;/admin", `".."`},
		{"backslash", `https://api.example.com/repos\..\admin`, "malformed"},
		{"backslash after prefix", `https://api.example.com/repos/x\..\..\admin`, "malformed"},
		{"encoded NUL", "https://api.example.com/repos/x%00", "control"},
		{"path outside", "https://api.example.com/admin", `path "/admin" is not under`},
		{"prefix without its slash", "https://api.example.com/repos", "not under"},
		{"longer segment", "https://api.example.com/repository/x", "not under"},
		{"longer segment, no slash prefix", "http://127.0.0.1:8080/v10", "not under"},
		{"other case", "https://api.example.com/REPOS/x", "not under"},
		{"encoded slash in the prefix", "http://127.0.0.1:8080/v1%2F..", `".."`},
		{"root", "https://api.example.com/", "not under"},
		{"no path", "https://api.example.com", "not under"},
		{"IDN lookalike (Cyrillic a)", "https://аpi.example.com/repos/x", "malformed"},
		{"IDN lookalike, punycode", "https://xn--pi-7ld.example.com/repos/x", "not allowed"},
		{"Kelvin sign", "https://api.example.\u212Aom/repos/x", "malformed"},
		{"full-width dot", "https://api.example\uff0ecom/repos/x", "malformed"},
		{"ideographic full stop", "https://api.example\u3002com/repos/x", "malformed"},
		{"empty host", "https:///repos/x", "no host"},
		{"port only", "https://:443/repos/x", "no host"},
		{"no slashes", "https:api.example.com/repos/x", "not of the form"},
		{"one slash", "https:/api.example.com/repos/x", "no host"},
		{"scheme-relative", "//api.example.com/repos/x", "not an absolute URL"},
		{"relative", "/repos/x", "not an absolute URL"},
		{"empty", "", "not an absolute URL"},
		{"leading space", " https://api.example.com/repos/x", "malformed"},
		{"space in path", "https://api.example.com/repos/a b", "malformed"},
		{"space in query", "https://api.example.com/repos/x?q=a b", "malformed"},
		{"CRLF", "https://api.example.com/repos/x\r\nHost: evil.com", "malformed"},
		{"tab", "https://api.example.com/repos/\tx", "malformed"},
		{"bad escape in query", "https://api.example.com/repos/x?q=%zz", "malformed"},
		{"bad escape at the end", "https://api.example.com/repos/x%2", "malformed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"url": tt.url})
			res, err := call(tool, string(args))
			if err == nil {
				t.Fatalf("%q was allowed: %+v", tt.url, res)
			}
			if !strings.Contains(err.Error(), "refused") || !strings.Contains(err.Error(), tt.why) {
				t.Errorf("%q: got %v, want a refusal saying %q", tt.url, err, tt.why)
			}
			if strings.Contains(err.Error(), "pw@") {
				t.Errorf("%q: the error shows the password: %v", tt.url, err)
			}
			checkNoSecret(t, res, err)
		})
	}
}

func TestAllowed(t *testing.T) {
	allow := []string{"https://api.example.com/repos/", "http://127.0.0.1:8080/v1", "http://[::1]:9000/six/", "https://files.example.com"}
	rec := &recorder{}
	tool := newTool(t, plan.Tool{URL: "{{.url}}", Allow: allow}, WithTransport(rec))
	for _, tt := range []struct{ url, sent string }{
		{"https://api.example.com/repos/x", ""},
		{"https://api.example.com/repos/", ""},
		{"HTTPS://API.Example.COM/repos/x", "https://API.Example.COM/repos/x"},
		{"https://api.example.com:443/repos/x", ""},
		{"https://api.example.com:0443/repos/x", ""},
		{"https://api.example.com:/repos/x", ""},
		{"https://api.example.com/repos/gitlab-org%2Fgitlab", ""},
		{"https://api.example.com/re%70os/x", ""},
		{"https://api.example.com/repos/%7euser", ""},
		{"https://api.example.com/repos/a..b/...", ""},
		{"https://api.example.com/repos//x", ""},
		{"https://api.example.com/repos/x?q=a+b&n=1#frag", ""},
		{"https://api.example.com/repos/x?path=../../admin", ""},
		{"http://127.0.0.1:8080/v1", ""},
		{"http://127.0.0.1:8080/v1/", ""},
		{"http://127.0.0.1:8080/v1/x", ""},
		{"http://127.0.0.1:8080/v1?x=1", ""},
		{"http://[::1]:9000/six/x", ""},
		{"http://[0:0:0:0:0:0:0:1]:9000/six/x", ""},
		{"https://files.example.com", ""},
		{"https://files.example.com/any/thing", ""},
	} {
		rec.urls = nil
		args, _ := json.Marshal(map[string]string{"url": tt.url})
		res, err := call(tool, string(args))
		if err != nil || res.IsError {
			t.Errorf("%q: got %+v, %v", tt.url, res, err)
			continue
		}
		want := cmpOr(tt.sent, tt.url)
		if len(rec.urls) != 1 || rec.urls[0] != want {
			t.Errorf("%q: sent %q, want %q", tt.url, rec.urls, want)
		}
	}
}

func TestRedirects(t *testing.T) {
	other := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		t.Errorf("a server outside the allow list was reached: %s", r.URL)
	}))
	defer other.Close()
	var hops atomic.Int32
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		switch {
		case r.URL.Path == "/api/to":
			nethttp.Redirect(w, r, r.URL.Query().Get("target"), nethttp.StatusFound)
		case strings.HasPrefix(r.URL.Path, "/api/hop/"):
			hops.Add(1)
			n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/api/hop/"))
			if n == 0 {
				fmt.Fprintf(w, "arrived via %s %s", r.Method, r.Header.Get("X-Key"))
				return
			}
			nethttp.Redirect(w, r, fmt.Sprintf("/api/hop/%d", n-1), nethttp.StatusTemporaryRedirect)
		default:
			t.Errorf("a path outside the allow list was reached: %s", r.URL)
		}
	}))
	defer srv.Close()
	tool := newTool(t, plan.Tool{URL: srv.URL + "/api/{{.path}}", Allow: []string{srv.URL + "/api/"},
		Headers: map[string]string{"X-Key": headerSecret}})
	hostPort := strings.TrimPrefix(srv.URL, "http://")

	t.Run("followed within the allow list", func(t *testing.T) {
		for _, n := range []int{1, 5} {
			hops.Store(0)
			res, err := call(tool, fmt.Sprintf(`{"path":"hop/%d"}`, n))
			if err != nil || res.IsError {
				t.Fatalf("%d redirects: %+v, %v", n, res, err)
			}
			want := fmt.Sprintf("HTTP/1.1 200 OK\n[redirected to %s/api/hop/0]\n\narrived via GET %s", srv.URL, headerSecret)
			if res.Content != want || hops.Load() != int32(n+1) {
				t.Errorf("%d redirects: %q after %d requests, want %q", n, res.Content, hops.Load(), want)
			}
		}
	})
	t.Run("six redirects", func(t *testing.T) {
		hops.Store(0)
		res, err := call(tool, `{"path":"hop/6"}`)
		if err == nil || !strings.Contains(err.Error(), "at most 5 redirects") {
			t.Errorf("got %+v, %v; want a refusal after 5 redirects", res, err)
		}
		if hops.Load() != 6 {
			t.Errorf("%d requests were made, want 6 (the first and 5 redirects)", hops.Load())
		}
		checkNoSecret(t, res, err)
	})
	for _, tt := range []struct{ name, target, why string }{
		{"another loopback port", other.URL + "/api/x", "not allowed"},
		{"another loopback port, relative scheme", "//" + strings.TrimPrefix(other.URL, "http://") + "/api/x", "not allowed"},
		{"outside the path", "/admin", `path "/admin" is not under`},
		{"climbing out", "/api/../admin", "not under"},
		{"climbing out, encoded", "/api/%2e%2e/admin", `".."`},
		{"user information", "http://user:pw@" + hostPort + "/api/x", "user information"},
		{"https", "https://" + hostPort + "/api/x", `scheme "https"`},
		{"file", "file:///etc/passwd", `scheme "file"`},
		{"localhost for 127.0.0.1", "http://localhost:" + strings.Split(hostPort, ":")[1] + "/api/x", "not allowed"},
	} {
		t.Run("refused: "+tt.name, func(t *testing.T) {
			res, err := call(tool, `{"path":"to?target=`+url.QueryEscape(tt.target)+`"}`)
			if err == nil || !strings.Contains(err.Error(), "302 Found with a redirect to") || !strings.Contains(err.Error(), tt.why) {
				t.Errorf("redirect to %q: got %+v, %v; want a refusal saying %q", tt.target, res, err, tt.why)
			}
			if err != nil && strings.Contains(err.Error(), "pw@") {
				t.Errorf("the error shows a password: %v", err)
			}
			checkNoSecret(t, res, err)
		})
	}
}

func TestResponses(t *testing.T) {
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		switch r.URL.Path {
		case "/big":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, strings.Repeat("0123456789", 10))
		case "/exact":
			fmt.Fprint(w, "0123456789")
		case "/runes":
			fmt.Fprint(w, strings.Repeat("é", 10)) // 2 bytes each
		case "/png":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00"))
		case "/png-big":
			w.Header().Set("Content-Type", "image/png")
			w.Header().Set("Content-Length", "40")
			w.Write([]byte("\x89PNG" + strings.Repeat("\x00", 36)))
		case "/latin1":
			w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
			fmt.Fprint(w, "caf\xe9")
		case "/empty":
			w.WriteHeader(nethttp.StatusNoContent)
		case "/missing":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(nethttp.StatusNotFound)
			fmt.Fprint(w, `{"message":"Not Found"}`)
		case "/broken":
			w.WriteHeader(nethttp.StatusInternalServerError)
			fmt.Fprint(w, strings.Repeat("x", 50))
		case "/teapot":
			w.WriteHeader(nethttp.StatusTeapot)
		}
	}))
	defer srv.Close()
	tool := newTool(t, plan.Tool{URL: srv.URL + "/{{.p}}", Allow: []string{srv.URL}, MaxBytes: 10,
		Headers: map[string]string{"X-Key": headerSecret}})
	tests := []struct {
		path, want string
		isError    bool
	}{
		{"big", "HTTP/1.1 200 OK\n\n0123456789\n[response cut at 10 bytes]\n", false},
		{"exact", "HTTP/1.1 200 OK\n\n0123456789", false},
		{"runes", "HTTP/1.1 200 OK\n\nééééé\n[response cut at 10 bytes]\n", false}, // the cut falls between runes
		{"png", "HTTP/1.1 200 OK\n\n[binary response (image/png, 10 bytes); not shown: this tool returns only UTF-8 text]\n", false},
		{"png-big", "HTTP/1.1 200 OK\n\n[binary response (image/png, 40 bytes); not shown: this tool returns only UTF-8 text]\n", false},
		{"latin1", "HTTP/1.1 200 OK\n\n[binary response (text/plain; charset=iso-8859-1, 4 bytes); not shown: this tool returns only UTF-8 text]\n", false},
		{"empty", "HTTP/1.1 204 No Content\n\n(empty body)\n", false},
		{"missing", "HTTP/1.1 404 Not Found\n\n{\"message\"\n[response cut at 10 bytes]\n", true},
		{"broken", "HTTP/1.1 500 Internal Server Error\n\nxxxxxxxxxx\n[response cut at 10 bytes]\n", true},
		{"teapot", "HTTP/1.1 418 I'm a teapot\n\n(empty body)\n", true},
	}
	for _, tt := range tests {
		res, err := call(tool, `{"p":"`+tt.path+`"}`)
		if err != nil {
			t.Errorf("%s: %v", tt.path, err)
			continue
		}
		if res.Content != tt.want || res.IsError != tt.isError {
			t.Errorf("%s: got %q (error %v), want %q (error %v)", tt.path, res.Content, res.IsError, tt.want, tt.isError)
		}
		checkNoSecret(t, res, err)
	}

	// A cut that lands inside a rune drops the partial rune.
	odd := newTool(t, plan.Tool{URL: srv.URL + "/runes", Allow: []string{srv.URL}, MaxBytes: 9})
	res, err := call(odd, `{}`)
	if want := "HTTP/1.1 200 OK\n\néééé\n[response cut at 9 bytes]\n"; err != nil || res.Content != want {
		t.Errorf("cut inside a rune: got %q, %v; want %q", res.Content, err, want)
	}
}

func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if r.URL.Path == "/slow-body" {
			w.Write([]byte("start\n"))
			w.(nethttp.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-release:
		case <-time.After(5 * time.Second):
		}
	}))
	defer srv.Close()
	defer close(release)
	tool := newTool(t, plan.Tool{URL: srv.URL + "/{{.p}}", Allow: []string{srv.URL}, Timeout: "200ms",
		Headers: map[string]string{"X-Key": headerSecret}})
	for _, p := range []string{"slow", "slow-body"} {
		start := time.Now()
		res, err := call(tool, `{"p":"`+p+`"}`)
		if elapsed := time.Since(start); elapsed > 2*time.Second {
			t.Errorf("%s: the call took %v with a 200ms timeout", p, elapsed)
		}
		if err == nil || !strings.Contains(err.Error(), "within 200ms (the tool's timeout)") {
			t.Errorf("%s: got %+v, %v; want a timeout", p, res, err)
		}
		checkNoSecret(t, res, err)
	}

	// The caller's own cancellation comes back as itself.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	slow := newTool(t, plan.Tool{URL: srv.URL + "/slow", Allow: []string{srv.URL}})
	if _, err := slow.Call(ctx, json.RawMessage(`{}`)); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled call: got %v, want context.Canceled", err)
	}
}

func TestTransportFailure(t *testing.T) {
	srv := httptest.NewServer(nethttp.NotFoundHandler())
	addr := srv.URL
	srv.Close() // nothing listens there now
	tool := newTool(t, plan.Tool{URL: addr + "/x", Allow: []string{addr}, Headers: map[string]string{"X-Key": headerSecret}})
	res, err := call(tool, `{}`)
	if err == nil || !strings.Contains(err.Error(), "GET "+addr+"/x failed") {
		t.Errorf("got %+v, %v; want a failure naming the URL", res, err)
	}
	checkNoSecret(t, res, err)
}

func TestBadArguments(t *testing.T) {
	tool := newTool(t, plan.Tool{URL: "https://api.example.com/repos/{{.repo}}", Allow: []string{"https://api.example.com/repos/"},
		Body: `{"n": {{.n}}}`, Headers: map[string]string{"X-Key": headerSecret, "X-Trace": "{{.trace}}"}},
		WithTransport(noConnect{t}))
	tests := []struct{ args, why string }{
		{``, "arguments are empty"},
		{`   `, "arguments are empty"},
		{`null`, "not null"},
		{`[]`, "not an array"},
		{`"go"`, "not a string"},
		{`7`, "not a number"},
		{`true`, "not a boolean"},
		{`{`, "not valid JSON"},
		{`{"repo":"go"`, "not valid JSON"},
		{`{"repo":"go","n":1,"trace":"t"} {}`, "data after"},
		{`{"repo":"go","n":1,"trace":"t"} x`, "data after"},
		{`{"n":1,"trace":"t"}`, `rendering the url: template: url:1:`},
		{`{"n":1,"trace":"t"}`, `map has no entry for key "repo"`},
		{`{"repo":"go","trace":"t"}`, `rendering the body`},
		{`{"repo":"go","n":1}`, `rendering the header X-Trace`},
		{`{"repo":"go","n":1,"trace":"a\r\nX-Evil: 1"}`, "header X-Trace: its value has a control character"},
		{`{"repo":"go","n":1,"trace":"a\u0000"}`, "control character"},
	}
	for _, tt := range tests {
		res, err := call(tool, tt.args)
		if err == nil || !strings.Contains(err.Error(), tt.why) {
			t.Errorf("%q: got %+v, %v; want an error saying %q", tt.args, res, err, tt.why)
		}
		checkNoSecret(t, res, err)
	}
}

func TestNewRefuses(t *testing.T) {
	base := plan.Tool{Kind: "http", Description: "d", URL: "https://api.example.com/x",
		Allow: []string{"https://api.example.com/"}, Input: &plan.Input{Schema: json.RawMessage(`{}`)}}
	tests := []struct {
		name string
		edit func(*plan.Tool)
		why  string
	}{
		{"other kind", func(t *plan.Tool) { t.Kind = "fs" }, `kind is "fs"`},
		{"no input", func(t *plan.Tool) { t.Input = nil }, "no input schema"},
		{"no url", func(t *plan.Tool) { t.URL = "" }, "no url"},
		{"no allow list", func(t *plan.Tool) { t.Allow = nil }, "no allow list"},
		{"url template", func(t *plan.Tool) { t.URL = "https://api.example.com/{{.x" }, "unclosed action"},
		{"url template function", func(t *plan.Tool) { t.URL = "https://api.example.com/{{getenv .x}}" }, `function "getenv" not defined`},
		{"body template", func(t *plan.Tool) { t.Body = "{{end}}" }, "unexpected {{end}}"},
		{"header template", func(t *plan.Tool) { t.Headers = map[string]string{"X-A": "{{"} }, "header X-A"},
		{"header name", func(t *plan.Tool) { t.Headers = map[string]string{"X A": "1"} }, "not a valid HTTP header name"},
		{"empty header name", func(t *plan.Tool) { t.Headers = map[string]string{"": "1"} }, "not a valid HTTP header name"},
		{"header name with a colon", func(t *plan.Tool) { t.Headers = map[string]string{"X-A:": "1"} }, "not a valid"},
		{"Host header", func(t *plan.Tool) { t.Headers = map[string]string{"host": "evil.com"} }, `header "host" is set by the HTTP client`},
		{"Content-Length header", func(t *plan.Tool) { t.Headers = map[string]string{"Content-Length": "1"} }, "set by the HTTP client"},
		{"header twice", func(t *plan.Tool) { t.Headers = map[string]string{"x-a": "1", "X-A": "2"} }, "declared twice"},
		{"timeout", func(t *plan.Tool) { t.Timeout = "soon" }, `timeout "soon"`},
		{"zero timeout", func(t *plan.Tool) { t.Timeout = "0s" }, "not a positive duration"},
		{"negative max_bytes", func(t *plan.Tool) { t.MaxBytes = -1 }, "max_bytes is -1"},
		// A plan's env is not held to the manifest's names; these reached
		// the call's errors as they were.
		{"env name with an escape", func(t *plan.Tool) { t.Env = []string{"API_TOKEN", "A\x1b[2J"} }, `env: "A\x1b[2J" is not a variable name`},
		{"env name with a space", func(t *plan.Tool) { t.Env = []string{"API TOKEN"} }, `env: "API TOKEN" is not a variable name`},
		{"empty env name", func(t *plan.Tool) { t.Env = []string{""} }, `env: "" is not a variable name`},
	}
	// plan.ParseURLPrefix has the full table of entries refused.
	for _, entry := range []struct{ allow, why string }{
		{"", `allow entry "": not an absolute URL`},
		{"https://user@api.example.com/", "user information"},
		{"https://api.example.com/a/%2e%2e/b", `".."`},
	} {
		tests = append(tests, struct {
			name string
			edit func(*plan.Tool)
			why  string
		}{"allow " + entry.allow, func(t *plan.Tool) { t.Allow = []string{"https://ok.example/", entry.allow} }, entry.why})
	}
	for _, tt := range tests {
		pt := base
		tt.edit(&pt)
		_, err := New("fetch", pt)
		if err == nil || !strings.Contains(err.Error(), `http tool "fetch"`) || !strings.Contains(err.Error(), tt.why) {
			t.Errorf("%s: got %v, want an error saying %q", tt.name, err, tt.why)
		}
	}
}

// rawServer answers every connection with response, written as it is
// (a status line no net/http server would write), once the request's
// headers are read.
func rawServer(t *testing.T, response string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				r := bufio.NewReader(conn)
				for {
					line, err := r.ReadString('\n')
					if err != nil || line == "\r\n" {
						break
					}
				}
				io.WriteString(conn, response)
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// TestServerTextNoted holds what a result or an error shows of the
// server's text outside the body to maxNoted bytes: Go reads up to 1 MiB
// of headers, which max_bytes does not bound.
func TestServerTextNoted(t *testing.T) {
	const maxBytes = 1000
	long := strings.Repeat("x", 200_000)
	// The most a result may hold: the body's bound, each noted piece and
	// the lines around them.
	const most = maxBytes + 3*maxNoted + 300
	check := func(t *testing.T, res runtime.ToolResult, err error, in string) {
		t.Helper()
		text := res.Content
		if err != nil {
			text = err.Error()
		}
		if len(text) > most {
			t.Errorf("the result or error holds %d bytes, more than %d: %.200q…", len(text), most, text)
		}
		if !strings.Contains(text, in) {
			t.Errorf("got %.600q, want it to hold %q", text, in)
		}
	}
	cut := fmt.Sprintf("… (%d bytes in all)", 200_004)

	t.Run("reason phrase", func(t *testing.T) {
		srv := rawServer(t, "HTTP/1.1 200 "+long+"\r\nContent-Length: 2\r\n\r\nok")
		tool := newTool(t, plan.Tool{URL: srv + "/", Allow: []string{srv}, MaxBytes: maxBytes})
		res, err := call(tool, `{}`)
		check(t, res, err, "HTTP/1.1 200 xxx")
		check(t, res, err, cut+"\n\nok")
	})
	t.Run("redirect's reason phrase", func(t *testing.T) {
		srv := rawServer(t, "HTTP/1.1 302 "+long+"\r\nLocation: http://elsewhere.test/\r\nContent-Length: 0\r\n\r\n")
		tool := newTool(t, plan.Tool{URL: srv + "/", Allow: []string{srv}, MaxBytes: maxBytes})
		res, err := call(tool, `{}`)
		check(t, res, err, cut+" with a redirect to http://elsewhere.test/, which is refused")
	})
	t.Run("malformed status line", func(t *testing.T) {
		srv := rawServer(t, long+"\r\n\r\n")
		tool := newTool(t, plan.Tool{URL: srv + "/", Allow: []string{srv}, MaxBytes: maxBytes})
		res, err := call(tool, `{}`)
		check(t, res, err, "malformed HTTP response")
	})

	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		switch r.URL.Path {
		case "/api/binary":
			w.Header().Set("Content-Type", "application/octet-stream; x="+long)
			w.Write([]byte{0, 1, 2})
		case "/api/to":
			nethttp.Redirect(w, r, r.URL.Query().Get("target"), nethttp.StatusFound)
		case "/api/far":
			nethttp.Redirect(w, r, "/elsewhere/"+long, nethttp.StatusFound)
		case "/api/there":
			fmt.Fprint(w, "there")
		}
	}))
	defer srv.Close()
	tool := newTool(t, plan.Tool{URL: srv.URL + "/api/{{.p}}", Allow: []string{srv.URL + "/api/"}, MaxBytes: maxBytes})
	t.Run("content type", func(t *testing.T) {
		res, err := call(tool, `{"p":"binary"}`)
		check(t, res, err, "[binary response (application/octet-stream; x=xxx")
		check(t, res, err, fmt.Sprintf("… (%d bytes in all), 3 bytes)", 200_028))
	})
	t.Run("redirect's target", func(t *testing.T) {
		res, err := call(tool, `{"p":"to?target=`+url.QueryEscape("/api/there?"+long)+`"}`)
		check(t, res, err, "[redirected to "+srv.URL+"/api/there?xxx")
		check(t, res, err, fmt.Sprintf("… (%d bytes in all)]\n\nthere", len(srv.URL)+200_011))
	})
	t.Run("refused redirect's target", func(t *testing.T) {
		res, err := call(tool, `{"p":"far"}`)
		check(t, res, err, "302 Found with a redirect to "+srv.URL+"/elsewhere/xxx")
	})
}

// TestRedirectNoReferer: Go's client tells a redirect's target the URL the
// request came from, its query (what the model wrote into it) included;
// the tool sends no Referer but the one its manifest declares.
func TestRedirectNoReferer(t *testing.T) {
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if r.URL.Path == "/api/to" {
			nethttp.Redirect(w, r, "/api/end", nethttp.StatusFound)
			return
		}
		fmt.Fprintf(w, "referer=%q", r.Header.Get("Referer"))
	}))
	defer srv.Close()
	for _, c := range []struct {
		headers map[string]string
		want    string
	}{
		{nil, `referer=""`},
		{map[string]string{"referer": "https://agent.example/"}, `referer="https://agent.example/"`},
	} {
		tool := newTool(t, plan.Tool{URL: srv.URL + "/api/to?q={{urlquery .q}}", Allow: []string{srv.URL + "/api/"}, Headers: c.headers})
		res, err := call(tool, `{"q":"the private question"}`)
		if err != nil || res.IsError || !strings.HasSuffix(res.Content, c.want) {
			t.Errorf("headers %v: %+v, %v; want the target to see %s", c.headers, res, err, c.want)
		}
	}
}

// TestHeaderEnv: a header's value may read a variable the tool's env
// lists (a credential), as the variable is when the tool is made; one
// the env does not list, or that is not set, fails the call naming the
// variable, never a value, and nothing is sent. A name the env does not
// list is quoted: a plan's template may give any (compile allows only a
// listed name), the model's arguments' even, and its line breaks and
// escapes reached the error as they were.
func TestHeaderEnv(t *testing.T) {
	var got atomic.Value
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		got.Store(r.Header.Get("Authorization"))
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	t.Setenv("AGENTC_TEST_API_TOKEN", "tok-0123456789abcdef")
	mk := func(value string, env ...string) *Tool {
		return newTool(t, plan.Tool{URL: srv.URL + "/api/x", Allow: []string{srv.URL + "/api/"}, Env: env,
			Headers: map[string]string{"Authorization": value}})
	}
	tool := mk(`Bearer {{env "AGENTC_TEST_API_TOKEN"}}`, "AGENTC_TEST_API_TOKEN")
	t.Setenv("AGENTC_TEST_API_TOKEN", "changed-after-the-tool-was-made")
	if res, err := call(tool, `{}`); err != nil || res.IsError || got.Load() != "Bearer tok-0123456789abcdef" {
		t.Errorf("the header sent: %v (%+v, %v)", got.Load(), res, err)
	}
	got.Store("")
	for _, c := range []struct {
		tool *Tool
		args string
		want string
	}{
		{mk(`Bearer {{env "AGENTC_TEST_API_TOKEN"}}`), `{}`, `the tool's env does not list "AGENTC_TEST_API_TOKEN"`},
		{mk(`Bearer {{env "AGENTC_TEST_UNSET_TOKEN"}}`, "AGENTC_TEST_UNSET_TOKEN"), `{}`, "$AGENTC_TEST_UNSET_TOKEN is not set, or empty, where agentc runs"},
		{mk(`Bearer {{env "TOKEN\n\x1b[2J"}}`, "AGENTC_TEST_API_TOKEN"), `{}`, `the tool's env does not list "TOKEN\n\x1b[2J"`},
		{mk(`Bearer {{env .name}}`, "AGENTC_TEST_API_TOKEN"), `{"name": "X\u001b]0;title\u0007"}`, `the tool's env does not list "X\x1b]0;title\a"`},
	} {
		res, err := call(c.tool, c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "changed-after") ||
			strings.ContainsFunc(err.Error(), func(r rune) bool { return r < 0x20 }) {
			t.Errorf("got %+v, %v; want an error saying %q", res, err, c.want)
		}
		if got.Load() != "" {
			t.Errorf("a request was sent with %q", got.Load())
		}
	}
	// env is a header value's alone: in the URL or the body it is an error.
	body := newTool(t, plan.Tool{URL: srv.URL + "/api/x", Allow: []string{srv.URL + "/api/"}, Env: []string{"AGENTC_TEST_API_TOKEN"}, Method: "POST", Body: `{{env "AGENTC_TEST_API_TOKEN"}}`})
	if _, err := call(body, `{}`); err == nil || !strings.Contains(err.Error(), "only to an http tool's header values") {
		t.Errorf("env in a body: %v", err)
	}
}

// TestServerTextNotedSecret: a piece of the server's text cut at
// maxNoted never shows part of a secret that straddles the cut: a server
// echoing a header that holds one (in its reason phrase, a redirect's
// target, a content type, a status line it garbles), with the model's
// argument before it long enough to put the cut in its middle, showed all
// of it but its last bytes to the model, the report, the events and the
// journal, which replace only a secret whole.
func TestServerTextNotedSecret(t *testing.T) {
	const secret = "svckey-0123456789abcdefghijklmnopqrstuvwxyz"
	secrets := &redact.Set{}
	secrets.Add(secret)
	// The secret starts 20 bytes before the cut.
	pad := func(before int) string { return strings.Repeat("A", maxNoted-20-before) }
	check := func(t *testing.T, res runtime.ToolResult, err error) {
		t.Helper()
		text := res.Content
		if err != nil {
			text = err.Error()
		}
		if !strings.Contains(text, "bytes in all)") {
			t.Errorf("no cut: %.700q", text)
		}
		if strings.Contains(text, secret[:12]) {
			t.Errorf("part of the secret is shown: %.700q", text)
		}
	}
	t.Run("reason phrase", func(t *testing.T) {
		srv := rawServer(t, "HTTP/1.1 200 "+pad(4)+secret+strings.Repeat("z", 100)+"\r\nContent-Length: 2\r\n\r\nok")
		res, err := call(newTool(t, plan.Tool{URL: srv + "/", Allow: []string{srv}, MaxBytes: 1000}, WithSecrets(secrets)), `{}`)
		check(t, res, err)
	})
	t.Run("malformed status line", func(t *testing.T) {
		srv := rawServer(t, pad(0)+secret+strings.Repeat("z", 100)+"\r\n\r\n")
		res, err := call(newTool(t, plan.Tool{URL: srv + "/", Allow: []string{srv}, MaxBytes: 1000}, WithSecrets(secrets)), `{}`)
		check(t, res, err)
	})
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		switch r.URL.Path {
		case "/api/binary":
			w.Header().Set("Content-Type", "application/octet-stream; x="+pad(len("application/octet-stream; x="))+secret+strings.Repeat("z", 100))
			w.Write([]byte{0, 1, 2})
		case "/api/away":
			nethttp.Redirect(w, r, "http://elsewhere.test/"+pad(len("http://elsewhere.test/"))+secret+strings.Repeat("z", 100), nethttp.StatusFound)
		}
	}))
	defer srv.Close()
	tool := newTool(t, plan.Tool{URL: srv.URL + "/api/{{.p}}", Allow: []string{srv.URL + "/api/"}, MaxBytes: 1000}, WithSecrets(secrets))
	for _, p := range []string{"binary", "away"} {
		t.Run(p, func(t *testing.T) {
			res, err := call(tool, `{"p":"`+p+`"}`)
			check(t, res, err)
		})
	}
}

// TestRedirectOtherOriginNoCredentials: a redirect to another origin
// (scheme, host or port) is sent no Authorization or Cookie, whatever the
// allow list lets the tool reach; other declared headers go on. Go's client
// keeps them for a subdomain and for another port or scheme of the same
// host: a server at one allowed origin redirecting to a subdomain, another
// port, or plain http of its own host had the tool's credential (its env
// variable's value) sent there, in the clear for the last.
func TestRedirectOtherOriginNoCredentials(t *testing.T) {
	echo := func(w nethttp.ResponseWriter, r *nethttp.Request) {
		fmt.Fprintf(w, "at %s: authorization=%q cookie=%q x-key=%q", r.Host, r.Header.Get("Authorization"), r.Header.Get("Cookie"), r.Header.Get("X-Key"))
	}
	other := httptest.NewServer(nethttp.HandlerFunc(echo))
	defer other.Close()
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if target := r.URL.Query().Get("to"); target != "" {
			nethttp.Redirect(w, r, target, nethttp.StatusFound)
			return
		}
		echo(w, r)
	}))
	defer srv.Close()
	// api.example.test and its subdomain, both answered by srv.
	toSrv := &nethttp.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, strings.TrimPrefix(srv.URL, "http://"))
	}}
	defer toSrv.CloseIdleConnections()
	// https://api.example.com answered by a TLS server that redirects
	// (its certificate names *.example.com), and http://api.example.com
	// by srv.
	tlsSrv := httptest.NewTLSServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		nethttp.Redirect(w, r, r.URL.Query().Get("to"), nethttp.StatusFound)
	}))
	defer tlsSrv.Close()
	bySchemePort := tlsSrv.Client().Transport.(*nethttp.Transport).Clone()
	bySchemePort.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		to := srv.Listener.Addr().String()
		if strings.HasSuffix(addr, ":443") {
			to = tlsSrv.Listener.Addr().String()
		}
		return (&net.Dialer{}).DialContext(ctx, network, to)
	}
	defer bySchemePort.CloseIdleConnections()
	headers := map[string]string{"Authorization": "Bearer " + headerSecret, "Cookie": "session=" + headerSecret, "X-Key": "declared"}
	for _, c := range []struct {
		name        string
		from, to    string
		allow       []string
		rt          nethttp.RoundTripper
		credentials bool
	}{
		{"same origin", srv.URL + "/api/", "/api/end", []string{srv.URL + "/api/"}, nil, true},
		{"another port", srv.URL + "/api/", other.URL + "/api/end", []string{srv.URL + "/api/", other.URL + "/api/"}, nil, false},
		{"a subdomain", "http://api.example.test/", "http://sub.api.example.test/end",
			[]string{"http://api.example.test/", "http://sub.api.example.test/"}, toSrv, false},
		{"plain http of the same host", "https://api.example.com/", "http://api.example.com/end",
			[]string{"https://api.example.com/", "http://api.example.com/"}, bySchemePort, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var opts []Option
			if c.rt != nil {
				opts = append(opts, WithTransport(c.rt))
			}
			tool := newTool(t, plan.Tool{URL: c.from + "?to={{urlquery .to}}", Allow: c.allow, Headers: headers}, opts...)
			res, err := call(tool, `{"to":`+strconv.Quote(c.to)+`}`)
			if err != nil || res.IsError || !strings.Contains(res.Content, "[redirected to") {
				t.Fatalf("got %+v, %v; want the redirect followed", res, err)
			}
			if !strings.Contains(res.Content, `x-key="declared"`) {
				t.Errorf("the declared header did not go on: %q", res.Content)
			}
			if sent := strings.Contains(res.Content, headerSecret); sent != c.credentials {
				t.Errorf("credentials sent to the target: %v, want %v: %q", sent, c.credentials, res.Content)
			}
		})
	}
}
