package runtime

import (
	"context"
	"fmt"

	"agentc.dev/agentc/plan"
)

// Boundary is a point of a run where the strategy is consulted.
type Boundary int

// The boundaries of a round: where it ends, unless an answer ended the run.
const (
	// AfterToolResults follows the commit of a turn's tool results
	// (including the runtime's reply to an invalid call of the output
	// tool).
	AfterToolResults Boundary = iota + 1
	// AfterProse follows the commit of an assistant message that called
	// no tool and gave no answer.
	AfterProse
	// AfterTextAnswer follows an answer given in the text of an assistant
	// message (native or prompted mode) that failed validation, and the
	// commit of the runtime's reply with the errors.
	AfterTextAnswer
)

func (b Boundary) String() string {
	switch b {
	case AfterToolResults:
		return "after_tool_results"
	case AfterProse:
		return "after_prose"
	case AfterTextAnswer:
		return "after_text_answer"
	}
	return fmt.Sprintf("boundary(%d)", int(b))
}

// State is what a strategy sees at a boundary. It must not be modified.
type State struct {
	Boundary Boundary
	Round    int
	// Messages is the conversation so far; the last one is the message
	// that led to this boundary.
	Messages []Message
	// HasOutput says whether the agent has an output contract, and
	// KeepsTools whether answering turns keep the tools.
	HasOutput, KeepsTools bool
	// OutputTool is the output tool's name; empty when none is offered
	// (native and prompted modes, or no output contract).
	OutputTool string
	// AnswerMode is how the answer travels: plan.ModeTool (through
	// OutputTool), plan.ModeNative or plan.ModePrompted (as JSON text).
	AnswerMode string
	// InvalidAnswers counts answers that failed local validation so far;
	// Reminders counts the reminders injected so far.
	InvalidAnswers, Reminders int
	// Model is the model the last turn used.
	Model string
}

// Action is what a strategy decides.
type Action int

// The actions of a Decision.
const (
	// Continue goes on with another round.
	Continue Action = iota
	// Inject adds a user message, then goes on.
	Inject
	// Stop ends the run gracefully.
	Stop
)

func (a Action) String() string {
	switch a {
	case Continue:
		return "continue"
	case Inject:
		return "inject"
	case Stop:
		return "stop"
	}
	return fmt.Sprintf("action(%d)", int(a))
}

// Decision is a strategy's answer at a boundary. Whatever it says, the
// next round still passes the cancellation, deadline, budget and pool
// checks.
type Decision struct {
	Action Action
	// Message is the user message Inject adds.
	Message string
	// Model and Reasoning, when set, switch the model or reasoning level
	// for the rest of the run.
	Model, Reasoning string
	// Shape makes the next turn a shaping turn: the output tool alone,
	// which the model must call.
	Shape bool
	// Accept, with Stop, takes the last assistant message as the answer;
	// it is validated like any other answer.
	Accept bool
}

// RoundStrategy decides how a run goes on at its boundaries. Hosts may
// pass their own; a manifest's strategy block compiles to Builtin.
type RoundStrategy interface {
	Decide(ctx context.Context, s *State) Decision
}

// StrategyFunc is a RoundStrategy written as a function, such as a host's
// that watches or overrides Builtin.
type StrategyFunc func(ctx context.Context, s *State) Decision

// Decide calls f.
func (f StrategyFunc) Decide(ctx context.Context, s *State) Decision { return f(ctx, s) }

// Builtin returns the strategy a manifest declares:
//   - after tool results and after an invalid text answer: continue,
//     switching to the escalation model once the answers that failed
//     validation reach escalate.after_invalid, unless a fallback of
//     another provider serves the run;
//   - after prose, for an agent without an output contract: stop and
//     accept the prose as the result;
//   - after prose, without keeps_tools: shape (gathering is over);
//   - after prose, with keeps_tools: on_prose "accept" accepts the prose
//     as the answer; "force" shapes; "remind" injects a reminder up to
//     `reminders` times, then shapes.
func Builtin(a *plan.Agent) RoundStrategy { return builtin{agent: a} }

type builtin struct {
	agent *plan.Agent
	// foreign says the agent is a fallback of another provider than the
	// plan's: escalate names a model of the plan's provider, which this
	// one does not serve, and does not apply.
	foreign bool
}

type escalateAnyKey struct{}

// WithEscalationAfterFallback returns a context in which the built-in
// strategy escalates to strategy.escalate's model on a fallback of
// another provider too, as runs did before it kept to the plan's
// provider: for a Temporal run started before, whose history must replay
// as it was made.
func WithEscalationAfterFallback(ctx context.Context) context.Context {
	return context.WithValue(ctx, escalateAnyKey{}, true)
}

func (b builtin) Decide(ctx context.Context, s *State) Decision {
	st := b.agent.Strategy
	switch s.Boundary {
	case AfterToolResults, AfterTextAnswer:
		escalates := !b.foreign || ctx.Value(escalateAnyKey{}) != nil
		if e := st.Escalate; e != nil && escalates && s.InvalidAnswers >= e.AfterInvalid && s.Model != e.Model {
			return Decision{Action: Continue, Model: e.Model}
		}
		return Decision{Action: Continue}
	case AfterProse:
		switch {
		case !s.HasOutput:
			return Decision{Action: Stop, Accept: true}
		case !s.KeepsTools:
			return Decision{Action: Continue, Shape: true}
		}
		switch st.OnProse {
		case "accept":
			return Decision{Action: Stop, Accept: true}
		case "force":
			return Decision{Action: Continue, Shape: true}
		}
		if s.Reminders < st.Reminders {
			msg := fmt.Sprintf("You answered in prose. Give your answer by calling the tool %q with arguments that match its schema; do not answer in prose.", s.OutputTool)
			if s.AnswerMode == plan.ModePrompted || s.AnswerMode == plan.ModeNative {
				msg = "You answered in prose. Give your final answer as only a JSON value that satisfies the schema in your instructions."
			}
			return Decision{Action: Inject, Message: msg}
		}
		return Decision{Action: Continue, Shape: true}
	}
	return Decision{Action: Continue}
}
