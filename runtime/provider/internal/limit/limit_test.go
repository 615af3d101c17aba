package limit

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
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

// TestBodyBound: a whole response to a request that allowed so many output
// tokens may take six bytes for every byte those tokens make (a JSON
// escape), the request's own bytes and 64 KiB besides; no limit is no
// bound.
func TestBodyBound(t *testing.T) {
	if got, want := BodyBound(16, 1000), int64(6*(16*128+64<<10)+1000+64<<10); got != want {
		t.Errorf("BodyBound(16, 1000) = %d, want %d", got, want)
	}
	if got := BodyBound(0, 1000); got != 0 {
		t.Errorf("BodyBound(0, 1000) = %d, want 0 (no bound)", got)
	}
}

// TestMiddlewareWhole: a request whose context says the output tokens it
// allowed has its response cut past BodyBound, with a *ReplyError naming
// them, whether the response says its length or not; one whose own length
// is unknown, or whose bound is past the limit, keeps the limit.
func TestMiddlewareWhole(t *testing.T) {
	const tokens, reqSize = 16, 100
	bound := BodyBound(tokens, reqSize)
	for _, tc := range []struct {
		name          string
		size          int
		chunked       bool
		unknownLength bool
		limit         int64
		want          string // "" taken, "reply" or "large"
	}{
		{"at the bound", int(bound), false, false, MaxResponse, ""},
		{"one past, with a length", int(bound) + 1, false, false, MaxResponse, "reply"},
		{"one past, streamed", int(bound) + 1, true, false, MaxResponse, "reply"},
		{"the request's length unknown", int(bound) + 1, true, true, MaxResponse, ""},
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
			var re *ReplyError
			var tl *TooLargeError
			switch tc.want {
			case "":
				if err != nil || len(data) != tc.size {
					t.Fatalf("read %d bytes of %d: %v", len(data), tc.size, err)
				}
			case "reply":
				if !errors.As(err, &re) || !re.Body || re.Tokens != tokens || re.Bound != bound || re.Request != reqSize {
					t.Fatalf("err = %#v, want a *ReplyError for the body past %d", err, bound)
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
