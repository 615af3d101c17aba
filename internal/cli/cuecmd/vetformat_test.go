package cuecmd

import (
	"strings"
	"testing"

	"agentc.dev/agentc/agenttest"
)

// TestActionsEscapes checks the escaping of workflow commands against the
// Actions toolkit's (@actions/core, command.ts: escapeData, escapeProperty).
func TestActionsEscapes(t *testing.T) {
	for _, tc := range []struct{ in, data, prop string }{
		{"plain text", "plain text", "plain text"},
		{"100%", "100%25", "100%25"},
		{"%0A", "%250A", "%250A"},
		{"line one\nline two\r\n", "line one%0Aline two%0D%0A", "line one%0Aline two%0D%0A"},
		{"dir,1/a:b.cue", "dir,1/a:b.cue", "dir%2C1/a%3Ab.cue"},
		{"::error::", "::error::", "%3A%3Aerror%3A%3A"},
	} {
		if got := escapeData(tc.in); got != tc.data {
			t.Errorf("escapeData(%q) = %q, want %q", tc.in, got, tc.data)
		}
		if got := escapeProperty(tc.in); got != tc.prop {
			t.Errorf("escapeProperty(%q) = %q, want %q", tc.in, got, tc.prop)
		}
	}
}

// A test's failure quotes what a journal and an answer hold, whose keys a
// divergence names: its line shows them as text, one line, nothing in it
// acting on a terminal or starting a line of its own.
func TestCaseTextEscapes(t *testing.T) {
	var b strings.Builder
	writeCaseText(&b, caseResult{Agent: "a", Case: "c", Status: "DIVERGED", Failures: []agenttest.Failure{
		{Msg: "diverged: /x\x1b[8m\n::warning::hidden: added 2"},
	}})
	want := "DIVERGED a/c (0.00s)\n    diverged: /x\\u001b[8m\\u000a::warning::hidden: added 2\n"
	if b.String() != want {
		t.Errorf("%q, want %q", b.String(), want)
	}
}
