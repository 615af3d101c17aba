package testmodel

import (
	"slices"
	"sort"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// object builds an object: required members always, optional ones as the
// seed and variant choose, more if minProperties asks for them.
func (g *gen) object(atoms, negs []*jsonschema.Schema, v, depth int) (any, error) {
	at := firstOr(atoms)
	r := objectRulesOf(atoms)
	if r.minP > maxItemsCap {
		return nil, unsat("minProperties", at, "asks for %d members, more than the %d this model builds", r.minP, maxItemsCap)
	}
	if r.maxP >= 0 && r.minP > r.maxP {
		return nil, unsat("minProperties", at, "minProperties %d exceeds maxProperties %d", r.minP, r.maxP)
	}
	optional := r.optional(atoms, negs)
	names, err := g.memberNames(atoms, negs, &r, optional, v, depth)
	if err != nil {
		return nil, err
	}
	deps, err := dependents(atoms, names)
	if err != nil {
		return nil, err
	}
	if len(deps) > 0 {
		return g.withDependents(atoms, negs, deps, v, depth)
	}
	childV := v
	if g.simple && v > 0 && len(r.required) == 0 && len(optional) > 0 {
		childV = (v - 1) / len(optional)
	}
	return g.members(atoms, names, childV, depth)
}

// objectRules are the object keywords of a value's atoms, combined.
type objectRules struct {
	minP, maxP int             // maxP -1: none
	required   []string        // in the order the atoms name them
	declared   map[string]bool // the names of properties
}

// objectRulesOf combines the object keywords of atoms: the tightest
// bounds, every required and every declared member.
func objectRulesOf(atoms []*jsonschema.Schema) objectRules {
	r := objectRules{maxP: -1, declared: map[string]bool{}}
	for _, a := range atoms {
		if a.MinProperties != nil {
			r.minP = max(r.minP, *a.MinProperties)
		}
		if a.MaxProperties != nil && (r.maxP < 0 || *a.MaxProperties < r.maxP) {
			r.maxP = *a.MaxProperties
		}
		for _, req := range a.Required {
			if !slices.Contains(r.required, req) {
				r.required = append(r.required, req)
			}
		}
		for name := range a.Properties {
			r.declared[name] = true
		}
	}
	return r
}

// optional lists, sorted, the declared members that are not required and
// may be present: no keyword forbids them and no negation requires them.
func (r *objectRules) optional(atoms, negs []*jsonschema.Schema) []string {
	avoid := avoided(negs)
	var optional []string
	for name := range r.declared {
		if slices.Contains(r.required, name) || avoid[name] {
			continue
		}
		if _, forbidden := memberSchemas(atoms, name); forbidden == nil {
			optional = append(optional, name)
		}
	}
	sort.Strings(optional)
	return optional
}

// memberNames chooses the members of the object: the required ones; one
// optional member per later variant of the simplest value, or a random
// choice of them in a varied value near the top; those negations and
// dependencies ask for; then enough for minProperties, or only the
// required ones if maxProperties allows no more.
func (g *gen) memberNames(atoms, negs []*jsonschema.Schema, r *objectRules, optional []string, v, depth int) ([]string, error) {
	names := slices.Clone(r.required)
	switch {
	case g.simple && v > 0 && len(r.required) == 0 && len(optional) > 0:
		names = append(names, optional[(v-1)%len(optional)])
	case !g.simple && depth < softDepth:
		for _, name := range optional {
			if g.rng.IntN(2) == 0 {
				names = append(names, name)
			}
		}
	}
	if v > 0 {
		names = extraForNegs(atoms, negs, names)
	}
	names = addDependencies(atoms, names)
	if r.maxP >= 0 && len(names) > r.maxP {
		// Drop the optional members.
		names = addDependencies(atoms, slices.Clone(r.required))
		if len(names) > r.maxP {
			return nil, unsat("maxProperties", firstOr(atoms), "the required members number %d, more than maxProperties %d", len(names), r.maxP)
		}
	}
	if len(names) < r.minP {
		var err error
		names, err = g.moreNames(atoms, names, optional, r.minP, v, depth)
		if err != nil {
			return nil, err
		}
		names = addDependencies(atoms, names)
	}
	return names, nil
}

// dependents lists the dependent schemas (dependentSchemas, or a draft-7
// dependencies schema) of the members in names that are not among the
// atoms yet; a member whose dependent schema is false is an error.
func dependents(atoms []*jsonschema.Schema, names []string) ([]*jsonschema.Schema, error) {
	var deps []*jsonschema.Schema
	for _, a := range atoms {
		for _, name := range names {
			s := a.DependentSchemas[name]
			if d, ok := a.Dependencies[name].(*jsonschema.Schema); ok {
				s = d
			}
			switch {
			case s == nil || slices.Contains(atoms, s) || slices.Contains(deps, s):
			case s.Bool != nil:
				if !*s.Bool {
					return nil, unsat("false", s, "member %q may not be present", name)
				}
			default:
				deps = append(deps, s)
			}
		}
	}
	return deps, nil
}

// withDependents builds the object again with deps expanded into its
// atoms: a dependent schema of a present member applies to the whole
// object.
func (g *gen) withDependents(atoms, negs, deps []*jsonschema.Schema, v, depth int) (any, error) {
	var (
		out    any
		outErr error
		combos int
	)
	x := &expansion{g: g, fail: func(err error) {
		if outErr == nil {
			outErr = err
		}
	}}
	x.emit = func(more []*jsonschema.Schema, moreNegs []*jsonschema.Schema) bool {
		if err := conflict(more); err != nil {
			x.fail(err)
			return false
		}
		combos++
		o, err := g.object(more, moreNegs, v, depth)
		if err != nil {
			x.fail(err)
			return combos >= maxCombos || g.steps <= 0
		}
		out = o
		return true
	}
	if x.run(deps, nil, atoms, negs) && out != nil {
		return out, nil
	}
	if outErr == nil {
		outErr = unsat("dependentSchemas", firstOr(atoms), "no value satisfies the dependent schemas")
	}
	return nil, outErr
}

// members builds the object with the members in names, each valid against
// every schema that applies to it.
func (g *gen) members(atoms []*jsonschema.Schema, names []string, childV, depth int) (any, error) {
	at := firstOr(atoms)
	obj := make(map[string]any, len(names))
	sort.Strings(names)
	for _, name := range names {
		if err := g.step("properties", at); err != nil {
			return nil, err
		}
		schemas, forbidden := memberSchemas(atoms, name)
		if forbidden != nil {
			return nil, forbidden
		}
		outer, outerDepth := g.member, g.memberDepth
		g.member, g.memberDepth = name, depth+1
		val, err := g.value(schemas, nil, childV, depth+1)
		g.member, g.memberDepth = outer, outerDepth
		if err != nil {
			return nil, err
		}
		obj[name] = val
	}
	return obj, nil
}

// extraForNegs adds a member no negation declares when a negation forbids
// undeclared members (as `not: {additionalProperties: false}` does): the
// member keeps the value clear of it.
func extraForNegs(atoms, negs []*jsonschema.Schema, names []string) []string {
	var all []*jsonschema.Schema
	for _, n := range negs {
		all = append(append(append(all, n), n.AnyOf...), n.AllOf...)
	}
	for _, n := range all {
		closed := false
		if b, ok := n.AdditionalProperties.(bool); ok && !b {
			closed = true
		}
		if u := n.UnevaluatedProperties; u != nil && u.Bool != nil && !*u.Bool {
			closed = true
		}
		if !closed {
			continue
		}
		for i := 1; i < 64; i++ {
			name := plainString(i, 1)
			if slices.Contains(names, name) || n.Properties[name] != nil {
				continue
			}
			if _, forbidden := memberSchemas(atoms, name); forbidden == nil {
				return append(names, name)
			}
		}
	}
	return names
}

// avoided lists member names a negation requires: leaving them out keeps
// the value clear of it.
func avoided(negs []*jsonschema.Schema) map[string]bool {
	out := map[string]bool{}
	for _, n := range negs {
		for _, s := range append([]*jsonschema.Schema{n}, append(slices.Clone(n.AnyOf), n.OneOf...)...) {
			for _, r := range s.Required {
				out[r] = true
			}
		}
	}
	return out
}

// addDependencies adds the members dependentRequired (or a draft-7
// dependencies list) asks for, until nothing changes.
func addDependencies(atoms []*jsonschema.Schema, names []string) []string {
	for changed := true; changed; {
		changed = false
		for _, a := range atoms {
			for i := 0; i < len(names); i++ {
				more := a.DependentRequired[names[i]]
				if list, ok := a.Dependencies[names[i]].([]string); ok {
					more = append(slices.Clone(more), list...)
				}
				for _, m := range more {
					if !slices.Contains(names, m) {
						names = append(names, m)
						changed = true
					}
				}
			}
		}
	}
	return names
}

// memberSchemas lists the schemas a member's value must satisfy, or says
// which keyword forbids the member.
func memberSchemas(atoms []*jsonschema.Schema, name string) ([]*jsonschema.Schema, *UnsatisfiableError) {
	var out []*jsonschema.Schema
	evaluated := false
	for _, a := range atoms {
		if s := a.Properties[name]; s != nil {
			evaluated = true
		}
		for re := range a.PatternProperties {
			if re.MatchString(name) {
				evaluated = true
			}
		}
		if a.AdditionalProperties != nil {
			evaluated = true
		}
	}
	for _, a := range atoms {
		matched := false
		if s := a.Properties[name]; s != nil {
			out = append(out, s)
			matched = true
		}
		for _, re := range sortedPatterns(a) {
			if re.MatchString(name) {
				out = append(out, a.PatternProperties[re])
				matched = true
			}
		}
		if !matched {
			switch ap := a.AdditionalProperties.(type) {
			case bool:
				if !ap {
					return nil, unsat("additionalProperties", a, "member %q is not allowed", name)
				}
			case *jsonschema.Schema:
				out = append(out, ap)
			}
		}
		if a.UnevaluatedProperties != nil && !evaluated {
			out = append(out, a.UnevaluatedProperties)
		}
		if a.PropertyNames != nil && a.PropertyNames.Validate(name) != nil {
			return nil, unsat("propertyNames", a, "member name %q is not allowed", name)
		}
	}
	for _, s := range out {
		if s.Bool != nil && !*s.Bool {
			return nil, unsat("false", s, "member %q is not allowed", name)
		}
	}
	return out, nil
}

func sortedPatterns(a *jsonschema.Schema) []jsonschema.Regexp {
	if len(a.PatternProperties) == 0 {
		return nil
	}
	out := make([]jsonschema.Regexp, 0, len(a.PatternProperties))
	for re := range a.PatternProperties {
		out = append(out, re)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// moreNames adds members until there are minP: declared ones first, then
// names that patternProperties or propertyNames describe, then plain ones.
func (g *gen) moreNames(atoms []*jsonschema.Schema, names, optional []string, minP, v, depth int) ([]string, error) {
	at := firstOr(atoms)
	usable := func(name string) bool {
		if slices.Contains(names, name) {
			return false
		}
		_, forbidden := memberSchemas(atoms, name)
		return forbidden == nil
	}
	for _, name := range optional {
		if len(names) >= minP {
			return names, nil
		}
		if usable(name) {
			names = append(names, name)
		}
	}
	var nameSchemas []*jsonschema.Schema
	var patterns []string
	for _, a := range atoms {
		if a.PropertyNames != nil {
			nameSchemas = append(nameSchemas, a.PropertyNames)
		}
		for _, re := range sortedPatterns(a) {
			patterns = append(patterns, re.String())
		}
	}
	for i := 0; len(names) < minP && i < 4*minP+32; i++ {
		if err := g.step("minProperties", at); err != nil {
			return nil, err
		}
		var name string
		switch {
		case len(patterns) > 0 && i < 2*minP+8:
			p := patterns[i%len(patterns)]
			s, ok := g.fromPattern(p, 0, -1, i/len(patterns)+v)
			if !ok {
				continue
			}
			name = s
		case len(nameSchemas) > 0:
			outer := g.member
			g.member = "" // a name is not a member's value
			val, err := g.value(nameSchemas, nil, i+v, depth+1)
			g.member = outer
			if err != nil {
				return nil, err
			}
			s, ok := val.(string)
			if !ok {
				continue
			}
			name = s
		default:
			name = plainString(i+v, 1)
		}
		if usable(name) {
			names = append(names, name)
		}
	}
	if len(names) < minP {
		return nil, unsat("minProperties", at, "found only %d allowed member names of the %d asked for", len(names), minP)
	}
	return names, nil
}
