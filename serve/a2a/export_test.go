package a2a

import (
	"encoding/json"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/serve"
)

// MaxValues and MaxDepth are the bounds on a request's JSON values.
const (
	MaxValues = maxValues
	MaxDepth  = maxDepth
)

// OnReached sets what hears each request that reaches the SDK, for the
// test t.
func OnReached(t testing.TB, f func()) {
	reached = f
	t.Cleanup(func() { reached = nil })
}

// OnHoldWait sets what hears each request that waits for n bytes of the
// bound on reading, for the test t.
func OnHoldWait(t testing.TB, f func(n int64)) {
	holdWaits = f
	t.Cleanup(func() { holdWaits = nil })
}

// AnswerParts are the parts of the artifact of a run that answered answer.
func AnswerParts(answer json.RawMessage) []a2a.Part {
	return outcome("r", &serve.RunResult{Outcome: agentrt.OutcomeOK, Bound: agentrt.BoundNone, Answer: answer}).answer
}
