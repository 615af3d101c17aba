package runtime

import (
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
		{"at the bound", Usage{Input: maxPlausible, Output: 60}, Usage{Input: maxPlausible, Output: 60}, ""},
		{"under-reported input", Usage{Input: est.Input/plausibleShare - 1, Output: 60}, Usage{Input: est.Input, Output: 60}, "input"},
		{"output missing", Usage{Input: 350}, Usage{Input: 350, Output: est.Output}, "output 0"},
		{"cached above input", Usage{Input: 350, Output: 60, Cached: 400}, Usage{Input: 350, Output: 60}, ""},
		{"cached negative", Usage{Input: 350, Output: 60, Cached: -1}, Usage{Input: 350, Output: 60}, ""},
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

func TestBounded(t *testing.T) {
	if got := bounded("short", 10); got != "short" {
		t.Errorf("a short result changed: %q", got)
	}
	if got := bounded("0123456789", 10); got != "0123456789" {
		t.Errorf("a result of exactly the bound changed: %q", got)
	}
	// "é" is two bytes: a cut inside it moves back to the rune's start.
	got := bounded("aaaé-tail", 4)
	if got != "aaa… (10 bytes in all)" {
		t.Errorf("bounded = %q", got)
	}
}
