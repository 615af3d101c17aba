package inclusion

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
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

// backtracking is an object whose enum members are each matched against
// sixteen backtracking patterns: each match takes tens of milliseconds
// without running out of time, so checking them all takes half a minute.
func backtracking() any {
	var enum, all []any
	for i := range 64 {
		enum = append(enum, strings.Repeat("a", 19)+"!"+strconv.Itoa(i))
	}
	for range 16 {
		all = append(all, map[string]any{"pattern": "^(a+)+$"})
	}
	return map[string]any{"type": "object", "properties": map[string]any{
		"p1": map[string]any{"type": "string", "enum": enum, "allOf": all}}}
}

// TestMatchesBounded: the time an analysis spends matching patterns is
// bounded by its Budget; once spent, it answers Unknown, and analyses
// sharing the budget decide nothing more by matching.
func TestMatchesBounded(t *testing.T) {
	b := NewBudgetOf(time.Millisecond)
	a := AnalyzeIn(backtracking(), b)
	if v := a.Unsatisfiable(""); v != Unknown {
		t.Errorf("Unsatisfiable = %v, want unknown", v)
	}
	if !b.Spent() {
		t.Fatal("the budget was not spent: the schema no longer tests the bound")
	}
	if a.b.work.left >= 0 {
		t.Errorf("the analysis went on (%d work left) once the budget was spent", a.b.work.left)
	}
	if v := IncludesIn(backtracking(), backtracking(), b); v != Unknown {
		t.Errorf("Includes under a spent budget = %v, want unknown", v)
	}
}

// TestHugeMembersNotChecked: an enum member the validator would parse at
// length (1e999990) is not checked with it; the object is approximated.
func TestHugeMembersNotChecked(t *testing.T) {
	var enum []any
	for range maxConstants {
		enum = append(enum, json.Number("1e999990"))
	}
	a := Analyze(map[string]any{"enum": enum, "minimum": json.Number("0")})
	if v := a.Unsatisfiable(""); v != Unknown {
		t.Errorf("Unsatisfiable = %v, want unknown", v)
	}
	if a.b.compiled {
		t.Error("the validator was asked about members it reads at length")
	}
}
