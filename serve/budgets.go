package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"time"

	agentrt "agentc.dev/agentc/runtime"
)

// Budgets are the bounds a client may ask of one run, named as a
// manifest's budgets: they narrow the agent's (and the server's), and
// never widen them.
type Budgets struct {
	Deadline string `json:"deadline,omitempty"` // a Go duration: "30s"
	Tools    *int   `json:"tools,omitempty"`
	Tokens   *int   `json:"tokens,omitempty"`
	Rounds   *int   `json:"rounds,omitempty"`
}

func (b Budgets) isZero() bool {
	return b.Deadline == "" && b.Tools == nil && b.Tokens == nil && b.Rounds == nil
}

// apply narrows runner to the bounds.
func (b Budgets) apply(runner *agentrt.Runner) (*agentrt.Runner, error) {
	if b.isZero() {
		return runner, nil
	}
	o, err := b.overrides()
	if err != nil {
		return nil, err
	}
	r, err := runner.WithBudgets(o)
	if err != nil {
		return nil, &BudgetsError{err.Error()}
	}
	return r, nil
}

// MetaBudgets is the key of an MCP call's _meta that holds its Budgets.
const MetaBudgets = "agentc/budgets"

// BudgetsError is a client's bound that is not one.
type BudgetsError struct{ Msg string }

func (e *BudgetsError) Error() string { return "budgets: " + e.Msg }

// overrides checks the bounds and returns them as the runner takes them.
func (b Budgets) overrides() (agentrt.Overrides, error) {
	var o agentrt.Overrides
	if b.Deadline != "" {
		d, err := time.ParseDuration(b.Deadline)
		if err != nil || d <= 0 {
			return o, &BudgetsError{fmt.Sprintf("deadline %q: want a duration above zero, such as 30s", b.Deadline)}
		}
		o.Deadline = &d
	}
	check := func(name string, v *int, min int) error {
		if v != nil && *v < min {
			return &BudgetsError{fmt.Sprintf("%s %d: want %d or more", name, *v, min)}
		}
		return nil
	}
	for _, c := range []struct {
		name string
		v    *int
		min  int
	}{{"tools", b.Tools, 0}, {"tokens", b.Tokens, 1}, {"rounds", b.Rounds, 1}} {
		if err := check(c.name, c.v, c.min); err != nil {
			return o, err
		}
	}
	o.Tools, o.Tokens, o.Rounds = b.Tools, b.Tokens, b.Rounds
	return o, nil
}

// budgetsOfQuery reads the bounds of a request's query: deadline, tools,
// tokens and rounds; any other parameter is refused.
func budgetsOfQuery(q url.Values) (Budgets, error) {
	var b Budgets
	for name, vs := range q {
		if len(vs) != 1 {
			return b, &BudgetsError{fmt.Sprintf("%s is given %d times", name, len(vs))}
		}
		v := vs[0]
		var n *int
		switch name {
		case "deadline":
			b.Deadline = v
			continue
		case "tools":
			n = new(int)
			b.Tools = n
		case "tokens":
			n = new(int)
			b.Tokens = n
		case "rounds":
			n = new(int)
			b.Rounds = n
		default:
			return b, &BudgetsError{fmt.Sprintf("%q is not a bound a run takes (deadline, tools, tokens, rounds)", name)}
		}
		i, err := strconv.Atoi(v)
		if err != nil || i > math.MaxInt32 {
			return b, &BudgetsError{fmt.Sprintf("%s %q: want a whole number", name, v)}
		}
		*n = i
	}
	_, err := b.overrides()
	return b, err
}

// BudgetsOfMeta reads the bounds a client asked in metadata (an MCP
// call's _meta, an A2A message's metadata: the SDK hands a run the
// message's, not the request's params'), under MetaBudgets.
func BudgetsOfMeta(meta map[string]any) (Budgets, error) {
	var b Budgets
	v, ok := meta[MetaBudgets]
	if !ok {
		return b, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return b, &BudgetsError{err.Error()}
	}
	// Named exactly: encoding/json would take "Tokens" (or "TOKENS") for
	// tokens, the last of them where both are given, a bound other
	// readers of the request do not see.
	if m, ok := v.(map[string]any); ok {
		for name := range m {
			switch name {
			case "deadline", "tools", "tokens", "rounds":
			default:
				return b, &BudgetsError{fmt.Sprintf("_meta %s: %.100q is not a bound a run takes (deadline, tools, tokens, rounds: named as written here)", MetaBudgets, name)}
			}
		}
	}
	if err := strictUnmarshal(raw, &b); err != nil {
		return b, &BudgetsError{fmt.Sprintf("_meta %s: %v (want {\"deadline\": \"30s\", \"tools\": N, \"tokens\": N, \"rounds\": N})", MetaBudgets, err)}
	}
	_, err = b.overrides()
	return b, err
}

// strictUnmarshal decodes one JSON value into v, refusing fields v has
// not.
func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("data after the JSON value")
	}
	return nil
}
