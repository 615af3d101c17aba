package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"agentc.dev/agentc/internal/leaf/textcut"
	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/runtime/journal"
)

// Approver decides the calls that need a person's approval: those of tools
// whose approve is "ask" or "always" (plan.Agent.ApprovalOf). It is called
// from the run's goroutine, one call at a time per run, and may wait for a
// person as long as ctx allows. An error other than ctx's ends the run
// (outcome error): an *ApprovalRefused says no one could decide.
//
// A run with no Approver asks nothing: every call runs, and no decision
// is journaled. agentc's run verb always passes one.
type Approver func(ctx context.Context, req *ApprovalRequest) (ApprovalDecision, error)

// ApprovalRequest is a call that needs approval.
type ApprovalRequest struct {
	// Key is the call's effect key ("2.1", or under the key of the call
	// that ran a nested run): what a person answers about elsewhere.
	Key string `json:"key"`
	// Agent is the path of a nested run, as in events; empty at the top.
	Agent string `json:"agent,omitempty"`
	Tool  string `json:"tool"`
	// Arguments are the call's arguments, secrets redacted: canonical
	// JSON, or, when the model wrote no JSON, nil and ArgumentsText.
	Arguments     json.RawMessage `json:"arguments,omitempty"`
	ArgumentsText *string         `json:"arguments_text,omitempty"`
	// Why says why the call needs approval: the tool's approve, declared
	// or its kind's default.
	Why string `json:"why"`
	// Mode is the tool's approve: plan.ApproveAsk or plan.ApproveAlways,
	// where an answer for the run does not carry to the next call.
	Mode string `json:"mode"`
	// If is the tool's approve_if, a CUE constraint a host that links CUE
	// unifies with the arguments (package approval); nil for none. A host
	// that does not evaluate it asks. IfSource is its key in the plan's
	// Sources, for positions.
	If       *plan.CUEConstraint `json:"-"`
	IfSource string              `json:"-"`
	// Deadline is when the run must end, on its clock (see Clock); zero
	// for none. An approver that waits stops then, with an error that
	// wraps context.DeadlineExceeded: the run ends with its deadline.
	Deadline time.Time `json:"-"`
}

// Who decided a call.
const (
	ByRule   = "rule"   // the tool's approve_if accepted the arguments
	ByPolicy = "policy" // a standing answer (agentc run --approve yes|no)
	ByPerson = "person" // a person, asked
	ByHost   = "host"   // a Go host's own logic
	// ByRun: an earlier answer "always, for this run" of the same tool.
	ByRun = "run"
)

// ApprovalDecision is what an Approver decided about a call.
type ApprovalDecision struct {
	Approved bool `json:"approved"`
	// ForRun approves every later call of the tool in this run, except
	// those of a tool whose approve is "always".
	ForRun bool `json:"for_run,omitempty"`
	// By says who decided (By*).
	By string `json:"by"`
	// Reason is why, for a denial: the model reads it.
	Reason string `json:"reason,omitempty"`
}

// MaxApprovalReason bounds a denial's reason, in bytes: a longer one is
// cut, saying how long it was, as it enters the run.
const MaxApprovalReason = 4096

// ApprovalRefused is an Approver's error for a call no one could decide:
// no person to ask and no standing answer. The run ends on it.
type ApprovalRefused struct {
	Tool, Key string
	Msg       string
}

func (e *ApprovalRefused) Error() string {
	return fmt.Sprintf("the call %s of tool %s needs approval: %s", e.Key, e.Tool, e.Msg)
}

// ApprovalReport is one decision about a call, in the report and events.
type ApprovalReport struct {
	Key    string `json:"key"`
	Tool   string `json:"tool"`
	CallID string `json:"call_id,omitempty"`
	Why    string `json:"why"`
	ApprovalDecision
	// WaitedMS is how long the decision took; 0 when it was served from
	// the journal.
	WaitedMS float64 `json:"waited_ms"`
	Replayed bool    `json:"replayed,omitempty"`
}

// approvalRequest is what identifies an approval in the journal: the call
// asked about and why.
type approvalRequest struct {
	Tool string `json:"tool"`
	Why  string `json:"why"`
	Mode string `json:"mode"`
	callArgs
}

// approve decides a call of a tool that needs approval. A journal is
// data on disk, not a person: a decision read back from it is never
// authority for a call that runs live. So a call the journal serves (its
// result recorded, or any call in a replay) is decided as recorded, or
// needs no decision when it was recorded by a run that asked nothing; a
// call that will run live (in a resume: never made, or made and failed
// where the recorded run ended, Journal.remakes) is asked of the Approver
// afresh, whatever the journal holds at its decision's key, and an answer "for the run" holds only for the live
// calls after it. ok says whether the call may run; res, when it may not,
// is what the model reads. stop ends the run.
func (x *run) approve(round, ordinal int, c ToolCall, ap plan.Approval) (res ToolResult, ok bool, stop error) {
	call := journal.Key{Path: x.jpath, Round: round, Ordinal: ordinal}
	key := journal.Key{Path: call.Child()}
	var recorded, fresh bool
	if j := x.journal; j != nil && j.Recorded != nil {
		_, recorded = j.Recorded.Lookup(key)
		e, made := j.Recorded.Lookup(call)
		served := made && !j.remakes(call, e)
		switch {
		case served && !recorded:
			return ToolResult{}, true, nil
		case !served && !j.Replay:
			fresh, recorded = recorded, false
			if made {
				j.reach(call, false) // to be made again, once decided
			}
		}
	}
	if !recorded && x.approver == nil {
		return ToolResult{}, true, nil
	}
	args := argsOf(x.opts.Secrets.JSON(c.Arguments))
	req := &ApprovalRequest{Key: call.String(), Agent: x.opts.Agent, Tool: c.Name, Arguments: args.JSON, ArgumentsText: args.Text,
		Why: ap.Why, Mode: ap.Mode, If: ap.If, IfSource: ap.Source, Deadline: x.effectDeadline()}
	id := approvalRequest{Tool: c.Name, Why: ap.Why, Mode: ap.Mode, callArgs: argsOf(c.Arguments)}
	started := x.now()
	var d ApprovalDecision
	raw, replayed, err := x.effect(key, journal.KindApproval, ident{full: id, what: "approval of call " + call.String() + " of tool " + c.Name, fresh: fresh}, func() (json.RawMessage, error) {
		if ap.Mode != plan.ApproveAlways && x.forRun[c.Name] {
			d = ApprovalDecision{Approved: true, By: ByRun}
		} else {
			x.emit(Event{Type: EventApprovalAsked, Round: round, Tool: c.Name, CallID: c.ID, Message: ap.Why,
				Approval: &ApprovalReport{Key: call.String(), Tool: c.Name, CallID: c.ID, Why: ap.Why}})
			var err error
			if d, err = x.approver(x.runCtx, req); err != nil {
				return nil, err
			}
			// A reason is whoever decided's text, of any length (a
			// client's form, a token holder's request): the model reads
			// it, and the journal, the report and the events keep it. Cut
			// after redaction, so no part of a secret is left uncovered.
			d.Reason = textcut.Marked(x.opts.Secrets.String(d.Reason), MaxApprovalReason)
		}
		return json.Marshal(d)
	})
	if err != nil {
		var refused *ApprovalRefused
		var f *FailedEffect
		if errors.As(err, &refused) || errors.As(err, &f) && f.Unapproved {
			x.rep.Unapproved = true
		}
		return ToolResult{Content: "the call was not made: " + err.Error(), IsError: true}, false, err
	}
	if replayed {
		if err := json.Unmarshal(raw, &d); err != nil {
			return ToolResult{}, false, fmt.Errorf("journal: the recorded decision of effect %s is not an approval: %w", key, err)
		}
	}
	if d.Approved && d.ForRun && !replayed {
		if x.forRun == nil {
			x.forRun = map[string]bool{}
		}
		x.forRun[c.Name] = true
	}
	ar := ApprovalReport{Key: call.String(), Tool: c.Name, CallID: c.ID, Why: ap.Why, ApprovalDecision: d, Replayed: replayed}
	if !replayed {
		ar.WaitedMS = ms(x.now().Sub(started))
	}
	ar.Reason = x.opts.Secrets.String(ar.Reason)
	x.rep.Approvals = append(x.rep.Approvals, ar)
	verdict := "denied"
	if d.Approved {
		verdict = "approved"
	}
	msg := fmt.Sprintf("%s by %s", verdict, d.By)
	if ar.Reason != "" {
		msg += ": " + ar.Reason
	}
	x.emit(Event{Type: EventApproval, Round: round, Tool: c.Name, CallID: c.ID, Message: msg, Approval: &ar})
	if d.Approved {
		return ToolResult{}, true, nil
	}
	content := fmt.Sprintf("the call was not made: it was denied approval (by %s)", d.By)
	if ar.Reason != "" {
		content += ": " + ar.Reason
	}
	return ToolResult{Content: content, IsError: true}, false, nil
}
