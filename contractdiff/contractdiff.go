// Package contractdiff compares two versions of an agent's contract and
// classifies each change by the direction data flows: the output is
// produced by the agent and read by consumers, so it may narrow; the input
// is produced by callers, so it may widen. The verdict on a schema is a
// proof about the whole documents: compatible when the inclusion engine
// proves the new output within the old (the old input within the new),
// breaking only with a value the validator confirms against both whole
// documents, and undecided where there is neither. The findings list each
// change to explain the verdict (see schemaChanges), and the rules (see
// Rules) explain a change to a person.
package contractdiff

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"agentc.dev/agentc/inclusion"
	"agentc.dev/agentc/internal/leaf/jsonpointer"
	"agentc.dev/agentc/plan"
)

// Finding is one change of a contract.
type Finding struct {
	Rule  string `json:"rule"`
	Class Class  `json:"class"`
	// Pointer is where the change is, a JSON Pointer into the agent as a
	// plan holds it (/output/schema/properties/a/maxLength).
	Pointer string `json:"pointer"`
	// Old and New are the values before and after; HasOld and HasNew
	// tell a null value from an absent one (in JSON, an absent value has
	// no member).
	Old    any  `json:"old,omitempty"`
	New    any  `json:"new,omitempty"`
	HasOld bool `json:"-"`
	HasNew bool `json:"-"`
	// Example is, for a breaking schema change, a value that shows it: one
	// the new output schema accepts and the old rejects, or one the old
	// input schema accepts and the new rejects, each whole.
	Example any `json:"example,omitempty"`
	// HasExample tells an Example of null from none.
	HasExample bool `json:"-"`
	// Unexamined marks an undecided change that was not examined: the
	// comparison had spent its work budget (MaxWork), the time its
	// analyses may spend matching patterns (inclusion.MatchTime) or what
	// its examples may build (inclusion.MaxSampleValues,
	// MaxSampleBytes), or the example of a change in one object could not
	// be made whole within the test model's bounds (testmodel.MaxValueBytes).
	Unexamined bool `json:"unexamined,omitempty"`
}

// MarshalJSON writes a finding with its members old, new and example
// where they are present, null included.
func (f Finding) MarshalJSON() ([]byte, error) {
	type plain Finding // without this method
	type withValues struct {
		plain
		Old     any `json:"old,omitempty"`
		New     any `json:"new,omitempty"`
		Example any `json:"example,omitempty"`
	}
	v := withValues{plain: plain(f)}
	if f.HasOld {
		v.Old = json.RawMessage(mustJSON(f.Old))
	}
	if f.HasNew {
		v.New = json.RawMessage(mustJSON(f.New))
	}
	if f.HasExample {
		v.Example = json.RawMessage(mustJSON(f.Example))
	}
	return json.Marshal(v)
}

// mustJSON encodes a JSON value decoded from JSON, which cannot fail.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte("null")
	}
	return b
}

// MaxWork is the work one comparison (Compare) may spend deciding schema
// changes, counted in JSON values: deciding a change compiles, copies and
// analyses the whole schema before and after it, so it costs the values of
// both. A change found once the budget is spent is undecided, and marked
// Unexamined: running out never gives a verdict, only the absence of one.
// Without a bound, a schema of thousands of properties each changed costs
// thousands of whole-schema compilations (400 took 44 s, 5,000 hours); with
// it, a comparison costs about five changes of the largest schema vet
// accepts (plan.MaxSchemaValues), and hundreds of a schema of a few
// hundred values.
const MaxWork = 200000

// budget is what a comparison may still spend: work, and the time its
// analyses spend matching patterns (inclusion.Budget), shared by all.
type budget struct {
	left    int
	matches *inclusion.Budget
}

func newBudget() *budget { return &budget{left: MaxWork, matches: inclusion.NewBudget()} }

// spend takes the cost of deciding a change between two documents, and
// reports whether there was enough left.
func (b *budget) spend(x, y any) bool {
	if b.left <= 0 || b.matches.Spent() {
		return false
	}
	b.left -= plan.SchemaValues(x, b.left) + plan.SchemaValues(y, b.left)
	return b.left >= 0
}

// AnyBreaking reports whether any finding is breaking.
func AnyBreaking(fs []Finding) bool {
	return slices.ContainsFunc(fs, func(f Finding) bool { return f.Class == Breaking })
}

// Unproved returns, a line each ("breaking ENUM_VALUE_ADDED at
// /output/schema/enum"), the changes from old to new that are not proved
// compatible: what keeps a caller's compatible_with pin from holding. A
// caller both produces the input and consumes the output, so both
// directions count, each as Compare classifies it.
func Unproved(old, new *plan.Agent) ([]string, error) {
	fs, err := Compare(old, new)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range fs {
		if f.Class == Compatible {
			continue
		}
		ptr := f.Pointer
		if ptr == "" {
			ptr = "(root)"
		}
		out = append(out, fmt.Sprintf("%s %s at %s", f.Class, f.Rule, ptr))
	}
	return out, nil
}

// Compare returns the changes from the contract of old to that of new, in
// the order of their pointers within each part of the contract. A nil old
// is an agent that did not exist: one finding, AGENT_ADDED, since no
// program can have relied on it; a nil new one that is gone, AGENT_REMOVED.
func Compare(old, new *plan.Agent) ([]Finding, error) {
	switch {
	case old == nil && new == nil:
		return nil, nil
	case old == nil:
		return []Finding{{Rule: AgentAdded, Class: Compatible, Pointer: "", New: new.Name, HasNew: true}}, nil
	case new == nil:
		return []Finding{{Rule: AgentRemoved, Class: Breaking, Pointer: "", Old: old.Name, HasOld: true}}, nil
	}
	var out []Finding
	work := newBudget()
	add := func(rule, ptr string, o, n any) {
		r, _ := RuleOf(rule)
		out = append(out, Finding{Rule: rule, Class: r.Output, Pointer: ptr, Old: o, New: n, HasOld: o != nil, HasNew: n != nil})
	}
	if o, n := old.Capabilities.Provides, new.Capabilities.Provides; o != n {
		add(ProvidesChanged, "/capabilities/provides", o, n)
	}
	oldIn, err := inputSchema(old)
	if err != nil {
		return nil, err
	}
	newIn, err := inputSchema(new)
	if err != nil {
		return nil, err
	}
	out = append(out, schemaChanges(oldIn, newIn, "/input/schema", input, work)...)
	out = append(out, fileChanges(old, new)...)
	switch o, n := old.Output, new.Output; {
	case o != nil && n == nil:
		add(OutputRemoved, "/output", o.Name, nil)
	case o == nil && n != nil:
		add(OutputAdded, "/output", nil, n.Name)
	case o != nil && n != nil:
		if o.Name != n.Name {
			add(OutputRenamed, "/output/name", o.Name, n.Name)
		}
		if o.Description != n.Description {
			add(OutputDescriptionChanged, "/output/description", o.Description, n.Description)
		}
		if o.KeepsTools != n.KeepsTools {
			add(KeepsToolsChanged, "/output/keeps_tools", o.KeepsTools, n.KeepsTools)
		}
		oldOut, err := decode(o.Schema, "output schema")
		if err != nil {
			return nil, err
		}
		newOut, err := decode(n.Schema, "output schema")
		if err != nil {
			return nil, err
		}
		out = append(out, schemaChanges(oldOut, newOut, "/output/schema", output, work)...)
	}
	return out, nil
}

// fileChanges compares the file inputs of two agents (plan.FileFields):
// the media types each takes, which JSON Schema reads as annotations and
// agentc asserts, and which properties are files at all.
func fileChanges(old, new *plan.Agent) []Finding {
	fields := func(a *plan.Agent) map[string]plan.FileField {
		out := map[string]plan.FileField{}
		if a.Input == nil {
			return out
		}
		fs, _ := plan.FileFields(a.Input.Schema) // a declaration that does not read does not compile
		for _, f := range fs {
			out[f.Name] = f
		}
		return out
	}
	declared := func(a *plan.Agent, name string) bool {
		if a.Input == nil {
			return false
		}
		var s struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		_ = json.Unmarshal(a.Input.Schema, &s)
		_, ok := s.Properties[name]
		return ok
	}
	of, nf := fields(old), fields(new)
	var out []Finding
	add := func(rule, name string, o, n any) {
		r, _ := RuleOf(rule)
		out = append(out, Finding{Rule: rule, Class: r.Input, Pointer: "/input/schema/properties/" + jsonpointer.Escape(name), Old: o, New: n, HasOld: o != nil, HasNew: n != nil})
	}
	for _, name := range slices.Sorted(maps.Keys(union2(of, nf))) {
		o, inO := of[name]
		n, inN := nf[name]
		switch {
		case inO && inN:
			ot, nt := o.Expand(), n.Expand()
			for _, mt := range ot {
				if !slices.Contains(nt, mt) {
					add(FileTypeRemoved, name, mt, nil)
				}
			}
			for _, mt := range nt {
				if !slices.Contains(ot, mt) {
					add(FileTypeAdded, name, nil, mt)
				}
			}
		case inO && declared(new, name):
			add(FileKindChanged, name, "file", "not a file")
		case inN && declared(old, name):
			add(FileKindChanged, name, "not a file", "file")
		}
	}
	return out
}

func union2(a, b map[string]plan.FileField) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// inputSchema is the agent's input schema; an agent that declares none
// takes any value, as the schema true does.
func inputSchema(a *plan.Agent) (any, error) {
	if a.Input == nil {
		return true, nil
	}
	return decode(a.Input.Schema, "input schema")
}

func decode(data json.RawMessage, what string) (any, error) {
	v, err := plan.UnmarshalJSONValue(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return v, nil
}

// direction is the way data flows through a schema.
type direction bool

const (
	output direction = false
	input  direction = true
)

// edit is one change to a schema document: key of the object at ptr set
// to val, or removed.
type edit struct {
	ptr, key string
	val      any
	remove   bool
}

// differ collects the changes between two schema documents.
type differ struct {
	old, new any
	prefix   string
	dir      direction
	work     *budget
	// changes are the changes the walk found, decided once the whole
	// comparison is known (see schemaChanges).
	changes []change
	out     []Finding
	// sub and super are the whole documents the verdict compares: what
	// must be included, and what must include it.
	sub, super any
	// proofs has, for each change found compatible, whether and where it
	// was also proved in the object it is made in.
	proofs []localProof
	// targets are the pointers the references of both documents name
	// (see read), each split into its tokens, found once; opaque says a
	// fragment did not decode.
	targets [][]string
	opaque  bool
	found   bool
}

// change is one change the walk found: its rule and place, its values
// before and after (absent where the keyword is not there), and the edit
// of the old document that makes it.
type change struct {
	rule, ptr string
	o, n      any
	e         edit
	// annotation marks a change no validator reads.
	annotation bool
}

// absent stands, during a walk, for a value that is not there: the
// finding then has no Old or New, where a JSON null is a value.
type absentValue struct{}

var absent any = absentValue{}

// schemaChanges returns the findings between two versions of a schema.
//
// The class of the whole change (the verdict, the highest class among
// the findings) is a proof about the whole schema, never about one
// change alone: compatible when the engine proves the new output within
// the old (the old input within the new) comparing the whole documents,
// or when every change is proved in its own object and the proofs hold
// together (see local.go); breaking when a value is found, and confirmed
// by the validator against both whole documents, that the new output
// accepts and the old rejects (the old input accepts and the new
// rejects); undecided otherwise. Each change is still listed, as
// explanation: its class is what it does alone, except that a change is
// breaking only with an example confirmed against the whole documents.
func schemaChanges(old, new any, prefix string, dir direction, work *budget) []Finding {
	d := &differ{old: old, new: new, prefix: prefix, dir: dir, work: work, sub: new, super: old}
	if dir == input {
		d.sub, d.super = old, new
	}
	d.walk(old, new, "")
	var semantic []change
	for _, c := range d.changes {
		if c.annotation {
			d.add(c.rule, Compatible, c.ptr, c.o, c.n, nil, false)
		} else {
			semantic = append(semantic, c)
		}
	}
	if len(semantic) == 0 {
		return d.out
	}
	// The whole change first: when it is proved, every change is part of
	// a compatible whole.
	if !d.work.spend(d.sub, d.super) {
		for _, c := range semantic {
			d.out = append(d.out, d.finding(c.rule, Undecided, c.ptr, c.o, c.n, nil, false))
			d.out[len(d.out)-1].Unexamined = true
		}
		return d.out
	}
	if inclusion.IncludesIn(d.sub, d.super, d.work.matches) == inclusion.Yes {
		for _, c := range semantic {
			d.add(c.rule, Compatible, c.ptr, c.o, c.n, nil, false)
		}
		return d.out
	}
	witness, hasWitness := inclusion.WitnessIn(d.sub, d.super, d.work.matches)
	hasWitness = hasWitness && confirmed(witness, d.sub, d.super)
	if !hasWitness && d.work.matches.Spent() {
		// The whole was left unproved for want of time: nothing is
		// examined.
		for _, c := range semantic {
			d.out = append(d.out, d.finding(c.rule, Undecided, c.ptr, c.o, c.n, nil, false))
			d.out[len(d.out)-1].Unexamined = true
		}
		return d.out
	}
	for _, c := range semantic {
		if d.spend(c.rule, c.ptr, c.o, c.n) {
			d.decide(c.rule, c.ptr, c.o, c.n, c.e)
		}
	}
	if slices.ContainsFunc(d.out, func(f Finding) bool { return f.Class == Breaking }) {
		return d.out
	}
	if hasWitness {
		// No change alone shows the value the whole change lets through.
		d.add(ChangesCombined, Breaking, "", absent, absent, witness, true)
		return d.out
	}
	if len(semantic) > 1 && !(len(d.proofs) == len(semantic) && composable(d.proofs)) && !slices.ContainsFunc(d.out, func(f Finding) bool { return f.Class != Compatible }) {
		// Each change was judged alone; together they may still widen an
		// output (or narrow an input), as when each frees a value only
		// the other kept out, and the whole is not proved.
		d.add(ChangesCombined, Undecided, "", absent, absent, nil, false)
	}
	if len(semantic) == 1 && len(d.proofs) == 1 && !d.proofs[0].ok {
		// One change, proved compatible only as the whole it is: the whole
		// proof above would have held. A proof that is not the whole's nor
		// its object's is no proof of the whole.
		d.out[len(d.out)-1].Class = Undecided
	}
	return d.out
}

// Keywords by how a change of them is explained.
var (
	annotations = wordSet("title", "description", "$comment", "examples", "default", "deprecated", "readOnly", "writeOnly")
	// lower and upper bounds: raising a lower one narrows.
	lower   = wordSet("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains")
	upper   = wordSet("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains")
	oneSub  = wordSet("items", "additionalItems", "contains", "not", "if", "then", "else", "propertyNames", "additionalProperties", "unevaluatedItems", "unevaluatedProperties")
	listSub = wordSet("allOf", "anyOf", "oneOf", "prefixItems")
	mapSub  = wordSet("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
)

func wordSet(words ...string) map[string]bool {
	m := map[string]bool{}
	for _, w := range words {
		m[w] = true
	}
	return m
}

// walk compares the schemas at ptr in the two documents.
func (d *differ) walk(o, n any, ptr string) {
	om, ook := o.(map[string]any)
	nm, nok := n.(map[string]any)
	if !ook || !nok {
		if !inclusion.Equal(o, n) {
			d.schemaEdit(SchemaChanged, ptr, o, n, d.replace(ptr, n))
		}
		return
	}
	keys := slices.Sorted(maps.Keys(union(om, nm)))
	for _, k := range keys {
		ov, inOld := om[k]
		nv, inNew := nm[k]
		if inOld && inNew && inclusion.Equal(ov, nv) {
			continue
		}
		kp := ptr + "/" + jsonpointer.Escape(k)
		set := edit{ptr: ptr, key: k, val: nv, remove: !inNew}
		// What a finding shows: the values, or their absence.
		so, sn := present(ov, inOld), present(nv, inNew)
		switch {
		case annotations[k] && !d.read(kp, ov, nv):
			d.changes = append(d.changes, change{rule: AnnotationChanged, ptr: kp, o: so, n: sn, annotation: true})
		case annotations[k]:
			// A reference reads it as a schema: a change of one, which a
			// project that silences annotations has not silenced.
			d.schemaEdit(SchemaChanged, kp, so, sn, set)
		case k == "required":
			d.members(ptr, k, ov, nv, RequiredRemoved, RequiredAdded)
		case k == "enum":
			d.members(ptr, k, ov, nv, EnumValueRemoved, EnumValueAdded)
		case k == "properties":
			d.properties(ptr, ov, nv)
		case lower[k] || upper[k]:
			d.schemaEdit(boundRule(k, ov, nv, inOld, inNew), kp, so, sn, set)
		case k == "type":
			d.schemaEdit(TypeChanged, kp, so, sn, set)
		case k == "pattern" || k == "format":
			d.schemaEdit(PatternChanged, kp, so, sn, set)
		case k == "$ref":
			d.schemaEdit(RefChanged, kp, so, sn, set)
		case oneSub[k] && inOld && inNew:
			d.walk(ov, nv, kp)
		case listSub[k] && inOld && inNew && sameLen(ov, nv):
			for i := range ov.([]any) {
				d.walk(ov.([]any)[i], nv.([]any)[i], kp+"/"+strconv.Itoa(i))
			}
		case mapSub[k] && inOld && inNew && isMap(ov) && isMap(nv):
			om, nm := ov.(map[string]any), nv.(map[string]any)
			for _, name := range slices.Sorted(maps.Keys(union(om, nm))) {
				sp := kp + "/" + jsonpointer.Escape(name)
				x, inO := om[name]
				y, inN := nm[name]
				switch {
				case inO && inN:
					d.walk(x, y, sp)
				case !inclusion.Equal(x, y):
					d.schemaEdit(SchemaChanged, sp, present(x, inO), present(y, inN), edit{ptr: kp, key: name, val: y, remove: !inN})
				}
			}
		default:
			d.schemaEdit(SchemaChanged, kp, so, sn, set)
		}
	}
}

// boundRule tells whether a change of a bound keyword widens or narrows.
func boundRule(k string, ov, nv any, inOld, inNew bool) string {
	widens := !inNew // a bound removed
	if inOld && inNew {
		a, b := inclusion.Number(ov), inclusion.Number(nv)
		if a == nil || b == nil {
			return SchemaChanged
		}
		widens = lower[k] == (b.Cmp(a) < 0)
	}
	if widens {
		return BoundWidened
	}
	return BoundNarrowed
}

// members reports the values added to and removed from a list keyword
// (required, enum), one finding each.
func (d *differ) members(ptr, k string, ov, nv any, removedRule, addedRule string) {
	ol, _ := ov.([]any)
	nl, _ := nv.([]any)
	kp := ptr + "/" + jsonpointer.Escape(k)
	// An enum gone altogether admits every value, where removing its
	// values one by one would seem to narrow it.
	if ov != nil && ol == nil || nv != nil && nl == nil || k == "enum" && nv == nil {
		d.schemaEdit(SchemaChanged, kp, present(ov, ov != nil), present(nv, nv != nil), edit{ptr: ptr, key: k, val: nv, remove: nv == nil})
		return
	}
	// Members are matched by key, not pairwise: an enum of thousands of
	// values on each side costs thousands of steps.
	okeys, nkeys := memberKeys(ol), memberKeys(nl)
	inOld, inNew := keySet(okeys), keySet(nkeys)
	for i, x := range ol {
		if okeys[i] != "" && inNew[okeys[i]] {
			continue
		}
		// ol without every member equal to x (none, when x is equal to
		// nothing, itself included)
		var rest []any
		for j, y := range ol {
			if okeys[i] == "" || okeys[j] != okeys[i] {
				rest = append(rest, y)
			}
		}
		d.schemaEdit(removedRule, kp, x, absent, edit{ptr: ptr, key: k, val: rest, remove: len(rest) == 0 && k == "required"})
	}
	for i, y := range nl {
		if nkeys[i] != "" && inOld[nkeys[i]] {
			continue
		}
		d.schemaEdit(addedRule, kp, absent, y, edit{ptr: ptr, key: k, val: append(slices.Clone(ol), y)})
	}
}

// properties reports the properties added and removed, and walks the ones
// both versions declare.
func (d *differ) properties(ptr string, ov, nv any) {
	om, _ := ov.(map[string]any)
	nm, _ := nv.(map[string]any)
	kp := ptr + "/properties"
	if ov != nil && om == nil || nv != nil && nm == nil {
		d.schemaEdit(SchemaChanged, kp, present(ov, ov != nil), present(nv, nv != nil), edit{ptr: ptr, key: "properties", val: nv, remove: nv == nil})
		return
	}
	if om == nil {
		// The edits below add members to an object that must exist.
		if doc, ok := d.apply(edit{ptr: ptr, key: "properties", val: map[string]any{}}); ok {
			d.old = doc
		}
	}
	for _, name := range slices.Sorted(maps.Keys(union(om, nm))) {
		x, inO := om[name]
		y, inN := nm[name]
		sp := kp + "/" + jsonpointer.Escape(name)
		switch {
		case inO && inN:
			d.walk(x, y, sp)
		case inO:
			d.schemaEdit(PropertyRemoved, sp, x, absent, edit{ptr: kp, key: name, remove: true})
		default:
			d.schemaEdit(PropertyAdded, sp, absent, y, edit{ptr: kp, key: name, val: y})
		}
	}
}

// replace is the edit that puts n in place of the schema at ptr.
func (d *differ) replace(ptr string, n any) edit {
	if ptr == "" {
		return edit{val: n}
	}
	parent, last := splitPointer(ptr)
	return edit{ptr: parent, key: last, val: n}
}

// schemaEdit records a change of the schema, made by an edit of the old
// document; schemaChanges decides it.
func (d *differ) schemaEdit(rule, ptr string, o, n any, e edit) {
	d.changes = append(d.changes, change{rule: rule, ptr: ptr, o: o, n: n, e: e})
}

// present is v where it is there, else absent.
func present(v any, there bool) any {
	if !there {
		return absent
	}
	return v
}

// spend takes the work of deciding a change from the comparison's budget;
// once it is spent, the change is reported undecided and unexamined, and
// spend reports false.
func (d *differ) spend(rule, ptr string, o, n any) bool {
	if d.work.spend(d.old, d.new) {
		return true
	}
	f := d.finding(rule, Undecided, ptr, o, n, nil, false)
	f.Unexamined = true
	d.out = append(d.out, f)
	return false
}

// decide classifies a change whose work is paid for, alone: made to the
// old document. An example of a breaking change is confirmed against the
// whole documents, so that it shows what the whole change breaks.
func (d *differ) decide(rule, ptr string, o, n any, e edit) {
	changed, ok := d.apply(e)
	if !ok {
		d.add(rule, Undecided, ptr, o, n, nil, false)
		return
	}
	sub, super := changed, d.old // what the agent now produces must be in what consumers read
	if d.dir == input {
		sub, super = d.old, changed // what callers send must still be accepted
	}
	// The change in the object it is made in (see local.go): what decides
	// it where the whole is beyond the engine, and what lets several
	// changes proved so be proved together.
	before, after, node, kept, isLocal := d.local(e, changed)
	lsub, lsuper := after, before
	if d.dir == input {
		lsub, lsuper = before, after
	}
	m := d.work.matches
	localYes := isLocal && inclusion.IncludesIn(lsub, lsuper, m) == inclusion.Yes
	if inclusion.IncludesIn(sub, super, m) == inclusion.Yes || localYes {
		d.add(rule, Compatible, ptr, o, n, nil, false)
		d.proofs = append(d.proofs, localProof{node: node, kept: kept, ok: localYes})
		return
	}
	if w, ok := inclusion.WitnessIn(sub, super, m); ok && confirmed(w, d.sub, d.super) {
		d.add(rule, Breaking, ptr, o, n, w, true)
		return
	}
	bounded := false
	if isLocal {
		if w, ok := inclusion.WitnessIn(lsub, lsuper, m); ok {
			x, ok, b := lift(d.sub, node, w)
			if ok && confirmed(x, d.sub, d.super) {
				d.add(rule, Breaking, ptr, o, n, x, true)
				return
			}
			bounded = b
		}
	}
	d.add(rule, Undecided, ptr, o, n, nil, false)
	d.out[len(d.out)-1].Unexamined = m.Spent() || bounded
}

// confirmed checks a counterexample with the validator the runtime uses,
// so a verdict of breaking never rests on the engine alone.
func confirmed(w, sub, super any) bool {
	s, err := plan.CompileSchema(sub)
	if err != nil {
		return false
	}
	t, err := plan.CompileSchema(super)
	if err != nil {
		return false
	}
	return confirms(s, t, w)
}

// confirms reports whether s accepts w and t rejects it. A rejection
// because a pattern's match could not be decided in time is no
// rejection: the witness is not confirmed.
func confirms(s, t *jsonschema.Schema, w any) bool {
	if plan.Validate(s, w) != nil {
		return false
	}
	err := plan.Validate(t, w)
	var ue *plan.UndecidedError
	return err != nil && !errors.As(err, &ue)
}

func (d *differ) add(rule string, c Class, ptr string, o, n, example any, hasExample bool) {
	d.out = append(d.out, d.finding(rule, c, ptr, o, n, example, hasExample))
}

// finding makes a finding; o and n are absent or a value.
func (d *differ) finding(rule string, c Class, ptr string, o, n, example any, hasExample bool) Finding {
	f := Finding{Rule: rule, Class: c, Pointer: d.prefix + ptr, Example: example, HasExample: hasExample}
	if o != absent {
		f.Old, f.HasOld = o, true
	}
	if n != absent {
		f.New, f.HasNew = n, true
	}
	return f
}

// apply returns a copy of the old document with e made; ok is false for
// an edit that cannot be made there, which must never pass for no change.
func (d *differ) apply(e edit) (doc any, ok bool) {
	doc = clone(d.old)
	if e.ptr == "" && e.key == "" {
		return clone(e.val), true
	}
	parent, ok := inclusion.At(doc, e.ptr)
	if !ok {
		return nil, false
	}
	switch p := parent.(type) {
	case map[string]any:
		if e.remove {
			delete(p, e.key)
		} else {
			p[e.key] = clone(e.val)
		}
		return doc, true
	case []any:
		// An item of allOf, anyOf, oneOf or prefixItems, replaced.
		if i, err := strconv.Atoi(e.key); err == nil && i >= 0 && i < len(p) && !e.remove {
			p[i] = clone(e.val)
			return doc, true
		}
	}
	return nil, false
}

func clone(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, y := range x {
			m[k] = clone(y)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, y := range x {
			l[i] = clone(y)
		}
		return l
	}
	return v
}

func splitPointer(ptr string) (parent, last string) {
	i := len(ptr) - 1
	for i >= 0 && ptr[i] != '/' {
		i--
	}
	return ptr[:i], jsonpointer.Unescape(ptr[i+1:])
}

func union(a, b map[string]any) map[string]any {
	m := maps.Clone(a)
	if m == nil {
		m = map[string]any{}
	}
	maps.Copy(m, b)
	return m
}

func isMap(v any) bool { _, ok := v.(map[string]any); return ok }

func sameLen(a, b any) bool {
	x, ok1 := a.([]any)
	y, ok2 := b.([]any)
	return ok1 && ok2 && len(x) == len(y)
}

// memberKeys returns, for each member of a list, a string two members
// share exactly when inclusion.Equal holds between them; "" for a member
// equal to nothing, not even itself (a number beyond what the engine
// reads).
func memberKeys(l []any) []string {
	keys := make([]string, len(l))
	var b strings.Builder
	for i, v := range l {
		b.Reset()
		if appendKey(&b, v) {
			keys[i] = b.String()
		}
	}
	return keys
}

func keySet(keys []string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		if k != "" {
			m[k] = true
		}
	}
	return m
}

// appendKey writes v's key (see memberKeys), and reports false for a
// value equal to nothing.
func appendKey(b *strings.Builder, v any) bool {
	switch x := v.(type) {
	case nil:
		b.WriteString("z")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case string:
		b.WriteString(strconv.Quote(x))
	case []any:
		b.WriteByte('[')
		for _, e := range x {
			if !appendKey(b, e) {
				return false
			}
			b.WriteByte(',')
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for _, k := range slices.Sorted(maps.Keys(x)) {
			b.WriteString(strconv.Quote(k))
			b.WriteByte(':')
			if !appendKey(b, x[k]) {
				return false
			}
			b.WriteByte(',')
		}
		b.WriteByte('}')
	default:
		r := inclusion.Number(v)
		if r == nil {
			return false
		}
		b.WriteByte('n')
		b.WriteString(r.RatString())
	}
	return true
}
