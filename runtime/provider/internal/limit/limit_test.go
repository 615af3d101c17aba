package limit

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"agentc.dev/agentc/runtime/internal/replylimit"
)

func TestMiddleware(t *testing.T) {
	for _, tc := range []struct {
		name    string
		size    int
		chunked bool
		tooBig  bool
	}{
		{"under", 99, false, false},
		{"at the limit", 100, false, false},
		{"one past, with a length", 101, false, true},
		{"at the limit, streamed", 100, true, false},
		{"one past, streamed", 101, true, true},
		{"far past, streamed", 100000, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.chunked {
					w.(http.Flusher).Flush() // no Content-Length
				} else {
					w.Header().Set("Content-Length", strconv.Itoa(tc.size))
				}
				io.WriteString(w, strings.Repeat("x", tc.size))
			}))
			defer srv.Close()
			mw := Middleware("openai", 100)
			req, _ := http.NewRequest("GET", srv.URL, nil)
			resp, err := mw(req, http.DefaultClient.Do)
			var data []byte
			if err == nil {
				data, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			var tl *TooLargeError
			if tc.tooBig != errors.As(err, &tl) {
				t.Fatalf("err %v, want too large: %v", err, tc.tooBig)
			}
			if tc.tooBig {
				if len(data) > 100 {
					t.Errorf("read %d bytes past the limit", len(data))
				}
				if !strings.Contains(err.Error(), "openai: the response is larger than") {
					t.Errorf("error %q does not say what happened", err)
				}
				return
			}
			if len(data) != tc.size {
				t.Errorf("read %d bytes, want %d", len(data), tc.size)
			}
		})
	}
}

// TestMiddlewareWhole: a request whose context says the output tokens it
// allowed has its response cut past replylimit.BodyBound, with a
// *replylimit.ReplyError naming them, whether the response says its length or
// not; one whose own length is unknown, or whose bound is past the limit, keeps
// the limit.
func TestMiddlewareWhole(t *testing.T) {
	const tokens, reqSize = 16, 100
	bound := replylimit.BodyBound(tokens, reqSize)
	for _, tc := range []struct {
		name          string
		size          int
		chunked       bool
		unknownLength bool
		limit         int64
		want          string // "" taken, "reply" or "large"
	}{
		{"at the bound", int(bound), false, false, replylimit.MaxResponse, ""},
		{"one past, with a length", int(bound) + 1, false, false, replylimit.MaxResponse, "reply"},
		{"one past, streamed", int(bound) + 1, true, false, replylimit.MaxResponse, "reply"},
		{"the request's length unknown", int(bound) + 1, true, true, replylimit.MaxResponse, ""},
		{"the limit below the bound", 1001, true, false, 1000, "large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				if tc.chunked {
					w.(http.Flusher).Flush()
				} else {
					w.Header().Set("Content-Length", strconv.Itoa(tc.size))
				}
				io.WriteString(w, strings.Repeat("x", tc.size))
			}))
			defer srv.Close()
			req, _ := http.NewRequestWithContext(WithWhole(t.Context(), tokens), "POST", srv.URL, strings.NewReader(strings.Repeat("r", reqSize)))
			if tc.unknownLength {
				req.ContentLength = -1
			}
			resp, err := Middleware("openai", tc.limit)(req, http.DefaultClient.Do)
			var data []byte
			if err == nil {
				data, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			var re *replylimit.ReplyError
			var tl *TooLargeError
			switch tc.want {
			case "":
				if err != nil || len(data) != tc.size {
					t.Fatalf("read %d bytes of %d: %v", len(data), tc.size, err)
				}
			case "reply":
				if !errors.As(err, &re) || !re.Body || re.Tokens != tokens || re.Bound != bound || re.Request != reqSize {
					t.Fatalf("err = %#v, want a *replylimit.ReplyError for the body past %d", err, bound)
				}
				if int64(len(data)) > bound {
					t.Errorf("read %d bytes, past the bound %d", len(data), bound)
				}
				if !strings.Contains(err.Error(), "the request's own 100 bytes") {
					t.Errorf("err = %v, want the request's size named", err)
				}
			case "large":
				if !errors.As(err, &tl) {
					t.Fatalf("err = %v, want a *TooLargeError", err)
				}
			}
		})
	}
}

// TestMiddlewareGzip: a gzip body is decompressed and both what is sent
// and what it decodes to are held to the limit: empty gzip members sent
// for ever end at the limit (Go's client, counting only what it
// decompressed, read them for as long as they came), and so does a bomb
// whose few bytes decode to more; a body within both is read as it was
// written, its encoding gone. A request that asks for an encoding itself
// gets the body as sent.
func TestMiddlewareGzip(t *testing.T) {
	gz := func(b []byte) []byte {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		w.Write(b)
		w.Close()
		return buf.Bytes()
	}
	empty := gz(nil)
	const limit = 1 << 20
	for _, tc := range []struct {
		name  string
		write func(w http.ResponseWriter, r *http.Request)
		want  string // the body read, or "" for a *TooLargeError
	}{
		{"empty members for ever", func(w http.ResponseWriter, r *http.Request) {
			for r.Context().Err() == nil {
				if _, err := w.Write(empty); err != nil {
					return
				}
			}
		}, ""},
		{"a bomb", func(w http.ResponseWriter, r *http.Request) {
			w.Write(gz(make([]byte, 8*limit)))
		}, ""},
		{"within", func(w http.ResponseWriter, r *http.Request) {
			w.Write(gz([]byte(`{"ok": true}`)))
			w.Write(gz([]byte(` `)))
		}, `{"ok": true} `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Accept-Encoding") != "gzip" {
					t.Errorf("Accept-Encoding %q", r.Header.Get("Accept-Encoding"))
				}
				w.Header().Set("Content-Encoding", "gzip")
				tc.write(w, r)
			}))
			defer srv.Close()
			req, _ := http.NewRequestWithContext(t.Context(), "GET", srv.URL, nil)
			resp, err := Middleware("openai", limit)(req, http.DefaultClient.Do)
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			var tl *TooLargeError
			if tc.want == "" {
				if !errors.As(err, &tl) {
					t.Fatalf("read %d bytes: %v, want a *TooLargeError", len(data), err)
				}
				return
			}
			if err != nil || string(data) != tc.want || resp.Header.Get("Content-Encoding") != "" {
				t.Fatalf("read %q, %v, encoding %q", data, err, resp.Header.Get("Content-Encoding"))
			}
		})
	}
	t.Run("the request's own encoding", func(t *testing.T) {
		body := gz([]byte("x"))
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(body)
		}))
		defer srv.Close()
		req, _ := http.NewRequestWithContext(t.Context(), "GET", srv.URL, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := Middleware("openai", limit)(req, http.DefaultClient.Do)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !bytes.Equal(data, body) {
			t.Errorf("read %q, want the body as sent", data)
		}
	})
}
