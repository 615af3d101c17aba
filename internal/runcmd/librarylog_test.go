package runcmd

import (
	"bytes"
	"log"
	"strings"
	"testing"
)

// TestLibraryLog: a library's line on Go's standard logger reaches
// standard error as agentc's own lines do: a provider key redacted, an
// escape sequence and a workflow command shown, not acted on.
func TestLibraryLog(t *testing.T) {
	const key = "sk-proj-librarylog0123456789abcdef"
	t.Setenv("OPENAI_API_KEY", key)
	out, flags, prefix := log.Writer(), log.Flags(), log.Prefix()
	t.Cleanup(func() { log.SetOutput(out); log.SetFlags(flags); log.SetPrefix(prefix) })
	var buf bytes.Buffer
	LibraryLog(&buf)
	log.Printf("Error reading with key %s\x1b[2J\n::add-mask::FAIL", key)
	got := buf.String()
	if strings.Contains(got, key) || strings.Contains(got, "\x1b") || strings.Contains(got, "\n::") || !strings.HasPrefix(got, "agentc: Error reading with key ") {
		t.Errorf("the line as written: %q", got)
	}
}
