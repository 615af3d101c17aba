package inclusion

import (
	"fmt"
	"testing"
)

// nested is a schema of oneOf branches nested depth deep, width wide:
// small to write, and exponential to reason about without a bound.
func nested(depth, width int) any {
	if depth == 0 {
		return map[string]any{"type": "string"}
	}
	var branches []any
	for i := range width {
		k := fmt.Sprint("k", i)
		branches = append(branches, map[string]any{"type": "object", "required": []any{k},
			"properties": map[string]any{k: nested(depth-1, width), "x": nested(depth-1, width)}})
	}
	return map[string]any{"oneOf": branches}
}

// TestWorkBounded: an analysis stops when its budget is spent and answers
// Unknown rather than running on; without the budget this schema takes
// minutes.
func TestWorkBounded(t *testing.T) {
	a := Analyze(nested(4, 4))
	if v := a.Vacuous(""); v != Unknown {
		t.Errorf("Vacuous = %v, want unknown", v)
	}
	if v := a.Unsatisfiable(""); v != Unknown {
		t.Errorf("Unsatisfiable = %v, want unknown", v)
	}
	if a.b.work.left >= 0 {
		t.Errorf("the budget was not spent (%d left): the schema no longer tests the bound", a.b.work.left)
	}
	if v := Includes(nested(3, 4), nested(3, 4)); v != Unknown {
		t.Errorf("Includes = %v, want unknown", v)
	}
}
