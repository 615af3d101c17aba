package runtime

import (
	"encoding/json"
	"math"
	"slices"
	"time"

	"agentc.dev/agentc/cost"
	"agentc.dev/agentc/plan"
)

// Outcomes of a run: whether an answer arrived.
const (
	OutcomeOK    = "ok"
	OutcomeError = "error"
)

// Bounds: which allowance, if any, ended a run. Outcome and bound are
// independent: a run may answer and still have spent its token budget.
const (
	BoundNone        = "none"
	BoundDeadline    = "deadline"
	BoundToolBudget  = "tool_budget"
	BoundTokenBudget = "token_budget"
	BoundRounds      = "rounds"
	BoundAnswerTurns = "answer_turns"
)

// Report is the account of a run.
type Report struct {
	Agent string `json:"agent"`
	// Provider is the provider that answered: the plan's, or "test" when
	// the test model ran in its place.
	Provider string `json:"provider"`
	// StandsInFor is, when the test model answered in place of the
	// provider the plan names (--model test), that provider and model.
	StandsInFor *ModelRef    `json:"stands_in_for,omitempty"`
	Digests     plan.Digests `json:"digests"`
	OutputTool  string       `json:"output_tool,omitempty"`
	Outcome     string       `json:"outcome"`
	Bound       string       `json:"bound"`
	// Interrupted says the run was cancelled from outside (an interrupt),
	// not by one of its own bounds.
	Interrupted bool   `json:"interrupted,omitempty"`
	Error       string `json:"error,omitempty"`
	// Answer is the validated answer: JSON. For an agent without an output
	// contract it is the final assistant text, as a JSON string.
	Answer json.RawMessage `json:"answer,omitempty"`
	// Usage is every token the run counts against its budgets;
	// UsagePaid the part sent to a provider by this run, UsageReplayed
	// the part served from a journal (paid for when it was recorded).
	// Tokens a called agent spent count as paid.
	Usage         Usage `json:"usage"`
	UsagePaid     Usage `json:"usage_paid"`
	UsageReplayed Usage `json:"usage_replayed"`
	// UsageEstimated says some round's usage is not what the provider
	// reported: it was missing or implausible (counted from a local
	// estimate), or more than the call could have used (cut to the call's
	// bound); the round's UsageNote says which.
	UsageEstimated bool `json:"usage_estimated,omitempty"`
	Cost           Cost `json:"cost"` // what Usage costs by the price table: the rounds' costs summed
	// Prices says which price table priced Cost, and its date (see
	// cost.Table.Describe); empty when the run cost nothing.
	Prices         string        `json:"prices,omitempty"`
	ToolCalls      int           `json:"tool_calls"`
	InvalidAnswers int           `json:"invalid_answers"`
	Rounds         []RoundReport `json:"rounds"`
	// Divergence, set with outcome "error", says how the run departed
	// from the journal it replayed.
	Divergence *Divergence `json:"divergence,omitempty"`
	// Replayed counts the effects served from a journal.
	Replayed int `json:"replayed,omitempty"`
	// Approvals are the decisions about calls that needed approval, in
	// the order they were made.
	Approvals []ApprovalReport `json:"approvals,omitempty"`
	// Fallbacks are the model calls that failed and went to the next
	// model of the chain (model.fallback), in order: from the last one
	// on, the run's calls went to its To.
	Fallbacks []FallbackReport `json:"fallbacks,omitempty"`
	// Unapproved says the run ended on a call no one could approve (see
	// ApprovalRefused).
	Unapproved bool      `json:"unapproved,omitempty"`
	Started    time.Time `json:"started"`
	DurationMS float64   `json:"duration_ms"`
}

// ModelRef names a model: its provider and its name.
type ModelRef struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

// RoundReport is the account of one round.
type RoundReport struct {
	Round   int    `json:"round"`
	Model   string `json:"model"`
	Shaping bool   `json:"shaping,omitempty"`
	Usage   Usage  `json:"usage"`
	// Replayed says the model's reply was served from the journal.
	Replayed bool `json:"replayed,omitempty"`
	// UsageEstimated says Usage is not the provider's report: a local
	// estimate (see EstimateUsage), or cut to what the call could use.
	UsageEstimated bool `json:"usage_estimated,omitempty"`
	// UsageNote says what the provider reported and why it was not
	// counted as it was.
	UsageNote string `json:"usage_note,omitempty"`
	// Provider is the provider that answered the round when a fallback
	// did (Fallbacks says which calls failed before it); empty otherwise.
	Provider   string           `json:"provider,omitempty"`
	Fallbacks  []FallbackReport `json:"fallbacks,omitempty"`
	Cost       Cost             `json:"cost"` // of the round's model call and of the agents its tools called
	ToolCalls  []CallReport     `json:"tool_calls,omitempty"`
	Decision   string           `json:"decision,omitempty"`
	DurationMS float64          `json:"duration_ms"`
}

// CallReport is one tool call of a round, the output tool's included.
type CallReport struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments are the call's arguments, in canonical JSON; or, when the
	// model wrote arguments that are not JSON, nil, and ArgumentsText is
	// the text it wrote.
	Arguments     json.RawMessage `json:"arguments,omitempty"`
	ArgumentsText *string         `json:"arguments_text,omitempty"`
	IsError       bool            `json:"is_error,omitempty"`
	Error         string          `json:"error,omitempty"`
	// Refused says the call was not made: the runtime refused it (no
	// such tool, arguments its schema rejects, a shaping turn, a bound)
	// or its approval was denied; Error says why.
	Refused bool `json:"refused,omitempty"`
	// Result is what the tool returned, when it did not fail: its first
	// MaxReportedResult bytes, secrets redacted.
	Result     string  `json:"result,omitempty"`
	DurationMS float64 `json:"duration_ms"`
}

// Event is one thing that happened in a run, for progress output and
// --events files. Fields that do not apply are empty.
type Event struct {
	Time time.Time `json:"time"`
	Type string    `json:"type"`
	// Agent is the path of a nested run: the agent tools that led to it.
	Agent   string `json:"agent,omitempty"`
	Round   int    `json:"round,omitempty"`
	Model   string `json:"model,omitempty"`
	Tool    string `json:"tool,omitempty"`
	CallID  string `json:"call_id,omitempty"`
	Usage   *Usage `json:"usage,omitempty"`
	Cost    *Cost  `json:"cost,omitempty"` // with Usage: a model call's, or the run's at run_end
	Outcome string `json:"outcome,omitempty"`
	Bound   string `json:"bound,omitempty"`
	Message string `json:"message,omitempty"`
	// Approval is the decision of an approval event.
	Approval *ApprovalReport `json:"approval,omitempty"`
	// Name and Provider, on run_start, are the agent's name and the
	// provider that answers it.
	Name     string `json:"name,omitempty"`
	Provider string `json:"provider,omitempty"`
	// ResponseModel, on model_response, is the model that answered, as
	// the provider names it (a dated snapshot, say); empty when it does
	// not say, and for a response served from a journal.
	ResponseModel string `json:"response_model,omitempty"`
	// IsError, on tool_result, says the call failed; Message holds the
	// error.
	IsError bool `json:"is_error,omitempty"`
	// Undeclared, on tool_call and tool_result, says Tool is a name the
	// model made up: no tool of the agent's, nor its output tool.
	Undeclared bool `json:"-"`
	// Messages and Arguments are the conversation, set only when
	// Options.Content asks for it (telemetry that records content):
	// on model_call the messages sent, on model_response the reply, and
	// on tool_call the call's arguments; secrets redacted. Events files
	// never hold them.
	Messages  []Message       `json:"-"`
	Arguments json.RawMessage `json:"-"`
	// Delta and Part are a model_delta's.
	Delta string `json:"delta,omitempty"`
	Part  string `json:"part,omitempty"`
}

// The parts of a reply a model_delta event carries (Event.Part).
const (
	PartText    = "text"
	PartAnswer  = "answer"
	PartRestart = "restart"
)

// Event types.
const (
	EventRunStart       = "run_start"
	EventModelCall      = "model_call"
	EventModelResponse  = "model_response"
	EventModelRetry     = "model_retry"     // a failed attempt of a provider call, retried
	EventModelError     = "model_error"     // a failed attempt that ends the call
	EventModelCancelled = "model_cancelled" // a call cut off by an interrupt or a deadline
	EventModelPaced     = "model_paced"     // a call waits for its model's rate limit, or a 429 held every call to it
	EventToolCall       = "tool_call"
	EventToolResult     = "tool_result"
	EventAnswerInvalid  = "answer_invalid"
	EventDecision       = "decision"
	EventReserve        = "answer_reserve"
	EventRunEnd         = "run_end"
	EventToolServer     = "tool_server"    // a tool server connected, with its fingerprint
	EventKeyWithheld    = "key_withheld"   // a provider key was not sent to the server a manifest named
	EventApprovalAsked  = "approval_asked" // a call waits for approval (Message: why)
	EventApproval       = "approval"       // a call was approved or denied, and by whom
	// EventModelFallback is a call that failed and goes to the next model
	// of the chain: Model is the one that failed, Provider and Name the
	// fallback, Message why.
	EventModelFallback = "model_fallback"
	// EventModelDelta is a piece of a model's reply as it streams in
	// (Options.Stream): Delta holds it, Part says what it is: text, the
	// answer as it forms (not yet validated), or restart (the attempt
	// failed, and what came of it is void).
	EventModelDelta = "model_delta"
)

// Cost is what tokens cost, in US dollars, by a price table.
type Cost struct {
	USD float64 `json:"usd"`
	// Estimated says USD is not exact: a model has no price in the table
	// (its tokens are counted at nothing; Unpriced names it), or usage
	// was counted from a local estimate.
	Estimated bool     `json:"estimated,omitempty"`
	Unpriced  []string `json:"unpriced,omitempty"`
}

// Add returns the sum of two costs, rounded to a billionth of a dollar
// so that sums print as they would on paper.
func (c Cost) Add(d Cost) Cost {
	s := Cost{USD: math.Round((c.USD+d.USD)*1e9) / 1e9, Estimated: c.Estimated || d.Estimated, Unpriced: c.Unpriced}
	for _, m := range d.Unpriced {
		if !slices.Contains(s.Unpriced, m) {
			s.Unpriced = append(slices.Clip(s.Unpriced), m)
		}
	}
	return s
}

// priceCalls is what the usage of a model call and its attempts the
// provider answered and lost costs by a table, none with more than
// largest tokens of input: at the tier one call's input reaches
// (cost.Price.USDCalls). estimated says the usage was a local estimate.
func priceCalls(t *cost.Table, provider, model string, u Usage, largest int, estimated bool) Cost {
	p, ok := t.Lookup(provider, model)
	if !ok {
		return Cost{Estimated: true, Unpriced: []string{provider + "/" + model}}
	}
	c := Cost{}.Add(Cost{USD: p.USDCalls(min(largest, u.Input), u.Input, u.Cached, u.CacheWrite, u.Output)})
	c.Estimated = c.Estimated || estimated
	return c
}

// PriceUsage is what usage of a model costs by the price table t, as a
// run prices its model calls: a model t has no price for is counted at
// nothing, Estimated and named in Unpriced.
func PriceUsage(t *cost.Table, provider, model string, u Usage) Cost {
	p, ok := t.Lookup(provider, model)
	if !ok {
		return Cost{Estimated: true, Unpriced: []string{provider + "/" + model}}
	}
	return Cost{}.Add(Cost{USD: p.USD(u.Input, u.Cached, u.CacheWrite, u.Output)})
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
