package cuecmd

import "testing"

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
