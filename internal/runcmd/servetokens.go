package runcmd

import (
	"os"
	"slices"
	"strings"

	"agentc.dev/agentc/internal/leaf/userfile"
	"agentc.dev/agentc/serve"
)

// ServeTokenVar names the variable that holds agentc serve --http's
// bearer token.
const ServeTokenVar = "AGENTC_SERVE_TOKEN"

// maxTokenFile bounds a token file.
const maxTokenFile = 64 << 10

// tokenLine is a bearer token of agentc serve --http, and the line of the
// token file it is on (0 for $AGENTC_SERVE_TOKEN's).
type tokenLine struct {
	serve.Token
	line int
}

// serveTokens reads the bearer tokens --http requires: --token-file's,
// else $AGENTC_SERVE_TOKEN's, one admitting to every agent; a server on
// HTTP without one is not started. from names where they come from. No
// error says a token.
func serveTokens(f ServeFlags) (lines []tokenLine, from string, err error) {
	if f.tokenFile != "" {
		from = "--token-file " + f.tokenFile
		b, err := userfile.Read(f.tokenFile, maxTokenFile, "a token file")
		if err != nil {
			return nil, from, UsageError("--token-file: %v", err)
		}
		lines, err := parseTokenFile(from, b)
		return lines, from, err
	}
	from = "$" + ServeTokenVar
	token := os.Getenv(ServeTokenVar)
	if token == "" {
		return nil, from, UsageError("--http: clients must send a bearer token, and none is set: put one in $%s or a file named by --token-file", ServeTokenVar)
	}
	if err := serve.CheckToken(token); err != nil {
		return nil, from, UsageError("--http: the token of %s cannot protect a server: %v", from, err)
	}
	return []tokenLine{{Token: serve.Token{Token: token}}}, from, nil
}

// parseTokenFile reads a token file: a token a line, alone (it admits to
// every agent) or followed by the agents it admits to, comma separated
// (TOKEN labeler,act); blank lines, and lines starting with #, are
// skipped. Every token must pass serve.CheckToken, and be on one line
// alone. Errors name the line, never a token.
func parseTokenFile(from string, b []byte) ([]tokenLine, error) {
	var out []tokenLine
	seen := map[string]int{}
	for i, text := range strings.Split(string(b), "\n") {
		n := i + 1
		// Split on spaces and tabs alone: CheckToken says what else a
		// token may not hold.
		fields := strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == '\t' || r == '\r' })
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if len(fields) > 2 {
			return nil, UsageError("%s: line %d: want TOKEN, or TOKEN and the agents it admits to, as AGENT,AGENT (a token holds no space)", from, n)
		}
		t := tokenLine{Token: serve.Token{Token: fields[0]}, line: n}
		if err := serve.CheckToken(t.Token.Token); err != nil {
			return nil, UsageError("--http: the token of %s, line %d, cannot protect a server: %v", from, n, err)
		}
		if len(fields) == 2 {
			t.Agents = strings.Split(fields[1], ",")
			if slices.Contains(t.Agents, "") {
				return nil, UsageError("%s: line %d: the agents it admits to are AGENT,AGENT, with no empty name", from, n)
			}
		}
		if m, dup := seen[t.Token.Token]; dup {
			return nil, UsageError("%s: line %d holds the token of line %d: each token is on one line", from, n, m)
		}
		seen[t.Token.Token] = n
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil, UsageError("--http: %s holds no token: clients must send a bearer token; put one on a line, alone or followed by the agents it admits to (TOKEN AGENT,AGENT)", from)
	}
	return out, nil
}

// serveTokenSet checks that every agent a token admits to is served, and
// makes the server's tokens. An agent is named by its place in its line's
// list, not by name: a line whose token and agents were swapped would
// print the token.
func serveTokenSet(lines []tokenLine, from string, agents []serve.Agent) (*serve.Tokens, error) {
	served := make([]string, len(agents))
	for i, a := range agents {
		served[i] = a.Plan.Agent.Name
	}
	ts := make([]serve.Token, len(lines))
	for i, l := range lines {
		for k, name := range l.Agents {
			if !slices.Contains(served, name) {
				return nil, UsageError("%s: line %d: agent %d of the line's list is not served here (served: %s)", from, l.line, k+1, strings.Join(served, ", "))
			}
		}
		ts[i] = l.Token
	}
	tokens, err := serve.NewTokens(ts)
	if err != nil {
		return nil, UsageError("--http: %s: %v", from, err)
	}
	return tokens, nil
}
