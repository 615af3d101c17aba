package limit

import (
	"context"
	"errors"
	"strings"
	"testing"

	"agentc.dev/agentc/runtime/internal/replylimit"
)

// TestReplyMeter: a stream is cut at the piece that passes the bound,
// and every piece after; a meter for no limit, and a nil one, cut nothing.
func TestReplyMeter(t *testing.T) {
	_, r := NewReply(context.Background(), 1)
	if err := r.Add(65664); err != nil {
		t.Fatalf("at the bound: %v", err)
	}
	for range 2 {
		var re *replylimit.ReplyError
		if err := r.Add(1); !errors.As(err, &re) || !re.Cut || !strings.Contains(err.Error(), "the stream was cut") {
			t.Fatalf("past the bound: %v", err)
		}
	}
	var none *Reply
	_, unbounded := NewReply(context.Background(), 0)
	for _, r := range []*Reply{unbounded, none} {
		if err := r.Add(1 << 30); err != nil {
			t.Errorf("no bound: %v", err)
		}
	}
}
