// Package pattern reads the regular expressions of JSON Schema (pattern,
// patternProperties, format "regex") as agentc validates them: in the
// ECMA-262 dialect the specification names, through
// github.com/dlclark/regexp2/v2 in its ECMAScript and Unicode modes, with
// every match bounded in time. Lookahead, lookbehind, backreferences and
// named groups, which Go's regexp (RE2) refuses, are read; \d and \w are
// ASCII, \s is Unicode white space, "." stops at line terminators and "$"
// matches only at the end of the string.
//
// regexp2 backtracks, so a pattern such as ^(a+)+$ can take time
// exponential in the string it is matched against. Each match is given
// Timeout; one that runs out is no match, and is counted (Undecided) and
// remembered (UndecidedOn), so that a validation can reject a value whose
// check could not finish rather than accept it.
//
// A pattern regexp2 cannot read but Go's regexp can (a Unicode property by
// its long name, \p{Letter}; a Python-style group, (?P<name>...)) is read by
// Go's regexp, as agentc read every pattern before: schemas that compiled
// keep compiling. RE2 matches in linear time and needs no bound.
package pattern

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dlclark/regexp2/v2"
)

// Timeout bounds one match. A legitimate pattern matches an answer's
// string in microseconds (a megabyte in tens of milliseconds); only
// catastrophic backtracking comes near it. regexp2 checks its clock every
// 100 ms, so a match that runs out stops between Timeout and about three
// times it.
const Timeout = 100 * time.Millisecond

// ErrTimeout is returned by Match when a match ran past Timeout.
var ErrTimeout = errors.New("the match ran out of time")

// Regexp is a compiled pattern, safe for concurrent use.
type Regexp struct {
	src    string
	ecma   *regexp2.Regexp // nil when re2 reads the pattern
	re2    *regexp.Regexp
	budget *Budget // nil for none
}

// Budget bounds how many matches may run out of time among the patterns
// compiled with it (CompileIn): once that many have, every later match of
// theirs that regexp2 would make is undecided at once, without being
// tried. Each match is bounded in time, but nothing else bounds how many
// a check makes: 200 strings of a test case's input against four
// backtracking patterns held vet for two minutes, a bigger manifest for
// hours. A check whose values are undecided rejects them, so the budget
// changes no verdict but how soon it comes. The zero Budget allows none.
type Budget struct {
	left atomic.Int64
	// timed budgets also bound the time their matches take in all, in
	// nanoseconds left.
	timed bool
	time  atomic.Int64
}

// NewTimedBudget returns a Budget that bounds the time its matches take
// in all to d, whether or not any runs out of time: a match that takes
// 100 ms without running out costs as much as one that does, and a check
// of many values may make thousands. Once d is spent, every later match
// regexp2 would make is undecided at once.
func NewTimedBudget(d time.Duration) *Budget {
	b := &Budget{timed: true}
	b.left.Store(math.MaxInt64)
	b.time.Store(int64(d))
	return b
}

// Spent reports whether the budget allows no more matches.
func (b *Budget) Spent() bool {
	return b.left.Load() <= 0 || b.timed && b.time.Load() <= 0
}

// NewBudget returns a Budget that allows n matches to run out of time.
func NewBudget(n int) *Budget {
	b := &Budget{}
	b.left.Store(int64(n))
	return b
}

// CompileIn is Compile with the pattern's matches under budget b.
func CompileIn(p string, b *Budget) (*Regexp, error) {
	re, err := Compile(p)
	if err == nil && re.ecma != nil {
		re.budget = b
	}
	return re, err
}

// Compile reads a pattern as ECMA-262, or, failing that, as Go's regexp
// does. The error is the ECMA-262 reading's.
func Compile(p string) (re *Regexp, err error) {
	ecma, err := compileECMA(p)
	if err == nil {
		ecma.MatchTimeout = Timeout
		return &Regexp{src: p, ecma: ecma}, nil
	}
	if g, gerr := regexp.Compile(p); gerr == nil {
		return &Regexp{src: p, re2: g}, nil
	}
	return nil, err
}

// compileECMA compiles with regexp2, turning a panic of its parser (a bug
// of regexp2 on some input) into an error: a schema's author and a model,
// which writes values checked as format "regex", choose what it reads.
func compileECMA(p string) (re *regexp2.Regexp, err error) {
	defer func() {
		if r := recover(); r != nil {
			re, err = nil, fmt.Errorf("error parsing regexp: %v", r)
		}
	}()
	return regexp2.Compile(p, regexp2.ECMAScript|regexp2.Unicode)
}

// String returns the pattern as written.
func (r *Regexp) String() string { return r.src }

// ECMA reports whether the pattern is read as ECMA-262 (by regexp2), not
// by Go's regexp.
func (r *Regexp) ECMA() bool { return r.ecma != nil }

// Match reports whether s contains a match of the pattern; ErrTimeout
// when that could not be decided within Timeout.
func (r *Regexp) Match(s string) (matched bool, err error) {
	if r.re2 != nil {
		return r.re2.MatchString(s), nil
	}
	if r.budget != nil && r.budget.Spent() {
		return false, ErrTimeout
	}
	defer func() {
		if p := recover(); p != nil {
			matched, err = false, fmt.Errorf("the regular-expression engine failed: %v", p)
		}
	}()
	if r.budget != nil && r.budget.timed {
		start := time.Now()
		defer func() { r.budget.time.Add(-int64(time.Since(start))) }()
	}
	matched, err = r.ecma.MatchString(s)
	if err != nil {
		if r.budget != nil {
			r.budget.left.Add(-1)
		}
		return false, ErrTimeout
	}
	return matched, nil
}

// MatchString reports whether s contains a match of the pattern. A match
// that could not be decided is no match, and is counted and remembered
// for Undecided and UndecidedOn.
func (r *Regexp) MatchString(s string) bool {
	matched, err := r.Match(s)
	if err != nil {
		undecided.add(r.src, s)
		return false
	}
	return matched
}

// Undecided makes the match of s, as MatchString does, and reports
// whether it could not be decided (counted and remembered as MatchString
// does).
func (r *Regexp) Undecided(s string) bool {
	if _, err := r.Match(s); err != nil {
		undecided.add(r.src, s)
		return true
	}
	return false
}

// Undecided counts the matches so far, in this process, that could not be
// decided. A validation that saw it move may have taken an undecided match
// for a verdict: under "not", in a oneOf, or in patternProperties, no
// match can accept a value.
func Undecided() uint64 {
	undecided.mu.Lock()
	defer undecided.mu.Unlock()
	return undecided.count
}

// Recent is how many undecided matches UndecidedOn remembers.
const Recent = 256

// UndecidedOn returns the pattern of a recent match against value that
// could not be decided.
func UndecidedOn(value string) (pattern string, ok bool) {
	k := sha256.Sum256([]byte(value))
	undecided.mu.Lock()
	defer undecided.mu.Unlock()
	pattern, ok = undecided.by[k]
	return pattern, ok
}

// undecided remembers the last matches that could not be decided: the
// pattern by a digest of the value, oldest forgotten first.
var undecided = &recent{}

type recent struct {
	mu    sync.Mutex
	count uint64
	keys  [][sha256.Size]byte
	by    map[[sha256.Size]byte]string
}

func (r *recent) add(pattern, value string) {
	k := sha256.Sum256([]byte(value))
	r.mu.Lock()
	defer r.mu.Unlock()
	r.count++
	if r.by == nil {
		r.by = map[[sha256.Size]byte]string{}
	}
	if _, ok := r.by[k]; ok {
		r.by[k] = pattern
		return
	}
	if len(r.keys) == Recent {
		delete(r.by, r.keys[0])
		r.keys = r.keys[1:]
	}
	r.keys = append(r.keys, k)
	r.by[k] = pattern
}
