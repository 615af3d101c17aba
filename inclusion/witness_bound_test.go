package inclusion

import (
	"fmt"
	"testing"
)

// arrays is arrays of n items nested depth deep around item: a few
// values of schema asking for n^depth values.
func arrays(n, depth int, item any) any {
	for range depth {
		item = map[string]any{"type": "array", "minItems": n, "items": item}
	}
	return item
}

// chain is n definitions, each an anyOf of an array and an object that
// hold the next, the last end: 2^n ways down to it.
func chain(n int, end any) any {
	defs := map[string]any{}
	for k := range n {
		next := map[string]any{"$ref": fmt.Sprintf("#/$defs/d%d", k+1)}
		defs[fmt.Sprint("d", k)] = map[string]any{"anyOf": []any{
			map[string]any{"type": "array", "minItems": 1, "items": next},
			map[string]any{"type": "object", "required": []any{"a"}, "properties": map[string]any{"a": next}},
		}}
	}
	defs[fmt.Sprint("d", n)] = end
	return map[string]any{"$defs": defs, "$ref": "#/$defs/d0"}
}

// TestWitnessBounded: what Witness builds is bounded by its Budget, in
// values and in bytes of strings, whatever the schema asks; past it there
// is no witness and the budget says it is spent, which leaves a diff
// undecided and unexamined. A set reached again by another way is not
// searched again. Before the bound the nested arrays ran out of memory
// (4 GB), and the chain of 24 took a minute, doubling with each level. (Past
// 27 levels the engine's own work bound leaves the sets unbuilt, and there is
// nothing to sample.)
func TestWitnessBounded(t *testing.T) {
	str := map[string]any{"type": "string"}
	for _, c := range []struct {
		name string
		sub  any
	}{
		{"arrays of a thousand nested three deep", arrays(1000, 3, map[string]any{"type": "null"})},
		{"a thousand arrays of a thousand", arrays(1000, 2, map[string]any{"type": "null"})},
		{"a thousand strings of 64 KiB", arrays(1000, 1, map[string]any{"type": "string", "minLength": maxSampleString})},
		{"an enum's member used a million times", arrays(1000, 2, map[string]any{"enum": []any{[]any{1, 2}}})},
	} {
		b := NewBudget()
		if v, ok := WitnessIn(c.sub, str, b); ok {
			t.Errorf("%s: a witness of %T, past the budget", c.name, v)
		}
		if !b.Spent() {
			t.Errorf("%s: no witness, but the budget is not spent: a diff would call it undecided and examined", c.name)
		}
	}

	// The first way down that holds a value is the one taken.
	b := NewBudget()
	v, ok := WitnessIn(chain(24, map[string]any{"type": "null"}), str, b)
	if !ok {
		t.Error("chain to null: no witness")
	}
	if depthOf(v) != 24 {
		t.Errorf("chain to null: witness %v is not 24 arrays deep", v)
	}
	if used := MaxSampleValues - b.values.Load(); used > 1000 {
		t.Errorf("chain to null: %d values built for a witness of %d", used, 25)
	}

	// No way down holds a value: each set is searched once at a depth.
	b = NewBudget()
	end := map[string]any{"type": "string", "minLength": 2 * maxSampleString}
	if v, ok := WitnessIn(chain(24, end), map[string]any{"type": "integer"}, b); ok {
		t.Errorf("chain to a long string: witness %v", v)
	}
	if used := MaxSampleValues - b.values.Load(); used > 10000 || b.Spent() {
		t.Errorf("chain to a long string: %d values built (spent %v): the ways down were searched each", used, b.Spent())
	}
}

func depthOf(v any) int {
	switch v := v.(type) {
	case []any:
		return 1 + depthOf(v[0])
	case map[string]any:
		return 1 + depthOf(v["a"])
	}
	return 0
}
