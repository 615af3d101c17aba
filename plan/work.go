package plan

import (
	"fmt"
	"slices"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"agentc.dev/agentc/internal/leaf/pattern"
)

// MaxValidationWork bounds the applications of a schema's parts to parts
// of a value that validating the value may take (see Validate). The
// validator applies a part each time the schema reaches it, remembering
// nothing: a schema whose parts refer twice to the next, sixty deep
// ({"allOf": [{"$ref": "#/$defs/d1"}, {"$ref": "#/$defs/d1"}]}, and so on),
// applies its last part 2^60 times to one value, and a part that refers
// twice to a schema applied to the value's member doubles at every level
// of the value. Such a check never ends, and nothing can stop it once it
// has begun; so the applications are counted first, cheaply, and a value
// past the bound is refused. A value of a schema written to describe it
// takes a few applications a part of the value: a value of a million
// parts stays within the bound.
const MaxValidationWork = 4 << 20

// WorkError is a value refused because checking it against its schema
// would take past MaxValidationWork applications.
type WorkError struct{}

func (*WorkError) Error() string {
	return fmt.Sprintf("checking the value against its schema would apply the schema's parts to parts of the value more than %d times (the schema applies the same parts to the same value over and over, through $ref, allOf, anyOf or oneOf), so the value is rejected", MaxValidationWork)
}

// work counts, with a budget, the applications validating a value takes,
// and keeps the matches of patterns regexp2 reads that they make.
type work struct {
	left    int
	matches map[match]bool
}

// match is a pattern read by regexp2 applied to a string of the value (a
// string, or a member's name).
type match struct {
	re *pattern.Regexp
	s  string
}

func (w *work) match(re jsonschema.Regexp, s string) {
	if r, ok := re.(*pattern.Regexp); ok && r.ECMA() && len(w.matches) < maxMatchesKept {
		if w.matches == nil {
			w.matches = map[match]bool{}
		}
		w.matches[match{r, s}] = true
	}
}

// maxMatchesKept bounds the matches a count keeps; past it the rest are
// left to the validator as before.
const maxMatchesKept = 1 << 16

// maxWorkDepth bounds the applications under way at once, so that the
// count cannot take the stack with it. A value nests at most 10,000 deep
// (encoding/json), a manifest's schema far less.
const maxWorkDepth = 100_000

// checkWork returns a *WorkError when validating v against s would take
// past MaxValidationWork applications; else the matches of patterns
// regexp2 reads that validating may make (see Validate).
func checkWork(s *jsonschema.Schema, v any) (map[match]bool, error) {
	w := work{left: MaxValidationWork}
	if !w.apply(s, v, nil, 0) {
		return nil, &WorkError{}
	}
	return w.matches, nil
}

// apply counts the application of s to v and of every part s applies, to
// v itself and to its members and items; false once the budget is spent.
// Where which part applies depends on what the validator finds
// (patternProperties, additionalProperties, if/then/else, the branches
// of anyOf and oneOf), every part that may apply is counted: the count
// is at least the validator's. here is the parts applied to v itself on
// the way to s: a part that comes back to v through $ref is a loop the
// validator refuses at once ("infinite loop"), so it is counted once, as
// that refusal.
func (w *work) apply(s *jsonschema.Schema, v any, here []*jsonschema.Schema, depth int) bool {
	if s == nil {
		return true
	}
	if w.left--; w.left < 0 || depth > maxWorkDepth {
		return false
	}
	if s.Bool != nil || slices.Contains(here, s) {
		return true
	}
	if str, ok := v.(string); ok && s.Pattern != nil {
		w.match(s.Pattern, str)
	}
	depth++
	in := append(here, s)
	for _, p := range [...]*jsonschema.Schema{s.Ref, s.RecursiveRef, s.Not, s.If, s.Then, s.Else} {
		if !w.apply(p, v, in, depth) {
			return false
		}
	}
	if s.DynamicRef != nil && !w.apply(s.DynamicRef.Ref, v, in, depth) {
		return false
	}
	for _, list := range [...][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf} {
		for _, p := range list {
			if !w.apply(p, v, in, depth) {
				return false
			}
		}
	}
	switch v := v.(type) {
	case map[string]any:
		for name, m := range v {
			if d, ok := s.DependentSchemas[name]; ok && !w.apply(d, v, in, depth) {
				return false
			}
			if d, ok := s.Dependencies[name].(*jsonschema.Schema); ok && !w.apply(d, v, in, depth) {
				return false
			}
			if s.PropertyNames != nil && !w.apply(s.PropertyNames, name, nil, depth) {
				return false // (the check first: a name made a value is an allocation)
			}
			if !w.apply(s.Properties[name], m, nil, depth) {
				return false
			}
			for re, p := range s.PatternProperties {
				w.match(re, name)
				if !w.apply(p, m, nil, depth) {
					return false
				}
			}
			if a, ok := s.AdditionalProperties.(*jsonschema.Schema); ok && !w.apply(a, m, nil, depth) {
				return false
			}
			if !w.apply(s.UnevaluatedProperties, m, nil, depth) {
				return false
			}
		}
	case []any:
		for i, e := range v {
			var item *jsonschema.Schema
			switch items := s.Items.(type) {
			case *jsonschema.Schema:
				item = items
			case []*jsonschema.Schema:
				if i < len(items) {
					item = items[i]
				} else if a, ok := s.AdditionalItems.(*jsonschema.Schema); ok {
					item = a
				}
			}
			if i < len(s.PrefixItems) {
				item = s.PrefixItems[i]
			} else if s.Items2020 != nil {
				item = s.Items2020
			}
			if !w.apply(item, e, nil, depth) || !w.apply(s.Contains, e, nil, depth) || !w.apply(s.UnevaluatedItems, e, nil, depth) {
				return false
			}
		}
	}
	return true
}
