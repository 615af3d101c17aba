package testmodel

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"agentc.dev/agentc/plan"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// corporaDir is the repository's testdata/corpora; tests run in the
// package directory.
var corporaDir = filepath.Join("..", "..", "testdata", "corpora")

// corpus returns the directory of one corpus; a missing corpus fails the
// test, so a checkout that lost it cannot pass having checked nothing.
func corpus(t *testing.T, sub string) string {
	t.Helper()
	dir := filepath.Join(corporaDir, sub)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("corpus %s: %v", dir, err)
	}
	return dir
}

// corpusSeeds are the seeds every corpus schema is tried with. The
// coverage figures count seed 0; the other seeds must never produce an
// invalid value and are counted apart.
var corpusSeeds = []int64{0, 1, 2, 3}

// corpusResult counts one corpus.
type corpusResult struct {
	compiled, unsatisfiable      int
	remote, uncompiled           int                 // need a schema from outside the document; fail to compile otherwise
	satisfiable, satisfied       int                 // seed 0
	variedTried, variedSatisfied int                 // other seeds
	misses                       map[string][]string // keyword -> schemas, seed 0
	refusedKw                    map[string]int      // keyword -> schemas without a valid datum refused, seed 0
}

func (r *corpusResult) count(seed int64, kw, name string) {
	if seed != 0 {
		r.variedTried++
		if kw == "" {
			r.variedSatisfied++
		}
		return
	}
	r.satisfiable++
	if kw == "" {
		r.satisfied++
		return
	}
	if r.misses == nil {
		r.misses = map[string][]string{}
	}
	r.misses[kw] = append(r.misses[kw], name)
}

func (r *corpusResult) refused(err error) {
	if strings.Contains(err.Error(), "loads no schema from outside") {
		r.remote++
	} else {
		r.uncompiled++
	}
}

func (r *corpusResult) rate() float64 {
	return float64(r.satisfied) / float64(max(1, r.satisfiable))
}

func (r *corpusResult) report(t *testing.T, name string) {
	t.Helper()
	t.Logf("%s: seed 0 satisfied %d of %d satisfiable schemas (%.1f%%); seeds 1-%d satisfied %d of %d; %d compiled, %d need remote refs, %d fail to compile otherwise, %d have no valid datum",
		name, r.satisfied, r.satisfiable, 100*r.rate(), len(corpusSeeds)-1, r.variedSatisfied, r.variedTried, r.compiled, r.remote, r.uncompiled, r.unsatisfiable)
	var kws []string
	for kw := range r.misses {
		kws = append(kws, kw)
	}
	sort.Slice(kws, func(i, j int) bool {
		if len(r.misses[kws[i]]) != len(r.misses[kws[j]]) {
			return len(r.misses[kws[i]]) > len(r.misses[kws[j]])
		}
		return kws[i] < kws[j]
	})
	for _, kw := range kws {
		t.Logf("  unsatisfied by %-22s %3d: %s", kw, len(r.misses[kw]), strings.Join(r.misses[kw], ", "))
	}
	if r.unsatisfiable > 0 {
		refused := 0
		var by []string
		for kw, n := range r.refusedKw {
			refused += n
			by = append(by, fmt.Sprintf("%s %d", kw, n))
		}
		sort.Strings(by)
		t.Logf("  of the %d without a valid datum, %d were refused with an UnsatisfiableError (%s); the rest got a value the suite did not list",
			r.unsatisfiable, refused, strings.Join(by, ", "))
	}
}

// synthesizeChecked runs Synthesize and fails the test on any invalid
// value, or one a second call does not repeat; it returns the keyword of an UnsatisfiableError, "" on success.
func synthesizeChecked(t *testing.T, name string, schema []byte, compiled *jsonschema.Schema, seed int64) string {
	t.Helper()
	out, err := Synthesize(schema, seed)
	if err != nil {
		var ue *UnsatisfiableError
		if !errors.As(err, &ue) {
			t.Errorf("%s: seed %d: error is not an *UnsatisfiableError: %v", name, seed, err)
			return "error"
		}
		if ue.Keyword == "" {
			t.Errorf("%s: seed %d: UnsatisfiableError names no keyword: %v", name, seed, err)
		}
		return ue.Keyword
	}
	if again, err := Synthesize(schema, seed); err != nil || string(again) != string(out) {
		t.Errorf("%s: seed %d: a second call gave %s (%v), not the same %s", name, seed, again, err, out)
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(string(out)))
	if err != nil {
		t.Errorf("%s: seed %d: output is not JSON: %v\n%s", name, seed, err, out)
		return "error"
	}
	if err := compiled.Validate(v); err != nil {
		t.Errorf("%s: seed %d: INVALID value returned: %s\n%v", name, seed, out, err)
		return "invalid"
	}
	return ""
}

// TestCorpusSuite synthesises a value for every schema of the JSON Schema
// Test Suite (draft 2020-12). A schema is satisfiable when the suite holds
// a valid datum for it.
func TestCorpusSuite(t *testing.T) {
	dir := corpus(t, "json-schema-test-suite/tests/draft2020-12")
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no suite files in %s: %v", dir, err)
	}
	r := corpusResult{refusedKw: map[string]int{}}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var groups []struct {
			Description string          `json:"description"`
			Schema      json.RawMessage `json:"schema"`
			Tests       []struct {
				Valid bool `json:"valid"`
			} `json:"tests"`
		}
		if err := json.Unmarshal(data, &groups); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, grp := range groups {
			name := strings.TrimSuffix(filepath.Base(f), ".json") + ": " + grp.Description
			compiled, err := plan.CompileSchemaJSON(grp.Schema)
			if err != nil {
				r.refused(err)
				continue
			}
			r.compiled++
			satisfiable := false
			for _, tc := range grp.Tests {
				satisfiable = satisfiable || tc.Valid
			}
			if !satisfiable {
				r.unsatisfiable++
			}
			for _, seed := range corpusSeeds {
				kw := synthesizeChecked(t, name, grp.Schema, compiled, seed)
				switch {
				case satisfiable:
					r.count(seed, kw, name)
				case seed == 0 && kw != "":
					r.refusedKw[kw]++
				}
			}
		}
	}
	r.report(t, "JSON Schema Test Suite draft2020-12")
	// Measured: 100% (336 of 336). The floor sits a few points below.
	const floor = 0.97
	if r.rate() < floor {
		t.Errorf("satisfied %.1f%% of satisfiable suite schemas, below the floor of %.0f%%", 100*r.rate(), 100*floor)
	}
}

// TestCorpusSchemaStore synthesises values for the real-world SchemaStore
// sample. Every schema that compiles offline counts as satisfiable: the
// sample holds no instances to tell otherwise.
func TestCorpusSchemaStore(t *testing.T) {
	dir := corpus(t, "schemastore-sample")
	data, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var index []struct {
		File string `json:"file"`
	}
	if err := json.Unmarshal(data, &index); err != nil {
		t.Fatal(err)
	}
	var r corpusResult
	for _, e := range index {
		schema, err := os.ReadFile(filepath.Join(dir, e.File))
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(e.File)
		compiled, err := plan.CompileSchemaJSON(schema)
		if err != nil {
			r.refused(err)
			continue
		}
		r.compiled++
		for _, seed := range corpusSeeds {
			r.count(seed, synthesizeChecked(t, name, schema, compiled, seed), name)
		}
	}
	r.report(t, "SchemaStore sample")
	// Measured: 100% (141 of 141). The floor sits a few points below.
	const floor = 0.97
	if r.rate() < floor {
		t.Errorf("satisfied %.1f%% of SchemaStore schemas, below the floor of %.0f%%", 100*r.rate(), 100*floor)
	}
}
