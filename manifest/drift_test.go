package manifest

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"

	"cuelang.org/go/cue"

	"agentc.dev/agentc/plan"
)

// TestSchemaMatchesGoTypes fails when #Manifest and the Go types drift
// apart: a field on one side and not the other, a kind that does not
// match, or an optional CUE field whose Go field is not omitempty (and the
// other way round).
func TestSchemaMatchesGoTypes(t *testing.T) {
	l := NewLoader()
	l.renew()
	compareStruct(t, l, "#Manifest", l.schema, reflect.TypeFor[Manifest](), true)
}

// TestTestsMatchGoType ties a test case of #Manifest to plan.Test, which
// the loader decodes by hand: a case's constraints are CUE, not data.
func TestTestsMatchGoType(t *testing.T) {
	l := NewLoader()
	l.renew()
	tests := l.schema.LookupPath(cue.MakePath(cue.Str("tests").Optional()))
	if !tests.Exists() {
		t.Fatal("#Manifest has no tests field")
	}
	c := tests.FillPath(cue.MakePath(cue.Str("x")), l.top).LookupPath(cue.MakePath(cue.Str("x")))
	compareStruct(t, l, "#Manifest.tests[]", c, reflect.TypeFor[plan.Test](), true)
}

// TestToolKindsMatchGoType checks the kind-dependent fields of #Tool: the
// union over kinds must be exactly the fields of the Go Tool type.
func TestToolKindsMatchGoType(t *testing.T) {
	l := NewLoader()
	l.renew()
	tool := l.schema.Context().CompileBytes(SchemaSource, cue.Filename(SchemaFile)).LookupPath(cue.MakePath(cue.Def("Tool")))
	kinds := stringAlternatives(t, tool.LookupPath(cue.MakePath(cue.Str("kind").Required())))
	if len(kinds) < 5 {
		t.Fatalf("found kinds %v, want the five of DESIGN.md", kinds)
	}
	goFields := jsonFields(reflect.TypeFor[Tool]())
	union := map[string]bool{}
	for _, k := range kinds {
		kt := tool.FillPath(cue.MakePath(cue.Str("kind")), k)
		it, err := kt.Fields(cue.Optional(true))
		if err != nil {
			t.Fatal(err)
		}
		for it.Next() {
			name := label(it.Selector())
			union[name] = true
			f, ok := goFields[name]
			if !ok {
				t.Errorf("#Tool (kind %q) has field %q; Go type Tool does not", k, name)
				continue
			}
			fv := kt.FillPath(cue.MakePath(cue.Str(name)), l.top).LookupPath(cue.MakePath(cue.Str(name)))
			compareKind(t, l, "#Tool."+name, fv, f.Type)
		}
	}
	for name := range goFields {
		if !union[name] {
			t.Errorf("Go type Tool has field %q; no kind of #Tool declares it", name)
		}
	}
}

func stringAlternatives(t *testing.T, v cue.Value) []string {
	t.Helper()
	op, args := v.Expr()
	if op != cue.OrOp {
		t.Fatalf("kind is not a disjunction: %v", v)
	}
	var out []string
	for _, a := range args {
		s, err := a.String()
		if err != nil {
			t.Fatalf("kind alternative %v is not a string", a)
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

type goField struct {
	Type      reflect.Type
	OmitEmpty bool
}

func jsonFields(typ reflect.Type) map[string]goField {
	out := map[string]goField{}
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" || name == "-" {
			continue
		}
		out[name] = goField{Type: f.Type, OmitEmpty: strings.Contains(opts, "omitempty")}
	}
	return out
}

func label(sel cue.Selector) string { return strings.TrimRight(sel.String(), "?!") }

func compareStruct(t *testing.T, l *Loader, path string, v cue.Value, typ reflect.Type, checkOptional bool) {
	t.Helper()
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if typ.Kind() != reflect.Struct {
		t.Errorf("%s: CUE struct, Go %v", path, typ)
		return
	}
	goFields := jsonFields(typ)
	seen := map[string]bool{}
	it, err := v.Fields(cue.Optional(true))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for it.Next() {
		name := label(it.Selector())
		if path == "#Manifest" && name == "tests" {
			continue // decoded apart, as plan.Test: TestTestsMatchGoType
		}
		seen[name] = true
		f, ok := goFields[name]
		if !ok {
			t.Errorf("%s has field %q; Go type %v does not", path, name, typ)
			continue
		}
		optional := it.FieldType()&cue.OptionalConstraint != 0
		if checkOptional && optional != f.OmitEmpty {
			t.Errorf("%s.%s: optional in CUE is %v, omitempty in Go is %v", path, name, optional, f.OmitEmpty)
		}
		fv := v.FillPath(cue.MakePath(cue.Str(name)), l.top).LookupPath(cue.MakePath(cue.Str(name)))
		compareKind(t, l, path+"."+name, fv, f.Type)
	}
	for name := range goFields {
		if !seen[name] {
			t.Errorf("Go type %v has field %q; %s does not", typ, name, path)
		}
	}
}

var rawMessage = reflect.TypeFor[json.RawMessage]()

func compareKind(t *testing.T, l *Loader, path string, v cue.Value, typ reflect.Type) {
	t.Helper()
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	k := v.IncompleteKind()
	if typ == reflect.TypeFor[plan.CUEConstraint]() {
		// Any CUE, or, over a tool's arguments (always an object), a
		// struct of any CUE.
		if k != cue.TopKind && k != cue.StructKind {
			t.Errorf("%s: Go CUEConstraint holds any CUE, CUE allows only %v", path, k)
		}
		return
	}
	if typ == rawMessage {
		if k != cue.TopKind {
			t.Errorf("%s: Go json.RawMessage holds any JSON, CUE allows only %v", path, k)
		}
		return
	}
	switch k {
	case cue.StringKind:
		if typ.Kind() != reflect.String {
			t.Errorf("%s: CUE string, Go %v", path, typ)
		}
	case cue.IntKind:
		if typ.Kind() != reflect.Int && typ.Kind() != reflect.Int64 {
			t.Errorf("%s: CUE int, Go %v", path, typ)
		}
	case cue.NumberKind, cue.FloatKind:
		if typ.Kind() != reflect.Float64 {
			t.Errorf("%s: CUE number, Go %v", path, typ)
		}
	case cue.BoolKind:
		if typ.Kind() != reflect.Bool {
			t.Errorf("%s: CUE bool, Go %v", path, typ)
		}
	case cue.ListKind:
		if typ.Kind() != reflect.Slice {
			t.Errorf("%s: CUE list, Go %v", path, typ)
			return
		}
		elem := v.LookupPath(cue.MakePath(cue.AnyIndex))
		if elem.Exists() {
			compareKind(t, l, path+"[]", elem, typ.Elem())
		}
	case cue.StructKind:
		if typ.Kind() == reflect.Map {
			elem := v.FillPath(cue.MakePath(cue.Str("x")), l.top).LookupPath(cue.MakePath(cue.Str("x")))
			if elem.Err() != nil {
				// The keys are an enumeration (a case's faults): try one.
				elem = v.FillPath(cue.MakePath(cue.Str("timeout")), l.top).LookupPath(cue.MakePath(cue.Str("timeout")))
			}
			if typ.Elem().Kind() == reflect.Struct && typ.Elem().Name() == "Tool" {
				// The kinds of #Tool are compared by TestToolKindsMatchGoType.
				return
			}
			compareKind(t, l, path+"[]", elem, typ.Elem())
			return
		}
		compareStruct(t, l, path, v, typ, true)
	default:
		t.Errorf("%s: CUE kind %v has no Go counterpart check (Go %v)", path, k, typ)
	}
}
