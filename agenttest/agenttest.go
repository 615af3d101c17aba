// Package agenttest checks the runs of an agent's test cases (the
// manifest's tests) against what each case expects: the answer unified
// with the case's CUE constraint, and the run's outcome, bound and tool
// calls read from its report. The cases come from the plan, which keeps
// each constraint as the CUE its manifest wrote; this package compiles
// them, so the runtime, which runs plans, never links CUE.
package agenttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/token"
	cuejson "cuelang.org/go/encoding/json"

	"agentc.dev/agentc/constraint"
	"agentc.dev/agentc/internal/leaf/cueproc"
	"agentc.dev/agentc/internal/leaf/textcut"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
)

// Failure is one expectation a run did not meet.
type Failure struct {
	// Pos is where the expectation was written, "file:line:col" with the
	// file as the checker was told to name it; empty when it has none.
	Pos string `json:"pos,omitempty"`
	Msg string `json:"message"`
}

func (f Failure) String() string {
	if f.Pos == "" {
		return f.Msg
	}
	return f.Pos + ": " + f.Msg
}

// Checker checks runs of one plan's cases. Its zero value is not usable:
// make one with New.
type Checker struct {
	prog   cueproc.Program
	p      *plan.Plan
	base   string  // the directory the plan's source file names are relative to, as messages name it
	budget *Budget // nil: none but each check's own bounds
}

// CheckTime is the time the constraint checks of one agentc test command
// may take in all. Each check is bounded (a child with seconds of CPU
// time), but a manifest's comprehension can make thousands of cases and
// tool_calls entries from a few bytes, each checked against every call,
// one after another: 30 entries held a command for two and a half
// minutes, and 10,000 would hold it for hours.
const CheckTime = 10 * time.Minute

// Budget bounds the time the work sharing it takes in all: once it is
// spent, every later check fails as not checked, never passes (and agentc
// test runs no later case on a Budget of its runs'). It is safe for
// concurrent use.
type Budget struct {
	mu    sync.Mutex
	total time.Duration
	left  time.Duration
}

// NewBudget returns a Budget of d.
func NewBudget(d time.Duration) *Budget { return &Budget{total: d, left: d} }

// Spent reports whether nothing is left. Work that starts before then
// runs to its own bound: a Budget is overrun by at most the work in
// flight.
func (b *Budget) Spent() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.left <= 0
}

// Spend takes d from what is left.
func (b *Budget) Spend(d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.left -= d
}

// Total is the time b had at first.
func (b *Budget) Total() time.Duration { return b.total }

// WithBudget returns c with its checks' time spent from b, which other
// Checkers may share (one command's).
func (c *Checker) WithBudget(b *Budget) *Checker {
	d := *c
	d.budget = b
	return &d
}

// New returns a Checker of the cases of p. base is the directory p's
// Sources are relative to (its manifest's), as positions should name it:
// relative to the working directory, say. The constraints are unified
// with what a run gave in children of prog (cueproc.Self for agentc),
// bounded: a run's answer is the model's, and a comprehension over it
// could take unbounded time and memory.
func New(p *plan.Plan, base string, prog cueproc.Program) *Checker {
	return &Checker{prog: prog, p: p, base: base}
}

// Options say what a run can tell. The test model answers with values made
// from the schema, not from the input: with ShapeOnly, the answer's values
// and the tools' arguments are not checked, only that it answered as the
// contract says (the runtime validated it) and which tools it called.
type Options struct {
	ShapeOnly bool
}

// Check returns the expectations of the case name that the run rep did not
// meet; none when it passed.
func (c *Checker) Check(ctx context.Context, name string, rep *agentrt.Report, o Options) []Failure {
	t, ok := c.p.Tests[name]
	if !ok {
		return []Failure{{Msg: fmt.Sprintf("the agent has no test case %q", name)}}
	}
	var out []Failure
	fail := func(pos, format string, args ...any) {
		out = append(out, Failure{Pos: pos, Msg: fmt.Sprintf(format, args...)})
	}
	want := t.Outcome
	if want == "" {
		want = agentrt.OutcomeOK
	}
	if rep.Outcome != want {
		msg := fmt.Sprintf("outcome: the run ended %s (bound %s), want %s", rep.Outcome, rep.Bound, want)
		if rep.Error != "" {
			msg += ": " + rep.Error
		}
		fail("", "%s", msg)
	}
	if t.Bound != "" && rep.Bound != t.Bound {
		fail("", "bound: the run ended with bound %s, want %s", rep.Bound, t.Bound)
	}
	calls := toolCalls(rep)
	if t.MaxToolCalls != nil && len(calls) > *t.MaxToolCalls {
		fail("", "max_tool_calls: the run made %d tool calls (%s), want at most %d", len(calls), callNames(calls), *t.MaxToolCalls)
	}
	for i, want := range t.ToolCalls {
		out = append(out, c.checkCall(ctx, name, i, want, calls, o)...)
	}
	if t.Expect != nil && !o.ShapeOnly && rep.Outcome == agentrt.OutcomeOK {
		out = append(out, c.checkValue(ctx, "tests."+name+".expect", "expect", t.Expect, rep.Answer)...)
	}
	return out
}

// toolCalls are the calls of the agent's tools a run made, the output
// tool's left out.
func toolCalls(rep *agentrt.Report) []agentrt.CallReport {
	var out []agentrt.CallReport
	for _, r := range rep.Rounds {
		for _, call := range r.ToolCalls {
			if call.Name != rep.OutputTool {
				out = append(out, call)
			}
		}
	}
	return out
}

func callNames(calls []agentrt.CallReport) string {
	if len(calls) == 0 {
		return "none"
	}
	names := make([]string, len(calls))
	for i, call := range calls {
		names[i] = call.Name
	}
	return strings.Join(names, ", ")
}

// maxRefusal bounds, in bytes, why a call was refused as a failure quotes
// it: the reason may quote the model's arguments.
const maxRefusal = 200

// checkCall checks that some call the run made is of the tool want
// names, with arguments its constraint accepts. A call the runtime
// refused, or whose approval was denied, never ran: it is no call made,
// whatever its arguments.
func (c *Checker) checkCall(ctx context.Context, name string, i int, want plan.ToolCallExpect, calls []agentrt.CallReport, o Options) []Failure {
	path := fmt.Sprintf("tests.%s.tool_calls.%d.arguments", name, i)
	var last []Failure
	var refused *agentrt.CallReport
	made := make([]agentrt.CallReport, 0, len(calls))
	for _, call := range calls {
		if call.Refused {
			if call.Name == want.Name && refused == nil {
				refused = &call
			}
			continue
		}
		made = append(made, call)
	}
	n := 0
	for _, call := range made {
		if call.Name != want.Name {
			continue
		}
		n++
		if want.Arguments == nil || o.ShapeOnly {
			return nil
		}
		last = c.checkValue(ctx, path, fmt.Sprintf("tool_calls[%d].arguments", i), want.Arguments, call.Arguments)
		if len(last) == 0 {
			return nil
		}
	}
	if n == 0 {
		msg := fmt.Sprintf("tool_calls[%d]: the run made no call of %s (it called: %s", i, want.Name, callNames(made))
		if refused != nil {
			msg += fmt.Sprintf("; a call of %s was refused: %s", want.Name, textcut.Marked(refused.Error, maxRefusal))
		}
		return []Failure{{Msg: msg + ")"}}
	}
	// Every call of the tool failed the constraint: the last one's
	// failures say how.
	return last
}

// checkValue checks a JSON value the run gave against a constraint
// (CheckValue), in a child: a value that cannot be decided within the
// child's bounds fails, saying why.
func (c *Checker) checkValue(ctx context.Context, path, what string, con *plan.CUEConstraint, data []byte) []Failure {
	at := c.pos(path)
	if len(data) > cueproc.MaxInput {
		return []Failure{{Pos: at.String(), Msg: fmt.Sprintf("%s: the run's value is larger than a constraint is checked against (%d bytes)", what, cueproc.MaxInput)}}
	}
	if c.budget != nil {
		if c.budget.Spent() {
			return []Failure{{Pos: at.String(), Msg: fmt.Sprintf("%s: not checked: the constraint checks of this command have taken the %s they may take in all", what, c.budget.total)}}
		}
		start := time.Now()
		defer func() { c.budget.Spend(time.Since(start)) }()
	}
	var out []Failure
	j := valueJob{File: at.Filename, Line: at.Line, Column: at.Column, What: what, Constraint: con, Value: data}
	if err := c.prog.Run(ctx, Job, j, &out); err != nil {
		return []Failure{{Pos: at.String(), Msg: fmt.Sprintf("%s: could not be checked: %v", what, err)}}
	}
	return out
}

// Job is the name of a constraint's check in a child (cueproc.Serve).
const Job = "expect"

type valueJob struct {
	File       string              `json:"file"`
	Line       int                 `json:"line"`
	Column     int                 `json:"column"`
	What       string              `json:"what"`
	Constraint *plan.CUEConstraint `json:"constraint"`
	Value      json.RawMessage     `json:"value"`
}

// Serve is a constraint's check in the child: CheckValue, over what a
// Checker sent.
func Serve(in json.RawMessage) (any, error) {
	var j valueJob
	if err := json.Unmarshal(in, &j); err != nil {
		return nil, err
	}
	if j.Constraint == nil {
		return nil, errors.New("no constraint to check")
	}
	out := CheckValue(token.Position{Filename: j.File, Line: j.Line, Column: j.Column}, j.What, j.Constraint, j.Value)
	if out == nil {
		out = []Failure{}
	}
	return out, nil
}

// CheckValue unifies a constraint, written at at, with a JSON value a run
// gave and reports every way the value falls short: a conflict,
// positioned at the constraint's part that rejected it, and each field
// the constraint requires that the value lacks. It evaluates in this
// process, without bound: a Checker runs it in a child.
func CheckValue(at token.Position, what string, con *plan.CUEConstraint, data []byte) []Failure {
	ctx := cuecontext.New()
	if at.Filename == "" {
		at.Filename = "expect"
	}
	v, err := constraint.Compile(ctx, con, at)
	if err != nil {
		pos := at
		if errs := cueerrors.Errors(err); len(errs) > 0 {
			pos = constraintPos(errs[0], at)
		}
		return []Failure{{Pos: pos.String(), Msg: fmt.Sprintf("%s does not compile: %v", what, oneLine(err))}}
	}
	if len(data) == 0 {
		return []Failure{{Pos: at.String(), Msg: what + ": the run gave no value to check"}}
	}
	expr, err := cuejson.Extract("answer", data)
	if err != nil {
		return []Failure{{Pos: at.String(), Msg: fmt.Sprintf("%s: the run's value is not JSON: %v", what, err)}}
	}
	got := ctx.BuildExpr(expr)
	u := v.Unify(got)
	var out []Failure
	seen := map[string]bool{}
	add := func(f Failure) {
		if !seen[f.String()] {
			seen[f.String()] = true
			out = append(out, f)
		}
	}
	absent := missing(u, v, got, nil, at)
	if err := u.Validate(cue.Concrete(true), cue.All()); err != nil {
		for _, e := range cueerrors.Errors(err) {
			format, args := e.Msg()
			msg := fmt.Sprintf(format, args...)
			p := strings.Join(e.Path(), ".")
			if slices.ContainsFunc(absent, func(m missingField) bool { return p == m.path || strings.HasPrefix(p, m.path+".") }) {
				continue // reported as absent below
			}
			if p != "" {
				msg = p + ": " + msg
			}
			add(Failure{Pos: constraintPos(e, at).String(), Msg: what + ": " + msg})
		}
	}
	for _, m := range absent {
		add(Failure{Pos: m.pos.String(), Msg: fmt.Sprintf("%s: %s: the value has no such field (want %v)", what, m.path, m.want)})
	}
	return out
}

// pos is where a constraint's text starts, from the plan's Sources, with
// its file under the checker's base directory.
func (c *Checker) pos(path string) token.Position {
	s, ok := c.p.Sources[path]
	if !ok {
		return token.Position{Filename: path}
	}
	parts := strings.Split(s, ":")
	if len(parts) < 3 {
		return token.Position{Filename: s}
	}
	line, _ := strconv.Atoi(parts[len(parts)-2])
	col, _ := strconv.Atoi(parts[len(parts)-1])
	file := strings.Join(parts[:len(parts)-2], ":")
	if c.base != "" && !filepath.IsAbs(file) {
		file = filepath.Join(c.base, filepath.FromSlash(file))
	}
	return token.Position{Filename: file, Line: line, Column: col}
}

// constraintPos is the position in the constraint an error names: where
// the constraint says what the value broke, rather than where the value is.
func constraintPos(e cueerrors.Error, at token.Position) token.Position {
	for _, p := range append([]token.Pos{e.Position()}, e.InputPositions()...) {
		if p.IsValid() && p.Filename() == at.Filename {
			return p.Position()
		}
	}
	return at
}

type missingField struct {
	path string
	want cue.Value
	pos  token.Position
}

// missing finds the fields unification added to the value: those the
// constraint con unified with the value got (u) holds and got lacks.
// Unification completes a value with what a constraint declares, through
// a disjunction's branch, a list's element pattern or a member pattern as
// through a field, so a field the answer lacks would otherwise pass. Each
// is described by the constraint's own field where con names it.
func missing(u, con, got cue.Value, path []string, at token.Position) []missingField {
	var out []missingField
	// By the value's kind: u is bottom when a member conflicts, and its
	// other members are still to be looked at.
	switch got.Kind() {
	case cue.StructKind:
		it, err := u.Fields()
		if err != nil {
			return nil
		}
		for it.Next() {
			sel := cue.MakePath(it.Selector())
			p := append(slices.Clip(path), it.Selector().String())
			c := con.LookupPath(sel)
			g := got.LookupPath(sel)
			if !g.Exists() {
				m := missingField{path: strings.Join(p, "."), want: it.Value(), pos: at}
				if c.Exists() {
					m.want = c
				}
				if pos := m.want.Pos(); pos.IsValid() {
					m.pos = pos.Position()
				}
				out = append(out, m)
				continue
			}
			out = append(out, missing(it.Value(), c, g, p, at)...)
		}
	case cue.ListKind:
		it, err := u.List()
		if err != nil {
			return nil
		}
		for i := 0; it.Next(); i++ {
			sel := cue.MakePath(cue.Index(i))
			if g := got.LookupPath(sel); g.Exists() {
				out = append(out, missing(it.Value(), con.LookupPath(sel), g, append(slices.Clip(path), strconv.Itoa(i)), at)...)
			}
		}
	}
	return out
}

func oneLine(err error) string {
	var msgs []string
	for _, e := range cueerrors.Errors(err) {
		format, args := e.Msg()
		msg := fmt.Sprintf(format, args...)
		if p := strings.Join(e.Path(), "."); p != "" {
			msg = p + ": " + msg
		}
		msgs = append(msgs, msg)
	}
	if len(msgs) == 0 {
		return err.Error()
	}
	return strings.Join(msgs, "; ")
}
