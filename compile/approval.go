package compile

import (
	"slices"

	"cuelang.org/go/cue"

	"agentc.dev/agentc/constraint"
	"agentc.dev/agentc/manifest"
	"agentc.dev/agentc/plan"
)

// checkApproval checks a tool's approve, approve_if and approve_tools: each
// constraint compiles on its own, as the approver compiles it from the
// plan, and decides something; an mcp server's approve_tools names tools
// it allows.
func (c *checker) checkApproval(name, kind string, t cue.Value) {
	path := "capabilities.tools." + name
	mode, _ := str(lookup(t, "approve"))
	c.checkApproveIf(path, mode, lookup(t, "approve_if"), kind == "mcp")
	if kind != "mcp" {
		return
	}
	var allow []string
	for _, av := range elems(lookup(t, "allow")) {
		if a, ok := str(av); ok {
			allow = append(allow, a)
		}
	}
	it, err := lookup(t, "approve_tools").Fields()
	if err != nil {
		return
	}
	for it.Next() {
		n := it.Selector().Unquoted()
		p := path + ".approve_tools." + n
		if !slices.Contains(allow, n) {
			c.add(it.Value().Pos(), CodeApproveTool, "%s: the server's allow list has no tool %q (it has %s)", p, n, toolList(slices.Clone(allow)))
		}
		m := mode
		if o, ok := str(lookup(it.Value(), "approve")); ok {
			m = o
		}
		c.checkApproveIf(p, m, lookup(it.Value(), "approve_if"), false)
	}
}

// checkApproveIf checks the constraint w at path, of a tool whose approve
// is mode ("" for its kind's default). server says it is an mcp server's,
// which its tools may still use where they set an approve of their own.
func (c *checker) checkApproveIf(path, mode string, w cue.Value, server bool) {
	if !w.Exists() {
		return
	}
	con, at := manifest.ConstraintOf(w)
	if (mode == plan.ApproveNever || mode == plan.ApproveAlways) && !server {
		c.add(at, CodeApproveIfUnused, "%s.approve_if: approve is %q, so no call is approved by its arguments: drop approve_if, or set approve: %q", path, mode, plan.ApproveAsk)
	}
	if _, err := constraint.Compile(c.v.Context(), con, at.Position()); err != nil {
		c.add(at, CodeApproveIf, "%s.approve_if: the constraint does not compile on its own, as the approver compiles it: %v", path, err)
	}
}
