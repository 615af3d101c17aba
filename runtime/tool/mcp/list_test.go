package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/runtime/internal/origin"
)

// paging serves the test server over streamable HTTP, but answers every
// tools/list itself: page N lists ten tools of its own (echo too on the
// pages echoOn names, the first when it names none), each with a schema
// of some size, and names the next page by next(N) ("" for none). pages
// counts the listings asked for.
func paging(t *testing.T, next func(page int) string, echoOn ...int) (*httptest.Server, *atomic.Int64) {
	if len(echoOn) == 0 {
		echoOn = []int{1}
	}
	t.Helper()
	srv := testServer("")
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	var pages atomic.Int64
	big := strings.Repeat(`{},`, 1_000) + `{}`
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/list" {
			n := int(pages.Add(1))
			var tools []string
			if slices.Contains(echoOn, n) {
				tools = append(tools, `{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}`)
			}
			for i := range 10 {
				tools = append(tools, fmt.Sprintf(`{"name":"p%d_%d","inputSchema":{"type":"object","x":[%s]}}`, n, i, big))
			}
			cursor := ""
			if c := next(n); c != "" {
				cursor = fmt.Sprintf(`,"nextCursor":%q`, c)
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[%s]%s}}`, msg.ID, strings.Join(tools, ","), cursor)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts, &pages
}

// TestListPages: a server whose tool listing never ends (each page naming
// the next) is refused once MaxListPages pages have been read, and one
// whose listing comes back to a page it gave before at once: neither is
// read until the start times out, holding every page's tools. A listing
// of several pages is read whole, the allowed tools found on any of them.
func TestListPages(t *testing.T) {
	connect := func(t *testing.T, ts *httptest.Server) (*Server, error) {
		decl := plan.Tool{Kind: "mcp", Description: "The test server.", URL: ts.URL, Allow: []string{"echo"}}
		s, err := Connect(context.Background(), "srv", decl, t.TempDir(), WithHTTPClient(ts.Client()))
		if err == nil {
			t.Cleanup(func() { s.Close() })
		}
		return s, err
	}
	t.Run("endless", func(t *testing.T) {
		ts, pages := paging(t, func(n int) string { return fmt.Sprint(n + 1) })
		_, err := connect(t, ts)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("the server's listing goes on past %d pages", MaxListPages)) {
			t.Errorf("Connect: %v", err)
		}
		if n := pages.Load(); n != MaxListPages {
			t.Errorf("%d pages asked for, want %d", n, MaxListPages)
		}
	})
	t.Run("round", func(t *testing.T) {
		ts, pages := paging(t, func(int) string { return "again" })
		_, err := connect(t, ts)
		if err == nil || !strings.Contains(err.Error(), "the server's listing comes back to a page it gave before") {
			t.Errorf("Connect: %v", err)
		}
		if n := pages.Load(); n != 2 {
			t.Errorf("%d pages asked for, want 2", n)
		}
	})
	t.Run("twice", func(t *testing.T) {
		ts, _ := paging(t, func(n int) string {
			if n < 2 {
				return "2"
			}
			return ""
		}, 1, 2)
		if _, err := connect(t, ts); err == nil || !strings.Contains(err.Error(), `the server lists tool "echo" twice`) {
			t.Errorf("Connect: %v", err)
		}
	})
	t.Run("three pages", func(t *testing.T) {
		ts, pages := paging(t, func(n int) string {
			if n < 3 {
				return fmt.Sprint(n + 1)
			}
			return ""
		})
		s, err := connect(t, ts)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Tools()) != 1 || s.Tools()[0].Spec().Name != "echo" || pages.Load() != 3 {
			t.Errorf("%d tools, %d pages", len(s.Tools()), pages.Load())
		}
	})
}

// TestRedirectOtherOrigin: a server over HTTP that redirects agentc to
// another origin is not followed there: the start fails saying so, and
// the other origin sees no request. One to its own origin is followed.
func TestRedirectOtherOrigin(t *testing.T) {
	var reached atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
	}))
	t.Cleanup(other.Close)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(ts.Close)
	decl := plan.Tool{Kind: "mcp", Description: "The test server.", URL: ts.URL, Allow: []string{"echo"}}
	_, err := Connect(context.Background(), "srv", decl, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), origin.ErrRedirect.Error()) || reached.Load() != 0 {
		t.Errorf("Connect: %v (the other origin reached %d times)", err, reached.Load())
	}

	srv := testServer("")
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	own := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/mcp", http.StatusPermanentRedirect)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(own.Close)
	decl.URL = own.URL + "/old"
	s, err := Connect(context.Background(), "srv", decl, t.TempDir())
	if err != nil {
		t.Fatalf("a redirect to the server's own origin: %v", err)
	}
	s.Close()
}

// TestLongNamesListed: the names of the tools a server has, in the error
// of a start that misses an allowed one, are cut: twenty names of 500 KB
// each made an error of 10 MB, and held them all.
func TestLongNamesListed(t *testing.T) {
	ic := intercept(t, func(method, _ string) bool { return method == "tools/list" }, func(w io.Writer, id json.RawMessage) error {
		var tools []string
		for i := range 20 {
			tools = append(tools, fmt.Sprintf(`{"name":"%d%s","inputSchema":{"type":"object"}}`, i, strings.Repeat("n", 500<<10)))
		}
		_, err := fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[%s]}}`, id, strings.Join(tools, ","))
		return err
	}, "application/json")
	_, err := connectURL(t, ic, "echo")
	if err == nil || !strings.Contains(err.Error(), `allow names "echo", which the server does not have (it has: "0nnn`) || len(err.Error()) > 64<<10 {
		n := 0
		if err != nil {
			n = len(err.Error())
		}
		t.Errorf("the start's error is %d bytes (%.300v…), want the names cut", n, err)
	}
}

// TestLongSchemaErrors: why a server's input schema is refused is cut in
// the start's error: a schema of 1 MiB made an error of 2 MiB, quoting it.
func TestLongSchemaErrors(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	for name, schema := range map[string]string{
		"pattern":  `{"type":"object","properties":{"q":{"type":"string","pattern":"(` + long + `"}}}`,
		"keywords": `{"` + long + `":1}`,
		"ref":      `{"type":"object","$ref":"#/` + long + `"}`,
	} {
		t.Run(name, func(t *testing.T) {
			ic := intercept(t, func(method, _ string) bool { return method == "tools/list" }, func(w io.Writer, id json.RawMessage) error {
				_, err := fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"echo","inputSchema":%s}]}}`, id, schema)
				return err
			}, "application/json")
			_, err := connectURL(t, ic, "echo")
			if err == nil || !strings.Contains(err.Error(), `mcp server "srv": tool "echo": its input schema `) || len(err.Error()) > 8<<10 {
				n := 0
				if err != nil {
					n = len(err.Error())
				}
				t.Errorf("the start's error is %d bytes (%.300v…), want it cut", n, err)
			}
		})
	}
}
