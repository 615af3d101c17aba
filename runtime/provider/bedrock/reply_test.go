package bedrock

import (
	"fmt"
	"strings"
	"testing"
	"time"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/provider/retry"
)

// replyModel is a Model on the fake whose policy allows five attempts
// and keeps the error of each attempt that another followed.
func replyModel(t *testing.T, f *fake) (*Model, *[]error) {
	t.Helper()
	var errs []error
	m, err := New(Config{Region: testRegion, Credentials: staticCreds, BaseURL: f.srv.URL,
		Retry: retry.Policy{Attempts: 5, Base: time.Millisecond, Max: 4 * time.Millisecond,
			OnAttempt: func(_ int, err error, wait time.Duration) {
				if wait > 0 {
					errs = append(errs, err)
				}
			}}})
	if err != nil {
		t.Fatal(err)
	}
	return m, &errs
}

// refused holds a call to the error of a reply past its request's
// maxTokens, never tried again: another attempt would be sent as much
// again.
func refused(t *testing.T, err error, attempts []error, tokens int, cut bool) {
	t.Helper()
	want := "the reply is refused"
	if cut {
		want = "the stream was cut"
	}
	if err == nil || !strings.Contains(err.Error(), "bedrock: the ") || !strings.Contains(err.Error(), fmt.Sprintf("%d output tokens (the request's limit)", tokens)) || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want the reply past maxTokens %d refused (%s)", err, tokens, want)
	}
	for _, a := range attempts {
		t.Errorf("an attempt was made again after: %v", a)
	}
}

// TestReplyPastMaxTokens: a server that ignores maxTokens and answers
// with more text than so many tokens can make (128 bytes a token and 64
// KiB besides) fails the call; the bound is the maxTokens sent, 4096
// when the request sets none. A stream is cut as soon as its text passes
// the bound: the caller heard at most the bound of it. A reply at the
// bound is taken.
func TestReplyPastMaxTokens(t *testing.T) {
	const bound16, bound4096 = 16*128 + 64<<10, 4096*128 + 64<<10
	req := func(max int) *agentrt.Request {
		return &agentrt.Request{Model: claude, MaxOutputTokens: max, Messages: []agentrt.Message{{Role: agentrt.User, Content: "x"}}}
	}
	for _, tc := range []struct {
		name        string
		max, tokens int
		text        int
	}{
		{"max 16", 16, 16, bound16 + 1},
		{"the default maxTokens", 0, 4096, bound4096 + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, ok(textReply(strings.Repeat("x", tc.text), "end_turn")))
			m, attempts := replyModel(t, f)
			_, err := m.Complete(t.Context(), req(tc.max))
			refused(t, err, *attempts, tc.tokens, false)
		})
	}
	t.Run("streamed", func(t *testing.T) {
		evs := [][2]string{{"messageStart", `{"role":"assistant"}`}}
		piece := `{"contentBlockIndex":0,"delta":{"text":"` + strings.Repeat("x", 4000) + `"}}`
		for range 2 * bound16 / 4000 {
			evs = append(evs, [2]string{"contentBlockDelta", piece})
		}
		evs = append(evs, streamEvents[len(streamEvents)-2:]...)
		f := newFake(t, events(t, evs...))
		m, attempts := replyModel(t, f)
		r := req(16)
		n := 0
		r.Stream = func(d agentrt.Delta) {
			if d.Restart {
				n = 0
			}
			n += len(d.Text)
		}
		_, err := m.Complete(t.Context(), r)
		refused(t, err, *attempts, 16, true)
		if n > bound16 {
			t.Errorf("%d bytes of text were passed on, more than the bound (%d)", n, bound16)
		}
	})
	t.Run("many empty calls", func(t *testing.T) {
		// Each call counts one token's bytes at least: 10,000 calls of
		// one-byte IDs and names and no input are past what the default
		// maxTokens (4,096) makes, whole or streamed.
		uses := make([]string, 10000)
		evs := [][2]string{{"messageStart", `{"role":"assistant"}`}}
		for i := range uses {
			uses[i] = `{"toolUse":{"toolUseId":"t","name":"a","input":{}}}`
			evs = append(evs, [2]string{"contentBlockStart", fmt.Sprintf(`{"contentBlockIndex":%d,"start":{"toolUse":{"toolUseId":"t","name":"a"}}}`, i%(1<<16))},
				[2]string{"contentBlockStop", fmt.Sprintf(`{"contentBlockIndex":%d}`, i%(1<<16))})
		}
		evs = append(evs, [2]string{"messageStop", `{"stopReason":"tool_use"}`})
		whole := `{"output":{"message":{"role":"assistant","content":[` + strings.Join(uses, ",") + `]}},"stopReason":"tool_use","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2}}`
		for _, stream := range []bool{false, true} {
			rep := ok(whole)
			if stream {
				rep = events(t, evs...)
			}
			f := newFake(t, rep)
			m, attempts := replyModel(t, f)
			r := req(0)
			if stream {
				r.Stream = func(agentrt.Delta) {}
			}
			_, err := m.Complete(t.Context(), r)
			refused(t, err, *attempts, 4096, stream)
		}
	})
	t.Run("the default reported", func(t *testing.T) {
		// The runtime holds the turn's usage to the maxTokens sent.
		for _, tc := range []struct{ max, want int }{{0, 4096}, {16, 0}} {
			f := newFake(t, ok(textReply("ok", "end_turn")))
			m, _ := replyModel(t, f)
			resp, err := m.Complete(t.Context(), req(tc.max))
			if err != nil {
				t.Fatal(err)
			}
			if resp.MaxOutputTokens != tc.want {
				t.Errorf("max %d: MaxOutputTokens %d, want %d", tc.max, resp.MaxOutputTokens, tc.want)
			}
		}
	})
	t.Run("far past: cut as read", func(t *testing.T) {
		// Past replylimit.BodyBound, the response is cut before it is decoded.
		f := newFake(t, ok(textReply(strings.Repeat("x", 4<<20), "end_turn")))
		m, attempts := replyModel(t, f)
		_, err := m.Complete(t.Context(), req(16))
		if err == nil || !strings.HasPrefix(err.Error(), "bedrock: the response's body passed ") || !strings.Contains(err.Error(), "16 output tokens (the request's limit)") || !strings.Contains(err.Error(), "the response was cut") {
			t.Fatalf("err = %v, want the response cut as read", err)
		}
		for _, a := range *attempts {
			t.Errorf("an attempt was made again after: %v", a)
		}
	})
	t.Run("at the bound", func(t *testing.T) {
		f := newFake(t, ok(textReply(strings.Repeat("x", bound16), "end_turn")))
		m, _ := replyModel(t, f)
		resp, err := m.Complete(t.Context(), req(16))
		if err != nil || len(resp.Message.Content) != bound16 {
			t.Fatalf("a reply at the bound: %v", err)
		}
	})
}
