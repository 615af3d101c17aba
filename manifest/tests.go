package manifest

import (
	"fmt"
	"path/filepath"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/format"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"

	"agentc.dev/agentc/internal/leaf/userfile"
	"agentc.dev/agentc/plan"
)

// A test case's expect, and a tool call's arguments, are CUE constraints
// that agentc test unifies with what a run gave: the manifest keeps them
// as written, not as data, and they need not be concrete.

// isConstraintPath reports whether a path is, or lies below, one of a test
// case's constraints, tests.<case>.expect or
// tests.<case>.tool_calls[i].arguments, or one of a tool's,
// capabilities.tools.<tool>.approve_if or
// capabilities.tools.<tool>.approve_tools.<name>.approve_if.
func isConstraintPath(path []cue.Selector) bool {
	if len(path) >= 4 && path[0].String() == "capabilities" && path[1].String() == "tools" {
		return path[3].String() == "approve_if" ||
			len(path) >= 6 && path[3].String() == "approve_tools" && path[5].String() == "approve_if"
	}
	if len(path) < 3 || path[0].String() != "tests" {
		return false
	}
	if path[2].String() == "expect" {
		return true
	}
	return len(path) >= 5 && path[2].String() == "tool_calls" && path[4].String() == "arguments"
}

// validateData validates a field u, written as v, that holds constraints
// (tests, capabilities): concrete data but for its constraints, which must
// only not contradict themselves. It walks the fields as written, so that
// one case in error does not hide the others' problems.
func (l *Loader) validateData(u, v cue.Value, path []cue.Selector, report func(error)) {
	if isConstraintPath(path) {
		report(u.Validate(cue.All()))
		return
	}
	switch v.IncompleteKind() {
	case cue.StructKind:
		it, err := v.Fields()
		if err != nil {
			report(u.Validate(cue.Concrete(true), cue.All(), cue.Final()))
			return
		}
		for it.Next() {
			sel := it.Selector()
			l.validateData(u.LookupPath(cue.MakePath(sel)), it.Value(), appendPath(path, sel), report)
		}
	case cue.ListKind:
		it, err := v.List()
		if err != nil || path[0].String() == "capabilities" {
			// No constraint lies in a list of capabilities: the list
			// is data, validated whole.
			report(u.Validate(cue.Concrete(true), cue.All(), cue.Final()))
			return
		}
		for i := 0; it.Next(); i++ {
			l.validateData(u.LookupPath(cue.MakePath(cue.Index(i))), it.Value(), appendPath(path, cue.Index(i)), report)
		}
	default:
		report(u.Validate(cue.Concrete(true), cue.All(), cue.Final()))
	}
}

// decodeTests decodes the tests of a valid manifest: the unified value u
// gives the data, the value as written v the constraints' source. It
// returns the cases by name and where each constraint was written, by
// manifest path (tests.<case>.expect, tests.<case>.tool_calls.<i>.arguments).
func decodeTests(u, v cue.Value) (map[string]plan.Test, map[string]token.Pos, error) {
	tu := u.LookupPath(cue.MakePath(cue.Str("tests")))
	if !tu.Exists() {
		return nil, nil, nil
	}
	it, err := tu.Fields()
	if err != nil {
		return nil, nil, err
	}
	tests := map[string]plan.Test{}
	pos := map[string]token.Pos{}
	for it.Next() {
		name := it.Selector().Unquoted()
		c := it.Value()
		field := func(f string) cue.Value { return c.LookupPath(cue.MakePath(cue.Str(f))) }
		written := func(p ...cue.Selector) cue.Value {
			return v.LookupPath(cue.MakePath(append([]cue.Selector{cue.Str("tests"), it.Selector()}, p...)...))
		}
		var t plan.Test
		in, err := field("input").MarshalJSON()
		if err != nil {
			return nil, nil, fmt.Errorf("tests.%s.input: %w", name, err)
		}
		t.Input = in
		if w := written(cue.Str("expect")); w.Exists() {
			c, at := constraintOf(w)
			t.Expect = c
			pos["tests."+name+".expect"] = at
		}
		if o := field("outcome"); o.Exists() {
			t.Outcome, _ = o.String()
		}
		if b := field("bound"); b.Exists() {
			t.Bound, _ = b.String()
		}
		if m := field("max_tool_calls"); m.Exists() {
			n, err := m.Int64()
			if err != nil {
				return nil, nil, fmt.Errorf("tests.%s.max_tool_calls: %w", name, err)
			}
			k := int(n)
			t.MaxToolCalls = &k
		}
		if tc := field("tool_calls"); tc.Exists() {
			lit, err := tc.List()
			if err != nil {
				return nil, nil, fmt.Errorf("tests.%s.tool_calls: %w", name, err)
			}
			for i := 0; lit.Next(); i++ {
				var call plan.ToolCallExpect
				call.Name, _ = lit.Value().LookupPath(cue.MakePath(cue.Str("name"))).String()
				if w := written(cue.Str("tool_calls"), cue.Index(i), cue.Str("arguments")); w.Exists() {
					c, at := constraintOf(w)
					call.Arguments = c
					pos[fmt.Sprintf("tests.%s.tool_calls.%d.arguments", name, i)] = at
				}
				t.ToolCalls = append(t.ToolCalls, call)
			}
		}
		if t.MinPass, err = field("min_pass").Float64(); err != nil {
			return nil, nil, fmt.Errorf("tests.%s.min_pass: %w", name, err)
		}
		if fv := field("faults"); fv.Exists() {
			if err := fv.Decode(&t.Faults); err != nil {
				return nil, nil, fmt.Errorf("tests.%s.faults: %w", name, err)
			}
			if len(t.Faults) == 0 {
				t.Faults = nil
			}
			for f := range t.Faults {
				if w := written(cue.Str("faults"), cue.Str(f)); w.Exists() {
					pos["tests."+name+".faults."+f] = w.Pos()
				}
			}
		}
		tests[name] = t
	}
	return tests, pos, nil
}

// ConstraintOf returns a constraint as written and where it starts, as
// a plan keeps it (see constraintOf).
func ConstraintOf(w cue.Value) (*plan.CUEConstraint, token.Pos) { return constraintOf(w) }

// constraintOf returns a constraint as written and where it starts. The
// text is the bytes of the file between the expression's start and end
// where the file is CUE or JSON and reads, so positions in it are the
// file's; else (YAML, standard input, a value written in several places)
// the expression formatted, positioned at its start.
func constraintOf(w cue.Value) (*plan.CUEConstraint, token.Pos) {
	node := w.Source()
	if f, ok := node.(*ast.Field); ok {
		node = f.Value
	}
	if node == nil {
		node = w.Syntax(cue.Raw())
	}
	c := &plan.CUEConstraint{}
	start := node.Pos()
	if text, ok := sourceText(node); ok {
		c.CUE = text
	} else {
		b, err := format.Node(node)
		if err != nil {
			b = fmt.Appendf(nil, "%v", w)
		}
		c.CUE = string(b)
	}
	if !start.IsValid() {
		start = w.Pos()
	}
	imports := fileImports(start.Filename())
	ast.Walk(node, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			if p, ok := imports[id.Name]; ok {
				if c.Imports == nil {
					c.Imports = map[string]string{}
				}
				c.Imports[id.Name] = p
			}
		}
		return true
	}, nil)
	return c, start
}

// sourceText reads an expression's text from its file.
func sourceText(node ast.Node) (string, bool) {
	start, end := node.Pos(), node.End()
	name := start.Filename()
	ext := strings.ToLower(filepath.Ext(name))
	if !start.IsValid() || !end.IsValid() || end.Filename() != name || ext != ".cue" && ext != ".json" {
		return "", false
	}
	data, err := userfile.Read(name, plan.MaxManifestBytes, "a manifest")
	if err != nil || end.Offset() > len(data) || start.Offset() >= end.Offset() {
		return "", false
	}
	text := string(data[start.Offset():end.Offset()])
	if tooDeep(name, []byte(text)) != nil {
		return "", false
	}
	if _, err := parser.ParseExpr(name, text); err == nil {
		return text, true
	}
	// Fields without braces (expect: urgency: "high") read as a file's.
	if _, err := parser.ParseFile(name, text); err == nil {
		return text, true
	}
	return "", false
}

// fileImports returns the imports of a CUE file by the name a file uses
// them by; none for a file that does not read, as a manifest is read.
func fileImports(name string) map[string]string {
	if strings.ToLower(filepath.Ext(name)) != ".cue" {
		return nil
	}
	data, err := userfile.Read(name, plan.MaxManifestBytes, "a manifest")
	if err != nil {
		return nil
	}
	f, err := parser.ParseFile(name, data, parser.ImportsOnly)
	if err != nil {
		return nil
	}
	out := map[string]string{}
	for imp := range f.ImportSpecs() {
		p := importPath(imp)
		if p == "" {
			continue
		}
		id := p
		if i := strings.LastIndexAny(id, "/"); i >= 0 {
			id = id[i+1:]
		}
		if j := strings.IndexByte(id, ':'); j >= 0 {
			id = id[j+1:]
		}
		if imp.Name != nil {
			id = imp.Name.Name
		}
		out[id] = p
	}
	return out
}

// decodeApprovals replaces the approve_if constraints of the decoded tools
// by the constraints as written in v, and returns where each was written,
// by manifest path (capabilities.tools.<tool>.approve_if,
// capabilities.tools.<tool>.approve_tools.<name>.approve_if).
func decodeApprovals(tools map[string]plan.Tool, v cue.Value) map[string]token.Pos {
	pos := map[string]token.Pos{}
	written := func(sels ...cue.Selector) (*plan.CUEConstraint, bool) {
		w := v.LookupPath(cue.MakePath(sels...))
		if !w.Exists() {
			return nil, false
		}
		c, at := constraintOf(w)
		path := "capabilities.tools"
		for _, s := range sels[2:] {
			path += "." + s.Unquoted()
		}
		pos[path] = at
		return c, true
	}
	for name, t := range tools {
		base := []cue.Selector{cue.Str("capabilities"), cue.Str("tools"), cue.Str(name)}
		t.ApproveIf, _ = written(append(base, cue.Str("approve_if"))...)
		for n, a := range t.ApproveTools {
			a.ApproveIf, _ = written(append(base, cue.Str("approve_tools"), cue.Str(n), cue.Str("approve_if"))...)
			t.ApproveTools[n] = a
		}
		tools[name] = t
	}
	return pos
}
