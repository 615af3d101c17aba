package limit

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"agentc.dev/agentc/internal/leaf/bodyrate"
)

// piece is what a paced server sends at each step: raw bytes, of which
// content are a part of the reply (what a provider's reader would pass
// to Reply.Add once it decoded them).
type piece struct {
	raw     string
	content int
}

// pacedBody is a response's body that gives the next piece at each read,
// and fails once the attempt's context is cancelled, as a transport's
// body does.
type pacedBody struct {
	ctx    context.Context
	pieces []piece
	i      int
}

func (b *pacedBody) Read(p []byte) (int, error) {
	if err := b.ctx.Err(); err != nil {
		return 0, err
	}
	pc := b.pieces[b.i%len(b.pieces)]
	b.i++
	return copy(p, pc.raw), nil
}

func (b *pacedBody) Close() error { return nil }

// paced makes an attempt through the stall watch of d on a fake clock,
// streamed (its context from NewReply) or not, whose server answers at
// once and then sends pieces, round and round, one every gap; it reads
// for at most steps gaps and returns how long the attempt lasted and how
// it ended.
func paced(t *testing.T, d time.Duration, stream bool, pieces []piece, gap time.Duration, steps int) (time.Duration, error) {
	t.Helper()
	clk := &bodyrate.Manual{}
	ctx, meter := context.Background(), (*Reply)(nil)
	if stream {
		ctx, meter = NewReply(ctx, 0)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://provider.invalid/v1", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := stall("openai", d, clk)(req, func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Body: &pacedBody{ctx: r.Context(), pieces: pieces}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 64<<10)
	for i := 1; i <= steps; i++ {
		clk.Advance(gap)
		if _, err := resp.Body.Read(buf); err != nil {
			return time.Duration(i) * gap, err
		}
		_ = meter.Add(pieces[(i-1)%len(pieces)].content)
	}
	return time.Duration(steps) * gap, nil
}

// TestStallTrickle: a server that sends a byte now and then, less than
// the stall timeout apart, but no progress, is cut within a bounded
// multiple of the timeout, saying what it waited for: a whole body a
// blank at a time (JSON allows any number), a stream of comments and of
// events that carry no part of the reply. A stream that makes progress,
// however slowly, and a whole body that comes at BodyRate, are not cut.
func TestStallTrickle(t *testing.T) {
	const d = 10 * time.Minute
	var stalled *StalledError

	took, err := paced(t, d, false, []piece{{" ", 0}}, d/2, 1000)
	if !errors.As(err, &stalled) || stalled.Wait != WaitBody || took > 2*d {
		t.Errorf("a whole body of blanks, one every %v: %v after %v, want a stall within %v", d/2, err, took, 2*d)
	} else if want := "openai: the body came too slowly: 2 bytes in 10m0s, for a stall timeout of 10m0s and a second more per 16 KiB; the attempt was given up"; !strings.Contains(err.Error(), want) {
		t.Errorf("message: %v, want %q", err, want)
	}

	keepAlive := []piece{
		{": keep-alive\n\n", 0},
		{"event: ping\ndata: {\"type\": \"ping\"}\n\n", 0},
		{"data: {\"choices\":[{\"index\":0,\"delta\":{}}]}\n\n", 0},
	}
	took, err = paced(t, d, true, keepAlive, d/2, 1000)
	if !errors.As(err, &stalled) || stalled.Wait != WaitStream || took > 2*d {
		t.Errorf("a stream of keep-alives, one every %v: %v after %v, want a stall within %v", d/2, err, took, 2*d)
	} else if want := "openai: the stream sent keep-alives at most, no part of the reply, for 10m0s; the attempt was given up"; !strings.Contains(err.Error(), want) {
		t.Errorf("message: %v, want %q", err, want)
	}

	// A slow model: keep-alives while it thinks, a token just within d
	// of the last, for 30 d in all.
	slow := append(keepAlive[:2:2], piece{"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Paris\"}}]}\n\n", 5})
	if took, err := paced(t, d, true, slow, d*3/10, 100); err != nil {
		t.Errorf("a slow stream, a part of the reply every %v: %v after %v", d*9/10, err, took)
	}

	// A whole body that comes at BodyRate: the rate earns it the time.
	chunk := piece{strings.Repeat(" ", BodyRate/2), 0}
	if took, err := paced(t, time.Second, false, []piece{chunk}, time.Second/2, 100); err != nil {
		t.Errorf("a whole body at %d bytes a second: %v after %v", BodyRate, err, took)
	}
}
