package runcmd

import (
	"testing"

	agentrt "agentc.dev/agentc/runtime"
)

func TestRunExit(t *testing.T) {
	tests := []struct {
		rep  agentrt.Report
		want int
	}{
		{agentrt.Report{Outcome: "ok", Bound: "none"}, 0},
		{agentrt.Report{Outcome: "error", Bound: "none"}, 1},
		{agentrt.Report{Outcome: "error", Bound: "rounds"}, 7},
		{agentrt.Report{Outcome: "error", Bound: "answer_turns"}, 8},
		{agentrt.Report{Outcome: "error", Bound: "deadline"}, 3},
		{agentrt.Report{Outcome: "error", Bound: "tool_budget"}, 4},
		{agentrt.Report{Outcome: "error", Bound: "token_budget"}, 5},
		{agentrt.Report{Outcome: "ok", Bound: "token_budget"}, 5},
		{agentrt.Report{Outcome: "error", Bound: "none", Interrupted: true}, 130},
	}
	for _, tt := range tests {
		if got := runExit(&tt.rep); got != tt.want {
			t.Errorf("%s/%s interrupted=%v: exit %d, want %d", tt.rep.Outcome, tt.rep.Bound, tt.rep.Interrupted, got, tt.want)
		}
	}
}
