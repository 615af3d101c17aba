package runcmd

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/serve"
)

const (
	tokA = "first-token-of-the-file"
	tokB = "second-token-of-the-file"
	tokC = "third-token-of-the-file"
)

// servedAgents are agents named as given, enough to check a token file
// against.
func servedAgents(names ...string) []serve.Agent {
	var out []serve.Agent
	for _, n := range names {
		out = append(out, serve.Agent{Plan: &plan.Plan{Agent: plan.Agent{Name: n}}})
	}
	return out
}

// TestTokenFile: a token file holds a token a line, alone (every agent)
// or with the agents it admits to; blank lines and comments are skipped,
// a carriage return ends a line as a newline does.
func TestTokenFile(t *testing.T) {
	file := "# the server's tokens\n\n" + tokA + "\r\n  # the labeler's client\n" + tokB + " labeler\n" + tokC + "\tlabeler,act  \n\n"
	lines, err := parseTokenFile("--token-file t", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	want := []tokenLine{{serve.Token{Token: tokA}, 3}, {serve.Token{Token: tokB, Agents: []string{"labeler"}}, 5}, {serve.Token{Token: tokC, Agents: []string{"labeler", "act"}}, 6}}
	if len(lines) != len(want) {
		t.Fatalf("lines %+v", lines)
	}
	for i := range want {
		if lines[i].Token.Token != want[i].Token.Token || !slices.Equal(lines[i].Agents, want[i].Agents) || lines[i].line != want[i].line {
			t.Errorf("line %d: %+v, want %+v", i, lines[i], want[i])
		}
	}
	if _, err := serveTokenSet(lines, "--token-file t", servedAgents("labeler", "act")); err != nil {
		t.Errorf("the agents served: %v", err)
	}
	// One line, the token alone, as before: every agent.
	lines, err = parseTokenFile("--token-file t", []byte(tokA+"\n"))
	if err != nil || len(lines) != 1 || lines[0].Token.Token != tokA || lines[0].Agents != nil {
		t.Errorf("one token: %+v %v", lines, err)
	}
}

// TestTokenFileRefused: what a token file cannot hold is a usage error
// naming the line, and never saying a token.
func TestTokenFileRefused(t *testing.T) {
	for _, tc := range []struct {
		name, file, says string
	}{
		{"duplicate", tokA + "\n" + tokB + " act\n" + tokA + " labeler\n", "line 3 holds the token of line 1"},
		{"short", tokA + "\n\nshort-token labeler\n", "the token of --token-file t, line 3, cannot protect a server: the token is shorter than 16 bytes"},
		{"control", tokA + "\x01-control-byte\n", "line 1, cannot protect a server: the token holds a space, a control character"},
		{"three fields", tokA + " labeler act\n", "line 1: want TOKEN, or TOKEN and the agents it admits to"},
		{"spaces", "a token with spaces in it\n", "line 1: want TOKEN"},
		{"empty name", tokA + " labeler,,act\n", "line 1: the agents it admits to are AGENT,AGENT, with no empty name"},
		{"trailing comma", tokA + " labeler,\n", "line 1: the agents it admits to are AGENT,AGENT"},
		{"empty", "# nothing here\n\n", "--token-file t holds no token"},
		{"unknown agent", "# tokens\n" + tokA + "\n" + tokB + " labeler,nobody\n", "line 3: agent 2 of the line's list is not served here (served: labeler, act)"},
		// Swapped, a line's token stands where an agent's name goes: it
		// is not said either.
		{"swapped", "labeler,act-and-more " + tokC + "\n", "line 1: agent 1 of the line's list is not served here"},
	} {
		lines, err := parseTokenFile("--token-file t", []byte(tc.file))
		if err == nil {
			_, err = serveTokenSet(lines, "--token-file t", servedAgents("labeler", "act"))
		}
		var ee *ExitError
		if !errors.As(err, &ee) || ee.Code != ExitUsage || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want a usage error saying %q", tc.name, err, tc.says)
			continue
		}
		for _, tok := range []string{tokA, tokB, tokC, "short-token"} {
			if strings.Contains(err.Error(), tok) {
				t.Errorf("%s: the error %q says a token", tc.name, err)
			}
		}
	}
}

// TestServeTokens: --token-file wins over $AGENTC_SERVE_TOKEN; without a
// file, the variable's token admits to every agent; a file too large is
// refused.
func TestServeTokens(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tokens")
	if err := os.WriteFile(path, []byte(tokB+" labeler\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(ServeTokenVar, tokA)
	lines, from, err := serveTokens(ServeFlags{tokenFile: path})
	if err != nil || len(lines) != 1 || lines[0].Token.Token != tokB || from != "--token-file "+path {
		t.Errorf("the file: %+v %q %v", lines, from, err)
	}
	lines, from, err = serveTokens(ServeFlags{})
	if err != nil || len(lines) != 1 || lines[0].Token.Token != tokA || lines[0].Agents != nil || from != "$"+ServeTokenVar {
		t.Errorf("the variable: %+v %q %v", lines, from, err)
	}
	if err := os.WriteFile(path, []byte(strings.Repeat("#"+strings.Repeat("x", 99)+"\n", maxTokenFile/100+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := serveTokens(ServeFlags{tokenFile: path}); err == nil {
		t.Error("a file past the bound was read")
	}
}
