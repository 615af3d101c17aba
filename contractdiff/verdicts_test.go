package contractdiff_test

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"agentc.dev/agentc/contractdiff"
	"agentc.dev/agentc/inclusion"
	"agentc.dev/agentc/internal/schemagen"
	"agentc.dev/agentc/plan"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The property test of Compare's verdicts runs a few hundred schema pairs
// by default; -diffprop.pairs=100000 runs the full check, and
// -diffprop.seed and -diffprop.pair reproduce one pair a failure names:
//
//	go test ./contractdiff -run TestVerdictsHold -diffprop.pairs=100000
//	go test ./contractdiff -run TestVerdictsHold -diffprop.seed=1 -diffprop.pair=4711
var (
	propPairs  = flag.Int("diffprop.pairs", 250, "schema pairs TestVerdictsHold compares")
	propSeed   = flag.Uint64("diffprop.seed", 1, "seed of TestVerdictsHold's pairs")
	propPair   = flag.Int("diffprop.pair", -1, "run only this pair of TestVerdictsHold (with its seed)")
	propShrink = flag.Int("diffprop.shrink", 1, "failing pairs of each kind TestVerdictsHold shrinks before printing")
	propFirst  = flag.Int("diffprop.first", 0, "first pair of TestVerdictsHold (with -diffprop.pairs, a range of a long run split across processes)")
)

// A contract part is the input or the output schema of an agent, with the
// direction a verdict of compatible claims for it.
type contractPart struct {
	name, prefix string
	// input: every value the old schema accepts the new accepts (callers
	// keep working); output: every value the new accepts the old accepts
	// (consumers keep working).
	input bool
}

var contractParts = []contractPart{{"output", "/output/schema", false}, {"input", "/input/schema", true}}

// subSuper is the pair a verdict of compatible claims sub ⊆ super of.
func (p contractPart) subSuper(old, new any) (sub, super any) {
	if p.input {
		return old, new
	}
	return new, old
}

// verdictOf is the class a part's findings give it, as the command line
// exits on: the highest among them, compatible when there is none.
func verdictOf(fs []contractdiff.Finding, p contractPart) (contractdiff.Class, []contractdiff.Finding) {
	rank := map[contractdiff.Class]int{contractdiff.Compatible: 0, contractdiff.Undecided: 1, contractdiff.Breaking: 2}
	v := contractdiff.Compatible
	var mine []contractdiff.Finding
	for _, f := range fs {
		if f.Pointer != p.prefix && !strings.HasPrefix(f.Pointer, p.prefix+"/") {
			continue
		}
		mine = append(mine, f)
		if rank[f.Class] > rank[v] {
			v = f.Class
		}
	}
	return v, mine
}

// agentOf is an agent whose input and output schemas are both s.
func agentOf(s any) (*plan.Agent, error) {
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return &plan.Agent{Input: &plan.Input{Schema: raw}, Output: &plan.Output{Name: "answer", Description: "d", Schema: raw}}, nil
}

// schemaPair is one generated comparison: how it was made, and the two
// documents.
type schemaPair struct {
	how      string
	old, new any
}

// genPair makes pair i of a seed: most are a schema and the same with one
// to three edits; some a meaning-preserving refactor (alone or with an
// edit); some two schemas made apart.
func genPair(seed uint64, i int) schemaPair {
	rng := rand.New(rand.NewPCG(seed, uint64(i)))
	g := schemagen.NewRand(rng, 8+rng.IntN(72))
	old := g.Root()
	switch k := rng.IntN(20); {
	case k < 12:
		n := 1 + rng.IntN(3)
		new := old
		for range n {
			new = g.Edit(rng, new)
		}
		return schemaPair{fmt.Sprintf("%d edits", n), old, new}
	case k < 17:
		o, n, name, ok := schemagen.Refactor(rng, old)
		if !ok {
			return schemaPair{"1 edit", old, g.Edit(rng, old)}
		}
		if k == 16 {
			return schemaPair{"refactor " + name + " and 1 edit", o, g.Edit(rng, n)}
		}
		return schemaPair{"refactor " + name, o, n}
	default:
		return schemaPair{"independent", old, g.Root()}
	}
}

// A defect is a verdict the validator contradicts.
type defect struct {
	kind  string // unsound, or false breaking, and the part
	part  string
	value any // the value that shows an unsound verdict
	seed  uint64
	index int
	how   string
	old   any
	new   any
	what  string // the finding or value that shows it
}

// propStats counts what the property test saw.
type propStats struct {
	pairs, skipped, values int
	verdicts               map[string]int // part and class
	refactors              map[string]int // refactor name and class
	undecidedBreaking      int            // undecided verdicts the sampler found a counterexample to
}

func TestVerdictsHold(t *testing.T) {
	seed := *propSeed
	st := &propStats{verdicts: map[string]int{}, refactors: map[string]int{}}
	var defects []defect
	first, last := *propFirst, *propFirst+*propPairs
	if *propPair >= 0 {
		first, last = *propPair, *propPair+1
	}
	// The slowest pairs are named at the end, so a long run that slows
	// down says where.
	type slowPair struct {
		index int
		took  time.Duration
	}
	var slowest []slowPair
	for i := first; i < last; i++ {
		p := genPair(seed, i)
		start := time.Now()
		ds, ok := checkPair(t, st, seed, i, p, checkOpts{count: true})
		slowest = append(slowest, slowPair{i, time.Since(start)})
		slices.SortFunc(slowest, func(a, b slowPair) int { return cmp.Compare(b.took, a.took) })
		slowest = slowest[:min(len(slowest), 5)]
		if !ok {
			st.skipped++
			continue
		}
		st.pairs++
		defects = append(defects, ds...)
	}
	t.Logf("seed %d: %d pairs compared (%d skipped: a schema the validator refuses), %d values checked", seed, st.pairs, st.skipped, st.values)
	for _, k := range slices.Sorted(maps.Keys(st.verdicts)) {
		t.Logf("  %-22s %6d", k, st.verdicts[k])
	}
	for _, sp := range slowest {
		t.Logf("  slow: -diffprop.pair=%d took %v", sp.index, sp.took.Round(time.Millisecond))
	}
	und := st.verdicts["output undecided"] + st.verdicts["input undecided"]
	t.Logf("undecided: %d of %d verdicts (%.1f%%); the sampler found a counterexample to %d of them", und, 2*st.pairs, 100*float64(und)/float64(max(1, 2*st.pairs)), st.undecidedBreaking)
	for _, k := range slices.Sorted(maps.Keys(st.refactors)) {
		t.Logf("  refactor %-40s %6d", k, st.refactors[k])
	}
	byKind := map[string][]defect{}
	for _, d := range defects {
		byKind[d.kind] = append(byKind[d.kind], d)
	}
	for _, kind := range slices.Sorted(maps.Keys(byKind)) {
		ds := byKind[kind]
		var at []string
		for _, d := range ds {
			at = append(at, fmt.Sprint(d.index))
		}
		t.Errorf("%d %s verdicts, at -diffprop.pair=%s", len(ds), kind, strings.Join(at, ","))
		for j, d := range ds {
			if j >= *propShrink {
				break
			}
			old, new, what := shrinkDefect(t, d)
			t.Errorf("%s: -diffprop.seed=%d -diffprop.pair=%d (%s)\n\told: %s\n\tnew: %s\n\t%s\n\tshrunk old: %s\n\tshrunk new: %s\n\t%s",
				kind, d.seed, d.index, d.how, propJSON(d.old), propJSON(d.new), d.what, propJSON(old), propJSON(new), what)
		}
	}
	// The check must have had something to check: most pairs compile, and
	// each class is reached.
	if *propPair < 0 && (st.pairs < (last-first)/2 || st.verdicts["output compatible"] == 0 || st.verdicts["output breaking"] == 0) {
		t.Errorf("the generator lost its reach: %d pairs compared of %d, verdicts %v", st.pairs, last-first, st.verdicts)
	}
}

// checkOpts narrow checkPair to one part, for shrinking: values that
// showed a failure before are tried first, and nothing is counted.
type checkOpts struct {
	count bool
	part  string
	hints []any
}

// checkPair compares one pair and checks each part's verdict; ok is false
// when a schema does not compile.
func checkPair(t *testing.T, st *propStats, seed uint64, i int, p schemaPair, opt checkOpts) (defects []defect, ok bool) {
	t.Helper()
	oldS, err1 := plan.CompileSchema(p.old)
	newS, err2 := plan.CompileSchema(p.new)
	if err1 != nil || err2 != nil {
		return nil, false
	}
	oa, err := agentOf(p.old)
	if err != nil {
		t.Fatal(err)
	}
	na, err := agentOf(p.new)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := contractdiff.Compare(oa, na)
	if err != nil {
		t.Fatalf("-diffprop.seed=%d -diffprop.pair=%d: %v\n\told: %s\n\tnew: %s", seed, i, err, propJSON(p.old), propJSON(p.new))
	}
	rng := rand.New(rand.NewPCG(seed^0x5eed, uint64(i)))
	count := opt.count
	for _, part := range contractParts {
		if opt.part != "" && part.name != opt.part {
			continue
		}
		class, mine := verdictOf(fs, part)
		sub, super := part.subSuper(p.old, p.new)
		subS, superS := newS, oldS
		if part.input {
			subS, superS = oldS, newS
		}
		if count {
			st.verdicts[part.name+" "+string(class)]++
			if name, ok := strings.CutPrefix(p.how, "refactor "); ok && !strings.Contains(name, "edit") {
				st.refactors[name+" "+part.name+" "+string(class)]++
			}
		}
		d := defect{seed: seed, index: i, how: p.how, old: p.old, new: p.new, part: part.name}
		switch class {
		case contractdiff.Compatible:
			n, bad, found := findCounterexample(rng, sub, super, subS, superS, opt.hints...)
			st.values += n
			if found {
				d.kind = "unsound compatible " + part.name
				d.value = bad
				d.what = fmt.Sprintf("value %s: the %s accepts it, the %s rejects it", propJSON(bad), sideName(part, true), sideName(part, false))
				defects = append(defects, d)
			}
		case contractdiff.Breaking:
			for _, f := range mine {
				if f.Class != contractdiff.Breaking || f.HasExample && accepts(subS, f.Example) && !accepts(superS, f.Example) {
					continue
				}
				// Every breaking finding must show its value. Where the
				// sampler finds none either, the change may well break
				// nobody: a false breaking; where it finds one, the verdict
				// stands and only the finding's example is wrong.
				d.kind = "false breaking " + part.name
				d.what = fmt.Sprintf("finding %s at %s, example %s: the %s accepts it: %v, the %s accepts it: %v",
					f.Rule, f.Pointer, exampleText(f), sideName(part, true), f.HasExample && accepts(subS, f.Example), sideName(part, false), f.HasExample && accepts(superS, f.Example))
				n, bad, found := findCounterexample(rng, sub, super, subS, superS, opt.hints...)
				st.values += n
				if found {
					d.kind = "unconfirmed breaking example " + part.name
					d.what += fmt.Sprintf("; %s would show it", propJSON(bad))
				}
				defects = append(defects, d)
				break
			}
		default:
			if count {
				n, _, found := findCounterexample(rng, sub, super, subS, superS, opt.hints...)
				st.values += n
				if found {
					st.undecidedBreaking++
				}
			}
		}
	}
	return defects, true
}

func sideName(p contractPart, sub bool) string {
	if p.input == sub {
		return "old"
	}
	return "new"
}

func exampleText(f contractdiff.Finding) string {
	if !f.HasExample {
		return "(none)"
	}
	return propJSON(f.Example)
}

func accepts(s *jsonschema.Schema, v any) bool { return s.Validate(v) == nil }

// Sizes of the sampler: mutations of each value made for a schema, and
// random values.
const (
	mutationsPerValue = 4
	randomValues      = 40
)

// findCounterexample looks for a value sub accepts and super rejects, among:
// the engine's witnesses (for the pair, and values of each side and
// outside super), values near every number, length, enum and const
// member of both (boundary values), the test model's values for each
// side and for "sub and not super", mutations of all these, and random
// values of the schemas' atoms. It returns how many values it tried.
func findCounterexample(rng *rand.Rand, sub, super any, subS, superS *jsonschema.Schema, hints ...any) (n int, bad any, found bool) {
	try := func(v any) bool {
		n++
		return accepts(subS, v) && !accepts(superS, v)
	}
	for _, v := range hints {
		if try(v) {
			return n, v, true
		}
	}
	var seeds []any
	for _, q := range [][2]any{{sub, super}, {sub, false}, {super, false}, {true, super}} {
		if w, ok := inclusion.Witness(q[0], q[1]); ok {
			if try(w) {
				return n, w, true
			}
			seeds = append(seeds, w)
		}
	}
	for _, v := range schemagen.Derived(sub, super) {
		if try(v) {
			return n, v, true
		}
	}
	var made schemagen.Set
	made.Synthesized(sub, 0, 1, 2)
	made.Synthesized(super, 0, 1)
	made.Synthesized(schemagen.Combined(sub, []any{sub, super}, []bool{false, true}), 0, 1, 2)
	for _, in := range made.Sorted() {
		if try(in.V) {
			return n, in.V, true
		}
		seeds = append(seeds, in.V)
	}
	atoms := schemagen.Atoms(sub, super)
	for _, s := range seeds {
		v := s
		for range mutationsPerValue {
			v = schemagen.Mutate(rng, v, atoms)
			if try(v) {
				return n, v, true
			}
		}
	}
	for range randomValues {
		if v := schemagen.Random(rng, atoms, 3); try(v) {
			return n, v, true
		}
	}
	return n, nil, false
}

// maxShrinkSteps bounds the comparisons spent shrinking one failing pair.
const maxShrinkSteps = 200

// shrinkDefect drops keywords, members and subschemas from a failing pair
// while it still fails the same way, and returns the smaller pair and what
// shows its failure.
func shrinkDefect(t *testing.T, d defect) (old, new any, what string) {
	old, new, what = d.old, d.new, d.what
	fails := func(o, n any) (defect, bool) {
		st := &propStats{verdicts: map[string]int{}, refactors: map[string]int{}}
		ds, ok := checkPair(t, st, d.seed, d.index, schemaPair{d.how, o, n}, checkOpts{part: d.part, hints: []any{d.value}})
		if !ok {
			return defect{}, false
		}
		for _, x := range ds {
			if x.kind == d.kind {
				return x, true
			}
		}
		return defect{}, false
	}
	steps := 0
	for progress := true; progress && steps < maxShrinkSteps; {
		progress = false
		for _, c := range shrinkCandidates(old, new) {
			if steps >= maxShrinkSteps {
				break
			}
			steps++
			if x, ok := fails(c[0], c[1]); ok {
				old, new, what = c[0], c[1], x.what
				if x.value != nil {
					d.value = x.value
				}
				progress = true
				break
			}
		}
	}
	return old, new, what
}

// shrinkCandidates are the pair with one thing dropped: from both
// documents where they share it, then from either alone.
func shrinkCandidates(old, new any) [][2]any {
	var out [][2]any
	for _, e := range smaller(old) {
		if n, ok := e.applyTo(new); ok {
			out = append(out, [2]any{e.doc, n})
		}
	}
	for _, e := range smaller(old) {
		out = append(out, [2]any{e.doc, new})
	}
	for _, e := range smaller(new) {
		out = append(out, [2]any{old, e.doc})
	}
	return out
}

// A cut is a document with one thing dropped, and where: a keyword of the
// object at ptr, or a member of a list keyword.
type cut struct {
	doc      any
	ptr, key string
	index    int // -1 for the keyword itself
	member   any
}

// applyTo makes the same cut in another document, if it has the same
// thing there.
func (c cut) applyTo(doc any) (any, bool) {
	doc = schemagen.Clone(doc)
	x, ok := inclusion.At(doc, c.ptr)
	m, isObj := x.(map[string]any)
	if !ok || !isObj {
		return nil, false
	}
	v, has := m[c.key]
	if !has {
		return nil, false
	}
	if c.index < 0 {
		delete(m, c.key)
		return doc, true
	}
	l, _ := v.([]any)
	i := slices.IndexFunc(l, func(y any) bool { return propJSON(y) == propJSON(c.member) })
	if i < 0 {
		return nil, false
	}
	m[c.key] = slices.Delete(slices.Clone(l), i, i+1)
	return doc, true
}

// smaller lists the cuts of a document: each keyword of each schema
// object (but $schema), and each member of its lists.
func smaller(doc any) []cut {
	var out []cut
	inclusion.Walk(doc, func(ptr, _ string, sub any) {
		m, ok := sub.(map[string]any)
		if !ok {
			return
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if k == "$schema" {
				continue
			}
			c := cut{ptr: ptr, key: k, index: -1}
			if d, ok := c.applyTo(doc); ok {
				c.doc = d
				out = append(out, c)
			}
			l, ok := m[k].([]any)
			if !ok || len(l) < 2 {
				continue
			}
			for i := range l {
				c := cut{ptr: ptr, key: k, index: i, member: l[i]}
				if d, ok := c.applyTo(doc); ok {
					c.doc = d
					out = append(out, c)
				}
			}
		}
	})
	return out
}

func propJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
