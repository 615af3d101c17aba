package runtime

import (
	"strconv"
	"strings"
	"testing"
)

func TestCountedUsage(t *testing.T) {
	req := &Request{Messages: []Message{{Role: System, Content: strings.Repeat("instructions ", 100)}, {Role: User, Content: "Begin."}}}
	msg := Message{Role: Assistant, Content: strings.Repeat("an answer ", 20)}
	est := EstimateUsage(req, msg)
	if est.Input < 300 || est.Output < 40 {
		t.Fatalf("estimate %+v: want about a quarter of the bytes", est)
	}
	tests := []struct {
		name      string
		reported  Usage
		want      Usage
		estimated string // a word of the reason, empty when the report stands
	}{
		{"plausible", Usage{Input: 350, Output: 60, Cached: 100}, Usage{Input: 350, Output: 60, Cached: 100}, ""},
		{"reasoning tokens far above the text", Usage{Input: 350, Output: 50000}, Usage{Input: 350, Output: 50000}, ""},
		{"at the lower bound", Usage{Input: est.Input / plausibleShare, Output: est.Output / plausibleShare}, Usage{Input: est.Input / plausibleShare, Output: est.Output / plausibleShare}, ""},
		{"none", Usage{}, est, "no usage"},
		{"negative", Usage{Input: -20, Output: -5}, est, "implausible"},
		{"overflowing", Usage{Input: 1 << 62, Output: 1 << 62}, est, "implausible"},
		{"just past the bound", Usage{Input: maxPlausible + 1, Output: 60}, Usage{Input: est.Input, Output: 60}, "input"},
		{"at the plausible bound, past the call's", Usage{Input: maxPlausible, Output: 60}, Usage{Input: InputBound(req), Output: 60}, "more than the call could use"},
		{"input past the call's bound", Usage{Input: InputBound(req) + 1, Output: 60}, Usage{Input: InputBound(req), Output: 60}, "input " + strconv.Itoa(InputBound(req)+1) + ", more than the call could use"},
		{"input at the call's bound", Usage{Input: InputBound(req), Output: 60}, Usage{Input: InputBound(req), Output: 60}, ""},
		{"under-reported input", Usage{Input: est.Input/plausibleShare - 1, Output: 60}, Usage{Input: est.Input, Output: 60}, "input"},
		{"output missing", Usage{Input: 350}, Usage{Input: 350, Output: est.Output}, "output 0"},
		{"cached above input", Usage{Input: 350, Output: 60, Cached: 400}, Usage{Input: 350, Output: 60}, ""},
		{"cached negative", Usage{Input: 350, Output: 60, Cached: -1}, Usage{Input: 350, Output: 60}, ""},
		{"cache reads and writes", Usage{Input: 350, Output: 60, Cached: 100, CacheWrite: 250}, Usage{Input: 350, Output: 60, Cached: 100, CacheWrite: 250}, ""},
		{"cache writes past the uncached input", Usage{Input: 350, Output: 60, Cached: 100, CacheWrite: 251}, Usage{Input: 350, Output: 60, Cached: 100}, ""},
		{"cache writes negative", Usage{Input: 350, Output: 60, CacheWrite: -1}, Usage{Input: 350, Output: 60}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := counted(req, &Response{Message: msg, Usage: tt.reported})
			if got != tt.want {
				t.Errorf("counted %+v, want %+v", got, tt.want)
			}
			if tt.estimated == "" && why != "" || tt.estimated != "" && !strings.Contains(why, tt.estimated) {
				t.Errorf("reason %q, want one saying %q", why, tt.estimated)
			}
		})
	}
}

// TestCountedUsageOutputBound: output past max_output_tokens is cut to
// it, and said so; at it, it stands.
func TestCountedUsageOutputBound(t *testing.T) {
	req := &Request{Messages: []Message{{Role: User, Content: "Begin."}}, MaxOutputTokens: 100}
	msg := Message{Role: Assistant, Content: "an answer"}
	for _, tt := range []struct {
		out, want int
		why       string
	}{{100, 100, ""}, {101, 100, "output 101, more than the call could use (100)"}, {1 << 30, 100, "counted at the call's bound"}} {
		got, why := counted(req, &Response{Message: msg, Usage: Usage{Input: 20, Output: tt.out}})
		if got.Output != tt.want || tt.why == "" && why != "" || !strings.Contains(why, tt.why) {
			t.Errorf("output %d: counted %+v, %q; want %d, %q", tt.out, got, why, tt.want, tt.why)
		}
	}
}

// TestCountedUsageProviderDefault: a request that set no output limit is
// held to the one its provider sent (Bedrock's and Anthropic's default,
// Response.MaxOutputTokens), both where the provider's count stands and
// where the reply's size is counted instead (a reply of 600 KB reported
// as 1 token was counted as 150,000).
func TestCountedUsageProviderDefault(t *testing.T) {
	req := &Request{Messages: []Message{{Role: User, Content: "Begin."}}}
	big := Message{Role: Assistant, Content: strings.Repeat("x", 600<<10)}
	for _, tt := range []struct {
		name string
		msg  Message
		out  int
		want int
	}{
		{"reported past it", Message{Role: Assistant, Content: "an answer"}, 5000, 4096},
		{"counted past it", big, 1, 4096},
		{"within it", Message{Role: Assistant, Content: "an answer"}, 4000, 4000},
	} {
		got, why := counted(req, &Response{Message: tt.msg, Usage: Usage{Input: 20, Output: tt.out}, MaxOutputTokens: 4096})
		if got.Output != tt.want || (tt.want != tt.out) != (why != "") {
			t.Errorf("%s: counted %+v, %q; want output %d", tt.name, got, why, tt.want)
		}
	}
}

// TestCapped: usage past a pool reservation is cut to it, output first.
func TestCapped(t *testing.T) {
	for _, tt := range []struct {
		u    Usage
		n    int64
		want Usage
		cut  bool
	}{
		{Usage{Input: 10, Output: 20}, 30, Usage{Input: 10, Output: 20}, false},
		{Usage{Input: 10, Output: 20}, 25, Usage{Input: 10, Output: 15}, true},
		{Usage{Input: 40, Output: 20, Cached: 40}, 25, Usage{Input: 25, Output: 0, Cached: 25}, true},
		{Usage{Input: 40, Output: 20, Cached: 10, CacheWrite: 30}, 25, Usage{Input: 25, Output: 0, Cached: 10, CacheWrite: 15}, true},
	} {
		got, why := capped(tt.u, tt.n)
		if got != tt.want || (why != "") != tt.cut || got.Total() > int(tt.n) {
			t.Errorf("capped(%+v, %d) = %+v, %q; want %+v", tt.u, tt.n, got, why, tt.want)
		}
	}
}
