package plan

import "encoding/json"

// Test is one of an agent's test cases (the manifest's tests), which
// agentc test runs: an input, and what the answer and the run must be.
// Cases are part of the plan digest, never of the contract digest: they
// say how an agent is checked, not what it promises.
type Test struct {
	Input json.RawMessage `json:"input"`
	// Expect is a CUE constraint the answer must unify with; nil for none.
	Expect *CUEConstraint `json:"expect,omitempty"`
	// Outcome and Bound, when set, are what the run's report must say.
	Outcome string `json:"outcome,omitempty"`
	Bound   string `json:"bound,omitempty"`
	// MaxToolCalls bounds the calls of the agent's tools; nil for none.
	MaxToolCalls *int `json:"max_tool_calls,omitempty"`
	// ToolCalls are calls the run must make.
	ToolCalls []ToolCallExpect `json:"tool_calls,omitempty"`
	// MinPass is the share of samples that must pass, in (0, 1].
	MinPass float64 `json:"min_pass"`
	// Faults are how the run must end under agentc test --faults' faults,
	// by fault name: "recovered", "error" or a bound's name. A fault left
	// out has its default.
	Faults map[string]string `json:"faults,omitempty"`
}

// ToolCallExpect is a call a test's run must make: of the tool Name, with
// arguments that unify with Arguments (any, when nil).
type ToolCallExpect struct {
	Name      string         `json:"name"`
	Arguments *CUEConstraint `json:"arguments,omitempty"`
}

// CUEConstraint is a CUE expression kept as written in the manifest, which
// agentc test compiles (the runtime never reads CUE). Where it was
// written is in the plan's Sources, outside the digest, under its
// manifest path (e.g. "tests.high.expect").
type CUEConstraint struct {
	CUE string `json:"cue"`
	// Imports are the standard library packages it uses, by the name it
	// uses them by (e.g. "list": "list").
	Imports map[string]string `json:"imports,omitempty"`
}
