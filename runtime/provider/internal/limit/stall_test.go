package limit

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// get makes a request through Stall(d) to a server that serves with h;
// each read of its body is a part of the reply to meter, if one is given.
func get(t *testing.T, ctx context.Context, d time.Duration, h http.HandlerFunc, meter ...*Reply) (string, error) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := Stall("openai", d)(req, http.DefaultClient.Do)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 512)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		for _, m := range meter {
			_ = m.Add(n)
		}
		if err == io.EOF {
			return b.String(), nil
		}
		if err != nil {
			return b.String(), err
		}
	}
}

// hang reads the request, as a server does, then waits for the client to
// go (or, so that a failing test ends, five seconds).
func hang(r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(5 * time.Second):
	}
}

// trickle writes parts, flushed, every gap.
func trickle(parts []string, gap time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		for _, p := range parts {
			_, _ = io.WriteString(w, p)
			w.(http.Flusher).Flush()
			select {
			case <-time.After(gap):
			case <-r.Context().Done():
				return
			}
		}
	}
}

func TestStall(t *testing.T) {
	const d = 300 * time.Millisecond
	var stalled *StalledError

	// No response at all: given up after d, as a StalledError.
	_, err := get(t, context.Background(), d, func(w http.ResponseWriter, r *http.Request) { hang(r) })
	if !errors.As(err, &stalled) || stalled.Provider != "openai" || stalled.After != d {
		t.Errorf("a server that never answers: %v, want a StalledError", err)
	}
	if err != nil && !strings.Contains(err.Error(), "the server sent nothing for 300ms") {
		t.Errorf("message: %v", err)
	}

	// A response that stops half way.
	_, err = get(t, context.Background(), d, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, `data: {"id":`)
		w.(http.Flusher).Flush()
		hang(r)
	})
	if !errors.As(err, &stalled) {
		t.Errorf("a body that stops: %v, want a StalledError", err)
	}

	// A stream that keeps making progress may last longer than d in all:
	// its reader hears each part (here, each read) through the request's
	// context.
	parts := []string{"a", "b", "c", "d", "e", "f"}
	ctx, meter := NewReply(context.Background(), 0)
	body, err := get(t, ctx, d, trickle(parts, d/3), meter)
	if err != nil || body != strings.Join(parts, "") {
		t.Errorf("a steady stream of %v: %q, %v", time.Duration(len(parts))*d/3, body, err)
	}

	// The response's head restarts the wait: a server that answers just
	// within d, and sends its body just within d after, is waited for.
	body, err = get(t, context.Background(), d, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		time.Sleep(d * 2 / 3)
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		time.Sleep(d * 2 / 3)
		_, _ = io.WriteString(w, "done")
	})
	if err != nil || body != "done" {
		t.Errorf("a head and a body each within d: %q, %v", body, err)
	}

	// The caller's own cancellation is not a stall.
	ctx, cancel := context.WithTimeout(context.Background(), d/3)
	defer cancel()
	_, err = get(t, ctx, d, func(w http.ResponseWriter, r *http.Request) { hang(r) })
	if errors.As(err, &stalled) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the caller's deadline: %v, want it, not a stall", err)
	}

	// A negative d waits for ever: here, for a slow answer.
	body, err = get(t, context.Background(), -1, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(d / 2)
		_, _ = io.WriteString(w, "late")
	})
	if err != nil || body != "late" {
		t.Errorf("no stall bound: %q, %v", body, err)
	}
}
