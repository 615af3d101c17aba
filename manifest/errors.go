package manifest

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/format"
	"cuelang.org/go/cue/token"

	"agentc.dev/agentc/plan"
)

// Codes of the problems the loader reports. They are stable: scripts and
// tests match on them.
const (
	CodeSyntax       = "MANIFEST_SYNTAX"        // the file does not parse
	CodeUnknownField = "MANIFEST_UNKNOWN_FIELD" // a field #Manifest does not declare
	CodeMissingField = "MANIFEST_MISSING_FIELD" // a required field is absent
	CodeType         = "MANIFEST_TYPE"          // a value of the wrong type or outside its bounds
	CodeIncomplete   = "MANIFEST_INCOMPLETE"    // a value that is not concrete data
	CodeConflict     = "MANIFEST_CONFLICT"      // the manifest contradicts itself
	CodeOutside      = "MANIFEST_OUTSIDE"       // a file found in a directory links out of its project
	CodeName         = "NAME_INVALID"           // the agent's name is malformed
	CodeToolName     = "TOOL_NAME_INVALID"      // a tool or output name is malformed
	CodeBudget       = "BUDGET_INVALID"         // a budget is malformed or out of range
)

// Error is one problem in a manifest, at a position in the user's files.
type Error struct {
	Pos token.Pos
	// Path is the field the problem is about, e.g. "output.schema"; empty
	// for the manifest as a whole.
	Path string
	Code string
	Msg  string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Pos.IsValid() {
		fmt.Fprintf(&b, "%s: ", e.Pos)
	}
	b.WriteString(e.Msg)
	fmt.Fprintf(&b, " [%s]", e.Code)
	return b.String()
}

// pathCodes refines the code of a type error by where it occurs: a bad
// name or budget is reported as such, not as a generic type error.
var pathCodes = []struct {
	re   *regexp.Regexp
	code string
}{
	{regexp.MustCompile(`^name$`), CodeName},
	{regexp.MustCompile(`^output\.name$`), CodeToolName},
	{regexp.MustCompile(`^budgets(\.|$)`), CodeBudget},
}

// boundReadings say in words what a bound of the schema asks, where its
// CUE says it only to a reader of regular expressions.
var boundReadings = map[string]string{
	`=~"^[^\\x00-\\x1f\\x7f-\\x9f]*$"`:                                          plan.ControlRefused,
	`=~"^[^\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]*$"`: plan.HiddenRefused,
}

func codeForPath(path, fallback string) string {
	for _, pc := range pathCodes {
		if pc.re.MatchString(path) {
			return pc.code
		}
	}
	return fallback
}

// validate reports every way the unified value u falls short of #Manifest.
// CUE stops reporting some errors of a struct once one of its fields is in
// error, so the walk below finds unknown and missing fields itself, and
// each top-level field is validated on its own.
func (l *Loader) validate(u, v cue.Value) []*Error {
	// Most manifests are valid: one validation of the whole says so, and
	// the walk for a complete report is needed only when it fails.
	if u.Validate(cue.Concrete(true), cue.All(), cue.Final()) == nil {
		return nil
	}
	var errs []*Error
	seen := map[string]bool{}
	var dead []string // fields reported as not allowed: nothing below them is news
	add := func(e *Error) {
		if seen[e.Path] {
			return
		}
		for _, d := range dead {
			if strings.HasPrefix(e.Path, d+".") {
				return
			}
		}
		seen[e.Path] = true
		if e.Code == CodeUnknownField || e.Code == CodeToolName {
			dead = append(dead, e.Path)
		}
		errs = append(errs, e)
	}
	l.walk(l.schema, v, nil, add)
	it, err := u.Fields(cue.Optional(true))
	if err != nil {
		for _, e := range l.classify(v, err) {
			add(e)
		}
		return errs
	}
	for it.Next() {
		if it.FieldType()&(cue.OptionalConstraint|cue.RequiredConstraint) != 0 {
			continue
		}
		report := func(err error) {
			for _, e := range l.classify(v, err) {
				add(e)
			}
		}
		if sel := it.Selector().String(); sel == "tests" || sel == "capabilities" {
			l.validateData(it.Value(), v.LookupPath(cue.MakePath(it.Selector())), []cue.Selector{it.Selector()}, report)
			continue
		}
		report(it.Value().Validate(cue.Concrete(true), cue.All(), cue.Final()))
	}
	return errs
}

// isSchemaPath reports whether a path holds a JSON Schema, whose insides
// the manifest schema leaves open.
func isSchemaPath(path []cue.Selector) bool {
	return len(path) > 0 && path[len(path)-1].String() == "schema"
}

// walk finds fields the schema does not allow and required fields that are
// absent, comparing the schema s at a path with the value as written v.
// It asks the schema, not the unified value: CUE answers Allows for a field
// already present in a value with true.
func (l *Loader) walk(s, v cue.Value, path []cue.Selector, add func(*Error)) {
	if isSchemaPath(path) || isConstraintPath(path) {
		return
	}
	// A tool's fields depend on its kind: refine the schema by it.
	if k := v.LookupPath(cue.MakePath(cue.Str("kind"))); k.Exists() && s.Allows(cue.Str("kind")) {
		ks, err := k.String()
		if err != nil {
			return
		}
		s = s.FillPath(cue.MakePath(cue.Str("kind")), ks)
		if s.LookupPath(cue.MakePath(cue.Str("kind"))).Err() != nil {
			// An unknown kind is reported as a type error; which fields
			// it would allow is unknowable.
			return
		}
	}
	vit, err := v.Fields()
	if err != nil {
		return
	}
	for vit.Next() {
		sel := vit.Selector()
		p := appendPath(path, sel)
		if !s.Allows(sel) {
			ps := pathString(p)
			if pathString(path) == "capabilities.tools" {
				add(&Error{Pos: vit.Value().Pos(), Path: ps, Code: CodeToolName,
					Msg: fmt.Sprintf("tool name %q must start with a letter and hold only letters, digits, '_' and '-' (at most 64)", sel.Unquoted())})
				continue
			}
			add(&Error{Pos: vit.Value().Pos(), Path: ps, Code: CodeUnknownField,
				Msg: fmt.Sprintf("%s: field not allowed%s", ps, suggest(s, sel))})
			continue
		}
		if vit.Value().IncompleteKind() == cue.StructKind {
			child := s.FillPath(cue.MakePath(sel), l.top).LookupPath(cue.MakePath(sel))
			if child.Exists() {
				l.walk(child, vit.Value(), p, add)
			}
		}
	}
	sit, err := s.Fields(cue.Optional(true))
	if err != nil {
		return
	}
	for sit.Next() {
		if sit.FieldType()&cue.RequiredConstraint == 0 {
			continue
		}
		sel := sit.Selector()
		name := strings.TrimSuffix(sel.String(), "!")
		if v.LookupPath(cue.MakePath(cue.Str(name))).Exists() {
			continue
		}
		p := pathString(appendPath(path, cue.Str(name)))
		add(&Error{Pos: v.Pos(), Path: p, Code: CodeMissingField,
			Msg: fmt.Sprintf("%s: missing required field %q", orRoot(pathString(path)), name)})
	}
}

// suggest names a declared field close to a misspelt one.
func suggest(s cue.Value, sel cue.Selector) string {
	it, err := s.Fields(cue.Optional(true))
	if err != nil {
		return ""
	}
	var cands []string
	for it.Next() {
		cands = append(cands, strings.TrimRight(it.Selector().String(), "?!"))
	}
	if best := Closest(sel.Unquoted(), cands); best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}

// Closest returns the candidate nearest to a misspelt word, ignoring case,
// or "" when none is within two edits. Ties go to the smaller candidate, so
// the answer does not depend on the order of candidates.
func Closest(word string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		d := editDistance(strings.ToLower(word), strings.ToLower(c))
		if d < bestD || d == bestD && c < best {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func orRoot(p string) string {
	if p == "" {
		return "manifest"
	}
	return p
}

func appendPath(path []cue.Selector, sel cue.Selector) []cue.Selector {
	p := make([]cue.Selector, len(path), len(path)+1)
	copy(p, path)
	return append(p, sel)
}

func pathString(path []cue.Selector) string {
	parts := make([]string, len(path))
	for i, s := range path {
		parts[i] = s.String()
	}
	return strings.Join(parts, ".")
}

// classify turns evaluation errors into Errors with codes and positions in
// the user's files.
func (l *Loader) classify(v cue.Value, err error) []*Error {
	if err == nil {
		return nil
	}
	var out []*Error
	list := cueerrors.Errors(err)
	for i, e := range list {
		path := errPath(e)
		format, args := e.Msg()
		msg := fmt.Sprintf(format, args...)
		if strings.TrimSpace(msg) == "" || strings.Contains(msg, "%!") {
			msg = e.Error() // a message whose format lost its arguments
		}
		var code string
		switch {
		case format == "field not allowed":
			code = CodeUnknownField
			msg = "field not allowed"
		case format == "field is required but not present":
			code = CodeMissingField
			msg = "missing required field"
		case strings.HasSuffix(format, "errors in empty disjunction:"):
			if hasDeeper(list, path) {
				// An element of the value is what is wrong; that error
				// says more.
				continue
			}
			code = codeForPath(path, CodeType)
			msg = l.disjunctionMsg(v, path, list[i+1:])
		case strings.HasPrefix(format, "incomplete value"), strings.HasPrefix(format, "non-concrete value"):
			code = CodeIncomplete
			if w := lookupUser(v, path); w.Exists() {
				msg = fmt.Sprintf("incomplete value %v", w)
			}
			msg += " (a manifest holds data: write a concrete value)"
		case strings.HasPrefix(format, "incompatible list lengths") && len(args) == 2:
			code = codeForPath(path, CodeType)
			if w := lookupUser(v, path); w.Exists() {
				msg = fmt.Sprintf("invalid value %v (want a list of at least %v element(s))", w, args[1])
			}
		case strings.HasPrefix(format, "conflicting values"), strings.HasPrefix(format, "invalid value"),
			strings.Contains(format, "mismatched types"), strings.Contains(format, "out of bound"):
			code = codeForPath(path, CodeType)
			if !l.fromSchema(e) {
				code = CodeConflict
			}
			if strings.Contains(format, "mismatched types") && code != CodeConflict {
				if m := l.mismatchMsg(path, args); m != "" {
					msg = m
				}
			}
			if strings.Contains(format, "out of bound") && len(args) == 2 {
				if why, ok := boundReadings[fmt.Sprint(args[1])]; ok {
					msg = fmt.Sprintf("invalid value %v (%s)", args[0], why)
				}
			}
		default:
			code = codeForPath(path, CodeType)
		}
		if path != "" {
			msg = path + ": " + msg
		}
		out = append(out, &Error{Pos: l.userPos(v, e, path), Path: path, Code: code, Msg: msg})
	}
	return out
}

// fromSchema reports whether an error involves the #Manifest schema, as
// opposed to the user's own values contradicting each other.
func (l *Loader) fromSchema(e cueerrors.Error) bool {
	for _, p := range e.InputPositions() {
		if IsSchemaFile(p.Filename()) {
			return true
		}
	}
	return IsSchemaFile(e.Position().Filename())
}

// IsSchemaFile reports whether a file holds the #Manifest schema: the
// embedded one, or a copy a CUE module imports (agentc schema --vendor
// writes it into cue.mod/pkg). No file under cue.mod is the manifest, so
// a position there is never the one to show.
func IsSchemaFile(name string) bool {
	if name == SchemaFile {
		return true
	}
	for _, part := range strings.Split(filepath.ToSlash(name), "/") {
		if part == "cue.mod" {
			return true
		}
	}
	return false
}

// mismatchMsg describes a value of another kind than the struct the
// schema wants at path ("conflicting values V and S (mismatched types K
// and struct)"), by the struct's fields rather than the whole definition
// CUE prints: model: "gpt-4o" is a likely first manifest's mistake, and
// its error was 400 characters of schema. "" leaves CUE's message.
func (l *Loader) mismatchMsg(path string, args []any) string {
	if len(args) != 4 {
		return ""
	}
	got := args[0]
	switch {
	case fmt.Sprint(args[3]) == "struct":
	case fmt.Sprint(args[2]) == "struct":
		got = args[1]
	default:
		return ""
	}
	s := lookupSchema(l.schema, path)
	if s.IncompleteKind() != cue.StructKind {
		return ""
	}
	var required, optional []string
	it, err := s.Fields(cue.Optional(true))
	if err != nil {
		return ""
	}
	for it.Next() {
		sel := it.Selector()
		if sel.IsDefinition() || sel.PkgPath() != "" {
			continue
		}
		name := sel.Unquoted()
		if sel.ConstraintType() == cue.RequiredConstraint {
			required = append(required, name)
		} else {
			optional = append(optional, name)
		}
	}
	if len(required)+len(optional) == 0 {
		return ""
	}
	want := "want a struct"
	if len(required) > 0 {
		want += " with " + joinAnd(required)
		if len(optional) > 0 {
			want += "; optional: " + strings.Join(optional, ", ")
		}
	} else {
		want += " of " + strings.Join(optional, ", ")
	}
	return fmt.Sprintf("invalid value %v (%s)", got, want)
}

// joinAnd joins names as a sentence does: "a", "a and b", "a, b and c".
func joinAnd(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// disjunctionMsg describes a value that matched none of the alternatives
// the schema allows, naming the alternatives.
func (l *Loader) disjunctionMsg(v cue.Value, path string, rest []cueerrors.Error) string {
	got := ""
	if w := lookupUser(v, path); w.Exists() {
		got = fmt.Sprint(w)
	}
	want := schemaText(lookupSchema(l.schema, path))
	if want == "" {
		var alts []string
		for _, e := range rest {
			if errPath(e) != path {
				break
			}
			format, args := e.Msg()
			if strings.HasPrefix(format, "conflicting values") && len(args) >= 2 {
				// One of the two is the value written; the other is
				// the alternative.
				alt := fmt.Sprint(args[0])
				if alt == got {
					alt = fmt.Sprint(args[1])
				}
				alts = append(alts, alt)
			}
		}
		want = strings.Join(alts, " | ")
	}
	switch {
	case got != "" && want != "":
		return fmt.Sprintf("invalid value %s (want %s)", got, want)
	case want != "":
		return fmt.Sprintf("invalid value (want %s)", want)
	case got != "":
		return fmt.Sprintf("invalid value %s", got)
	default:
		return "invalid value"
	}
}

// schemaText renders the schema's constraint for a field on one line.
func schemaText(s cue.Value) string {
	if !s.Exists() {
		return ""
	}
	n := s.Syntax(cue.Raw())
	if f, ok := n.(*ast.File); ok {
		// The constraint may come with the schema's imports; keep the
		// expression alone.
		var expr ast.Node
		for _, d := range f.Decls {
			if e, ok := d.(*ast.EmbedDecl); ok {
				expr = e.Expr
			}
		}
		if expr == nil {
			return ""
		}
		n = expr
	}
	b, err := format.Node(n)
	if err != nil {
		return ""
	}
	text := strings.Join(strings.Fields(string(b)), " ")
	if id, ok := n.(*ast.Ident); ok && strings.HasPrefix(id.Name, "#") {
		// A definition's name says less than what it allows, when that
		// is short: an enumeration, say.
		if v := fmt.Sprint(s); !strings.Contains(v, "\n") && len(v) <= 200 {
			return v
		}
	}
	return text
}

// lookupSchema finds the schema constraint for a path, following pattern
// constraints (tool names) with AnyString.
func lookupSchema(schema cue.Value, path string) cue.Value {
	if path == "" {
		return schema
	}
	p, ok := parsePath(path)
	if !ok {
		return cue.Value{}
	}
	cur := schema
	for _, sel := range p.Selectors() {
		if sel.Type() == cue.IndexLabel {
			sel = cue.AnyIndex
		}
		next := cur.LookupPath(cue.MakePath(sel))
		if !next.Exists() {
			next = cur.LookupPath(cue.MakePath(sel.Optional()))
		}
		if !next.Exists() {
			next = cur.LookupPath(cue.MakePath(cue.AnyString))
		}
		if !next.Exists() {
			return cue.Value{}
		}
		cur = next
	}
	return cur
}

// errPath renders the path of an error as the user would write it, with
// list indexes in brackets: capabilities.tools.docs.ops[1].
func hasDeeper(list []cueerrors.Error, path string) bool {
	for _, e := range list {
		p := errPath(e)
		if strings.HasPrefix(p, path+".") || strings.HasPrefix(p, path+"[") {
			return true
		}
	}
	return false
}

func errPath(e cueerrors.Error) string {
	parts := e.Path()
	if len(parts) > 0 && parts[0] == "#Manifest" {
		parts = parts[1:]
	}
	var b strings.Builder
	for _, p := range parts {
		if _, err := strconv.Atoi(p); err == nil {
			fmt.Fprintf(&b, "[%s]", p)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

// parsePath turns a path rendered by errPath back into a CUE path.
func parsePath(path string) (cue.Path, bool) {
	if path == "" {
		return cue.MakePath(), true
	}
	var sels []cue.Selector
	for _, part := range strings.Split(path, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if name != "" {
			p := cue.ParsePath(name)
			if p.Err() != nil {
				return cue.Path{}, false
			}
			sels = append(sels, p.Selectors()...)
		}
		for rest != "" {
			idx, after, ok := strings.Cut(rest, "]")
			n, err := strconv.Atoi(idx)
			if !ok || err != nil {
				return cue.Path{}, false
			}
			sels = append(sels, cue.Index(n))
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return cue.MakePath(sels...), true
}

// lookupUser returns the user's value at a rendered path: as written,
// where the manifest unifies it with the imported #Manifest itself (its
// value there is the error).
func lookupUser(v cue.Value, path string) cue.Value {
	p, ok := parsePath(path)
	if !ok {
		return cue.Value{}
	}
	return written(v.LookupPath(p))
}

// WrittenPos is the position of a value of a manifest as written in the
// manifest: its own, or, where that is in the #Manifest a CUE module
// imports (a schema's value unified with the declaration of its field),
// that of the conjunct the manifest holds. It is invalid where the
// manifest holds none.
func WrittenPos(v cue.Value) token.Pos {
	p := v.Pos()
	if !p.IsValid() || !IsSchemaFile(p.Filename()) {
		return p
	}
	if op, parts := v.Expr(); op == cue.AndOp {
		for _, x := range parts {
			if q := x.Pos(); q.IsValid() && !IsSchemaFile(q.Filename()) {
				return q
			}
		}
	}
	return token.NoPos
}

// written is the part of an erroneous value that the user wrote, when it
// is a conjunct of a concrete value and constraints of the schema; else
// the value.
func written(w cue.Value) cue.Value {
	if w.Err() == nil {
		return w
	}
	op, parts := w.Expr()
	if op != cue.AndOp {
		return w
	}
	var found cue.Value
	for _, x := range parts {
		if !x.Pos().IsValid() || IsSchemaFile(x.Pos().Filename()) {
			continue
		}
		if found.Exists() || !x.IsConcrete() {
			return w
		}
		found = x
	}
	if !found.Exists() {
		return w
	}
	return found
}

// userPos finds a position in the user's files for an error: one the error
// carries, else the erroneous field's, else its nearest ancestor's.
func (l *Loader) userPos(v cue.Value, e cueerrors.Error, path string) token.Pos {
	cands := append([]token.Pos{e.Position()}, e.InputPositions()...)
	if l.fromSchema(e) && path != "" {
		// The error's own positions in the user's file may be those of
		// the struct the imported #Manifest is embedded in; the value
		// written at the path is the one at fault.
		if w := lookupUser(v, path); w.Exists() && w.Pos().IsValid() && !IsSchemaFile(w.Pos().Filename()) && slices.ContainsFunc(cands, func(p token.Pos) bool { return IsSchemaFile(p.Filename()) && p.Filename() != SchemaFile }) {
			return valuePos(w)
		}
	}
	for _, p := range cands {
		if p.IsValid() && !IsSchemaFile(p.Filename()) {
			return p
		}
	}
	p, ok := parsePath(path)
	if path == "" || !ok {
		return v.Pos()
	}
	sels := p.Selectors()
	for n := len(sels); n >= 0; n-- {
		w := written(v.LookupPath(cue.MakePath(sels[:n]...)))
		if w.Exists() && w.Pos().IsValid() && !IsSchemaFile(w.Pos().Filename()) {
			return valuePos(w)
		}
	}
	return v.Pos()
}

// valuePos is the position of a field's value rather than its label, where
// the value has one: the error is in what was written after the colon.
func valuePos(w cue.Value) token.Pos {
	if f, ok := w.Source().(*ast.Field); ok && f.Value != nil && f.Value.Pos().IsValid() {
		return f.Value.Pos()
	}
	return w.Pos()
}
