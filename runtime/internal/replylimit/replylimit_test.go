package replylimit

import "testing"

// TestReplyBound: 128 bytes a token and 64 KiB besides; no bound for a
// request that set no limit, and never past what a response may hold.
func TestReplyBound(t *testing.T) {
	for _, tc := range []struct{ tokens, want int64 }{
		{0, 0}, {-1, 0}, {1, 128 + 65536}, {256, 256*128 + 65536}, {16384, 16384*128 + 65536},
		{1 << 40, MaxResponse + 65536}, {1<<63 - 1, MaxResponse + 65536},
	} {
		if got := ReplyBound(tc.tokens); got != tc.want {
			t.Errorf("ReplyBound(%d) = %d, want %d", tc.tokens, got, tc.want)
		}
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
