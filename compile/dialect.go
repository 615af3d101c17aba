package compile

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp/syntax"
	"slices"
	"sort"
	"strconv"
	"strings"

	"cuelang.org/go/cue/token"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/inclusion"
	"agentc.dev/agentc/internal/leaf/jsonpointer"
	"agentc.dev/agentc/plan"
)

// Profile is one provider's structured-output dialect: what its strict
// mode accepts in a schema and enforces while the model generates. Lower
// turns a contract schema into that dialect; whatever it drops is
// enforced only by agentc's local validation of the answer.
type Profile struct {
	Provider string
	// Auto is the output mode "auto" resolves to; AutoFallback is used
	// instead when the schema cannot be lowered strictly.
	Auto, AutoFallback string
	// Supported lists the constraint keywords the provider enforces.
	Supported map[string]bool
	// Formats lists the values of "format" it enforces.
	Formats map[string]bool
	// Everything marks a provider that enforces every keyword as written
	// (the test model validates every value it makes): nothing is lowered.
	Everything bool
	// CloseObjects: every object must say additionalProperties: false.
	CloseObjects bool
	// RequireAll: every property must be required; optional ones become
	// nullable, and a null stands for "absent".
	RequireAll bool
	// RootObject: the root must be an object schema.
	RootObject bool
	// RefAlone: a $ref may have no sibling keywords.
	RefAlone bool
	// NoRecursion: a $ref may not lead back to a schema that contains it.
	NoRecursion bool
	// OneOfAsAnyOf: oneOf is sent as anyOf (exclusivity is checked locally).
	OneOfAsAnyOf bool
	// MinItemsMax, when >= 0, is the largest minItems it enforces.
	MinItemsMax int
	// MaxDepth and MaxProperties bound nesting and the number of
	// properties in all; zero means no bound.
	MaxDepth, MaxProperties int
	// NativeNeedsStrict: its native structured output refuses a schema
	// outside the dialect, where other providers only loosen enforcement.
	NativeNeedsStrict bool
	// RegularPatterns: it compiles a pattern into its grammar only when
	// the pattern is regular (Go's RE2 reads it: no lookaround, no
	// backreference); another pattern is dropped and enforced locally.
	RegularPatterns bool
	// NoWordBoundary: its patterns may not use \b or \B either.
	NoWordBoundary bool
	// Unenforced, when set, says why the provider is taken not to
	// enforce any schema while generating (it serves model families that
	// differ): every schema is sent as written and enforced locally.
	Unenforced string
	// StrictTools: a tool marked strict has its arguments generated
	// under its schema, which is then in the same dialect (OpenAI's strict
	// function calling, Anthropic's strict tool use).
	StrictTools bool
}

// Profiles are the providers' structured-output dialects as each documents
// them: OpenAI's strict structured outputs (closed objects, every property
// required, no length constraints), Anthropic's structured outputs
// (closed objects, no numeric or length constraints, no recursion),
// Gemini's JSON Schema subset, and the test model, which enforces
// everything.
var Profiles = map[string]Profile{
	"openai": {
		Provider: "openai", Auto: plan.ModeNative, AutoFallback: plan.ModeTool,
		Supported: set("type", "properties", "required", "additionalProperties", "enum", "const",
			"anyOf", "$ref", "items", "pattern", "format",
			"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems"),
		Formats:      set("date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"),
		CloseObjects: true, RequireAll: true, RootObject: true, OneOfAsAnyOf: true, MinItemsMax: -1,
		MaxDepth: 10, MaxProperties: 5000, RegularPatterns: true, StrictTools: true,
	},
	"anthropic": {
		Provider: "anthropic", Auto: plan.ModeTool, AutoFallback: plan.ModeTool,
		Supported: set("type", "properties", "required", "additionalProperties", "enum", "const",
			"anyOf", "allOf", "$ref", "items", "minItems", "pattern", "format"),
		Formats:      set("date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"),
		CloseObjects: true, RefAlone: true, NoRecursion: true, OneOfAsAnyOf: true, MinItemsMax: 1,
		NativeNeedsStrict: true, RegularPatterns: true, NoWordBoundary: true, StrictTools: true,
	},
	// Gemini's responseJsonSchema (and function parametersJsonSchema)
	// enforce the keywords the SDK's ResponseJsonSchema documents: no
	// string lengths or patterns, no const, allOf or exclusive bounds;
	// oneOf is read as anyOf; a $ref takes no sibling keywords; a cycle
	// is only unrolled a few times. Which formats it enforces is not
	// documented: every format is enforced locally. A schema outside the
	// dialect is still taken (what it does not know, it ignores), so
	// native mode serves every schema.
	"google": {
		Provider: "google", Auto: plan.ModeNative, AutoFallback: plan.ModeNative,
		Supported: set("type", "properties", "required", "additionalProperties", "enum",
			"anyOf", "$ref", "items", "prefixItems", "minItems", "maxItems", "minimum", "maximum"),
		Formats:  set(),
		RefAlone: true, NoRecursion: true, OneOfAsAnyOf: true, MinItemsMax: -1,
	},
	// Bedrock serves families whose structured output differs (Claude 4.5
	// and later enforce a schema; Amazon Nova and older Claude do not):
	// the answer comes by a forced tool call, its schema sent as written
	// and enforced locally.
	"bedrock": {Provider: "bedrock", Auto: plan.ModeTool, AutoFallback: plan.ModeTool, MinItemsMax: -1,
		Unenforced: "the models Bedrock serves do not all enforce a schema while generating"},
	"test": {Provider: "test", Auto: plan.ModeTool, AutoFallback: plan.ModeTool, Everything: true, MinItemsMax: -1},
}

// kept lists the annotations a lowered schema keeps; the others mean
// nothing to a provider and some refuse them.
var kept = set("title", "description")

// Lower resolves an output's mode for a profile and lowers its contract
// schema (JSON values as read from the manifest) to the profile's dialect.
func Lower(prof Profile, mode string, schema any) (*plan.Lowering, error) {
	return lowerOutput(prof, mode, schema, func(doc any) error { _, err := plan.CompileSchema(doc); return err })
}

// LowerToolInputs lowers the argument schemas of an agent's exec and http
// tools to a provider's dialect, for a provider that enforces a strict
// tool's schema (Profile.StrictTools). It returns the strict lowerings by
// tool name (Plan.ToolInputs), nil when there are none: a schema outside
// the dialect is sent as written, not strict, and has no entry.
func LowerToolInputs(provider string, tools map[string]plan.Tool) (map[string]*plan.Lowering, error) {
	prof, ok := Profiles[provider]
	if !ok || !prof.StrictTools {
		return nil, nil
	}
	var out map[string]*plan.Lowering
	for _, name := range slices.Sorted(maps.Keys(tools)) {
		t := tools[name]
		if !slices.Contains(plan.StrictToolKinds, t.Kind) || t.Input == nil {
			continue
		}
		doc, err := plan.UnmarshalJSONValue(t.Input.Schema)
		if err != nil {
			return nil, fmt.Errorf("tool %q: input schema: %w", name, err)
		}
		l, err := lowerToolInput(prof, doc, func(doc any) error { _, err := plan.CompileSchema(doc); return err })
		if err != nil {
			return nil, fmt.Errorf("tool %q: input schema: %w", name, err)
		}
		if !l.Strict {
			continue
		}
		if out == nil {
			out = map[string]*plan.Lowering{}
		}
		out[name] = l
	}
	return out, nil
}

// lowerToolInput lowers a tool's input schema for a provider whose strict
// tools enforce it (LowerToolInputs, and vet's notes on it). It is not
// strict, with Reason saying why, where the schema is outside the dialect
// or lets the model pass properties it does not name: closing those
// objects, as the dialect demands, would take from the tool what the
// schema lets the model pass.
func lowerToolInput(prof Profile, doc any, compile func(doc any) error) (*plan.Lowering, error) {
	if takesOtherProperties(doc) {
		return &plan.Lowering{Provider: prof.Provider, Mode: plan.ModeTool,
			Reason: fmt.Sprintf("it lets the model pass properties it does not name, and %s would close every object", prof.Provider)}, nil
	}
	return lower(prof, plan.ModeTool, doc, compile)
}

// takesOtherProperties reports whether a schema says that some object in
// it takes properties it does not name: additionalProperties or
// unevaluatedProperties written as anything but false. Left out, they are
// taken as closed, as the providers' strict dialects take them.
func takesOtherProperties(doc any) bool {
	open := false
	walkSchema(doc, func(_, _ string, sub any) {
		if m, ok := sub.(map[string]any); ok {
			for _, k := range []string{"additionalProperties", "unevaluatedProperties"} {
				if v, ok := m[k]; ok && v != false {
					open = true
				}
			}
		}
	})
	return open
}

// lower is Lower, with compile reporting whether a schema compiles.
func lower(prof Profile, mode string, schema any, compile func(doc any) error) (*plan.Lowering, error) {
	return lowerIn(prof, mode, schema, compile, false)
}

// lowerIn is lower; wrapper says schema is an answer wrapped by
// wrapAnswer, whose member a reference may name: the member is required,
// so never rewritten, and a reference to it keeps its meaning.
func lowerIn(prof Profile, mode string, schema any, compile func(doc any) error, wrapper bool) (*plan.Lowering, error) {
	l := &plan.Lowering{Provider: prof.Provider}
	var sent any
	switch {
	case prof.Everything:
		l.Strict, sent = true, schema
	case prof.Unenforced != "":
		l.Reason, sent = prof.Unenforced, schema
	default:
		lw := &lowerer{prof: prof, root: schema, wrapper: wrapper}
		sent = lw.lower(schema, "", "", 0, false)
		if lw.reason == "" && prof.MaxProperties > 0 && lw.props > prof.MaxProperties {
			lw.fail("", fmt.Sprintf("it has %d properties; %s allows %d", lw.props, prof.Provider, prof.MaxProperties))
		}
		if lw.reason == "" && prof.NoRecursion {
			if ptr, ok := recursive(schema); ok {
				lw.fail(ptr, "a $ref leads back into itself")
			}
		}
		if lw.reason == "" {
			// A lowered schema that does not compile (a $ref that no
			// longer resolves) would be refused by the provider.
			if err := compile(sent); err != nil {
				lw.fail("", fmt.Sprintf("the lowered schema does not compile: %v", err))
			}
		}
		l.Strict, l.Reason, l.Nullable, l.Local = lw.reason == "", lw.reason, lw.nullable, lw.local
		if !l.Strict {
			// Outside the dialect the schema only guides the model: send
			// it as written, and enforce all of it locally.
			sent, l.Nullable, l.Local = schema, nil, nil
		}
	}
	switch mode {
	case "", plan.ModeAuto:
		l.Mode = prof.Auto
		if !l.Strict {
			l.Mode = prof.AutoFallback
		}
	default:
		l.Mode = mode
	}
	if l.Mode == plan.ModePrompted {
		// The schema goes into the instructions; nothing enforces it
		// while the model writes.
		l.Strict, l.Reason, sent, l.Nullable, l.Local = false, "output.mode is \"prompted\"", schema, nil, nil
	}
	b, err := digest.CanonicalValue(sent)
	if err != nil {
		return nil, err
	}
	l.Schema = b
	return l, nil
}

// lowerOutput is Lower: lower, and in tool mode an answer that is not an
// object wrapped in the output tool's arguments. The mode is decided on
// the contract as written; the wrapper (wrapAnswer) is then lowered as
// any schema, so the answer within is held to the dialect's rules for a
// subschema, and the constraints left to local validation are named where
// they are in the contract. A tool's own input schema is never wrapped:
// its arguments are what it takes.
func lowerOutput(prof Profile, mode string, schema any, compile func(doc any) error) (*plan.Lowering, error) {
	l, err := lower(prof, mode, schema, compile)
	if err != nil || l.Mode != plan.ModeTool || prof.Everything {
		return l, err
	}
	sent, err := plan.UnmarshalJSONValue(l.Schema)
	if err != nil {
		return nil, err
	}
	if _, ok := schema.(map[string]any); !ok || objectOnly(sent) {
		return l, nil // a schema that is no object says so elsewhere
	}
	w, err := wrapAnswer(schema)
	if err == nil {
		err = compile(w)
	}
	if err != nil {
		return nil, &WrapError{Err: err}
	}
	if l, err = lowerIn(prof, plan.ModeTool, w, compile, true); err != nil {
		return nil, err
	}
	moved := "/properties/" + plan.AnswerMember
	for i, c := range l.Local {
		if c.Pointer == moved || strings.HasPrefix(c.Pointer, moved+"/") {
			l.Local[i].Pointer = strings.TrimPrefix(c.Pointer, moved)
		}
	}
	// The reason in the contract's terms: its pointers, and its
	// references as written.
	switch {
	case strings.HasPrefix(l.Reason, moved+": "):
		l.Reason = strings.TrimPrefix(l.Reason, moved+": ")
	case strings.HasPrefix(l.Reason, moved+"/"):
		l.Reason = strings.TrimPrefix(l.Reason, moved)
	}
	l.Reason = strings.ReplaceAll(l.Reason, `"#`+moved+`"`, `"#"`)
	l.Reason = strings.ReplaceAll(l.Reason, `"#`+moved+`/`, `"#/`)
	l.Wrap = plan.AnswerMember
	return l, nil
}

// WrapError says why an answer that is not an object could not be put in
// the output tool's arguments.
type WrapError struct{ Err error }

func (e *WrapError) Error() string {
	return fmt.Sprintf("the answer is not an object, and its schema cannot be put in the output tool's arguments (a tool's arguments are an object): %v; use output.mode \"native\" or \"prompted\"", e.Err)
}

func (e *WrapError) Unwrap() error { return e.Err }

type lowerer struct {
	prof     Profile
	root     any
	reason   string // why the schema is outside the dialect; "" when it is inside
	props    int
	nullable []string
	local    []plan.Constraint
	nullRefs map[string]bool // by $ref: whether its schema admits null (acceptsNull)
	wrapper  bool            // the schema is a wrapped answer (lowerIn)
}

func (lw *lowerer) fail(ptr, why string) {
	if lw.reason == "" {
		if ptr != "" {
			why = ptr + ": " + why
		}
		lw.reason = why
	}
}

func (lw *lowerer) drop(ptr, k, value string) {
	lw.local = append(lw.local, plan.Constraint{Pointer: ptr + "/" + jsonpointer.Escape(k), Keyword: k, Value: value})
}

// lower returns the lowered form of the schema node at ptr (in the
// contract) that will sit at lptr (in the lowered schema). A node at a
// place that needs a schema (sub) must say what it is.
func (lw *lowerer) lower(node any, ptr, lptr string, depth int, sub bool) any {
	m, ok := node.(map[string]any)
	if !ok {
		// No dialect takes a boolean as a schema: a true says nothing of
		// its value, and a false (no value at all) is taken only as
		// additionalProperties, or as an optional property of an object
		// the dialect closes, which object leaves out.
		lw.fail(ptr, fmt.Sprintf("a boolean schema (%v)", node))
		return node
	}
	if lw.prof.MaxDepth > 0 && depth > lw.prof.MaxDepth {
		lw.fail(ptr, fmt.Sprintf("nesting deeper than %d levels", lw.prof.MaxDepth))
	}
	if _, ok := m["$id"]; ok && ptr != "" {
		// The lowered schema keeps no $id, so the references below it
		// would resolve against the root instead.
		lw.fail(ptr, "a $id below the root (its references resolve against it)")
	}
	out := map[string]any{}
	extras := map[string]any{}
	_, hasRef := m["$ref"]
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		kp, klp := ptr+"/"+jsonpointer.Escape(k), lptr+"/"+jsonpointer.Escape(k)
		switch {
		case kept[k]:
			out[k] = v
		case k == "$defs" || k == "definitions":
			defs, _ := v.(map[string]any)
			lowered := map[string]any{}
			for _, name := range slices.Sorted(maps.Keys(defs)) {
				lowered[name] = lw.lower(defs[name], kp+"/"+jsonpointer.Escape(name), klp+"/"+jsonpointer.Escape(name), depth, true)
			}
			out[k] = lowered
		case !plan.IsConstraintKeyword(k):
			// annotations a provider has no use for, and unknown keywords
			// validators ignore
		case k == "$ref":
			// Lowering rewrites schemas in place (a property made
			// nullable, oneOf renamed anyOf), so only references to
			// definitions, or to the whole schema, keep their meaning.
			if r, _ := v.(string); !lowerableRef(r) && !(lw.wrapper && r == "#/properties/"+plan.AnswerMember) {
				lw.fail(kp, fmt.Sprintf("a $ref to %q: only references to $defs, definitions or the whole schema (\"#\") can be lowered", r))
			}
			out[k] = v
		case hasRef && lw.prof.RefAlone:
			lw.drop(ptr, k, "")
			extras[k] = v
		case k == "oneOf" && lw.prof.OneOfAsAnyOf:
			if _, both := m["anyOf"]; both {
				lw.drop(ptr, k, "")
				extras[k] = v
				continue
			}
			lw.drop(ptr, k, "") // exclusivity
			out["anyOf"] = lw.lowerList(v, kp, lptr+"/anyOf", depth)
		case k == "format":
			if f, _ := v.(string); !lw.prof.Supported[k] || !lw.prof.Formats[f] {
				lw.drop(ptr, k, f)
				extras[k] = v
				continue
			}
			out[k] = v
		case !lw.prof.Supported[k]:
			lw.drop(ptr, k, "")
			extras[k] = v
		case k == "pattern":
			if p, _ := v.(string); !lw.prof.acceptsPattern(p) {
				lw.drop(ptr, k, p)
				extras[k] = v
				continue
			}
			out[k] = v
		case k == "minItems" && lw.prof.MinItemsMax >= 0:
			if n, err := strconv.ParseFloat(fmt.Sprint(v), 64); err != nil || n > float64(lw.prof.MinItemsMax) {
				lw.drop(ptr, k, fmt.Sprint(v))
				extras[k] = v
				continue
			}
			out[k] = v
		case k == "properties":
			props, _ := v.(map[string]any)
			lw.props += len(props)
			// filled in below, with what is required
		case k == "items":
			if _, isList := v.([]any); isList {
				lw.fail(kp, "items as a list (a tuple)")
				continue
			}
			out[k] = lw.lower(v, kp, klp, depth+1, true)
		case k == "anyOf" || k == "allOf":
			out[k] = lw.lowerList(v, kp, klp, depth)
		case k == "prefixItems":
			out[k] = lw.lowerList(v, kp, klp, depth+1)
		case k == "required" && lw.prof.RequireAll && !isObjectSchema(m):
			// Members required of a value whose schema lowers no object
			// (beside a $ref, say): where a null stands for an absent
			// property, the provider would take a null for one of them
			// that the raise then removes. Left to local validation.
			lw.drop(ptr, k, "")
			extras[k] = v
		case k == "additionalProperties":
			if _, typed := m["type"]; !typed && !isObjectSchema(m) {
				// No object schema to lower it with (an enum of objects,
				// say), yet it holds every object value: left to local
				// validation. Under a type without object it holds none.
				lw.drop(ptr, k, "")
				extras[k] = v
			}
			// else decided with the object below
		default:
			out[k] = v
		}
	}
	alone := hasRef && lw.prof.RefAlone
	if isObjectSchema(m) && !alone {
		lw.object(m, out, ptr, lptr, depth)
	}
	if t, ok := m["type"]; ok && hasType(t, "array") && !alone {
		if _, ok := m["items"]; !ok {
			lw.fail(ptr, "an array with no items schema")
		}
	}
	if sub && !describesValue(out) {
		lw.fail(ptr, "a schema that does not say what its value is (no type, enum, const, anyOf or $ref)")
	}
	if ptr == "" && lw.prof.RootObject && !isObjectSchema(m) {
		lw.fail("", "the root is not an object schema")
	}
	if len(extras) > 0 {
		out["description"] = withExtras(out["description"], extras)
	}
	return out
}

// objectOnly reports whether a schema's values are all objects, as a
// tool's arguments must be: its type is object, or it has none and says
// what members it holds and nothing else of its value.
func objectOnly(schema any) bool {
	m, ok := schema.(map[string]any)
	if !ok {
		return false
	}
	if t, ok := m["type"]; ok {
		return t == "object"
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf", "$ref", "enum", "const", "not", "if"} {
		if _, ok := m[k]; ok {
			return false
		}
	}
	return isObjectSchema(m)
}

// wrapAnswer makes a schema whose values are not all objects the schema of
// an object that holds one in its member plan.AnswerMember: a tool's
// arguments are an object at every provider. The definitions, $schema and
// $id move to the wrapper's root, where references find them, and every
// other JSON-pointer reference into the schema is made to go through the
// member. Anchors need nothing: they name a place wherever it is. A
// schema whose references it cannot follow there (a resource of its own
// below the root, dynamic or recursive references) is refused.
func wrapAnswer(schema any) (any, error) {
	schema = copyJSON(schema) // the references are rewritten in place
	inner := schema
	w := map[string]any{"type": "object", "required": []any{plan.AnswerMember}, "additionalProperties": false}
	if m, ok := schema.(map[string]any); ok {
		in := map[string]any{}
		for k, v := range m {
			switch k {
			case "$defs", "definitions", "$schema", "$id":
				w[k] = v
			default:
				in[k] = v
			}
		}
		inner = in
	}
	w["properties"] = map[string]any{plan.AnswerMember: inner}
	var err error
	moved := "/properties/" + plan.AnswerMember
	walkSchema(w, func(ptr, _ string, sub any) {
		m, ok := sub.(map[string]any)
		if !ok || err != nil {
			return
		}
		// The definitions stay where they were, resources of their own
		// included; what moved may not be one, nor reach the root but
		// through a plain reference.
		if ptr == moved || strings.HasPrefix(ptr, moved+"/") {
			if _, ok := m["$id"]; ok {
				err = fmt.Errorf("a $id below the root, at %s", strings.TrimPrefix(ptr, moved))
				return
			}
			for _, k := range []string{"$dynamicRef", "$recursiveRef"} {
				if r, _ := m[k].(string); r == "#" || strings.HasPrefix(r, "#/") {
					err = fmt.Errorf("a %s to %q at %s", k, r, orRoot(strings.TrimPrefix(ptr, moved)))
					return
				}
			}
		}
		ref, ok := m["$ref"].(string)
		if !ok || ref != "#" && !strings.HasPrefix(ref, "#/") {
			return // elsewhere, or an anchor
		}
		frag, uerr := url.PathUnescape(strings.TrimPrefix(ref, "#"))
		if uerr != nil {
			err = fmt.Errorf("the $ref %q at %s: %v", ref, orRoot(ptr), uerr)
			return
		}
		if strings.HasPrefix(frag, "/$defs/") || strings.HasPrefix(frag, "/definitions/") {
			return
		}
		m["$ref"] = "#/properties/" + plan.AnswerMember + strings.TrimPrefix(ref, "#")
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

// copyJSON copies a JSON value's objects and arrays.
func copyJSON(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = copyJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = copyJSON(e)
		}
		return out
	}
	return v
}

// acceptsPattern reports whether the provider compiles a pattern into its
// grammar. A pattern RE2 cannot read is ECMA-262 beyond a regular
// language (lookaround, backreferences) or syntax no grammar takes.
func (p Profile) acceptsPattern(pat string) bool {
	if !p.RegularPatterns {
		return true
	}
	re, err := syntax.Parse(pat, syntax.Perl)
	if err != nil {
		return false
	}
	return !p.NoWordBoundary || !hasWordBoundary(re)
}

func hasWordBoundary(re *syntax.Regexp) bool {
	if re.Op == syntax.OpWordBoundary || re.Op == syntax.OpNoWordBoundary {
		return true
	}
	for _, sub := range re.Sub {
		if hasWordBoundary(sub) {
			return true
		}
	}
	return false
}

func lowerableRef(r string) bool {
	if r == "#" {
		return true
	}
	for _, prefix := range []string{"#/$defs/", "#/definitions/"} {
		if rest, ok := strings.CutPrefix(r, prefix); ok && rest != "" && !strings.Contains(rest, "/") {
			return true
		}
	}
	return false
}

func (lw *lowerer) lowerList(v any, ptr, lptr string, depth int) []any {
	list, _ := v.([]any)
	out := make([]any, len(list))
	for i, b := range list {
		out[i] = lw.lower(b, fmt.Sprintf("%s/%d", ptr, i), fmt.Sprintf("%s/%d", lptr, i), depth, true)
	}
	return out
}

// object lowers the properties of an object schema: closed where the
// dialect demands it, every property required where it demands that.
func (lw *lowerer) object(m, out map[string]any, ptr, lptr string, depth int) {
	props, _ := m["properties"].(map[string]any)
	required := map[string]bool{}
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				required[s] = true
				if _, declared := props[s]; !declared && lw.prof.CloseObjects {
					lw.fail(ptr, fmt.Sprintf("required property %q is not declared in properties, so a closed object could never hold it", s))
				}
			}
		}
	}
	if ap, ok := m["additionalProperties"]; ok && ap != false && ap != true && lw.prof.CloseObjects && len(props) == 0 {
		lw.fail(ptr, "a map (additionalProperties with a schema and no properties) cannot be closed")
	}
	if _, ok := m["patternProperties"]; ok && lw.prof.CloseObjects {
		lw.fail(ptr, "patternProperties cannot be closed")
	}
	lowered := map[string]any{}
	var names []any
	for _, name := range slices.Sorted(maps.Keys(props)) {
		pp, lpp := ptr+"/properties/"+jsonpointer.Escape(name), lptr+"/properties/"+jsonpointer.Escape(name)
		if props[name] == false && !required[name] && lw.prof.CloseObjects {
			// A property that must be absent: a closed object without it
			// says just that.
			continue
		}
		names = append(names, name)
		if !lw.prof.RequireAll || required[name] || lw.acceptsNull(props[name]) {
			lowered[name] = lw.lower(props[name], pp, lpp, depth+1, true)
			continue
		}
		// Optional: required and nullable, a null standing for absence.
		lw.nullable = append(lw.nullable, lpp)
		if needsWrap(props[name]) {
			inner := lw.lower(props[name], pp, lpp+"/anyOf/0", depth+1, true)
			lowered[name] = map[string]any{"anyOf": []any{inner, map[string]any{"type": "null"}}}
			continue
		}
		lowered[name] = nullable(lw.lower(props[name], pp, lpp, depth+1, true))
	}
	out["properties"] = lowered
	if lw.prof.RequireAll {
		if names == nil {
			names = []any{}
		}
		out["required"] = names
	}
	if _, typed := m["type"]; !typed {
		out["type"] = "object" // an object schema said so only by its properties
	}
	switch ap, ok := m["additionalProperties"]; {
	case lw.prof.CloseObjects || ap == false:
		out["additionalProperties"] = false
	case !ok || ap == true:
		// Undeclared members may be anything: nothing to send.
	default:
		// A schema every undeclared member meets, lowered as any other.
		out["additionalProperties"] = lw.lower(ap, ptr+"/additionalProperties", lptr+"/additionalProperties", depth+1, true)
	}
}

func isObjectSchema(m map[string]any) bool {
	if t, ok := m["type"]; ok {
		return hasType(t, "object")
	}
	_, ok := m["properties"]
	return ok
}

func hasType(t any, name string) bool {
	switch t := t.(type) {
	case string:
		return t == name
	case []any:
		for _, e := range t {
			if e == name {
				return true
			}
		}
	}
	return false
}

func describesValue(m map[string]any) bool {
	for _, k := range []string{"type", "enum", "const", "anyOf", "allOf", "$ref"} {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

// acceptsNull reports whether a schema plainly admits null: by its type,
// enum or const, through a branch of anyOf or oneOf, through every
// branch of allOf, or through the schema a local $ref leads to. Such a
// property's null is a value, never made to stand for its absence. Each
// $ref's answer is kept, so a schema whose references branch is read
// once.
func (lw *lowerer) acceptsNull(node any) bool {
	m, ok := node.(map[string]any)
	if !ok {
		return node == true
	}
	if t, ok := m["type"]; ok && hasType(t, "null") {
		return true
	}
	if enum, ok := m["enum"].([]any); ok {
		for _, e := range enum {
			if e == nil {
				return true
			}
		}
	}
	if c, ok := m["const"]; ok && c == nil {
		return true
	}
	if r, ok := m["$ref"].(string); ok {
		known, seen := lw.nullRefs[r]
		if !seen {
			if lw.nullRefs == nil {
				lw.nullRefs = map[string]bool{}
			}
			// While it is read, a reference back into it is taken to
			// admit null: that keeps a null as a value, never removed,
			// which is the safe side of a cycle of references that never
			// steps into the value.
			lw.nullRefs[r] = true
			target, ok := resolveLocal(lw.root, r)
			known = ok && lw.acceptsNull(target)
			lw.nullRefs[r] = known
		}
		if known {
			return true
		}
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if branches, ok := m[k].([]any); ok {
			for _, b := range branches {
				if lw.acceptsNull(b) {
					return true
				}
			}
		}
	}
	if branches, ok := m["allOf"].([]any); ok && len(branches) > 0 {
		for _, b := range branches {
			if !lw.acceptsNull(b) {
				return false
			}
		}
		return true
	}
	return false
}

// resolveLocal returns the schema a local $ref ("#", "#/$defs/x") names
// in root, its fragment percent-decoded as the validator and the
// inclusion engine read it.
func resolveLocal(root any, ref string) (any, bool) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, false
	}
	frag, err := url.PathUnescape(frag)
	if err != nil {
		return nil, false
	}
	return inclusion.At(root, frag)
}

// needsWrap reports whether a schema can only be made nullable by
// wrapping it in an anyOf: one whose value is fixed by const or $ref, or
// that has neither type, enum nor anyOf to widen.
func needsWrap(node any) bool {
	m, ok := node.(map[string]any)
	if !ok {
		return true
	}
	_, c := m["const"]
	_, r := m["$ref"]
	_, t := m["type"]
	_, e := m["enum"]
	_, a := m["anyOf"]
	return c || r || !t && !e && !a
}

// nullable widens a lowered schema to admit null.
func nullable(node any) any {
	m := node.(map[string]any)
	switch t := m["type"].(type) {
	case string:
		m["type"] = []any{t, "null"}
	case []any:
		m["type"] = append(t, "null")
	}
	if enum, ok := m["enum"].([]any); ok {
		m["enum"] = append(enum, nil)
	}
	if branches, ok := m["anyOf"].([]any); ok {
		m["anyOf"] = append(branches, map[string]any{"type": "null"})
	}
	return m
}

// withExtras appends the constraints a provider cannot enforce to a
// schema's description, so the model still reads them.
func withExtras(desc any, extras map[string]any) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(extras)) {
		b, _ := json.Marshal(extras[k])
		parts = append(parts, k+": "+string(b))
	}
	note := "{" + strings.Join(parts, ", ") + "}"
	if d, ok := desc.(string); ok && d != "" {
		return d + "\n\n" + note
	}
	return note
}

// recursive reports a local $ref that leads back into a schema containing
// it, by the pointer of the first such $ref.
func recursive(root any) (string, bool) {
	var refs []struct{ at, target string }
	walkSchema(root, func(ptr, _ string, sub any) {
		if m, ok := sub.(map[string]any); ok {
			if r, ok := m["$ref"].(string); ok && strings.HasPrefix(r, "#") {
				refs = append(refs, struct{ at, target string }{ptr, strings.TrimPrefix(r, "#")})
			}
		}
	})
	// A ref cycles when following targets from it reaches a target that
	// is an ancestor of (or equal to) a ref already on the path.
	next := func(target string) []string {
		var out []string
		for _, r := range refs {
			if r.at == target || strings.HasPrefix(r.at, target+"/") || target == "" {
				out = append(out, r.target)
			}
		}
		return out
	}
	for _, r := range refs {
		seen := map[string]bool{}
		queue := []string{r.target}
		for len(queue) > 0 {
			t := queue[0]
			queue = queue[1:]
			if t == r.at || strings.HasPrefix(r.at, t+"/") || t == "" {
				return r.at, true
			}
			if seen[t] {
				continue
			}
			seen[t] = true
			queue = append(queue, next(t)...)
		}
	}
	return "", false
}

// checkDialect lowers the output schema to the agent's provider and
// reports each constraint the provider cannot enforce while generating: a
// note (shown with --verbose), or, when output.enforce is "provider", an
// error of its own code. A native mode the provider cannot serve is an
// error.
func (c *checker) checkDialect() {
	s := c.schemaOf("output.schema")
	provider, _ := str(lookup(c.v, "model", "provider"))
	prof, ok := Profiles[provider]
	if s == nil || !ok || c.comp.compiled.compile(s.Doc) != nil {
		return // SCHEMA_INVALID reports a schema that does not compile
	}
	mode, _ := str(lookup(c.v, "output", "mode"))
	l, err := lowerOutput(prof, mode, s.Doc, c.comp.compiled.compile)
	var we *WrapError
	if errors.As(err, &we) {
		c.ds = append(c.ds, diag(s.Pos(""), CodeOutputMode, fmt.Sprintf("output.schema: %v", we)))
		return
	}
	if err != nil {
		return // SCHEMA_NUMBER reports it
	}
	c.lowering = l // Build puts it in the plan
	code, tail := CodeProviderUnenforced, "it is enforced only by local validation of the answer"
	if enforce, _ := str(lookup(c.v, "output", "enforce")); enforce == "provider" {
		code, tail = CodeOutputEnforce, `output.enforce is "provider", which demands that generation enforce the whole contract`
	}
	if !l.Strict {
		if l.Mode == plan.ModeNative && prof.NativeNeedsStrict {
			c.ds = append(c.ds, diag(s.Pos(""), CodeOutputMode,
				fmt.Sprintf("output.mode is \"native\", but %s's structured output cannot take this schema (%s); use mode \"tool\" or \"prompted\"", prof.Provider, l.Reason)))
			return
		}
		c.ds = append(c.ds, diag(s.Pos(""), code,
			fmt.Sprintf("%s: %s cannot enforce this schema while generating (%s); %s", s.where(""), prof.Provider, l.Reason, tail)))
		return
	}
	c.noteLocal(s, prof, l.Local, code, tail)
}

// noteLocal reports each constraint of a schema a lowering left to local
// validation, at the constraint.
func (c *checker) noteLocal(s *Schema, prof Profile, l []plan.Constraint, code, tail string) {
	local := append([]plan.Constraint(nil), l...)
	sort.SliceStable(local, func(i, j int) bool { return local[i].Pointer < local[j].Pointer })
	for _, u := range local {
		c.ds = append(c.ds, diag(s.Pos(u.Pointer), code,
			fmt.Sprintf("%s: %s cannot enforce %s; %s", s.where(u.Pointer), prof.Provider, prof.describeLocal(u), tail)))
	}
}

// describeLocal names a constraint a lowering for p left to local
// validation, with why where the keyword alone does not say.
func (p Profile) describeLocal(u plan.Constraint) string {
	switch {
	case u.Keyword == "format":
		return fmt.Sprintf("format %q", u.Value)
	case u.Keyword == "pattern":
		refused := "lookaround or backreference"
		if p.NoWordBoundary {
			refused = "lookaround, backreference or word boundary"
		}
		return fmt.Sprintf("pattern %q (its patterns take no %s)", u.Value, refused)
	case u.Keyword == "oneOf":
		return `"oneOf" (it is sent as anyOf; that exactly one branch matches)`
	case u.Value != "":
		return fmt.Sprintf("%q of %s", u.Keyword, u.Value)
	}
	return fmt.Sprintf("%q", u.Keyword)
}

// noteFallback reports, as one note at a fallback's entry, what the
// fallback's provider would leave to local validation: the output
// schema's constraints it cannot enforce while generating (or that it
// takes the schema as written), and the same of each strict tool's
// arguments. q is the plan Retarget made for it. A fallback of the
// agent's own provider lowers alike, and the agent's own notes say it.
func (c *checker) noteFallback(pos token.Pos, i int, q *plan.Plan) {
	provider := q.Agent.Model.Provider
	own, _ := str(lookup(c.v, "model", "provider"))
	prof, ok := Profiles[provider]
	if !ok || provider == own {
		return
	}
	var parts []string
	describe := func(what string, l *plan.Lowering) {
		if !l.Strict {
			parts = append(parts, fmt.Sprintf("%s (%s)", what, l.Reason))
			return
		}
		local := slices.Clone(l.Local)
		sort.SliceStable(local, func(i, j int) bool { return local[i].Pointer < local[j].Pointer })
		var each []string
		for _, u := range local {
			at := u.Pointer[:strings.LastIndexByte(u.Pointer, '/')+1]
			each = append(each, fmt.Sprintf("%s at %s", prof.describeLocal(u), orRoot(strings.TrimSuffix(at, "/"))))
		}
		if len(each) > 0 {
			parts = append(parts, fmt.Sprintf("%s in %s", strings.Join(each, ", "), what))
		}
	}
	if q.Output != nil {
		describe("the output schema", q.Output)
	}
	if prof.StrictTools {
		for _, name := range c.toolNames() {
			kind, _ := str(lookup(c.v, "capabilities", "tools", name, "kind"))
			s := c.schemaOf("capabilities.tools." + name + ".input.schema")
			if s == nil || !slices.Contains(plan.StrictToolKinds, kind) {
				continue
			}
			if l, err := lowerToolInput(prof, s.Doc, c.comp.compiled.compile); err == nil {
				describe("tool "+name+"'s input schema", l)
			}
		}
	}
	if len(parts) == 0 {
		return
	}
	c.add(pos, CodeProviderUnenforced, "model.fallback.models[%d]: %s cannot enforce while generating %s; local validation enforces them",
		i, provider, strings.Join(parts, "; "))
}

// checkToolDialect reports, as notes, how each exec and http tool's input
// schema is sent to a provider that enforces a strict tool's schema: the
// constraints left to local validation of the arguments, or why it is
// sent as written, not strict (LowerToolInputs decides the same).
func (c *checker) checkToolDialect() {
	provider, _ := str(lookup(c.v, "model", "provider"))
	prof, ok := Profiles[provider]
	if !ok || !prof.StrictTools {
		return
	}
	const tail = "it is enforced only by local validation of the arguments"
	for _, name := range c.toolNames() {
		kind, _ := str(lookup(c.v, "capabilities", "tools", name, "kind"))
		s := c.schemaOf("capabilities.tools." + name + ".input.schema")
		if s == nil || !slices.Contains(plan.StrictToolKinds, kind) || c.comp.compiled.compile(s.Doc) != nil {
			continue
		}
		l, err := lowerToolInput(prof, s.Doc, c.comp.compiled.compile)
		if err != nil {
			continue // SCHEMA_NUMBER reports it
		}
		if !l.Strict {
			c.ds = append(c.ds, diag(s.Pos(""), CodeProviderUnenforced,
				fmt.Sprintf("%s: sent to %s as written, not strict: %s; %s", s.where(""), prof.Provider, l.Reason, tail)))
			continue
		}
		c.noteLocal(s, prof, l.Local, CodeProviderUnenforced, tail)
	}
}
