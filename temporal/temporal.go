// Package temporal runs plans on Temporal, a durable workflow engine: a
// run is a workflow, and each model call and tool call an activity, so a
// run outlives the worker that started it and runs spread over many
// machines.
//
// The run loop is the runtime's own. The workflow gives it the workflow's
// clock and an effector (runtime.Effector) that schedules an activity for
// each effect, with the effect's journal key as the activity's ID; the
// activity makes the call with runtime.Perform on whichever worker takes
// it. The workflow's history therefore holds every effect in the form a
// journal records it, and Export turns it into a journal that replays
// offline like a local run's.
package temporal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/journal"
)

// Names on the Temporal side: a worker registers them, a client starts
// them.
const (
	// Workflow is the workflow type of a run.
	Workflow = "agentc.run"
	// ModelActivity makes one model call, ToolActivity one tool call: an
	// activity's type says which kind of effect it makes, so that a
	// history and the SDK's metrics tell them apart.
	ModelActivity = "agentc.model"
	ToolActivity  = "agentc.tool"
	// EffectActivity made either kind of call in the runs a worker
	// started before activity types said the kind: workers still serve
	// it, and the runs started then still schedule it.
	EffectActivity = "agentc.effect"
	// ServersActivity starts a plan's mcp servers on a worker and
	// returns the tools they offer, which the workflow shows the model.
	ServersActivity = "agentc.servers"
	// DefaultTaskQueue is the task queue workers poll and runs are
	// submitted to unless told otherwise.
	DefaultTaskQueue = "agentc"
	// DefaultNamespace is Temporal's default namespace.
	DefaultNamespace = "default"
)

// Error types of the failures a workflow ends with, which are not
// retried: a plan a worker cannot run or refuses, an input the agent
// refuses.
const (
	ErrPlan  = "agentc.plan"
	ErrInput = "agentc.input"
	// ErrRefused is a plan the worker does not run: not one its operator
	// allowed, or one whose tools ask for the worker's keys; a run that
	// asks for bounds that are not bounds, or for a provider in place of
	// its plan's models (RunInput); or a call an activity does not make:
	// one of a workflow that is not agentc's run started on the
	// activity's own task queue.
	ErrRefused = "agentc.refused"
)

// A run that ends without succeeding (FailureType) ends its workflow as
// failed, with an ApplicationError whose type is one of these, whose
// message says why, and whose details are the run's report: Temporal's
// UI and ExecutionStatus='Failed' find it, and the client still gets the
// whole report (Wait). A run's workflow is never retried: it has no
// retry policy, and the error is non-retryable.
const (
	// FailBound is the prefix of the type of a run that a bound ended
	// (a budget, the deadline, its rounds): "agentc.bound.deadline",
	// "agentc.bound.tool_budget", "agentc.bound.token_budget" (even when
	// an answer arrived), "agentc.bound.rounds", "agentc.bound.answer_turns".
	FailBound = "agentc.bound."
	// FailUnapproved is a run that ended on a call no one could approve.
	FailUnapproved = "agentc.unapproved"
	// FailOutcome is the prefix of the type of a run that ended without
	// an answer, no bound tripped: "agentc.outcome.error" (the answer
	// broke its contract past its retries, a provider or tool failed it).
	FailOutcome = "agentc.outcome."
)

// FailureType returns the type of the ApplicationError a run's workflow
// fails with, given the run's report; "" for a run that succeeded, which
// is one whose exit code, run here, would be 0: an answer, no bound
// tripped. An interrupted run is neither: its workflow was cancelled, and
// ends as cancelled with the report as the cancellation's details.
func FailureType(rep *agentrt.Report) string {
	switch {
	case rep.Unapproved:
		return FailUnapproved
	case rep.Bound != "" && rep.Bound != agentrt.BoundNone:
		return FailBound + rep.Bound
	case rep.Outcome != agentrt.OutcomeOK:
		return FailOutcome + rep.Outcome
	}
	return ""
}

// Search attributes a run's workflow sets, each a Keyword, when the
// worker found them registered on its namespace
// (Worker.CheckSearchAttributes): the agent and digests when the run
// starts, its outcome and bound when it ends.
const (
	SearchAgent    = "AgentcAgent"
	SearchPlan     = "AgentcPlan"
	SearchContract = "AgentcContract"
	SearchOutcome  = "AgentcOutcome"
	SearchBound    = "AgentcBound"
)

// SearchAttributes are the names of the search attributes a run sets, in
// the order an operator registers them.
func SearchAttributes() []string {
	return []string{SearchAgent, SearchPlan, SearchContract, SearchOutcome, SearchBound}
}

// RunInput is a run workflow's input: the plan as compiled, and what a
// local run takes on its command line.
type RunInput struct {
	// Plan is the plan file, a JSON object, as it reads in the history;
	// it holds the plans of the agents it calls. A batch's run has none:
	// its plan is its batch's. (Runs started before the plan was an
	// object hold it as a base64 string, which planJSON reads too.)
	Plan json.RawMessage `json:"plan,omitempty"`
	// Batch, when set, is the batch the run is an item of: the plan is in
	// its input, and it is told when the run ends.
	Batch *BatchRef `json:"batch,omitempty"`
	// Digest is the plan digest the run was submitted for: a worker runs
	// the plan only if it is this one.
	Digest string `json:"digest"`
	// Input is the run's input (JSON); empty for none.
	Input json.RawMessage `json:"input,omitempty"`
	// Budgets narrow the plan's where set, never lift them: a bound
	// looser than the plan's leaves the plan's, and one that is not a
	// bound (a deadline or token budget not above zero, a negative tool
	// budget, rounds not above zero) fails the run, never retried, with
	// ErrRefused. (Runs started before they did took them in place of the
	// plan's, and replay so.)
	Budgets Budgets `json:"budgets,omitzero"`
	// Provider, when set, is "test": the offline test model answers in
	// place of the plan's models. A worker refuses a run that names any
	// other (ErrRefused): its calls go to the models its plan names, with
	// the keys of their providers. (Runs started before this was so may
	// name another, and replay so; their calls are refused.)
	Provider string `json:"provider,omitempty"`
	// Seed varies the test model's values.
	Seed int64 `json:"seed,omitempty"`
	// Pool, when set, is the workflow ID of the token pool (PoolWorkflow)
	// the run's model calls reserve in: its batch's.
	Pool string `json:"pool,omitempty"`
	// TraceParent, when set, is the W3C traceparent of the span the run
	// was submitted under (Start takes it from its context): the run's
	// spans, recorded by the workers, go under it.
	TraceParent string `json:"traceparent,omitempty"`
}

// planJSON returns the plan a workflow's input holds: the object itself,
// or the bytes of the base64 string an older input holds.
func planJSON(raw json.RawMessage) ([]byte, error) {
	t := bytes.TrimLeft(raw, " \t\r\n")
	if len(t) == 0 || t[0] != '"' {
		return raw, nil
	}
	var b []byte
	if err := json.Unmarshal(t, &b); err != nil {
		return nil, fmt.Errorf("the plan is a string, but not one in base64: %v", err)
	}
	return b, nil
}

// Budgets are the bounds a client asks of a run, as a workflow's input
// carries them: they narrow the plan's (RunInput.Budgets).
type Budgets struct {
	Deadline string `json:"deadline,omitempty"` // a Go duration
	Tools    *int   `json:"tools,omitempty"`
	Tokens   *int   `json:"tokens,omitempty"`
	Rounds   *int   `json:"rounds,omitempty"`
}

// overrides returns the budgets as the runtime takes them
// (Runner.WithBudgets narrows a run to them).
func (b Budgets) overrides() (agentrt.Overrides, error) {
	o := agentrt.Overrides{Tools: b.Tools, Tokens: b.Tokens, Rounds: b.Rounds}
	if b.Deadline != "" {
		d, err := time.ParseDuration(b.Deadline)
		if err != nil {
			return o, err
		}
		o.Deadline = &d
	}
	return o, nil
}

// EffectInput is an effect activity's input.
type EffectInput struct {
	Effect agentrt.Effect `json:"effect"`
}

// EffectResult is what an effect activity returns: the effect's result
// as a journal records it, or its failure. A failure of the call itself
// (a provider's error after agentc's own retries, a tool's deadline) is
// a result, not an activity failure: Temporal retries only what failed
// around the call (a worker lost, a heartbeat missed).
type EffectResult struct {
	Response json.RawMessage `json:"response,omitempty"`
	Error    string          `json:"error,omitempty"`
	// Deadline says the call failed because the run's deadline passed;
	// Pool, that it was not made because the token pool could never hold
	// it.
	Deadline bool `json:"deadline,omitempty"`
	Pool     bool `json:"pool,omitempty"`
	// Class is a failed model call's class (agentrt.FailureClassOf),
	// which decides whether the run's next model serves it.
	Class string `json:"class,omitempty"`
	// Spent is what a failed model call spent, as its provider reported
	// it (agentrt.SpentOf), which the run is charged; nil for none.
	Spent *agentrt.Usage `json:"spent,omitempty"`
	// Retried is a failed model call's attempts that the provider
	// answered (agentrt.RetriedOf), which the run is charged; nil for
	// none. A call that succeeded carries them in its response.
	Retried    *agentrt.Retried `json:"retried,omitempty"`
	Started    time.Time        `json:"started"`
	DurationMS int64            `json:"duration_ms"`
	// Lost are the attempts at the call before this one that did not
	// complete (their workers lost), as the journal records them.
	Lost []journal.Attempt `json:"lost,omitempty"`
}
