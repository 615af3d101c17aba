package inclusion_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"testing"

	"agentc.dev/agentc/inclusion"
	"agentc.dev/agentc/internal/leaf/jsonpointer"
	"agentc.dev/agentc/internal/schemagen"
	"agentc.dev/agentc/plan"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The differential check holds the engine's Yes verdicts against the
// validator agentc uses: a schema proved vacuous must accept every value of
// an instance corpus, one proved unsatisfiable none, and for a pair proved
// included every value the smaller accepts the larger must accept too. An
// Unknown can never be wrong, so only Yes is checked; a Yes can only be
// gamed by being wrong.

// diffCorpora is the repository's testdata/corpora; tests run in the
// package directory.
var diffCorpora = filepath.Join("..", "testdata", "corpora")

// diffCorpus returns the directory of one corpus; a missing corpus fails
// the test, so a checkout that lost it cannot pass having checked nothing.
func diffCorpus(t testing.TB, sub string) string {
	t.Helper()
	dir := filepath.Join(diffCorpora, sub)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("corpus %s: %v", dir, err)
	}
	return dir
}

// diffBudget bounds the work of the differential check, which must stay
// fast enough to run with every go test, and under the race detector.
type diffBudget struct {
	every                       int     // check every n-th schema of a corpus
	suiteSeeds, storeSeeds      []int64 // the generator's seeds for the instance corpus
	suiteSiblings, suiteMutants int     // pairs per suite schema
	storeSiblings, storeMutants int     // pairs per SchemaStore schema
	targetedMax                 int     // largest schema (JSON bytes) the generator is asked about a verdict
	pairMax                     int     // largest schema (JSON bytes) asked about pairs: the engine is slow on large ones
}

// budget is smaller under -short and the race detector, which slows the
// validator and the generator tenfold.
func budget() diffBudget {
	b := diffBudget{every: 1, suiteSeeds: []int64{0, 1}, storeSeeds: []int64{0, 1},
		suiteSiblings: 2, suiteMutants: 4, storeSiblings: 4, storeMutants: 3, targetedMax: 3000, pairMax: 6000}
	if testing.Short() || raceEnabled() {
		b = diffBudget{every: 5, suiteSeeds: []int64{0}, storeSeeds: []int64{0},
			suiteSiblings: 2, suiteMutants: 4, storeSiblings: 4, storeMutants: 3, targetedMax: 2000, pairMax: 4000}
	}
	return b
}

func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// A corpusDoc is one schema document of a corpus.
type corpusDoc struct {
	name string
	doc  any
}

// edgeValues reads testdata/edge-values.jsonl, one JSON value a line.
func edgeValues(t testing.TB) []any {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "edge-values.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []any
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		v, err := plan.UnmarshalJSONValue(sc.Bytes())
		if err != nil {
			t.Fatalf("edge-values.jsonl:%d: %v", n, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// oracle compiles one schema document as plan.CompileSchema does, and its
// subschemas by JSON pointer.
type oracle struct {
	c      *jsonschema.Compiler
	root   *jsonschema.Schema
	remote bool // the document refers to a schema outside itself
}

type oracleLoader struct{ o *oracle }

func (l oracleLoader) Load(u string) (any, error) {
	l.o.remote = true
	return nil, fmt.Errorf("no schema is loaded from outside the document (%s)", u)
}

func newOracle(doc any) (*oracle, error) {
	o := &oracle{c: jsonschema.NewCompiler()}
	o.c.DefaultDraft(jsonschema.Draft2020)
	o.c.UseLoader(oracleLoader{o})
	o.c.AssertFormat()
	if err := o.c.AddResource(plan.SchemaURL, doc); err != nil {
		return o, err
	}
	var err error
	o.root, err = o.c.Compile(plan.SchemaURL)
	return o, err
}

// at compiles the subschema at a JSON pointer.
func (o *oracle) at(ptr string) (*jsonschema.Schema, error) {
	if ptr == "" {
		return o.root, nil
	}
	toks := strings.Split(ptr, "/")
	for i, tok := range toks {
		toks[i] = url.PathEscape(tok)
	}
	return o.c.Compile(plan.SchemaURL + "#" + strings.Join(toks, "/"))
}

// Keywords whose values are subschemas, by the form of the value.
var (
	schemaKeywords = []string{"additionalProperties", "unevaluatedProperties", "propertyNames",
		"additionalItems", "contains", "unevaluatedItems", "not", "if", "then", "else", "items"}
	schemaListKeywords = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
	schemaMapKeywords  = []string{"properties", "patternProperties", "dependentSchemas", "$defs", "definitions", "dependencies"}
)

func isSchema(v any) bool {
	switch v.(type) {
	case bool, map[string]any:
		return true
	}
	return false
}

// subschemas lists the JSON pointers of a document's schemas, the root
// first, and groups of pointers of sibling schemas (members of one
// properties, one anyOf, ...).
func subschemas(doc any) (ptrs []string, siblings [][]string) {
	var walk func(v any, ptr string)
	walk = func(v any, ptr string) {
		ptrs = append(ptrs, ptr)
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		for _, k := range schemaKeywords {
			if x, ok := m[k]; ok && isSchema(x) {
				walk(x, ptr+"/"+jsonpointer.Escape(k))
			}
		}
		for _, k := range schemaListKeywords {
			list, _ := m[k].([]any)
			var group []string
			for i, x := range list {
				if isSchema(x) {
					p := ptr + "/" + jsonpointer.Escape(k) + "/" + strconv.Itoa(i)
					group = append(group, p)
					walk(x, p)
				}
			}
			if len(group) > 1 {
				siblings = append(siblings, group)
			}
		}
		for _, k := range schemaMapKeywords {
			mm, _ := m[k].(map[string]any)
			names := make([]string, 0, len(mm))
			for name := range mm {
				names = append(names, name)
			}
			sort.Strings(names)
			var group []string
			for _, name := range names {
				if isSchema(mm[name]) {
					p := ptr + "/" + jsonpointer.Escape(k) + "/" + jsonpointer.Escape(name)
					group = append(group, p)
					walk(mm[name], p)
				}
			}
			if len(group) > 1 {
				siblings = append(siblings, group)
			}
		}
	}
	walk(doc, "")
	return ptrs, siblings
}

// at returns the value at a JSON pointer.
func at(doc any, ptr string) any {
	if ptr == "" {
		return doc
	}
	cur := doc
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = jsonpointer.Unescape(tok)
		switch c := cur.(type) {
		case map[string]any:
			cur = c[tok]
		case []any:
			i, _ := strconv.Atoi(tok)
			cur = c[i]
		}
	}
	return cur
}

// standalone is the subschema at ptr as a document of its own: the
// definitions of the root and its $schema go with it, so references into
// them still resolve. It need not mean what the subschema means in place;
// the engine and the validator are asked about the same document.
func standalone(root any, ptr string) any {
	sub := at(root, ptr)
	if ptr == "" {
		return sub
	}
	m, ok := sub.(map[string]any)
	if !ok {
		return sub
	}
	rm, _ := root.(map[string]any)
	out := make(map[string]any, len(m)+3)
	for k, v := range m {
		out[k] = v
	}
	for _, k := range []string{"$schema", "definitions", "$defs"} {
		if v, ok := rm[k]; ok {
			if _, has := out[k]; !has {
				out[k] = v
			}
		}
	}
	return out
}

// cacheKey names a subschema whose meaning does not depend on where it is:
// it refers to nothing. "" when it may.
func cacheKey(root, sub any) string {
	b, err := json.Marshal(sub)
	if err != nil {
		return ""
	}
	for _, k := range []string{`"$ref"`, `"$dynamicRef"`, `"$recursiveRef"`, `"$schema"`} {
		if bytes.Contains(b, []byte(k)) {
			return ""
		}
	}
	return schemagen.SchemaKey(root) + "\x00" + string(b)
}

// tally counts one corpus.
type tally struct {
	docs, remote, uncompiled         int
	schemas, vacuous, unsat, unknown int
	subUncompiled, cached            int
	pairs, included, pairsUncompiled int
	wrong                            int
}

func (c *tally) log(t testing.TB, name string) {
	t.Helper()
	t.Logf("%s: %d documents (%d skipped for remote refs, %d fail to compile); %d schemas at pointers: %d proved vacuous, %d proved unsatisfiable, %d undecided (%d verdicts checked once for an identical schema, %d subschemas the validator cannot compile alone); %d pairs asked, %d proved included (%d not compiled); %d wrong verdicts",
		name, c.docs, c.remote, c.uncompiled, c.schemas, c.vacuous, c.unsat, c.unknown, c.cached, c.subUncompiled, c.pairs, c.included, c.pairsUncompiled, c.wrong)
}

// differ checks verdicts against the validator over an instance corpus.
type differ struct {
	t           testing.TB
	inst        []schemagen.Instance
	targetedMax int             // see diffBudget
	done        map[string]bool // verdicts already checked, by kind and cacheKey
	// wrongs lists each wrong verdict found.
	wrongs []string
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 400 {
		return string(b[:400]) + "..."
	}
	return string(b)
}

func (d *differ) report(c *tally, format string, args ...any) {
	c.wrong++
	msg := fmt.Sprintf(format, args...)
	d.wrongs = append(d.wrongs, msg)
	d.t.Errorf("WRONG VERDICT: %s", msg)
}

// candidates is the instance corpus with values made for one question
// first.
func (d *differ) candidates(extra *schemagen.Set) []schemagen.Instance {
	if extra == nil || len(extra.List) == 0 {
		return d.inst
	}
	return append(extra.Sorted(), d.inst...)
}

// document checks the verdicts on every schema of one document.
func (d *differ) document(c *tally, name string, doc any) {
	c.docs++
	o, err := newOracle(doc)
	if err != nil {
		if o.remote {
			c.remote++
		} else {
			c.uncompiled++
		}
		return
	}
	if _, err := plan.CompileSchema(doc); err != nil {
		d.t.Errorf("%s: the test's compiler accepts a schema plan.CompileSchema refuses: %v", name, err)
		return
	}
	a := inclusion.Analyze(doc)
	ptrs, _ := subschemas(doc)
	for _, ptr := range ptrs {
		c.schemas++
		vac, uns := a.Vacuous(ptr), a.Unsatisfiable(ptr)
		if vac != inclusion.Yes && uns != inclusion.Yes {
			c.unknown++
			continue
		}
		if vac == inclusion.Yes {
			c.vacuous++
		}
		if uns == inclusion.Yes {
			c.unsat++
		}
		sch, err := o.at(ptr)
		if err != nil {
			c.subUncompiled++
			continue
		}
		sub := at(doc, ptr)
		key := cacheKey(doc, sub)
		if vac == inclusion.Yes {
			d.check(c, name, ptr, "vacuous", sub, sch, key, false, func(extra *schemagen.Set) {
				extra.SynthesizedUpTo(schemagen.Combined(doc, []any{standalone(doc, ptr)}, []bool{true}), d.targetedMax, 0)
			})
		}
		if uns == inclusion.Yes {
			d.check(c, name, ptr, "unsatisfiable", sub, sch, key, true, func(extra *schemagen.Set) {
				extra.SynthesizedUpTo(standalone(doc, ptr), d.targetedMax, 0, 1)
			})
		}
	}
}

// check holds one verdict: the schema accepts every candidate (vacuous) or
// none (unsatisfiable).
func (d *differ) check(c *tally, name, ptr, verdict string, sub any, sch *jsonschema.Schema, key string, wantReject bool, targeted func(*schemagen.Set)) {
	if key != "" {
		if d.done[verdict+key] {
			c.cached++
			return
		}
		d.done[verdict+key] = true
	}
	extra := &schemagen.Set{}
	targeted(extra)
	for _, in := range d.candidates(extra) {
		err := sch.Validate(in.V)
		if (err == nil) == wantReject {
			what := "rejects"
			if err == nil {
				what = "accepts"
			}
			d.report(c, "%s at %q: proved %s, but the validator %s %s\n\tschema: %s\n\tvalidator: %v", name, ptr, verdict, what, in.Text, short(sub), err)
			return
		}
	}
}

// pair checks Includes(sub, super) where it says Yes.
func (d *differ) pair(c *tally, name string, sub, super any) {
	c.pairs++
	if inclusion.Includes(sub, super) != inclusion.Yes {
		return
	}
	c.included++
	if short(sub) == short(super) {
		return // every value a schema accepts it accepts
	}
	oa, err := newOracle(sub)
	if err != nil {
		c.pairsUncompiled++
		return
	}
	ob, err := newOracle(super)
	if err != nil {
		c.pairsUncompiled++
		return
	}
	var key string
	if ka, kb := cacheKey(sub, sub), cacheKey(super, super); ka != "" && kb != "" {
		key = ka + "\x00" + kb
		if d.done["included"+key] {
			c.cached++
			return
		}
		d.done["included"+key] = true
	}
	extra := &schemagen.Set{}
	extra.SynthesizedUpTo(schemagen.Combined(sub, []any{sub, super}, []bool{false, true}), d.targetedMax, 0)
	for _, in := range d.candidates(extra) {
		if oa.root.Validate(in.V) != nil {
			continue
		}
		if err := ob.root.Validate(in.V); err != nil {
			d.report(c, "%s: proved %s ⊆ %s, but the validator accepts %s under the first and not under the second\n\tvalidator: %v", name, short(sub), short(super), in.Text, err)
			return
		}
	}
}

// pairs asks about a document against itself, its mutants, and its
// sibling subschemas against each other.
func (d *differ) pairs(c *tally, name string, doc any, maxSiblings, maxMutants, maxSize int) {
	if data, err := json.Marshal(doc); err != nil || len(data) > maxSize {
		return
	}
	if _, err := newOracle(doc); err != nil {
		return
	}
	d.pair(c, name, doc, doc)
	for _, m := range schemagen.Mutants(doc, maxMutants) {
		d.pair(c, name, doc, m)
		d.pair(c, name, m, doc)
	}
	_, siblings := subschemas(doc)
	n := 0
	for _, group := range siblings {
		for i := 0; i+1 < len(group) && n < maxSiblings; i++ {
			a, b := standalone(doc, group[i]), standalone(doc, group[i+1])
			d.pair(c, name+" "+group[i]+" vs "+group[i+1], a, b)
			d.pair(c, name+" "+group[i+1]+" vs "+group[i], b, a)
			n++
		}
	}
}

type suiteGroup struct {
	Description string `json:"description"`
	Schema      any    `json:"schema"`
	Tests       []struct {
		Data any `json:"data"`
	} `json:"tests"`
}

// loadSuite reads every group of the JSON Schema Test Suite's 2020-12
// tests, optional ones included.
func loadSuite(t testing.TB) (docs []corpusDoc, data []any) {
	t.Helper()
	dir := diffCorpus(t, filepath.Join("json-schema-test-suite", "tests", "draft2020-12"))
	var files []string
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() && strings.HasSuffix(p, ".json") {
			files = append(files, p)
		}
		return err
	})
	if err != nil || len(files) == 0 {
		t.Fatalf("no suite files in %s: %v", dir, err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		v, err := plan.UnmarshalJSONValue(raw)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		groups, _ := v.([]any)
		rel, _ := filepath.Rel(dir, f)
		for _, g := range groups {
			gm, _ := g.(map[string]any)
			desc, _ := gm["description"].(string)
			docs = append(docs, corpusDoc{name: rel + ": " + desc, doc: gm["schema"]})
			tests, _ := gm["tests"].([]any)
			for _, tc := range tests {
				if tm, ok := tc.(map[string]any); ok {
					data = append(data, tm["data"])
				}
			}
		}
	}
	return docs, data
}

// loadSchemaStore reads the SchemaStore sample's schemas as its index
// lists them.
func loadSchemaStore(t testing.TB) []corpusDoc {
	t.Helper()
	dir := diffCorpus(t, "schemastore-sample")
	raw, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var index []struct {
		File string `json:"file"`
	}
	if err := json.Unmarshal(raw, &index); err != nil {
		t.Fatal(err)
	}
	if len(index) == 0 {
		t.Fatalf("%s/index.json lists no schema", dir)
	}
	var docs []corpusDoc
	for _, e := range index {
		raw, err := os.ReadFile(filepath.Join(dir, e.File))
		if err != nil {
			t.Fatal(err)
		}
		v, err := plan.UnmarshalJSONValue(raw)
		if err != nil {
			t.Fatalf("%s: %v", e.File, err)
		}
		docs = append(docs, corpusDoc{name: filepath.Base(e.File), doc: v})
	}
	return docs
}

func TestDifferential(t *testing.T) {
	b := budget()
	suite, data := loadSuite(t)
	store := loadSchemaStore(t)

	var corpus schemagen.Set
	for _, v := range edgeValues(t) {
		corpus.Add(v)
	}
	for _, v := range data {
		corpus.Add(v)
	}
	for i, doc := range suite {
		if i%b.every == 0 {
			corpus.Synthesized(doc.doc, b.suiteSeeds...)
		}
	}
	for i, doc := range store {
		if i%b.every == 0 {
			corpus.Synthesized(doc.doc, b.storeSeeds...)
		}
	}
	d := &differ{t: t, inst: corpus.Sorted(), done: map[string]bool{}, targetedMax: b.targetedMax}
	t.Logf("instance corpus: %d distinct values", len(d.inst))

	var cs, cst tally
	for i, doc := range suite {
		if i%b.every != 0 {
			continue
		}
		d.document(&cs, doc.name, doc.doc)
		d.pairs(&cs, doc.name, doc.doc, b.suiteSiblings, b.suiteMutants, b.pairMax)
	}
	cs.log(t, "JSON Schema Test Suite draft2020-12")
	for i, doc := range store {
		if i%b.every != 0 {
			continue
		}
		d.document(&cst, doc.name, doc.doc)
		d.pairs(&cst, doc.name, doc.doc, b.storeSiblings, b.storeMutants, b.pairMax)
	}
	cst.log(t, "SchemaStore sample")
	if cs.docs == 0 || cst.docs == 0 {
		t.Fatal("a corpus held no schema")
	}
}
