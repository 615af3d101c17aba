package testmodel

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"agentc.dev/agentc/plan"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// Bounds on the work of one Synthesize call, so that no schema hangs it.
const (
	attempts     = 4      // whole-value attempts, each with its own choices
	stepBudget   = 100000 // units of work per attempt: steps, and pairs a validation visits
	maxDepth     = 48     // nesting of the value
	softDepth    = 4      // below this depth a varied value adds no optional members
	maxItemsCap  = 10000  // an array needing more items than this is refused
	maxLengthCap = 100000 // a string needing more characters than this is refused
	maxCombos    = 24     // anyOf/oneOf/if combinations generated per value
	maxPrunes    = 512    // combinations discarded before generation per value
	enumTries    = 256    // enum members tried per value
	uniqueTries  = 24     // variants tried for an item of a uniqueItems array
	typeTries    = 3      // variants tried per type
)

// MaxValueBytes bounds the JSON text of the values one attempt of
// Synthesize builds, every candidate counted, kept or not. The bounds on
// one array's items and one string's length each hold alone, but not
// together: 10,000 strings of 100,000 characters are a gigabyte, which
// ran `agentc run --model test` and `agentc diff` out of memory. 8 MiB is
// the most agentc takes as a run's input (runcmd.MaxInput) and one line
// of a batch (batch.DefaultMaxLine): an answer past it could not be given
// to the agent that reads it. A value that took no more to build is made
// as it was before the bound.
const MaxValueBytes = 8 << 20

// UnsatisfiableError says that no value was found for a schema: the keyword
// that could not be satisfied, where it is and why.
type UnsatisfiableError struct {
	Keyword  string // e.g. "pattern", "not", "oneOf", "false", "uniqueItems"
	Location string // JSON pointer of the schema holding the keyword; "" is the root
	Reason   string
	// Bounded says the search ended at a bound of its own, on its work
	// or on the size of the value, not at a keyword no value passes:
	// the schema may have values.
	Bounded bool
}

func (e *UnsatisfiableError) Error() string {
	at := e.Location
	if at == "" {
		at = "the root"
	}
	return fmt.Sprintf("unsatisfiable schema: %q at %s: %s", e.Keyword, at, e.Reason)
}

// Synthesize returns a JSON value valid against schema (JSON text of a JSON
// Schema, 2020-12 unless its $schema says otherwise). The value depends only
// on schema and seed: seed 0 gives the simplest value, other seeds vary what
// the schema leaves open. Every candidate is checked with the validator the
// runtime uses (plan.CompileSchemaJSON); when none passes, the error is an
// *UnsatisfiableError naming the keyword, never an invalid value.
func Synthesize(schema []byte, seed int64) (json.RawMessage, error) {
	return synthesize(schema, seed, false, nil)
}

// synthesize is Synthesize; preferObject makes an object the first choice
// where the root schema leaves the type open, as tool arguments must be;
// members that ask for one of facts are offered it first.
func synthesize(schema []byte, seed int64, preferObject bool, facts facts) (json.RawMessage, error) {
	root, err := plan.CompileSchemaJSON(schema)
	if err != nil {
		return nil, fmt.Errorf("schema does not compile: %w", err)
	}
	var doc any
	_ = json.Unmarshal(schema, &doc) // it compiled: it is JSON
	var first error
	left := 2 * stepBudget // for all attempts; one may spend half of it
	for a := range attempts {
		g := newGen(seed, a, preferObject)
		g.doc = doc
		g.facts = facts
		g.steps = min(left, stepBudget)
		g.bytes = MaxValueBytes
		spent := g.steps
		out, err := g.top(root)
		if err == nil {
			return out, nil
		}
		if first == nil {
			first = err
		}
		if left -= spent - max(g.steps, 0); left <= 0 {
			break
		}
	}
	return nil, first
}

// gen holds one attempt: its random choices and its remaining work.
type gen struct {
	rng          *rand.Rand
	simple       bool // every choice is the first one: the simplest value
	steps        int
	bytes        int // of JSON text left to build (see MaxValueBytes)
	preferObject bool
	regexps      map[string]*parsedRegexp
	member       string // the name of the member being built ("": none), for a string's label
	busyKw       string // the keyword being worked on, for an error
	busyAt       *jsonschema.Schema
	doc          any // the schema document, for what compiling it drops (see file)
	facts        facts
	memberDepth  int // the depth of the member's own value
}

func newGen(seed int64, attempt int, preferObject bool) *gen {
	g := &gen{preferObject: preferObject, regexps: map[string]*parsedRegexp{}}
	// Seed 0 starts with the simplest value; other seeds start with their
	// own choices and fall back to the simplest value on their second try.
	g.simple = (seed == 0 && attempt == 0) || (seed != 0 && attempt == 1)
	g.rng = rand.New(rand.NewPCG(uint64(seed), uint64(attempt)*0x9e3779b97f4a7c15+1))
	return g
}

// top synthesises a value for root and checks its JSON encoding, decoded
// again, against root.
func (g *gen) top(root *jsonschema.Schema) (json.RawMessage, error) {
	v, err := g.value([]*jsonschema.Schema{root}, nil, 0, 0)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, &UnsatisfiableError{Keyword: "type", Location: "", Reason: "the value does not encode as JSON: " + err.Error()}
	}
	out := bytes.TrimRight(buf.Bytes(), "\n")
	back, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err != nil {
		return nil, &UnsatisfiableError{Keyword: "type", Location: "", Reason: "the value does not decode: " + err.Error()}
	}
	if err := plan.Validate(root, back); err != nil {
		return nil, fromValidation(err)
	}
	return json.RawMessage(out), nil
}

// step charges one unit of work, done for keyword kw of schema s; an empty
// kw continues the work before. Running out names the keyword last worked on.
func (g *gen) step(kw string, s *jsonschema.Schema) *UnsatisfiableError {
	return g.charge(1, kw, s)
}

// charge charges n units of work, as step does.
func (g *gen) charge(n int, kw string, s *jsonschema.Schema) *UnsatisfiableError {
	if kw != "" {
		g.busyKw, g.busyAt = kw, s
	}
	g.steps -= n
	if g.steps < 0 {
		kw = cmp.Or(g.busyKw, "type")
		err := unsat(kw, g.busyAt, "gave up: the search for a value reached its work bound")
		err.Bounded = true
		return err
	}
	return nil
}

// grow charges n bytes of JSON text built, for the keyword being worked
// on. Past MaxValueBytes the attempt ends, as it does past its work bound.
func (g *gen) grow(n int) *UnsatisfiableError {
	g.bytes -= n
	if g.bytes < 0 {
		g.steps = -1
		err := unsat(cmp.Or(g.busyKw, "type"), g.busyAt, "the value would be larger than %d MiB, the most this model builds", MaxValueBytes>>20)
		err.Bounded = true
		return err
	}
	return nil
}

// jsonSize is the length of v's JSON text, counting each byte a string
// escapes as six; deep false counts an array or an object without its
// items or members' values, which were counted as they were built.
func jsonSize(v any, deep bool) int {
	switch v := v.(type) {
	case nil:
		return 4
	case bool:
		return 5
	case string:
		n := len(v) + 2
		for i := 0; i < len(v); i++ {
			if c := v[i]; c < 0x20 || c == '"' || c == '\\' {
				n += 5
			}
		}
		return n
	case json.Number:
		return len(v)
	case []any:
		n := 1 + max(len(v), 1)
		if deep {
			for _, x := range v {
				n += jsonSize(x, true)
			}
		}
		return n
	case map[string]any:
		n := 1 + max(len(v), 1)
		for k, x := range v {
			n += jsonSize(k, false) + 1
			if deep {
				n += jsonSize(x, true)
			}
		}
		return n
	}
	return 24 // a float64 or an int: at most 24 bytes
}

// visits bounds from above the number of (schema, value) pairs that
// validating v against s visits, counting up to limit+1 at most. It follows
// the validator's applicators: a schema that refers to itself from several
// places (oneOf, if, not) costs exponentially in the depth of the value.
func visits(s *jsonschema.Schema, v any, limit int) int {
	c := visitCount{limit: limit}
	c.walk(s, v, nil)
	return min(c.n, limit+1)
}

// visitCount counts the pairs visits visits, until there are more than
// limit.
type visitCount struct {
	n, limit int
}

// walk counts s applied to v and what s applies. here holds the schemas
// applied in place to v, so that a $ref cycle that does not descend counts
// once, as the validator refuses to loop on it.
func (c *visitCount) walk(s *jsonschema.Schema, v any, here []*jsonschema.Schema) {
	if s == nil || c.n > c.limit || slices.Contains(here, s) {
		return
	}
	c.n++
	if s.Bool != nil {
		return
	}
	here = append(here[:len(here):len(here)], s)
	inPlace := []*jsonschema.Schema{s.Ref, s.RecursiveRef, s.Not, s.If, s.Then, s.Else}
	if s.DynamicRef != nil {
		inPlace = append(inPlace, s.DynamicRef.Ref)
	}
	inPlace = append(append(append(inPlace, s.AllOf...), s.AnyOf...), s.OneOf...)
	for _, sub := range inPlace {
		c.walk(sub, v, here)
	}
	switch v := v.(type) {
	case map[string]any:
		c.members(s, v, here)
	case []any:
		c.items(s, v)
	}
}

// members counts what s's object keywords apply to the members of v.
func (c *visitCount) members(s *jsonschema.Schema, v map[string]any, here []*jsonschema.Schema) {
	for name, member := range v {
		matched := false
		if p := s.Properties[name]; p != nil {
			c.walk(p, member, nil)
			matched = true
		}
		for re, p := range s.PatternProperties {
			if re.MatchString(name) {
				c.walk(p, member, nil)
				matched = true
			}
		}
		if ap, ok := s.AdditionalProperties.(*jsonschema.Schema); ok && !matched {
			c.walk(ap, member, nil)
		}
		c.walk(s.UnevaluatedProperties, member, nil)
		c.walk(s.PropertyNames, name, nil)
		c.walk(s.DependentSchemas[name], v, here)
		if d, ok := s.Dependencies[name].(*jsonschema.Schema); ok {
			c.walk(d, v, here)
		}
	}
}

// items counts what s's array keywords apply to the items of v.
func (c *visitCount) items(s *jsonschema.Schema, v []any) {
	for i, item := range v {
		if i < len(s.PrefixItems) {
			c.walk(s.PrefixItems[i], item, nil)
		} else {
			c.walk(s.Items2020, item, nil)
		}
		switch items := s.Items.(type) {
		case *jsonschema.Schema:
			c.walk(items, item, nil)
		case []*jsonschema.Schema:
			if i < len(items) {
				c.walk(items[i], item, nil)
			} else if ai, ok := s.AdditionalItems.(*jsonschema.Schema); ok {
				c.walk(ai, item, nil)
			}
		}
		c.walk(s.Contains, item, nil)
		c.walk(s.UnevaluatedItems, item, nil)
	}
}

func unsat(kw string, s *jsonschema.Schema, format string, args ...any) *UnsatisfiableError {
	loc := ""
	if s != nil {
		loc = pointer(s.Location)
	}
	return &UnsatisfiableError{Keyword: kw, Location: loc, Reason: fmt.Sprintf(format, args...)}
}

// pointer turns a compiled schema location into a JSON pointer in the
// schema document.
func pointer(loc string) string {
	if rest, ok := strings.CutPrefix(loc, plan.SchemaURL+"#"); ok {
		return rest
	}
	return loc
}

// fromValidation names the first keyword a validation error reports.
func fromValidation(err error) error {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &UnsatisfiableError{Keyword: "type", Reason: err.Error()}
	}
	leaf := ve
	for len(leaf.Causes) > 0 {
		leaf = leaf.Causes[0]
	}
	kw := ""
	if p := leaf.ErrorKind.KeywordPath(); len(p) > 0 {
		kw = p[0]
	}
	switch leaf.ErrorKind.(type) {
	case *kind.Not:
		kw = "not"
	case *kind.FalseSchema:
		kw = "false"
	case *kind.RefCycle:
		kw = "$ref"
	case *kind.Dependency:
		kw = "dependencies"
	}
	if kw == "" {
		kw = "type"
	}
	return &UnsatisfiableError{Keyword: kw, Location: pointer(leaf.SchemaURL), Reason: "no candidate value passed: " + leaf.Error()}
}

// pick chooses among n options: the v-th from the first in the simplest
// value, the v-th from a random one otherwise.
func (g *gen) pick(n, v int) int {
	if n <= 0 {
		return 0
	}
	base := 0
	if !g.simple {
		base = g.rng.IntN(n)
	}
	return (base + v) % n
}

// value returns a value valid against every schema in roots. v asks for
// the v-th variant, so that items of a uniqueItems array can differ.
//
// negs are schemas the value should not match: a `not`, the alternatives of
// a oneOf not taken, the `if` of an else branch. They guide the choice of
// members; the roots' validation decides.
func (g *gen) value(roots []*jsonschema.Schema, negs []*jsonschema.Schema, v, depth int) (any, error) {
	var at *jsonschema.Schema
	if len(roots) > 0 {
		at = roots[0]
	}
	if depth > maxDepth {
		return nil, unsat("$ref", at, "the value would nest deeper than %d levels: the schema recurses without a way out", maxDepth)
	}
	var (
		result   any
		found    bool
		firstErr error
		combos   int
		prunes   int
	)
	fail := func(err error) {
		if firstErr == nil {
			firstErr = err
		}
	}
	x := &expansion{g: g, fail: fail}
	x.emit = func(atoms, negs []*jsonschema.Schema) bool {
		if err := conflict(atoms); err != nil {
			fail(err)
			prunes++
			return prunes >= maxPrunes
		}
		combos++
		val, err := g.fromAtoms(roots, atoms, negs, v, depth)
		if err == nil {
			result, found = val, true
			return true
		}
		fail(err)
		return combos >= maxCombos || g.steps <= 0
	}
	x.run(roots, nil, nil, negs)
	if found {
		return result, nil
	}
	if firstErr == nil {
		firstErr = unsat("anyOf", at, "no combination of subschemas admits a value")
	}
	return nil, firstErr
}

// expansion flattens schemas into atoms: the schemas whose own keywords
// all apply to the value, following $ref and allOf, and branching at
// anyOf, oneOf and if.
type expansion struct {
	g    *gen
	emit func(atoms, negs []*jsonschema.Schema) bool // true stops
	fail func(error)
}

type branch struct {
	s  *jsonschema.Schema
	kw string
}

// run expands pending into atoms, then takes the branches one at a time,
// depth first, emitting each full combination; it returns true once emit
// has said stop.
func (x *expansion) run(pending []*jsonschema.Schema, branches []branch, atoms, negs []*jsonschema.Schema) bool {
	atoms, negs, branches, ok := x.flatten(pending, branches, atoms, negs)
	if !ok {
		return false
	}
	if len(branches) == 0 {
		return x.emit(atoms, negs)
	}
	if err := conflict(atoms); err != nil {
		x.fail(err) // no branch can mend it
		return false
	}
	if err := x.g.step(branches[0].kw, branches[0].s); err != nil {
		x.fail(err)
		return true
	}
	b, rest := branches[0], branches[1:]
	if b.kw == "if" {
		return x.ifThenElse(b.s, rest, atoms, negs)
	}
	return x.alternatives(b, rest, atoms, negs)
}

// flatten adds pending and what they apply in place ($ref, allOf) to the
// atoms, their not to negs, and their anyOf, oneOf and if to the branches
// still to take, and returns the three; false if a schema is false.
func (x *expansion) flatten(pending []*jsonschema.Schema, branches []branch, atoms, negs []*jsonschema.Schema) ([]*jsonschema.Schema, []*jsonschema.Schema, []branch, bool) {
	for len(pending) > 0 {
		s := pending[0]
		pending = pending[1:]
		if s.Bool != nil {
			if !*s.Bool {
				x.fail(unsat("false", s, "the schema false admits no value"))
				return nil, nil, nil, false
			}
			continue
		}
		if slices.Contains(atoms, s) {
			continue
		}
		atoms = append(atoms[:len(atoms):len(atoms)], s)
		var more []*jsonschema.Schema
		if s.Ref != nil {
			more = append(more, s.Ref)
		}
		if s.RecursiveRef != nil {
			more = append(more, s.RecursiveRef)
		}
		if s.DynamicRef != nil && s.DynamicRef.Ref != nil {
			more = append(more, s.DynamicRef.Ref)
		}
		more = append(more, s.AllOf...)
		if len(more) > 0 {
			pending = append(more, pending...)
		}
		if s.Not != nil {
			negs = append(negs[:len(negs):len(negs)], s.Not)
		}
		if len(s.AnyOf) > 0 {
			branches = append(branches[:len(branches):len(branches)], branch{s, "anyOf"})
		}
		if len(s.OneOf) > 0 {
			branches = append(branches[:len(branches):len(branches)], branch{s, "oneOf"})
		}
		if s.If != nil && (s.Then != nil || s.Else != nil) {
			branches = append(branches[:len(branches):len(branches)], branch{s, "if"})
		}
	}
	return atoms, negs, branches, true
}

// alternatives runs each alternative of an anyOf or oneOf in turn, from
// one the generator picks; a oneOf's other alternatives become negations.
func (x *expansion) alternatives(b branch, rest []branch, atoms, negs []*jsonschema.Schema) bool {
	alts := b.s.AnyOf
	if b.kw == "oneOf" {
		alts = b.s.OneOf
	}
	n := len(alts)
	start := x.g.pick(n, 0)
	for i := range n {
		k := (start + i) % n
		next := negs
		if b.kw == "oneOf" {
			next = slices.Clip(negs)
			for j, alt := range alts {
				if j != k {
					next = append(next, alt)
				}
			}
		}
		if x.run([]*jsonschema.Schema{alts[k]}, rest, atoms, next) {
			return true
		}
	}
	return false
}

// ifThenElse runs the two ways through s's if: the if and its then, or
// the else with the if negated; which first, the generator picks.
func (x *expansion) ifThenElse(s *jsonschema.Schema, rest []branch, atoms, negs []*jsonschema.Schema) bool {
	thenBranch := []*jsonschema.Schema{s.If}
	if s.Then != nil {
		thenBranch = append(thenBranch, s.Then)
	}
	elseNegs := append(slices.Clip(negs), s.If)
	var elseBranch []*jsonschema.Schema
	if s.Else != nil {
		elseBranch = []*jsonschema.Schema{s.Else}
	}
	order := [2]bool{true, false}
	if x.g.pick(2, 0) == 1 {
		order = [2]bool{false, true}
	}
	for _, then := range order {
		if then {
			if x.run(thenBranch, rest, atoms, negs) {
				return true
			}
		} else if x.run(elseBranch, rest, atoms, elseNegs) {
			return true
		}
	}
	return false
}

// fromAtoms tries candidates for one combination of atoms, in the order
// const, enum, examples and default, then by type, and returns the first
// that every root accepts.
func (g *gen) fromAtoms(roots, atoms, negs []*jsonschema.Schema, v, depth int) (any, error) {
	t := &trial{g: g, roots: roots}
	// const and enum leave no other choice.
	for _, a := range atoms {
		if a.Const != nil {
			return t.only([]any{*a.Const}, 0, 1)
		}
	}
	for _, a := range atoms {
		if a.Enum == nil {
			continue
		}
		n := len(a.Enum.Values)
		if n == 0 {
			return nil, unsat("enum", a, "the enum is empty")
		}
		return t.only(a.Enum.Values, g.pick(n, v), min(n, enumTries))
	}
	if f, ok := g.fact(depth); ok && v == 0 {
		// A file's own name, size, type or digest, where the member
		// asks for it and takes it.
		if val, ok, err := t.first([]any{f}, 0, 1); err != nil || ok {
			return val, err
		}
	}
	if offered := offeredValues(atoms); v < len(offered) {
		// The first valid one, from the v-th on.
		val, ok, err := t.first(offered, g.pick(len(offered), v), len(offered))
		if err != nil || ok {
			return val, err
		}
	}
	return g.fromTypes(t, atoms, negs, v, depth)
}

// trial checks candidate values against the roots, and keeps the first
// reason a candidate failed.
type trial struct {
	g        *gen
	roots    []*jsonschema.Schema
	firstErr error
}

// fail keeps err if it is the first failure.
func (t *trial) fail(err error) {
	if t.firstErr == nil {
		t.firstErr = err
	}
}

// try tells whether every root accepts val. The error is not a rejection
// but the end of the work bound.
func (t *trial) try(val any) (bool, error) {
	for _, r := range t.roots {
		// A validation costs what it visits, which can grow
		// exponentially with the depth of the value.
		if err := t.g.charge(visits(r, val, t.g.steps), "", nil); err != nil {
			// Name what the candidates so far failed on.
			var ue *UnsatisfiableError
			if errors.As(t.firstErr, &ue) {
				err.Keyword, err.Location = ue.Keyword, ue.Location
			}
			return false, err
		}
		if err := r.Validate(val); err != nil {
			if t.firstErr == nil {
				t.firstErr = fromValidation(err)
			}
			return false, nil
		}
	}
	return true, nil
}

// first tries n of vals, from vals[start] on and round to the beginning,
// and returns the first accepted.
func (t *trial) first(vals []any, start, n int) (any, bool, error) {
	for i := range n {
		val := vals[(start+i)%len(vals)]
		if err := t.g.grow(jsonSize(val, true)); err != nil {
			return nil, false, err
		}
		ok, err := t.try(val)
		if err != nil {
			return nil, false, err
		}
		if ok {
			return val, true, nil
		}
	}
	return nil, false, nil
}

// only is first for values that leave no other choice (const, enum): when
// none is accepted, the error says why.
func (t *trial) only(vals []any, start, n int) (any, error) {
	val, ok, err := t.first(vals, start, n)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, t.firstErr
	}
	return val, nil
}

// offeredValues lists the values the atoms offer: their examples, then
// their defaults.
func offeredValues(atoms []*jsonschema.Schema) []any {
	var offered []any
	for _, a := range atoms {
		offered = append(offered, a.Examples...)
	}
	for _, a := range atoms {
		if a.Default != nil {
			offered = append(offered, *a.Default)
		}
	}
	return offered
}

// fromTypes builds candidates of each type the atoms allow, in typeOrder,
// a few variants of each, and returns the first accepted.
func (g *gen) fromTypes(t *trial, atoms, negs []*jsonschema.Schema, v, depth int) (any, error) {
	types, err := typesOf(atoms)
	if err != nil {
		return nil, err
	}
	for _, jt := range g.typeOrder(types, atoms, depth) {
		for i := range typeTries {
			val, err := g.ofType(jt, atoms, negs, v+i, depth)
			if err == nil {
				// Its items and members were counted as they were built.
				if e := g.grow(jsonSize(val, false)); e != nil {
					err = e
				}
			}
			if err != nil {
				if g.steps <= 0 {
					return nil, err
				}
				t.fail(err)
				break // another variant of this type will not do better
			}
			ok, err := t.try(val)
			if err != nil {
				return nil, err
			}
			if ok {
				return val, nil
			}
		}
	}
	if t.firstErr == nil {
		t.firstErr = unsat("type", firstOr(atoms), "no type admits a value")
	}
	return nil, t.firstErr
}

// JSON types, with integer apart from the other numbers.
type jtype uint8

const (
	tNull jtype = 1 << iota
	tBoolean
	tInteger
	tNumber // numbers that need not be integers
	tString
	tArray
	tObject
	tAll = tNull | tBoolean | tInteger | tNumber | tString | tArray | tObject
)

func typesOf(atoms []*jsonschema.Schema) (jtype, error) {
	t := tAll
	for _, a := range atoms {
		if a.Types == nil {
			continue
		}
		var u jtype
		for _, name := range a.Types.ToStrings() {
			switch name {
			case "null":
				u |= tNull
			case "boolean":
				u |= tBoolean
			case "integer":
				u |= tInteger
			case "number":
				u |= tInteger | tNumber
			case "string":
				u |= tString
			case "array":
				u |= tArray
			case "object":
				u |= tObject
			}
		}
		t &= u
		if t == 0 {
			return 0, unsat("type", a, "no type is allowed by every subschema (this one allows %s)", strings.Join(a.Types.ToStrings(), ", "))
		}
	}
	return t, nil
}

// conflict finds, cheaply, a contradiction among atoms that no value can
// get past: no common type, two different consts, or, for an object, a
// required member that is forbidden.
func conflict(atoms []*jsonschema.Schema) error {
	types, err := typesOf(atoms)
	if err != nil {
		return err
	}
	var c *jsonschema.Schema
	for _, a := range atoms {
		if a.Const == nil {
			continue
		}
		if c != nil && key(*a.Const) != key(*c.Const) {
			return unsat("const", a, "two subschemas ask for different constants")
		}
		c = a
	}
	if types == tObject {
		for _, a := range atoms {
			for _, name := range a.Required {
				if _, forbidden := memberSchemas(atoms, name); forbidden != nil {
					return forbidden
				}
			}
		}
	}
	return nil
}

// typeOrder lists the allowed types, those the keywords hint at first.
func (g *gen) typeOrder(allowed jtype, atoms []*jsonschema.Schema, depth int) []jtype {
	var hinted jtype
	for _, a := range atoms {
		if a.Properties != nil || a.Required != nil || a.PatternProperties != nil || a.AdditionalProperties != nil ||
			a.MinProperties != nil || a.MaxProperties != nil || a.PropertyNames != nil || a.DependentRequired != nil ||
			a.DependentSchemas != nil || a.Dependencies != nil || a.UnevaluatedProperties != nil {
			hinted |= tObject
		}
		if a.Items != nil || a.Items2020 != nil || a.PrefixItems != nil || a.Contains != nil || a.MinItems != nil ||
			a.MaxItems != nil || a.UniqueItems || a.AdditionalItems != nil || a.UnevaluatedItems != nil {
			hinted |= tArray
		}
		if a.MinLength != nil || a.MaxLength != nil || a.Pattern != nil || a.Format != nil {
			hinted |= tString
		}
		if a.Minimum != nil || a.Maximum != nil || a.ExclusiveMinimum != nil || a.ExclusiveMaximum != nil || a.MultipleOf != nil {
			hinted |= tInteger | tNumber
		}
	}
	base := []jtype{tString, tInteger, tNumber, tBoolean, tObject, tArray, tNull}
	if allowed == tAll && hinted == 0 {
		base = []jtype{tNull, tBoolean, tInteger, tString, tObject, tArray, tNumber}
	}
	if g.preferObject && depth == 0 {
		hinted |= tObject
		if allowed&tObject != 0 {
			hinted = tObject
		}
	}
	var first, rest []jtype
	for _, t := range base {
		if allowed&t == 0 {
			continue
		}
		if t == tNumber && allowed&tInteger != 0 && hinted&tNumber == 0 {
			// Integers are numbers: an integer was tried already.
			rest = append(rest, t)
			continue
		}
		if hinted&t != 0 {
			first = append(first, t)
		} else {
			rest = append(rest, t)
		}
	}
	if !g.simple && len(first) == 0 && len(rest) > 1 && depth > 0 {
		k := g.rng.IntN(len(rest))
		rest = append(rest[k:k+1:k+1], slices.Delete(slices.Clone(rest), k, k+1)...)
	}
	return append(first, rest...)
}

func (g *gen) ofType(t jtype, atoms, negs []*jsonschema.Schema, v, depth int) (any, error) {
	switch t {
	case tNull:
		if v > 0 {
			return nil, unsat("type", firstOr(atoms), "null has no other variant")
		}
		return nil, nil
	case tBoolean:
		if v > 1 {
			return nil, unsat("type", firstOr(atoms), "a boolean has two values")
		}
		return g.pick(2, v) == 1, nil
	case tInteger, tNumber:
		return g.number(atoms, t == tInteger, v)
	case tString:
		return g.str(atoms, v)
	case tArray:
		return g.array(atoms, v, depth)
	default:
		return g.object(atoms, negs, v, depth)
	}
}

func firstOr(atoms []*jsonschema.Schema) *jsonschema.Schema {
	if len(atoms) > 0 {
		return atoms[0]
	}
	return nil
}
