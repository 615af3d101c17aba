package plan

import "testing"

// TestApprovalOf: the approve each tool's calls get, declared or by its
// kind's default, and an mcp server's per-tool overrides.
func TestApprovalOf(t *testing.T) {
	a := &Agent{Capabilities: Capabilities{Tools: map[string]Tool{
		"files":  {Kind: "fs"},
		"fetch":  {Kind: "http", Method: "GET"},
		"post":   {Kind: "http", Method: "POST"},
		"sh":     {Kind: "exec"},
		"git":    {Kind: "exec", Approve: ApproveNever},
		"helper": {Kind: "agent"},
		"srv": {Kind: "mcp", Allow: []string{"read", "write", "drop"}, ApproveIf: &CUEConstraint{CUE: "{}"},
			ApproveTools: map[string]ToolApproval{"read": {Approve: ApproveNever}, "drop": {Approve: ApproveAlways}}},
	}}}
	cases := []struct{ tool, mode, why, source string }{
		{"files", ApproveNever, "", ""},
		{"fetch", ApproveNever, "", ""},
		{"post", ApproveAsk, `http tool post: approve "ask" (the default for its kind)`, ""},
		{"sh", ApproveAsk, `exec tool sh: approve "ask" (the default for its kind)`, ""},
		{"git", ApproveNever, "", ""},
		{"helper", ApproveNever, "", ""},
		{"read", ApproveNever, "", ""},
		{"write", ApproveAsk, `mcp tool write of server srv: approve "ask" (the default for its kind)`, "capabilities.tools.srv.approve_if"},
		{"drop", ApproveAlways, `mcp tool drop of server srv: approve "always" (declared)`, "capabilities.tools.srv.approve_if"},
	}
	for _, c := range cases {
		ap, ok := a.ApprovalOf(c.tool)
		if !ok || ap.Mode != c.mode || ap.Why != c.why || c.source != "" && ap.Source != c.source {
			t.Errorf("%s: %+v, %v; want mode %q, why %q", c.tool, ap, ok, c.mode, c.why)
		}
	}
	if _, ok := a.ApprovalOf("nosuch"); ok {
		t.Error("a tool the agent lacks has an approval")
	}
}
