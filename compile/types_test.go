package compile

import (
	"reflect"
	"strings"
	"testing"

	"agentc.dev/agentc/manifest"
	"agentc.dev/agentc/plan"
)

// TestPlanAgentMatchesManifest: plan.Agent has the shape of
// manifest.Manifest, field for field (JSON names, kinds, omitempty), so
// that a plan holds exactly what a manifest says. The two are separate
// types because the runtime must not import package manifest (it links
// CUE); TestSchemaMatchesGoTypes ties manifest.Manifest to the CUE schema.
func TestPlanAgentMatchesManifest(t *testing.T) {
	sameShape(t, "agent", reflect.TypeFor[manifest.Manifest](), reflect.TypeFor[plan.Agent]())
}

func sameShape(t *testing.T, path string, a, b reflect.Type) {
	t.Helper()
	if a.Kind() != b.Kind() {
		t.Errorf("%s: manifest %v, plan %v", path, a, b)
		return
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Slice:
		sameShape(t, path, a.Elem(), b.Elem())
	case reflect.Map:
		sameShape(t, path+"[key]", a.Key(), b.Key())
		sameShape(t, path+"[]", a.Elem(), b.Elem())
	case reflect.Struct:
		fa, fb := tagged(a), tagged(b)
		for tag, f := range fa {
			g, ok := fb[tag]
			if !ok {
				t.Errorf("%s: manifest has field %q, plan does not", path, tag)
				continue
			}
			sameShape(t, path+"."+strings.Split(tag, ",")[0], f.Type, g.Type)
		}
		for tag := range fb {
			if _, ok := fa[tag]; !ok {
				t.Errorf("%s: plan has field %q, manifest does not", path, tag)
			}
		}
	}
}

// tagged maps the full json tags of a struct's fields (name and options)
// to the fields.
func tagged(typ reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		out[f.Tag.Get("json")] = f
	}
	return out
}
