package compile

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/token"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/inclusion"
	"agentc.dev/agentc/internal/leaf/jsonpointer"
	"agentc.dev/agentc/manifest"
	"agentc.dev/agentc/plan"
)

// Schema is a JSON Schema read from a manifest, with the position of every
// value in it so that findings point into the user's file.
type Schema struct {
	// Path is where the schema sits in the manifest, e.g. "output.schema".
	Path string
	// Doc is the schema as JSON values: map[string]any, []any, string,
	// json.Number, bool and nil.
	Doc any
	pos map[string]token.Pos // by JSON pointer; "" is the schema itself
}

// Pos returns the position of the value at a JSON pointer in the schema,
// or of its nearest ancestor that has one.
func (s *Schema) Pos(ptr string) token.Pos {
	for {
		if p, ok := s.pos[ptr]; ok && p.IsValid() {
			return p
		}
		if ptr == "" {
			return token.NoPos
		}
		i := strings.LastIndexByte(ptr, '/')
		if i < 0 {
			ptr = ""
		} else {
			ptr = ptr[:i]
		}
	}
}

// where renders a JSON pointer in the schema as a manifest path.
func (s *Schema) where(ptr string) string {
	if ptr == "" {
		return s.Path
	}
	var b strings.Builder
	b.WriteString(s.Path)
	cur := s.Doc
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = jsonpointer.Unescape(tok)
		switch c := cur.(type) {
		case []any:
			fmt.Fprintf(&b, "[%s]", tok)
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(c) {
				cur = c[i]
			} else {
				cur = nil
			}
			continue
		case map[string]any:
			cur = c[tok]
		default:
			cur = nil
		}
		b.WriteByte('.')
		if isIdent(tok) {
			b.WriteString(tok)
		} else {
			fmt.Fprintf(&b, "%q", tok)
		}
	}
	return b.String()
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9' {
			continue
		}
		return false
	}
	return true
}

// readSchema converts the CUE value of a schema into JSON values. A value
// that is not concrete data is reported where it stands.
// Objects and arrays nested past plan.MaxSchemaDepth are reported
// (SCHEMA_TOO_DEEP) at the first value past the limit, and read no further:
// every later check, reading included, costs more than linear time in the
// depth.
func readSchema(v cue.Value, path string) (*Schema, *Diagnostic) {
	s := &Schema{Path: path, pos: map[string]token.Pos{}}
	doc, d := s.read(v, "", 0)
	if d != nil {
		return nil, d
	}
	s.Doc = doc
	return s, nil
}

func (s *Schema) read(v cue.Value, ptr string, depth int) (any, *Diagnostic) {
	v, _ = v.Default()
	s.pos[ptr] = manifest.WrittenPos(v)
	notConcrete := func() *Diagnostic {
		d := diag(s.Pos(ptr), manifest.CodeIncomplete, fmt.Sprintf("%s: %v is not concrete JSON (a schema is data: write a value, not a CUE type)", s.where(ptr), v))
		return &d
	}
	if k := v.Kind(); (k == cue.StructKind || k == cue.ListKind) && depth == plan.MaxSchemaDepth {
		d := diag(s.Pos(ptr), CodeSchemaTooDeep, fmt.Sprintf(
			"%s: the schema's objects and arrays nest more than %d deep; agentc refuses schemas this deep, which take time that grows with the cube of the depth to compile: flatten the contract, or share repeated parts through $defs and $ref",
			s.Path, plan.MaxSchemaDepth))
		return nil, &d
	}
	switch v.Kind() {
	case cue.StructKind:
		obj := map[string]any{}
		it, err := v.Fields()
		if err != nil {
			return nil, notConcrete()
		}
		for it.Next() {
			key := it.Selector().Unquoted()
			child, d := s.read(it.Value(), ptr+"/"+jsonpointer.Escape(key), depth+1)
			if d != nil {
				return nil, d
			}
			obj[key] = child
		}
		return obj, nil
	case cue.ListKind:
		var arr []any
		it, err := v.List()
		if err != nil {
			return nil, notConcrete()
		}
		for i := 0; it.Next(); i++ {
			child, d := s.read(it.Value(), fmt.Sprintf("%s/%d", ptr, i), depth+1)
			if d != nil {
				return nil, d
			}
			arr = append(arr, child)
		}
		if arr == nil {
			arr = []any{}
		}
		return arr, nil
	case cue.StringKind:
		str, _ := v.String()
		return str, nil
	case cue.BoolKind:
		b, _ := v.Bool()
		return b, nil
	case cue.NullKind:
		return nil, nil
	case cue.IntKind, cue.FloatKind, cue.NumberKind:
		b, err := v.MarshalJSON()
		if err != nil {
			return nil, notConcrete()
		}
		return json.Number(b), nil
	default:
		return nil, notConcrete()
	}
}

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// checkSchema runs the schema rules on one schema: it must be an object,
// neither vacuous nor unsatisfiable as a whole, with no open or impossible
// part where the value is described, use only known keywords and compile.
// Vacuous and unsatisfiable are verdicts of the inclusion engine, given
// only when it proves them. compile says whether a schema document
// compiles (see CompileSchema). The analysis spends its pattern matches
// from b, which the agent's schemas share: once it is spent, the
// verdicts left are not looked for, and a finding says so
// (SCHEMA_UNDECIDED), so that a schema is never passed unchecked.
func checkSchema(s *Schema, compile func(doc any) error, b *inclusion.Budget) []Diagnostic {
	var ds []Diagnostic
	add := func(ptr string, code, format string, args ...any) {
		ds = append(ds, diag(s.Pos(ptr), code, s.where(ptr)+": "+fmt.Sprintf(format, args...)))
	}
	root, ok := s.Doc.(map[string]any)
	switch {
	case !ok:
		add("", CodeSchemaNotObject, "a schema must be a JSON object that constrains the value, not %s", describe(s.Doc))
		return ds
	case len(root) == 0:
		add("", CodeSchemaEmpty, "the empty schema {} accepts anything: declare at least a type")
		return ds
	}
	targets := refTargets(root)
	walkSchema(root, func(ptr, parentKeyword string, sub any) {
		m, isObj := sub.(map[string]any)
		if !isObj {
			return
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if plan.IsKeyword(k) || strings.HasPrefix(k, "x-") {
				continue
			}
			if kp := ptr + "/" + jsonpointer.Escape(k); !holdsTarget(targets, kp) {
				add(kp, CodeSchemaUnknownKeyword, "unknown keyword %q is ignored by JSON Schema validation%s", k, keywordHint(k))
			}
		}
		if f, ok := m["format"].(string); ok && !knownFormat(f) {
			add(ptr+"/format", CodeSchemaUnknownFormat, "format %q is unknown to the validator and checks nothing", f)
		}
		for _, k := range inclusion.CountKeywords {
			if v, ok := m[k]; ok && !inclusion.ValidCount(v) {
				if r := inclusion.Number(v); r != nil && r.Sign() >= 0 && r.IsInt() { // the meta-schema refuses the rest
					add(ptr+"/"+k, CodeSchemaCount, "%s %v is above 2^53-1 (%d): the validator reads a count past 2^63-1 wrapped (18446744073709551617 as 1), so no count that large bounds what it says", k, v, inclusion.MaxCount)
				}
			}
		}
	})
	walkNumbers(root, "", func(ptr string, n json.Number) {
		canon, exact, err := digest.CanonicalNumber(string(n))
		switch {
		case err != nil:
			add(ptr, CodeSchemaNumberRange, "%v", err)
		case !exact && !isDouble(n):
			add(ptr, CodeSchemaNumber, "%s has more precision than a double holds: the digests see %s (validation uses the number as written)", n, canon)
		case !exact:
			// A double written out in more digits than its shortest form
			// (0.1000000000000000055511151231257827021181583404541015625,
			// -2^63): the digests see the shortest form, which validation
			// reads as another number, so the two schemas share digests
			// and not verdicts.
			add(ptr, CodeSchemaNumber, "%s is written with more digits than the digests keep: they see %s, which validation reads as another number (validation uses the number as written)", n, canon)
		}
	})
	if hasError(ds) {
		return ds
	}
	if d := compileSchema(s, compile); d != nil {
		return append(ds, *d)
	}
	// Analysed even with the budget spent: only what needs a pattern
	// matched is undecided then, and a schema that accepts anything
	// without one is still found.
	an := inclusion.AnalyzeIn(root, b)
	if an.Vacuous("") == inclusion.Yes {
		add("", CodeSchemaUnconstrained, "the schema accepts anything: %s; declare at least a type", keywordList(root))
		return ds
	}
	nested := len(ds)
	checkValues(s, an, add)
	if len(ds) == nested && an.Unsatisfiable("") == inclusion.Yes {
		add("", CodeSchemaUnsatisfiable, "no value satisfies the schema: %s", conflict(an.Conflict("")))
	}
	if b.Spent() {
		add("", CodeSchemaUndecided, "not analysed whole: the agent's schemas spent the %v their analysis may spend matching patterns (enum members against patterns, patternProperties), so whether it is open, vacuous or unsatisfiable is undecided; fewer or simpler patterns and enums decide it", inclusion.MatchTime)
	}
	return ds
}

// checkValues finds the open and the impossible parts of the value a
// schema describes: the schemas of members, items and additional members,
// reached from the root through nothing but such places and allOf. An open
// additionalProperties, additionalItems or pattern's schema says other
// members are allowed (the default made explicit, or a permission beside
// additionalProperties: false) and is not reported. A {}
// elsewhere (a oneOf or anyOf branch, under not, if, then, else or
// contains, a $defs entry) carries meaning and is not reported; a $defs
// entry is judged where a $ref uses it.
func checkValues(s *Schema, an *inclusion.Analysis, add func(ptr string, code, format string, args ...any)) {
	type place struct {
		ptr      string // the subschema
		instance string // the schema that describes the same value as a whole
		member   string // the member it describes, for a property
		item     bool   // it describes items of an array
		required bool
		open     bool // where an open schema is a permission, not a hole
	}
	var visit func(ptr, instance string)
	value := func(p place) {
		m, isObj := s.lookup(p.ptr).(map[string]any)
		switch {
		case an.Vacuous(p.ptr) == inclusion.Yes:
			if p.open || p.member != "" && (!an.MemberFree(p.instance, p.member) || s.evaluatesLater(p.instance, "unevaluatedProperties")) ||
				p.item && s.evaluatesLater(p.instance, "unevaluatedItems") {
				return // constrained elsewhere, or it marks the member or item as evaluated
			}
			switch {
			case !isObj:
				add(p.ptr, CodeSchemaNestedUnconstrained, "true accepts anything here: declare at least a type")
			case len(m) == 0:
				add(p.ptr, CodeSchemaNestedUnconstrained, "the empty schema {} accepts anything here: declare at least a type")
			default:
				add(p.ptr, CodeSchemaNestedUnconstrained, "this schema accepts anything: %s; declare at least a type", keywordList(m))
			}
		case an.Unsatisfiable(p.ptr) == inclusion.Yes:
			switch {
			case !p.required:
			case !isObj:
				add(p.ptr, CodeSchemaUnsatisfiable, "the member %q is required, but its schema is false, which no value satisfies", p.member)
			default:
				add(p.ptr, CodeSchemaUnsatisfiable, "the member %q is required, but no value satisfies its schema: %s", p.member, conflict(an.Conflict(p.ptr)))
			}
		case isObj:
			visit(p.ptr, p.ptr)
		}
	}
	visit = func(ptr, instance string) {
		m, ok := s.lookup(ptr).(map[string]any)
		if !ok {
			return
		}
		required := map[string]bool{}
		for _, at := range []string{ptr, instance} {
			if im, ok := s.lookup(at).(map[string]any); ok {
				if list, ok := im["required"].([]any); ok {
					for _, r := range list {
						if name, ok := r.(string); ok {
							required[name] = true
						}
					}
				}
			}
		}
		if props, ok := m["properties"].(map[string]any); ok {
			for _, k := range slices.Sorted(maps.Keys(props)) {
				value(place{ptr: ptr + "/properties/" + jsonpointer.Escape(k), instance: instance, member: k, required: required[k]})
			}
		}
		if pp, ok := m["patternProperties"].(map[string]any); ok {
			for _, k := range slices.Sorted(maps.Keys(pp)) {
				value(place{ptr: ptr + "/patternProperties/" + jsonpointer.Escape(k), open: true})
			}
		}
		for _, k := range []string{"additionalProperties", "additionalItems"} {
			if _, ok := m[k]; ok {
				value(place{ptr: ptr + "/" + k, open: true})
			}
		}
		for _, k := range []string{"items", "prefixItems"} {
			switch v := m[k].(type) {
			case []any:
				for i := range v {
					value(place{ptr: fmt.Sprintf("%s/%s/%d", ptr, k, i), instance: instance, item: true})
				}
			case nil:
			default:
				value(place{ptr: ptr + "/" + k, instance: instance, item: true})
			}
		}
		if list, ok := m["allOf"].([]any); ok {
			for i := range list {
				visit(fmt.Sprintf("%s/allOf/%d", ptr, i), instance)
			}
		}
		if list, ok := m["anyOf"].([]any); ok && !mediaTypeList(list) {
			for i := range list {
				if p := fmt.Sprintf("%s/anyOf/%d", ptr, i); an.Vacuous(p) == inclusion.Yes {
					add(p, CodeSchemaNoEffect, "this alternative accepts anything, so the anyOf around it has no effect")
					break
				}
			}
		}
	}
	visit("", "")
}

// mediaTypeList reports whether an anyOf lists media types, each branch
// {"contentMediaType": ...} alone: a file input's declaration (see
// plan.FileFields), which agentc asserts though JSON Schema does not.
func mediaTypeList(list []any) bool {
	for _, b := range list {
		m, ok := b.(map[string]any)
		if _, has := m["contentMediaType"]; !ok || len(m) != 1 || !has {
			return false
		}
	}
	return len(list) > 0
}

// evaluatesLater reports whether the schema at ptr, or an allOf member
// within it, has the keyword (unevaluatedProperties or unevaluatedItems):
// a member or an item declared {} there is what makes it evaluated.
func (s *Schema) evaluatesLater(ptr, keyword string) bool {
	found := false
	var look func(p string)
	look = func(p string) {
		m, ok := s.lookup(p).(map[string]any)
		if !ok {
			return
		}
		if _, ok := m[keyword]; ok {
			found = true
		}
		if list, ok := m["allOf"].([]any); ok {
			for i := range list {
				look(fmt.Sprintf("%s/allOf/%d", p, i))
			}
		}
	}
	look(ptr)
	return found
}

// refTargets lists the JSON pointers the schema's local references name.
func refTargets(root any) []string {
	var out []string
	walkSchema(root, func(_, _ string, sub any) {
		if m, ok := sub.(map[string]any); ok {
			for _, k := range []string{"$ref", "$dynamicRef"} {
				if ref, ok := m[k].(string); ok && strings.HasPrefix(ref, "#/") {
					if f, err := url.PathUnescape(ref[1:]); err == nil {
						out = append(out, f)
					}
				}
			}
		}
	})
	return out
}

// holdsTarget reports whether a member that is no keyword is a container
// a reference reaches into, such as "names" in "#/$defs/names/one".
func holdsTarget(targets []string, ptr string) bool {
	for _, t := range targets {
		if t == ptr || strings.HasPrefix(t, ptr+"/") {
			return true
		}
	}
	return false
}

// lookup returns the value at a JSON pointer in the schema, or nil.
func (s *Schema) lookup(ptr string) any {
	v, _ := inclusion.At(s.Doc, ptr)
	return v
}

// conflict says which keywords no value satisfies together.
func conflict(keys []string) string {
	for i, k := range keys {
		keys[i] = fmt.Sprintf("%q", k)
	}
	switch len(keys) {
	case 0:
		return "its parts exclude each other"
	case 1:
		return keys[0] + " accepts no value"
	}
	return strings.Join(keys[:len(keys)-1], ", ") + " and " + keys[len(keys)-1] + " conflict"
}

// walkNumbers calls fn for every number in a JSON document, schema or
// data, members in sorted order.
func walkNumbers(doc any, ptr string, fn func(ptr string, n json.Number)) {
	// Pointers are built only on the way to a number or a container.
	holds := func(v any) bool {
		switch v.(type) {
		case json.Number, map[string]any, []any:
			return true
		}
		return false
	}
	switch d := doc.(type) {
	case json.Number:
		fn(ptr, d)
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(d)) {
			if holds(d[k]) {
				walkNumbers(d[k], ptr+"/"+jsonpointer.Escape(k), fn)
			}
		}
	case []any:
		for i, v := range d {
			if holds(v) {
				walkNumbers(v, ptr+"/"+strconv.Itoa(i), fn)
			}
		}
	}
}

// isDouble reports whether a number's decimal value is exactly that of an
// IEEE-754 double, such as -2^63: the digests write it in fewer digits
// (-9223372036854776000), but the double they read back is the number
// written, so no two schemas that validation tells apart share a digest.
func isDouble(n json.Number) bool {
	r := inclusion.Number(n)
	if r == nil {
		return false
	}
	_, exact := r.Float64()
	return exact
}

func hasError(ds []Diagnostic) bool {
	for _, d := range ds {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// walkSchema calls fn for a schema and every subschema in it; see
// inclusion.Walk.
func walkSchema(doc any, fn func(ptr, parentKeyword string, sub any)) { inclusion.Walk(doc, fn) }

func isList(v any) bool { _, ok := v.([]any); return ok }

func keywordList(m map[string]any) string {
	keys := slices.Sorted(maps.Keys(m))
	for i, k := range keys {
		keys[i] = fmt.Sprintf("%q", k)
	}
	if len(keys) == 1 {
		return keys[0] + " constrains nothing"
	}
	return strings.Join(keys, ", ") + " constrain nothing"
}

// keywordHint suggests the keyword an unknown one was probably meant to be.
func keywordHint(k string) string {
	cands := plan.ConstraintKeywords()
	if best := manifest.Closest(k, cands); best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}

func describe(doc any) string {
	switch d := doc.(type) {
	case bool:
		return fmt.Sprint(d)
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("%T", doc)
}

// schemaURL is the base URL plan.CompileSchema compiles a schema under;
// compile errors name it, and messages strip it.
const schemaURL = plan.SchemaURL

// CompileSchema compiles a schema as agentc does everywhere; see
// plan.CompileSchema.
func CompileSchema(doc any) (*jsonschema.Schema, error) { return plan.CompileSchema(doc) }

var printer = message.NewPrinter(language.English)

// compiledSchemas remembers the schema documents that compiled, by the
// SHA-256 of their text (appendDoc): the agents of one directory often
// share schemas, and compiling one, validation against its meta-schema
// included, costs more than every other check of it.
type compiledSchemas struct {
	seen map[[sha256.Size]byte]struct{}
	text []byte   // a document's text, reused
	keys []string // members' names, a stack reused
}

// maxCompiledSchemas bounds how many hashes a Compiler keeps (32 bytes
// each).
const maxCompiledSchemas = 4096

// compile reports whether a schema document compiles, as CompileSchema
// does, from memory when the same document compiled before.
func (cs *compiledSchemas) compile(doc any) error {
	text, hashable := cs.appendDoc(cs.text[:0], doc)
	cs.text = text
	key := sha256.Sum256(text)
	if _, ok := cs.seen[key]; hashable && ok {
		return nil
	}
	if _, err := CompileSchema(doc); err != nil {
		return err
	}
	if hashable && len(cs.seen) < maxCompiledSchemas {
		if cs.seen == nil {
			cs.seen = map[[sha256.Size]byte]struct{}{}
		}
		cs.seen[key] = struct{}{}
	}
	return nil
}

// appendDoc appends a JSON document to b so that two documents append the
// same bytes only when they are equal, number for number as written. It
// reports false for a value that is not a JSON value as readSchema and
// lowering make them.
func (cs *compiledSchemas) appendDoc(b []byte, doc any) ([]byte, bool) {
	str := func(b []byte, tag byte, s string) []byte {
		return append(binary.AppendUvarint(append(b, tag), uint64(len(s))), s...)
	}
	ok := true
	switch d := doc.(type) {
	case nil:
		b = append(b, 'n')
	case bool:
		if d {
			b = append(b, 't')
		} else {
			b = append(b, 'f')
		}
	case json.Number:
		b = str(b, '#', string(d))
	case string:
		b = str(b, '"', d)
	case []any:
		b = binary.AppendUvarint(append(b, '['), uint64(len(d)))
		for _, v := range d {
			if b, ok = cs.appendDoc(b, v); !ok {
				break
			}
		}
	case map[string]any:
		b = binary.AppendUvarint(append(b, '{'), uint64(len(d)))
		from := len(cs.keys)
		cs.keys = slices.AppendSeq(cs.keys, maps.Keys(d))
		slices.Sort(cs.keys[from:])
		for i := from; i < from+len(d); i++ {
			k := cs.keys[i]
			b = str(b, '"', k)
			if b, ok = cs.appendDoc(b, d[k]); !ok {
				break
			}
		}
		cs.keys = cs.keys[:from]
	default:
		ok = false
	}
	return b, ok
}

// knownFormats caches, per format name, whether the validator asserts it.
var knownFormats sync.Map

// knownFormat reports whether the validator checks a format. It asks the
// validator itself, which silently ignores formats it does not know.
func knownFormat(name string) bool {
	if known, ok := knownFormats.Load(name); ok {
		return known.(bool)
	}
	sch, err := CompileSchema(map[string]any{"format": name})
	known := err == nil && sch.Format != nil
	knownFormats.Store(name, known)
	return known
}

// compileSchema reports the first reason a schema does not compile, at the
// keyword responsible.
func compileSchema(s *Schema, compile func(doc any) error) *Diagnostic {
	err := compile(s.Doc)
	if err == nil {
		return nil
	}
	ptr, msg := explain(err, s.Doc)
	// The validator's words may quote the schema's own text unquoted (a
	// pattern's, in the regexp error): the finding stays on one line.
	msg = strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(msg)
	d := diag(s.Pos(ptr), CodeSchemaInvalid, fmt.Sprintf("%s: not a valid JSON Schema: %s", s.where(ptr), msg))
	return &d
}

// explain finds where in the schema a compile error lies (a JSON pointer)
// and says what is wrong in one line.
func explain(err error, doc any) (ptr, msg string) {
	var sve *jsonschema.SchemaValidationError
	if errors.As(err, &sve) {
		var ve *jsonschema.ValidationError
		if errors.As(sve.Err, &ve) {
			leaf := deepest(ve)
			return jsonpointer.Join(leaf.InstanceLocation), "the meta-schema rejects it: " + leaf.ErrorKind.LocalizedString(printer)
		}
		return "", sve.Err.Error()
	}
	if m, ok := doc.(map[string]any); ok {
		// A $schema the validator does not know is looked up like a
		// reference, and refused by the hermetic loader.
		if decl, ok := m["$schema"].(string); ok {
			var lue *jsonschema.LoadURLError
			if errors.As(err, &lue) && strings.TrimSuffix(lue.URL, "#") == strings.TrimSuffix(decl, "#") {
				return "/$schema", fmt.Sprintf("unsupported $schema %q (agentc knows drafts 4, 6, 7, 2019-09 and 2020-12)", decl)
			}
		}
	}
	var rx *jsonschema.InvalidRegexError
	if errors.As(err, &rx) {
		return fragment(rx.URL), fmt.Sprintf("invalid regular expression %q: %v", rx.Regex, rx.Err)
	}
	var pnf *jsonschema.JSONPointerNotFoundError
	if errors.As(err, &pnf) {
		return refPointer(doc, pnf.URL), fmt.Sprintf("reference %s points at nothing in the schema", strings.TrimPrefix(pnf.URL, schemaURL))
	}
	var anf *jsonschema.AnchorNotFoundError
	if errors.As(err, &anf) {
		return refPointer(doc, anf.URL), fmt.Sprintf("reference %s names no anchor in the schema", strings.TrimPrefix(anf.URL, schemaURL))
	}
	var lue *jsonschema.LoadURLError
	if errors.As(err, &lue) {
		return refPointer(doc, lue.URL), fmt.Sprintf("cannot resolve %s: %v", lue.URL, lue.Err)
	}
	var ude *jsonschema.UnsupportedDraftError
	if errors.As(err, &ude) {
		return "/$schema", fmt.Sprintf("unsupported $schema %q", ude.URL)
	}
	msg = err.Error()
	msg = strings.ReplaceAll(msg, schemaURL, "")
	return "", strings.ReplaceAll(msg, "\n", "; ")
}

// refPointer finds the $ref (or $dynamicRef) that names a URL the compiler
// could not resolve, so the finding points at the reference, not the root.
func refPointer(doc any, target string) string {
	found := ""
	walkSchema(doc, func(ptr, _ string, sub any) {
		m, ok := sub.(map[string]any)
		if !ok || found != "" {
			return
		}
		for _, k := range []string{"$ref", "$dynamicRef"} {
			ref, ok := m[k].(string)
			if ok && ref != "" && (ref == target || strings.HasSuffix(target, ref) || strings.HasSuffix(target, strings.TrimPrefix(ref, "#"))) {
				found = ptr + "/" + jsonpointer.Escape(k)
				return
			}
		}
	})
	return found
}

func deepest(ve *jsonschema.ValidationError) *jsonschema.ValidationError {
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	return ve
}

// fragment returns the JSON pointer in a URL's fragment, or "".
func fragment(u string) string {
	i := strings.IndexByte(u, '#')
	if i < 0 {
		return ""
	}
	f, err := url.PathUnescape(u[i+1:])
	if err != nil || !strings.HasPrefix(f, "/") {
		return ""
	}
	return f
}
