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

	"agentc.dev/agentc/internal/leaf/bodyrate"
)

// get makes a request through Stall(d) to a server that serves with h.
func get(t *testing.T, ctx context.Context, d time.Duration, h http.HandlerFunc) (string, error) {
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

	// The caller's own cancellation is not a stall.
	ctx, cancel := context.WithTimeout(context.Background(), d/3)
	defer cancel()
	_, err = get(t, ctx, d, func(w http.ResponseWriter, r *http.Request) { hang(r) })
	if errors.As(err, &stalled) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the caller's deadline: %v, want it, not a stall", err)
	}

	// A negative d waits for ever: here, for a slow answer.
	body, err := get(t, context.Background(), -1, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(d / 2)
		_, _ = io.WriteString(w, "late")
	})
	if err != nil || body != "late" {
		t.Errorf("no stall bound: %q, %v", body, err)
	}
}

// TestStallMoved: the wait restarts at the response's head, and a
// stream's progress moves it, so an attempt that makes progress within d
// at each step may last longer than d in all. Timed by a Manual clock:
// on a loaded machine, the real one let a step of 2/3 d take more than d.
func TestStallMoved(t *testing.T) {
	const d = 300 * time.Millisecond

	// A server that answers just within d, and sends its body just within
	// d after, is waited for.
	clk := &bodyrate.Manual{}
	req, err := http.NewRequest(http.MethodPost, "http://provider.invalid/v1", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := stall("openai", d, clk)(req, func(r *http.Request) (*http.Response, error) {
		clk.Advance(d * 2 / 3)
		if err := r.Context().Err(); err != nil {
			return nil, err
		}
		return &http.Response{StatusCode: http.StatusOK, Body: &pacedBody{ctx: r.Context(), pieces: []piece{{"done", 0}}}}, nil
	})
	if err != nil {
		t.Fatalf("a head within d: %v", err)
	}
	defer resp.Body.Close()
	clk.Advance(d * 2 / 3)
	buf := make([]byte, 64)
	if n, err := resp.Body.Read(buf); err != nil || string(buf[:n]) != "done" {
		t.Errorf("a head and a body each within d: %q, %v", buf[:n], err)
	}

	// A stream that sends a part of the reply every d/3, for 2 d in all.
	if took, err := paced(t, d, true, []piece{{"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n", 1}}, d/3, 6); err != nil {
		t.Errorf("a steady stream: %v after %v", err, took)
	}
}

// dueContext is a caller's context whose deadline has passed and whose
// timer has not run yet: it ends, as context.DeadlineExceeded, once done
// is closed.
type dueContext struct {
	context.Context
	done chan struct{}
}

func (c *dueContext) Deadline() (time.Time, bool) { return time.Unix(1, 0), true }
func (c *dueContext) Done() <-chan struct{}       { return c.done }
func (c *dueContext) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// TestStallCallerDue: where the caller's deadline and the stall's are
// both due, the attempt ends with the caller's, whichever timer runs
// first. The stall's ran first now and then on a loaded machine, claimed
// the attempt, and the caller had context.Canceled for its deadline.
func TestStallCallerDue(t *testing.T) {
	const d = 300 * time.Millisecond
	clk := &bodyrate.Manual{}
	ctx := &dueContext{Context: context.Background(), done: make(chan struct{})}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://provider.invalid/v1", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = stall("openai", d, clk)(req, func(r *http.Request) (*http.Response, error) {
		clk.Advance(d)  // the stall's timer runs first,
		close(ctx.done) // then the caller's
		<-r.Context().Done()
		return nil, r.Context().Err()
	})
	var stalled *StalledError
	if errors.As(err, &stalled) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the caller's deadline, due with the stall's: %v, want it, not a stall", err)
	}
}
