package plan

import (
	"fmt"
	"slices"
)

// The values of a tool's approve: whether its calls need a person's
// approval.
const (
	// ApproveNever: a call runs without asking.
	ApproveNever = "never"
	// ApproveAsk: a call is asked about, unless the tool's approve_if
	// approves its arguments, or the person answered "always" for this
	// tool earlier in the run.
	ApproveAsk = "ask"
	// ApproveAlways: every call is asked about, whatever approve_if or an
	// earlier answer says.
	ApproveAlways = "always"
)

// Approval is how one call of a tool is approved: its mode (Approve*), the
// constraint that approves it without asking (nil for none), and why it
// needs approval, for the person asked.
type Approval struct {
	Mode string
	If   *CUEConstraint
	// Source is the manifest path of If, a key of the plan's Sources.
	Source string
	Why    string
}

// DefaultApproval is the approve of a tool that declares none: calls that
// change things outside the run ask, calls that only read do not. exec
// runs programs and mcp servers may do anything (a server's own claim that
// a tool only reads is not trusted: the manifest says "never" for the tools
// it reviewed); http asks for every method but GET; fs only reads; an
// agent called as a tool asks for its own tools' calls.
func DefaultApproval(t Tool) string {
	switch t.Kind {
	case "exec", "mcp":
		return ApproveAsk
	case "http":
		if t.Method != "" && t.Method != "GET" {
			return ApproveAsk
		}
	}
	return ApproveNever
}

// ApprovalOf returns how a call of the tool the model calls name is
// approved, and false when the agent declares no such tool. An mcp
// server's tools are named by its allow list.
func (a *Agent) ApprovalOf(name string) (Approval, bool) {
	if t, ok := a.Capabilities.Tools[name]; ok && t.Kind != "mcp" {
		ap := Approval{Mode: t.Approve, If: t.ApproveIf, Source: "capabilities.tools." + name + ".approve_if"}
		ap.Why = approvalWhy(&ap.Mode, DefaultApproval(t), fmt.Sprintf("%s tool %s", t.Kind, name))
		return ap, true
	}
	for server, t := range a.Capabilities.Tools {
		if t.Kind != "mcp" || !slices.Contains(t.Allow, name) {
			continue
		}
		ap := Approval{Mode: t.Approve, If: t.ApproveIf, Source: "capabilities.tools." + server + ".approve_if"}
		if o, ok := t.ApproveTools[name]; ok {
			if o.Approve != "" {
				ap.Mode = o.Approve
			}
			if o.ApproveIf != nil {
				ap.If, ap.Source = o.ApproveIf, "capabilities.tools."+server+".approve_tools."+name+".approve_if"
			}
		}
		ap.Why = approvalWhy(&ap.Mode, DefaultApproval(t), fmt.Sprintf("mcp tool %s of server %s", name, server))
		return ap, true
	}
	return Approval{}, false
}

// approvalWhy resolves an empty mode to def and says why a call of the
// tool what needs approval; "" when it does not.
func approvalWhy(mode *string, def, what string) string {
	how := "declared"
	if *mode == "" {
		*mode, how = def, "the default for its kind"
	}
	if *mode == ApproveNever {
		return ""
	}
	return fmt.Sprintf("%s: approve %q (%s)", what, *mode, how)
}
