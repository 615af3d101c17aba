package serve

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// Token is a bearer token a server takes, and the agents it admits its
// holder to: none named admits every agent the server serves.
type Token struct {
	Token  string
	Agents []string
}

// Tokens is the bearer tokens a server takes, each admitting its holder
// to a set of agents. A request's token is found by comparing its
// SHA-256 digest with every token's, in constant time.
type Tokens struct {
	digests [][sha256.Size]byte
	grants  []grant   // by token, as digests
	sets    []*Access // the distinct sets, in the order tokens name them
}

// grant is what one token admits to: its set of agents, and the name the
// token's MCP sessions are bound to (no client of another token may use
// them).
type grant struct {
	access *Access
	user   string
}

// Access is the agents a request's token admits it to (AccessOf).
type Access struct {
	key    string // "*" for every agent, else the names sorted, comma separated
	all    bool
	agents map[string]bool
}

// Allows reports whether the access admits to agent name; a nil *Access
// admits to none.
func (a *Access) Allows(name string) bool {
	return a != nil && (a.all || a.agents[name])
}

// Of returns the agents, of those given, the access admits to, in their
// order.
func (a *Access) Of(agents []Agent) []Agent {
	var out []Agent
	for _, ag := range agents {
		if a.Allows(ag.Plan.Agent.Name) {
			out = append(out, ag)
		}
	}
	return out
}

// NewTokens returns the tokens a server takes. Each must pass CheckToken;
// two equal tokens, and an empty agent name, are errors, which name a
// token by its place in ts, never by its value.
func NewTokens(ts []Token) (*Tokens, error) {
	if len(ts) == 0 {
		return nil, errors.New("no token: a server on HTTP takes at least one")
	}
	out := &Tokens{}
	seen := map[[sha256.Size]byte]int{}
	sets := map[string]*Access{}
	for i, t := range ts {
		if err := CheckToken(t.Token); err != nil {
			return nil, fmt.Errorf("token %d: %w", i+1, err)
		}
		sum := sha256.Sum256([]byte(t.Token))
		if j, dup := seen[sum]; dup {
			return nil, fmt.Errorf("tokens %d and %d are the same token", j+1, i+1)
		}
		seen[sum] = i
		a := &Access{key: "*", all: true}
		if len(t.Agents) > 0 {
			names := slices.Clone(t.Agents)
			slices.Sort(names)
			names = slices.Compact(names)
			if slices.Contains(names, "") {
				return nil, fmt.Errorf("token %d: an agent's name is empty", i+1)
			}
			a = &Access{key: strings.Join(names, ","), agents: map[string]bool{}}
			for _, n := range names {
				a.agents[n] = true
			}
		}
		if s, ok := sets[a.key]; ok {
			a = s
		} else {
			sets[a.key] = a
			out.sets = append(out.sets, a)
		}
		out.digests = append(out.digests, sum)
		out.grants = append(out.grants, grant{access: a, user: fmt.Sprintf("token %d", i+1)})
	}
	return out, nil
}

// AllAgents is the one token token, admitting to every agent. It is not
// checked: see CheckToken and NewTokens.
func AllAgents(token string) *Tokens {
	a := &Access{key: "*", all: true}
	return &Tokens{digests: [][sha256.Size]byte{sha256.Sum256([]byte(token))}, grants: []grant{{access: a, user: "token 1"}}, sets: []*Access{a}}
}

// match returns what the request's bearer token admits to, nil for no
// token the server takes. Every token's digest is compared, without an
// early end, so neither which token matched nor where it stands shows in
// how long the answer takes.
func (ts *Tokens) match(r *http.Request) *grant {
	// The scheme's name is matched without regard to case, and one or
	// more spaces follow it (RFC 9110, 11.1; RFC 6750, 2.1): a client
	// that writes "bearer" is one that sends the token.
	scheme, got, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	ok = ok && strings.EqualFold(scheme, "Bearer")
	got = strings.TrimLeft(got, " ")
	sum := sha256.Sum256([]byte(got))
	found := -1
	for i := range ts.digests {
		eq := subtle.ConstantTimeCompare(sum[:], ts.digests[i][:])
		found = subtle.ConstantTimeSelect(eq, i, found)
	}
	if !ok || found < 0 {
		return nil
	}
	return &ts.grants[found]
}

type grantKey struct{}

// AccessOf returns the agents the request whose context is ctx may reach,
// as Authorized found them: nil (none) for a request it did not pass.
func AccessOf(ctx context.Context) *Access {
	if g := grantOf(ctx); g != nil {
		return g.access
	}
	return nil
}

func grantOf(ctx context.Context) *grant {
	g, _ := ctx.Value(grantKey{}).(*grant)
	return g
}
