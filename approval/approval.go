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
	"fmt"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/token"
	cuejson "cuelang.org/go/encoding/json"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/internal/constraint"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
)

// Rules returns an Approver that approves, by rule, a call whose arguments
// its tool's approve_if accepts, and passes every other call to next, the
// constraint's verdict added to why it needs approval. A tool whose
// approve is "always" is always passed on.
func Rules(next agentrt.Approver) agentrt.Approver {
	r := &rules{ctx: cuecontext.New(), compiled: map[string]compiled{}}
	return func(ctx context.Context, req *agentrt.ApprovalRequest) (agentrt.ApprovalDecision, error) {
		if req.If != nil && req.Mode != plan.ApproveAlways && req.Arguments != nil {
			ok, why := r.accepts(req.If, req.Arguments)
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

type rules struct {
	mu       sync.Mutex // CUE values are not safe for concurrent use
	ctx      *cue.Context
	compiled map[string]compiled // by the constraint's text and imports
}

type compiled struct {
	v   cue.Value
	err error
}

// accepts reports whether args (JSON) are an instance of the constraint:
// they unify with it, and the unified value is args itself (a field the
// constraint requires that args lack is a refusal, not a default). Else it
// says why not.
func (r *rules) accepts(con *plan.CUEConstraint, args []byte) (bool, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := fmt.Sprint(con.CUE, con.Imports)
	c, ok := r.compiled[key]
	if !ok {
		c.v, c.err = constraint.Compile(r.ctx, con, token.Position{Filename: "approve_if"})
		r.compiled[key] = c
	}
	if c.err != nil {
		return false, fmt.Sprintf("approve_if does not compile: %v", c.err)
	}
	expr, err := cuejson.Extract("arguments", args)
	if err != nil {
		return false, fmt.Sprintf("the arguments are not JSON: %v", err)
	}
	u := c.v.Unify(r.ctx.BuildExpr(expr))
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
