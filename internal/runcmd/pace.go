package runcmd

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/spf13/pflag"

	"agentc.dev/agentc/runtime/pace"
)

// RateLimitsVar holds rate limits as --rate-limit takes them, entries
// separated by ';'.
const RateLimitsVar = "AGENTC_RATE_LIMITS"

// ConfigLimit is an entry of the rate_limits section of a project's
// agentc.yaml: a key and its limits as written, and where: the line and
// column of the limits, the column of the key.
type ConfigLimit struct {
	Key, Value   string
	File         string
	Line, Column int
	KeyColumn    int
}

// ConfigLimitsFunc returns the rate_limits entries of the agentc.yaml
// that applies to the agent at path; none when it has no such file.
type ConfigLimitsFunc func(path string) ([]ConfigLimit, error)

// SetConfigLimits sets what reads the project's rate limits; nil reads
// none (agentc-runtime, which reads no project file).
func (f *Flags) SetConfigLimits(fn ConfigLimitsFunc) { f.configLimits = fn }

// RegisterRateLimit defines --rate-limit, of agentc run and agentc
// worker, on fs.
func RegisterRateLimit(fs *pflag.FlagSet, limits *[]string) {
	fs.StringArrayVar(limits, "rate-limit", nil, "pace calls to a provider, or one of its models, within rate limits: PROVIDER[:MODEL]=Nrpm,Ntpm (openai:gpt-4o=500rpm,30000tpm), or none; repeatable; over $"+RateLimitsVar+" and agentc.yaml's rate_limits")
}

// Limits are the rate limits of a process, by source: the flag's, the
// environment's and a project file's. The first source that names a model
// or its provider decides its limit.
type Limits struct {
	Flag, Env, File pace.Limits
}

// ReadLimits reads the rate limits: --rate-limit's entries (flags), the
// value of RateLimitsVar (env) and a project file's entries (file). A
// limit that does not read is a usage error that says where it is; so is
// a provider agentc does not know (known says which it does).
func ReadLimits(flags []string, env string, file []ConfigLimit, known func(string) bool) (Limits, error) {
	ls := Limits{Flag: pace.Limits{}}
	for _, fl := range flags {
		key, l, err := pace.ParseEntry(fl)
		if err == nil {
			err = knownProvider(key, 1+strings.Index(fl, key), known)
		}
		if err != nil {
			return ls, UsageError("--rate-limit %q: %v", fl, err)
		}
		l.From = "--rate-limit"
		ls.Flag[key] = l // a later flag for the same key wins, as flags do
	}
	var err error
	if ls.Env, err = pace.ParseList(env, ';', "$"+RateLimitsVar); err == nil {
		for key := range ls.Env {
			if err = knownProvider(key, 1+strings.Index(env, key), known); err != nil {
				break
			}
		}
	}
	if err != nil {
		return ls, UsageError("$%s: %v", RateLimitsVar, err)
	}
	ls.File = pace.Limits{}
	for _, c := range file {
		key, l, err := ParseConfigLimit(c, known)
		if err != nil {
			return ls, &ExitError{Code: ExitUsage, Err: err}
		}
		ls.File[key] = l
	}
	return ls, nil
}

// ConfigLimitError is an entry of rate_limits that does not read, at the
// line and column where it goes wrong.
type ConfigLimitError struct {
	File         string
	Line, Column int
	Msg          string
}

func (e *ConfigLimitError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
}

// ParseConfigLimit reads an entry of a project file's rate_limits; vet
// checks them with it too. known says which providers agentc calls.
func ParseConfigLimit(c ConfigLimit, known func(string) bool) (string, pace.Limit, *ConfigLimitError) {
	key, err := pace.ParseKey(c.Key)
	if err == nil {
		err = knownProvider(key, 1, known)
	}
	var se *pace.SyntaxError
	if errors.As(err, &se) {
		return "", pace.Limit{}, &ConfigLimitError{File: c.File, Line: c.Line, Column: c.KeyColumn, Msg: fmt.Sprintf("rate_limits: %q: %s", c.Key, se.Msg)}
	}
	l, err := pace.ParseLimit(c.Value)
	if errors.As(err, &se) {
		return "", pace.Limit{}, &ConfigLimitError{File: c.File, Line: c.Line, Column: c.Column + se.Column - 1, Msg: fmt.Sprintf("rate_limits.%s: %s", c.Key, se.Msg)}
	}
	l.From = fmt.Sprintf("%s:%d", c.File, c.Line)
	return key, l, nil
}

func knownProvider(key string, col int, known func(string) bool) error {
	p, _, _ := strings.Cut(key, ":")
	if known(p) {
		return nil
	}
	return &pace.SyntaxError{Column: col, Msg: fmt.Sprintf("%q is not a provider agentc calls", p)}
}

// KnownProviders is the providers' names a limit may name: agentc's own
// and those a program links (extra).
func KnownProviders(extra map[string]ProviderFunc) func(string) bool {
	return func(name string) bool {
		_, own := providers[name]
		_, linked := extra[name]
		return own || linked
	}
}

// Set returns the limiters a process shares among all its runs. A
// limit from the project's file is said on w when it first applies: the
// file comes with the repository, not from the person running.
func (ls Limits) Set(w io.Writer) *pace.Set {
	s := pace.NewSet(ls.Flag, ls.Env, ls.File)
	var mu sync.Mutex
	s.Applied = func(key string, l pace.Limit) {
		if w == nil || l.From == "--rate-limit" || l.From == "$"+RateLimitsVar {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "agentc: warning: %s: calls to %s are paced to %s by the project's rate_limits; --rate-limit or $%s overrides it\n", l.From, key, l, RateLimitsVar)
	}
	return s
}
