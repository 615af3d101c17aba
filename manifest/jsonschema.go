package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/format"
	"cuelang.org/go/cue/literal"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"
	"cuelang.org/go/encoding/jsonschema"

	"agentc.dev/agentc/plan"
)

// JSONSchema returns the manifest schema as JSON Schema (draft 2020-12),
// indented. It is generated from the embedded #Manifest, so editors check
// YAML and JSON manifests against the definition vet checks them with;
// the one field it adds is "$schema", where a JSON or YAML manifest names
// the schema for its editor (the loader ignores it).
//
// #Tool declares the fields of each kind in an if clause on the kind,
// which CUE's generator cannot follow (it would generate a schema that
// accepts any tool). The generator is given the same schema with #Tool
// restated as a disjunction of one closed definition per kind, its common
// fields and its kind's clause (see toolsByKind); the generated anyOf is
// then made a choice by kind (see toolByKind).
func JSONSchema() ([]byte, error) {
	src, err := toolsByKind(SchemaSource)
	if err != nil {
		return nil, fmt.Errorf("generating the manifest's JSON Schema: %w", err)
	}
	ctx := cuecontext.New()
	f, err := parser.ParseFile(SchemaFile, src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	v := ctx.BuildFile(f)
	if err := v.Err(); err != nil {
		return nil, err
	}
	expr, err := jsonschema.Generate(v.LookupPath(cue.MakePath(cue.Def("Manifest"))), nil)
	if err != nil {
		return nil, fmt.Errorf("generating the manifest's JSON Schema: %w", err)
	}
	if err := toolByKind(ctx, expr); err != nil {
		return nil, fmt.Errorf("generating the manifest's JSON Schema: %w", err)
	}
	if err := tidy(expr); err != nil {
		return nil, fmt.Errorf("generating the manifest's JSON Schema: %w", err)
	}
	js := ctx.BuildExpr(expr).FillPath(cue.MakePath(cue.Str("properties"), cue.Str("$schema")), map[string]string{
		"type":        "string",
		"description": "$schema names this JSON Schema for editors; agentc ignores it.",
	})
	b, err := js.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("generating the manifest's JSON Schema: %w", err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return escapeHidden(out.Bytes()), nil
}

// escapeHidden writes each character a reader does not see (plan.Hidden:
// #ModelName's pattern names them) as a JSON escape, so that the schema
// an editor shows says which. They occur only within strings.
func escapeHidden(b []byte) []byte {
	if !bytes.ContainsFunc(b, plan.Hidden) {
		return b
	}
	var out bytes.Buffer
	for _, r := range string(b) {
		if plan.Hidden(r) {
			fmt.Fprintf(&out, `\u%04x`, r)
		} else {
			out.WriteRune(r)
		}
	}
	return out.Bytes()
}

// toolByKind turns the generated Tool, an anyOf of the kinds' schemas,
// into a choice by kind: kind is required and one of the kinds, and the
// schema of the kind written applies. Both accept the same tools, but
// with anyOf an editor reports a mistake in a tool once for each kind it
// is not; by kind, once, against the kind written.
func toolByKind(ctx *cue.Context, expr ast.Expr) error {
	root, ok := expr.(*ast.StructLit)
	if !ok {
		return fmt.Errorf("the generated schema is not an object")
	}
	defs, ok := structField(root, "$defs")
	if !ok {
		return fmt.Errorf("the generated schema has no $defs")
	}
	toolDef, ok := structField(defs, "Tool")
	if !ok {
		return fmt.Errorf("the generated schema has no Tool")
	}
	generated := ctx.BuildExpr(expr)
	refs, err := generated.LookupPath(cue.ParsePath(`"$defs".Tool.anyOf`)).List()
	if err != nil {
		return fmt.Errorf("the generated Tool is not an anyOf: %w", err)
	}
	var kinds []string
	var cases []map[string]any
	for refs.Next() {
		ref, err := refs.Value().LookupPath(cue.ParsePath(`"$ref"`)).String()
		name, ok := strings.CutPrefix(ref, "#/$defs/")
		if err != nil || !ok {
			return fmt.Errorf("an alternative of the generated Tool is not a reference to a definition")
		}
		k, err := generated.LookupPath(cue.MakePath(cue.Str("$defs"), cue.Str(name), cue.Str("properties"), cue.Str("kind"), cue.Str("const"))).String()
		if err != nil {
			return fmt.Errorf("the generated %s has no constant kind: %w", name, err)
		}
		kinds = append(kinds, k)
		cases = append(cases, map[string]any{
			// required, so that a tool without a kind, which the
			// required below marks, is not also checked against every
			// kind: a property's schema holds when it is absent.
			"if":   map[string]any{"required": []string{"kind"}, "properties": map[string]any{"kind": map[string]any{"const": k}}},
			"then": map[string]any{"$ref": ref},
		})
	}
	choice, err := json.Marshal(map[string]any{
		"type":       "object",
		"required":   []string{"kind"},
		"properties": map[string]any{"kind": map[string]any{"enum": kinds}},
		"allOf":      cases,
	})
	if err != nil {
		return err
	}
	x, err := parser.ParseExpr("Tool", choice)
	if err != nil {
		return err
	}
	var elts []ast.Decl
	for _, d := range toolDef.Elts {
		if f, ok := d.(*ast.Field); ok {
			if name, _, _ := ast.LabelName(f.Label); name == "anyOf" {
				continue
			}
		}
		elts = append(elts, d)
	}
	toolDef.Elts = append(elts, x.(*ast.StructLit).Elts...)
	return nil
}

// structField returns the object a field of s holds.
func structField(s *ast.StructLit, name string) (*ast.StructLit, bool) {
	for _, d := range s.Elts {
		f, ok := d.(*ast.Field)
		if !ok {
			continue
		}
		if n, _, _ := ast.LabelName(f.Label); n == name {
			v, ok := f.Value.(*ast.StructLit)
			return v, ok
		}
	}
	return nil, false
}

// toolsByKind rewrites the schema's #Tool, a struct of common fields and
// one `if kind == "K" {...}` clause per kind, as the disjunction of
// definitions #K_tool, each closed, holding the common fields with kind
// fixed to K and the fields of K's clause. What it describes is the same;
// only its form differs. Anything else in #Tool is an error, so the
// schema cannot grow a form this rewrite would silently drop.
func toolsByKind(src []byte) ([]byte, error) {
	f, err := parser.ParseFile(SchemaFile, src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	tool, body, err := toolStruct(f)
	if err != nil {
		return nil, err
	}
	var kinds []string
	for _, d := range body.Elts {
		if c, ok := d.(*ast.Comprehension); ok {
			k, _, err := kindClause(c)
			if err != nil {
				return nil, err
			}
			kinds = append(kinds, k)
		}
	}
	if len(kinds) == 0 {
		return nil, fmt.Errorf("#Tool has no if clause on its kind")
	}
	// The clauses must be exactly the kinds kind allows: a kind without
	// one would be generated as a tool with the common fields alone, a
	// clause of no kind as a tool vet refuses.
	allowed, err := kindValues(body)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(slices.Sorted(slices.Values(kinds)), slices.Sorted(slices.Values(allowed))) {
		return nil, fmt.Errorf("#Tool's kind allows %v, but its if clauses are for %v", allowed, kinds)
	}
	var alts []ast.Expr
	for _, k := range kinds {
		// Each definition is built from a parse of its own, so that no
		// node is shared between two places of the tree.
		g, err := parser.ParseFile(SchemaFile, src, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		_, b, err := toolStruct(g)
		if err != nil {
			return nil, err
		}
		def := &ast.StructLit{}
		for _, d := range b.Elts {
			switch d := d.(type) {
			case *ast.Field:
				if name, _, _ := ast.LabelName(d.Label); name == "kind" {
					d.Value = ast.NewString(k)
				}
				def.Elts = append(def.Elts, d)
			case *ast.Comprehension:
				if ck, fields, _ := kindClause(d); ck == k {
					def.Elts = append(def.Elts, fields.Elts...)
				}
			}
		}
		name := "#" + k + "_tool"
		field := &ast.Field{Label: ast.NewIdent(name), Value: def}
		ast.AddComment(field, &ast.CommentGroup{Doc: true, List: []*ast.Comment{{Text: fmt.Sprintf("// %s is a tool of kind %q.", name, k)}}})
		f.Decls = append(f.Decls, field)
		alts = append(alts, ast.NewIdent(name))
	}
	tool.Value = ast.NewBinExpr(token.OR, alts...)
	out, err := format.Node(f)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// kindValues reads the kinds #Tool's kind allows: a disjunction of
// strings.
func kindValues(body *ast.StructLit) ([]string, error) {
	for _, d := range body.Elts {
		f, ok := d.(*ast.Field)
		if !ok {
			continue
		}
		if name, _, _ := ast.LabelName(f.Label); name != "kind" {
			continue
		}
		var out []string
		var walk func(e ast.Expr) error
		walk = func(e ast.Expr) error {
			if b, ok := e.(*ast.BinaryExpr); ok && b.Op == token.OR {
				if err := walk(b.X); err != nil {
					return err
				}
				return walk(b.Y)
			}
			lit, ok := e.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return fmt.Errorf("%s: #Tool's kind is not a disjunction of strings", e.Pos())
			}
			k, err := literal.Unquote(lit.Value)
			if err != nil {
				return err
			}
			out = append(out, k)
			return nil
		}
		return out, walk(f.Value)
	}
	return nil, fmt.Errorf("#Tool has no kind")
}

// toolStruct finds the field #Tool of the schema and its struct.
func toolStruct(f *ast.File) (*ast.Field, *ast.StructLit, error) {
	for _, d := range f.Decls {
		field, ok := d.(*ast.Field)
		if !ok {
			continue
		}
		if name, _, _ := ast.LabelName(field.Label); name != "#Tool" {
			continue
		}
		body, ok := field.Value.(*ast.StructLit)
		if !ok {
			return nil, nil, fmt.Errorf("#Tool is not a struct")
		}
		for _, d := range body.Elts {
			switch d.(type) {
			case *ast.Field, *ast.Comprehension, *ast.CommentGroup:
			default:
				return nil, nil, fmt.Errorf("%s: #Tool holds a %T, which the JSON Schema's generation does not restate", d.Pos(), d)
			}
		}
		return field, body, nil
	}
	return nil, nil, fmt.Errorf("the schema has no #Tool")
}

// kindClause reads `if kind == "K" {...}`, returning K and the struct.
func kindClause(c *ast.Comprehension) (string, *ast.StructLit, error) {
	bad := fmt.Errorf("%s: a clause of #Tool that is not `if kind == \"...\" {...}`", c.Pos())
	if len(c.Clauses) != 1 || c.Fallback != nil {
		return "", nil, bad
	}
	cl, ok := c.Clauses[0].(*ast.IfClause)
	if !ok {
		return "", nil, bad
	}
	cond, ok := cl.Condition.(*ast.BinaryExpr)
	if !ok || cond.Op != token.EQL {
		return "", nil, bad
	}
	id, ok := cond.X.(*ast.Ident)
	lit, ok2 := cond.Y.(*ast.BasicLit)
	if !ok || !ok2 || id.Name != "kind" || lit.Kind != token.STRING {
		return "", nil, bad
	}
	k, err := literal.Unquote(lit.Value)
	if err != nil {
		return "", nil, bad
	}
	body, ok := c.Value.(*ast.StructLit)
	if !ok {
		return "", nil, bad
	}
	return k, body, nil
}

// dropSchemaField removes a top-level "$schema" field, which names the
// JSON Schema an editor checks a JSON or YAML manifest with, from the
// fields of a manifest read from JSON or YAML.
func dropSchemaField(decls []ast.Decl) []ast.Decl {
	out := decls[:0:0]
	for _, d := range decls {
		if f, ok := d.(*ast.Field); ok {
			if name, _, err := ast.LabelName(f.Label); err == nil && name == "$schema" {
				continue
			}
		}
		out = append(out, d)
	}
	return out
}

// tidy rewrites two forms of the generated schema that validators in
// their strict modes, and editors, take badly, into forms that mean the
// same or (where JSON Schema has no other form) a little less:
//
//   - CUE's `int & >0` is generated as allOf [{type: number}, {type:
//     integer, ...}], which marks a string there twice, once per member.
//     The number member says nothing the integer one does not; without it
//     the one member left takes the allOf's place.
//   - Two patterns of a string (`=~"A" & =~"B"`, #ModelName) are
//     generated as allOf [{pattern: A}, {type: string, pattern: B, ...}],
//     the first member with no type, which strict validators refuse
//     (ajv's strictTypes). It takes its sibling's type, string: the
//     allOf holds only strings either way.
//   - CUE's `[X, ...Y]` is generated as prefixItems [X] with items Y and
//     minItems 1: an open tuple, which strict validators refuse (ajv's
//     strictTuples wants every tuple closed). Where X is Y the tuple says
//     nothing minItems does not and goes. Where it differs (an exec
//     tool's argv and an mcp tool's command: the first element not
//     empty), JSON Schema can say it with an open tuple only, so it goes
//     too and vet alone checks the first element.
func tidy(e ast.Expr) error {
	switch e := e.(type) {
	case *ast.ListLit:
		for _, x := range e.Elts {
			if err := tidy(x); err != nil {
				return err
			}
		}
	case *ast.StructLit:
		for _, d := range e.Elts {
			if f, ok := d.(*ast.Field); ok {
				if err := tidy(f.Value); err != nil {
					return err
				}
			}
		}
		e.Elts = mergeIntegerAllOf(e.Elts)
		typeStringPatterns(e.Elts)
		var err error
		if e.Elts, err = dropTuple(e.Elts); err != nil {
			return err
		}
	}
	return nil
}

// mergeIntegerAllOf drops {type: number} from an allOf that has a member
// of type integer, and puts a lone member left in the allOf's place when
// none of its fields is already there.
func mergeIntegerAllOf(elts []ast.Decl) []ast.Decl {
	at, f := fieldOf(elts, "allOf")
	if f == nil {
		return elts
	}
	list, ok := f.Value.(*ast.ListLit)
	if !ok {
		return elts
	}
	integer, number := false, -1
	for i, x := range list.Elts {
		s, ok := x.(*ast.StructLit)
		if !ok {
			return elts
		}
		t := stringField(s, "type")
		integer = integer || t == "integer"
		if t == "number" && len(s.Elts) == 1 {
			number = i
		}
	}
	if !integer || number < 0 {
		return elts
	}
	list.Elts = slices.Delete(list.Elts, number, number+1)
	if len(list.Elts) != 1 {
		return elts
	}
	member := list.Elts[0].(*ast.StructLit)
	for _, d := range member.Elts {
		mf, ok := d.(*ast.Field)
		if !ok {
			return elts
		}
		name, _, _ := ast.LabelName(mf.Label)
		if _, g := fieldOf(elts, name); g != nil {
			return elts
		}
	}
	return slices.Concat(elts[:at], member.Elts, elts[at+1:])
}

// typeStringPatterns gives a member of an allOf that says a pattern and
// no type the type string, where another member says type string.
func typeStringPatterns(elts []ast.Decl) {
	_, f := fieldOf(elts, "allOf")
	if f == nil {
		return
	}
	list, ok := f.Value.(*ast.ListLit)
	if !ok {
		return
	}
	var untyped []*ast.StructLit
	stringTyped := false
	for _, x := range list.Elts {
		s, ok := x.(*ast.StructLit)
		if !ok {
			return
		}
		_, pattern := fieldOf(s.Elts, "pattern")
		_, typ := fieldOf(s.Elts, "type")
		switch {
		case typ == nil && pattern != nil:
			untyped = append(untyped, s)
		case stringField(s, "type") == "string":
			stringTyped = true
		}
	}
	if !stringTyped {
		return
	}
	for _, s := range untyped {
		s.Elts = append(s.Elts, &ast.Field{Label: ast.NewString("type"), Value: ast.NewString("string")})
	}
}

// dropTuple removes prefixItems where items and minItems are there to say
// what the list holds and how long it is at least.
func dropTuple(elts []ast.Decl) ([]ast.Decl, error) {
	at, f := fieldOf(elts, "prefixItems")
	if f == nil {
		return elts, nil
	}
	prefix, ok := f.Value.(*ast.ListLit)
	_, items := fieldOf(elts, "items")
	_, min := fieldOf(elts, "minItems")
	if !ok || items == nil || min == nil {
		return nil, fmt.Errorf("a prefixItems without items and minItems, which the JSON Schema's generation does not restate")
	}
	n, ok := min.Value.(*ast.BasicLit)
	if !ok || n.Value != fmt.Sprint(len(prefix.Elts)) {
		return nil, fmt.Errorf("a prefixItems of %d whose minItems is not %d, which the JSON Schema's generation does not restate", len(prefix.Elts), len(prefix.Elts))
	}
	return slices.Delete(elts, at, at+1), nil
}

// fieldOf finds the field of a struct's elements by name.
func fieldOf(elts []ast.Decl, name string) (int, *ast.Field) {
	for i, d := range elts {
		if f, ok := d.(*ast.Field); ok {
			if n, _, _ := ast.LabelName(f.Label); n == name {
				return i, f
			}
		}
	}
	return -1, nil
}

// stringField is the string a struct's field holds, or "".
func stringField(s *ast.StructLit, name string) string {
	_, f := fieldOf(s.Elts, name)
	if f == nil {
		return ""
	}
	lit, ok := f.Value.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return ""
	}
	v, err := literal.Unquote(lit.Value)
	if err != nil {
		return ""
	}
	return v
}
