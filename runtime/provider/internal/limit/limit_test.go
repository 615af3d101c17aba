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
