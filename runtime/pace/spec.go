package pace

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Limit is a rate limit of one provider, or of one of its models: at
// most RPM requests and TPM tokens a minute. Zero is no limit of that
// kind; the zero Limit lets everything through.
type Limit struct {
	RPM, TPM int
	// From says who set it, for messages: a flag, a variable, a file and
	// line.
	From string `json:"-"`
}

// None reports whether the limit limits nothing.
func (l Limit) None() bool { return l.RPM == 0 && l.TPM == 0 }

func (l Limit) String() string {
	var parts []string
	plural := func(n int, what string) string {
		if n == 1 {
			return "1 " + what
		}
		return fmt.Sprintf("%d %ss", n, what)
	}
	if l.RPM > 0 {
		parts = append(parts, plural(l.RPM, "request"))
	}
	if l.TPM > 0 {
		parts = append(parts, plural(l.TPM, "token"))
	}
	if len(parts) == 0 {
		return "no limit"
	}
	return strings.Join(parts, " and ") + " a minute"
}

// MaxRate is the most requests or tokens a minute a limit may name.
const MaxRate = 1_000_000_000

// Limits are rate limits by key: a provider ("openai"), which covers
// each of its models, or a provider and a model ("openai:gpt-4o").
type Limits map[string]Limit

// Lookup returns the limit of a provider's model: the model's own entry,
// else its provider's. ok is false when neither has one.
func (ls Limits) Lookup(provider, model string) (l Limit, ok bool) {
	if l, ok = ls[provider+":"+model]; ok {
		return l, true
	}
	l, ok = ls[provider]
	return l, ok
}

// SyntaxError is a limit written wrongly: Msg, at the Column (from 1) of
// the text read.
type SyntaxError struct {
	Column int
	Msg    string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("column %d: %s", e.Column, e.Msg) }

var (
	providerForm = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	rateForm     = regexp.MustCompile(`^([0-9]+)(rpm|tpm)$`)
)

// Syntax is the form of an entry, for messages.
const Syntax = "PROVIDER[:MODEL]=N rpm and/or N tpm, comma-separated (openai:gpt-4o=500rpm,30000tpm), or PROVIDER[:MODEL]=none"

// ParseEntry reads one entry, KEY=LIMITS: KEY is a provider or
// PROVIDER:MODEL (a model's name may hold colons of its own, as Bedrock's
// do; the first one ends the provider), LIMITS is "none" or Nrpm and Ntpm,
// either or both, separated by a comma. Spaces around the parts are
// allowed.
func ParseEntry(s string) (key string, l Limit, err error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return "", Limit{}, &SyntaxError{Column: 1, Msg: fmt.Sprintf("%q has no '=': want %s", s, Syntax)}
	}
	if key, err = ParseKey(k); err != nil {
		return "", Limit{}, err
	}
	l, err = ParseLimit(v)
	if se, ok := err.(*SyntaxError); ok {
		se.Column += len(k) + 1
	}
	return key, l, err
}

// ParseKey reads a key, PROVIDER or PROVIDER:MODEL, with spaces around it
// allowed, and returns it without them.
func ParseKey(s string) (string, error) {
	lead := len(s) - len(strings.TrimLeft(s, " \t"))
	key := strings.TrimSpace(s)
	provider, model, hasModel := strings.Cut(key, ":")
	switch {
	case key == "":
		return "", &SyntaxError{Column: lead + 1, Msg: "no provider before '=': want " + Syntax}
	case !providerForm.MatchString(provider):
		return "", &SyntaxError{Column: lead + 1, Msg: fmt.Sprintf("%q is not a provider's name (lower-case letters, digits and '-')", provider)}
	case hasModel && model == "":
		return "", &SyntaxError{Column: lead + len(provider) + 2, Msg: "no model after ':' (a provider alone covers all its models: write it without the ':')"}
	case hasModel && strings.ContainsAny(model, " \t,;=\"'"):
		i := strings.IndexAny(model, " \t,;=\"'")
		return "", &SyntaxError{Column: lead + len(provider) + 2 + i, Msg: fmt.Sprintf("the model %q holds %q, which no model's name does", model, model[i])}
	}
	return key, nil
}

// ParseLimit reads the limits of an entry: "none", or Nrpm and Ntpm,
// either or both, separated by a comma.
func ParseLimit(s string) (Limit, error) {
	var l Limit
	if strings.TrimSpace(s) == "none" {
		return l, nil
	}
	col := 1
	for i, part := range strings.Split(s, ",") {
		lead := len(part) - len(strings.TrimLeft(part, " \t"))
		at := col + lead
		col += len(part) + 1
		p := strings.TrimSpace(part)
		m := rateForm.FindStringSubmatch(p)
		switch {
		case p == "" && i == 0 && !strings.Contains(s, ","):
			return Limit{}, &SyntaxError{Column: at, Msg: "no limit after '=': want Nrpm, Ntpm, both (500rpm,30000tpm) or none"}
		case p == "":
			return Limit{}, &SyntaxError{Column: at, Msg: "an empty limit between commas"}
		case p == "none":
			return Limit{}, &SyntaxError{Column: at, Msg: "none stands alone: it lifts every limit of the key"}
		case m == nil:
			return Limit{}, &SyntaxError{Column: at, Msg: fmt.Sprintf("%q is not a limit: want a whole number and rpm (requests a minute) or tpm (tokens a minute), as 500rpm", p)}
		}
		n, err := strconv.Atoi(m[1])
		switch {
		case err != nil || n > MaxRate:
			return Limit{}, &SyntaxError{Column: at, Msg: fmt.Sprintf("%s is more than %d a minute", p, MaxRate)}
		case n == 0:
			return Limit{}, &SyntaxError{Column: at, Msg: fmt.Sprintf("%s lets nothing through: give a positive number, or none for no limit", p)}
		}
		dst := &l.RPM
		if m[2] == "tpm" {
			dst = &l.TPM
		}
		if *dst != 0 {
			return Limit{}, &SyntaxError{Column: at, Msg: fmt.Sprintf("%s is given twice", m[2])}
		}
		*dst = n
	}
	return l, nil
}

// ParseList reads entries separated by sep (';' in AGENTC_RATE_LIMITS);
// empty entries are skipped. from is recorded in each limit (Limit.From).
// A key given twice is an error: it would be unclear which one holds.
func ParseList(s string, sep byte, from string) (Limits, error) {
	out := Limits{}
	col := 1
	for _, e := range strings.Split(s, string(sep)) {
		at := col
		col += len(e) + 1
		if strings.TrimSpace(e) == "" {
			continue
		}
		key, l, err := ParseEntry(e)
		if se, ok := err.(*SyntaxError); ok {
			se.Column += at - 1
			return nil, se
		}
		if _, dup := out[key]; dup {
			lead := len(e) - len(strings.TrimLeft(e, " \t"))
			return nil, &SyntaxError{Column: at + lead, Msg: fmt.Sprintf("%s is given twice", key)}
		}
		l.From = from
		out[key] = l
	}
	return out, nil
}
