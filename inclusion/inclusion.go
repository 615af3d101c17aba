// Package inclusion decides, where it can prove it, whether every JSON value
// one JSON Schema accepts is accepted by another: the one question behind
// agentc's schema checks. A schema is vacuous when it accepts every value
// (true ⊆ S), unsatisfiable when it accepts none (S ⊆ false), and a change
// of an output contract is compatible when new ⊆ old.
//
// The engine is sound and incomplete. It turns a schema into two sets of
// values, one that holds no value the schema rejects and one that misses no
// value it accepts, each built from exact pieces: number intervals (with
// integers apart), string lengths with finite exceptions, booleans, null,
// and unions of array and object shapes whose members and items are sets
// again. allOf, anyOf, oneOf, not and if/then/else combine them by their
// logic; references into the same document are followed; keywords a set
// cannot hold (pattern, format, uniqueItems, ...) only widen the one set and
// narrow the other. A verdict is given only when the two sets prove it;
// otherwise the answer is Unknown.
//
// Schemas are JSON values as encoding/json decodes them with UseNumber (or
// as github.com/santhosh-tekuri/jsonschema/v6 does): map[string]any, []any,
// string, json.Number, bool and nil. Semantics are those of the validator
// agentc uses: draft 2020-12 unless $schema names draft 4, 6, 7 or 2019-09
// as the validator reads it (a $schema it does not know, or a subschema of
// another draft, leaves every answer Unknown), anchors where the validator
// collects them, and patterns as the validator reads them (package internal/leaf/pattern:
// ECMA-262). The engine reads a pattern only to tell which declared members
// a patternProperties entry holds; a pattern it cannot read, or a match it
// cannot decide in time, makes the object opaque, which only widens the
// over set and narrows the under set.
package inclusion

import (
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"agentc.dev/agentc/internal/leaf/jsonpointer"
	"agentc.dev/agentc/internal/leaf/pattern"
)

// Verdict is the answer to a question about schemas.
type Verdict int

const (
	// Unknown means the engine could not prove an answer either way.
	Unknown Verdict = iota
	// Yes means the engine proved it.
	Yes
)

func (v Verdict) String() string {
	if v == Yes {
		return "yes"
	}
	return "unknown"
}

func verdict(b bool) Verdict {
	if b {
		return Yes
	}
	return Unknown
}

// Analysis answers questions about the subschemas of one schema document,
// resolving references within it. It is not safe for concurrent use.
type Analysis struct {
	b *builder
}

// Analyze prepares the questions about a schema document, with a budget
// of its own.
func Analyze(doc any) *Analysis { return AnalyzeIn(doc, nil) }

// AnalyzeIn is Analyze with the time its value checks take spent from b
// (nil for a budget of its own).
func AnalyzeIn(doc any, b *Budget) *Analysis { return &Analysis{b: newBuilder(doc, b)} }

// Budget bounds the time analyses sharing it spend matching patterns: in
// checking the members of an enum or a const with the validator the
// runtime uses, and in telling which members a patternProperties entry
// holds. A pattern's match is bounded (pattern.Timeout), but a schema may
// have many checked against many strings, each taking a tenth of a second
// without running out: 64 members against 16 backtracking patterns held
// a comparison for minutes. Once the budget is spent, every later match is
// undecided at once and the analyses answer Unknown: running out never
// gives a verdict, only the absence of one.
//
// It bounds as well what the counterexamples of WitnessIn calls sharing it
// build: MaxSampleValues JSON values and MaxSampleBytes bytes of strings,
// counting every candidate, kept or not. Past either, Witness finds no
// value, and the budget is spent.
type Budget struct {
	patterns      *pattern.Budget
	values, bytes atomic.Int64
}

// MatchTime is the time a Budget of NewBudget allows.
const MatchTime = time.Second

// The bounds on what counterexamples a Budget's witnesses build, in all.
// A schema of a few values asks for arrays of a thousand items nested
// three deep (10^9 values), or a thousand strings of 64 KiB each: without
// a bound on the whole, one comparison ran out of memory at 4 GB. A
// counterexample is printed and checked with the validator: a million
// values and 16 MiB of strings are past any a person reads (text output
// cuts an example at 300 bytes), twice what a run takes as input
// (runcmd.MaxInput, 8 MiB), and a few hundred megabytes of memory at
// most.
const (
	MaxSampleValues = 1_000_000
	MaxSampleBytes  = 16 << 20
)

// NewBudget returns a Budget of MatchTime.
func NewBudget() *Budget { return NewBudgetOf(MatchTime) }

// NewBudgetOf returns a Budget of d.
func NewBudgetOf(d time.Duration) *Budget {
	b := &Budget{patterns: pattern.NewTimedBudget(d)}
	b.values.Store(MaxSampleValues)
	b.bytes.Store(MaxSampleBytes)
	return b
}

// Spent reports whether the budget is spent: an analysis under it since
// may have answered Unknown for want of it, a witness found none.
func (b *Budget) Spent() bool {
	return b.patterns.Spent() || b.values.Load() < 0 || b.bytes.Load() < 0
}

// build takes n values and size bytes of strings from what witnesses may
// build, and reports whether they were there.
func (b *Budget) build(n, size int) bool {
	if b.values.Add(-int64(n)) < 0 || b.bytes.Add(-int64(size)) < 0 {
		b.values.Store(-1) // spent for good, though bytes were left
		return false
	}
	return true
}

func (a *Analysis) node(ptr string) (any, bool) { return a.b.at(ptr) }

func (a *Analysis) set(ptr string, d dir) *Set {
	n, ok := a.node(ptr)
	if !ok {
		return approx(d)
	}
	a.b.depth = 0
	return a.b.build(n, ptr, d)
}

// Vacuous reports whether the subschema at a JSON pointer accepts every
// JSON value.
func (a *Analysis) Vacuous(ptr string) Verdict {
	if n, ok := a.node(ptr); ok && typed(n) {
		return Unknown // it cannot be: and most schemas say their type
	}
	return verdict(a.set(ptr, a.b.under()).isFull())
}

// typed reports a schema object whose type keyword alone rejects some
// value (and is not hidden by a $ref of an older draft).
func typed(n any) bool {
	m, ok := n.(map[string]any)
	if !ok {
		return false
	}
	if _, ok := m["$ref"]; ok {
		return false
	}
	switch t := m["type"].(type) {
	case string:
		return true
	case []any:
		seen := map[any]bool{}
		for _, x := range t {
			seen[x] = true
		}
		for _, name := range []string{"null", "boolean", "number", "string", "array", "object"} {
			if !seen[name] {
				return true
			}
		}
	}
	return false
}

// Unsatisfiable reports whether the subschema at a JSON pointer accepts no
// JSON value.
func (a *Analysis) Unsatisfiable(ptr string) Verdict {
	return verdict(a.set(ptr, a.b.over()).isEmpty())
}

// MemberFree reports whether nothing the engine can see constrains the
// value of a member named name in the objects the subschema at ptr accepts.
// It is an over-approximation's answer, meant for a finding that a member
// is left open, not for a proof.
func (a *Analysis) MemberFree(ptr, name string) bool {
	for _, o := range a.set(ptr, a.b.over()).obj {
		if !o.valueFor(name).isFull() {
			return false
		}
	}
	return true
}

// Conflict names the keywords of the schema object at ptr that together
// accept no value: a smallest set the engine finds (removing any one of
// them makes it satisfiable, as far as the engine can tell). It is nil when
// the schema is not proven unsatisfiable, or when no keyword of its own is
// to blame (a reference to an unsatisfiable schema is reported as "$ref").
func (a *Analysis) Conflict(ptr string) []string {
	n, ok := a.node(ptr)
	m, isObj := n.(map[string]any)
	if !ok || !isObj || a.Unsatisfiable(ptr) != Yes {
		return nil
	}
	keep := map[string]any{}
	for k, v := range m {
		keep[k] = v
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if annotation(k) {
			continue // $schema and $defs stay: the trials keep the draft and the definitions
		}
		trial := map[string]any{}
		for kk, v := range keep {
			if kk != k {
				trial[kk] = v
			}
		}
		if a.unsatisfiableWith(ptr, trial) {
			keep = trial
		}
	}
	out := make([]string, 0, len(keep))
	for k := range keep {
		if !annotation(k) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// unsatisfiableWith reports whether the schema object trial, put at ptr in
// place of the one there, is proven to accept no value: in a copy of the
// document, so that the validator can check an enum against the trial's
// keywords (see constants).
func (a *Analysis) unsatisfiableWith(ptr string, trial map[string]any) bool {
	doc, ok := replace(a.b.root, ptr, trial)
	if !ok {
		a.b.depth = 0
		return a.b.build(trial, noPtr, a.b.over()).isEmpty()
	}
	return AnalyzeIn(doc, a.b.budget).Unsatisfiable(ptr) == Yes
}

// replace returns a copy of doc with the value at ptr replaced by v; the
// containers on the way are copied, the rest is shared.
func replace(doc any, ptr string, v any) (any, bool) {
	if ptr == "" {
		return v, true
	}
	head, rest, more := strings.Cut(ptr[1:], "/")
	tok := jsonpointer.Unescape(head)
	if more {
		rest = "/" + rest
	}
	switch c := doc.(type) {
	case map[string]any:
		child, ok := c[tok]
		if !ok {
			return nil, false
		}
		nv, ok := replace(child, rest, v)
		if !ok {
			return nil, false
		}
		out := maps.Clone(c)
		out[tok] = nv
		return out, true
	case []any:
		i, err := strconv.Atoi(tok)
		if err != nil || i < 0 || i >= len(c) {
			return nil, false
		}
		nv, ok := replace(c[i], rest, v)
		if !ok {
			return nil, false
		}
		out := slices.Clone(c)
		out[i] = nv
		return out, true
	}
	return nil, false
}

// annotation reports keywords that never reject a value but may stay in a
// conflict's smallest set because removing them changes nothing.
func annotation(k string) bool {
	return slices.Contains([]string{"$schema", "$id", "$anchor", "$dynamicAnchor", "$defs", "definitions", "title", "description", "$comment", "examples", "default"}, k) || strings.HasPrefix(k, "x-")
}

// Vacuous reports whether a schema document accepts every JSON value.
func Vacuous(doc any) Verdict { return Analyze(doc).Vacuous("") }

// Unsatisfiable reports whether a schema document accepts no JSON value.
func Unsatisfiable(doc any) Verdict { return Analyze(doc).Unsatisfiable("") }

// Includes reports whether every JSON value that sub accepts is accepted
// by super; the two are separate documents.
func Includes(sub, super any) Verdict { return IncludesIn(sub, super, nil) }

// IncludesIn is Includes with the time its value checks take spent from b
// (nil for a budget of its own).
func IncludesIn(sub, super any, bud *Budget) Verdict {
	if bud == nil {
		bud = NewBudget()
	}
	ab, bb := newBuilder(sub, bud), newBuilder(super, bud)
	a := ab.build(sub, "", ab.over())
	b := bb.build(super, "", bb.under())
	return verdict(subset(a, b, &work{left: maxWork}))
}
