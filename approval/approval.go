// Package approval decides tool calls by the constraints the manifest
// wrote for them: a tool's approve_if, a CUE constraint over a call's
// arguments, approves a call whose arguments are an instance of it. It
// links CUE, which the runtime does not: agentc's run verb puts it before
// whoever else decides (a person, a policy), and agentc-runtime, which
// has no CUE, asks them about such calls instead.
package approval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/token"
	cuejson "cuelang.org/go/encoding/json"

	"agentc.dev/agentc/constraint"
	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/internal/leaf/cueproc"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
)

// Rules returns, for the program prog (cueproc.Self for agentc), what
// wraps an Approver: the result approves, by rule, a call whose arguments
// its tool's approve_if accepts, and passes every other call to next, the
// constraint's verdict added to why it needs approval. A tool whose
// approve is "always" is always passed on. The constraint is evaluated in
// a child of prog, bounded (package cueproc): one that does not decide
// within its bounds, as a comprehension over a model's arguments may not,
// approves nothing, and the call is passed on, saying so.
func Rules(prog cueproc.Program) func(next agentrt.Approver) agentrt.Approver {
	return func(next agentrt.Approver) agentrt.Approver {
		return func(ctx context.Context, req *agentrt.ApprovalRequest) (agentrt.ApprovalDecision, error) {
			if req.If != nil && req.Mode != plan.ApproveAlways && req.Arguments != nil {
				ok, why, err := decide(ctx, prog, req.If, req.Arguments)
				if err != nil && ctx.Err() != nil {
					return agentrt.ApprovalDecision{}, err
				}
				if ok {
					return agentrt.ApprovalDecision{Approved: true, By: agentrt.ByRule}, nil
				}
				q := *req
				q.Why += "; " + why
				req = &q
			}
			return next(ctx, req)
		}
	}
}

// Job is the name of approve_if's evaluation in a child (cueproc.Serve).
const Job = "approve_if"

type job struct {
	If        *plan.CUEConstraint `json:"if"`
	Arguments json.RawMessage     `json:"arguments"`
}

type verdict struct {
	OK  bool   `json:"ok"`
	Why string `json:"why,omitempty"`
}

func decide(ctx context.Context, prog cueproc.Program, con *plan.CUEConstraint, args json.RawMessage) (bool, string, error) {
	if len(args) > cueproc.MaxInput {
		return false, fmt.Sprintf("approve_if was not evaluated: the arguments are larger than %d bytes", cueproc.MaxInput), nil
	}
	var v verdict
	if err := prog.Run(ctx, Job, job{If: con, Arguments: args}, &v); err != nil {
		return false, "approve_if did not decide: " + err.Error(), err
	}
	return v.OK, v.Why, nil
}

// Serve is approve_if's evaluation in the child: Accepts, over what
// Rules sent.
func Serve(in json.RawMessage) (any, error) {
	var j job
	if err := json.Unmarshal(in, &j); err != nil {
		return nil, err
	}
	if j.If == nil {
		return nil, errors.New("no approve_if to evaluate")
	}
	ok, why := Accepts(j.If, j.Arguments)
	return verdict{OK: ok, Why: why}, nil
}

// Accepts reports whether args (JSON) are an instance of the constraint:
// they unify with it, and the unified value is args itself (a field the
// constraint requires that args lack is a refusal, not a default). Else it
// says why not. It evaluates in this process, without bound: Rules runs
// it in a child.
func Accepts(con *plan.CUEConstraint, args []byte) (bool, string) {
	ctx := cuecontext.New()
	v, err := constraint.Compile(ctx, con, token.Position{Filename: "approve_if"})
	if err != nil {
		return false, fmt.Sprintf("approve_if does not compile: %v", err)
	}
	expr, err := cuejson.Extract("arguments", args)
	if err != nil {
		return false, fmt.Sprintf("the arguments are not JSON: %v", err)
	}
	u := v.Unify(ctx.BuildExpr(expr))
	if err := u.Validate(cue.Concrete(true)); err != nil {
		return false, "approve_if does not accept the arguments"
	}
	got, err := u.MarshalJSON()
	if err != nil {
		return false, "approve_if does not accept the arguments"
	}
	a, err1 := digest.CanonicalExact(got)
	b, err2 := digest.CanonicalExact(args)
	if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
		return false, "approve_if does not accept the arguments (it requires fields they lack)"
	}
	return true, ""
}
