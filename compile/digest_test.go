package compile_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"agentc.dev/agentc/compile"
	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/manifest"
	"agentc.dev/agentc/plan"
)

// The digest tests check docs/digests.md end to end, from manifest
// files through Loader.Load and Compiler.Build to the sealed plan:
//
//   - the same agent written differently (field order, layout, comments,
//     one file or a package, CUE, JSON or YAML, 1.5 or 1.50, "60s" or "1m",
//     defaults written or left out, definitions and references) has the
//     same contract digest and the same plan digest;
//   - each change to the contract (provides, the input schema, the output's
//     name, description, schema and keeps_tools) moves the contract digest,
//     and with it the plan digest;
//   - each change that alters behaviour but not the contract (instructions,
//     prompt, model, budgets, tools, strategy, output mode and retries)
//     moves the plan digest and leaves the contract digest alone.
//
// Variants of the base agent are written as edits of base.cue that must each
// match exactly once, so that no case can silently turn into a no-op, or as
// whole files of agentsFile where the change touches every line.

// agentsFile holds the base agent (base.cue) and the same agent written
// in other ways, as its comment lists.
var agentsFile = filepath.Join("testdata", "digest", "agents.txtar")

// readArchive returns the files of a txtar archive, name → content, and
// their names in the archive's order.
func readArchive(t *testing.T, file string) (map[string]string, []string) {
	t.Helper()
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	var names []string
	for _, f := range ar.Files {
		if _, dup := files[f.Name]; dup {
			t.Fatalf("%s: %s appears twice", file, f.Name)
		}
		files[f.Name] = string(f.Data)
		names = append(names, f.Name)
	}
	return files, names
}

// agentSource returns one file of agentsFile.
func agentSource(t *testing.T, name string) string {
	t.Helper()
	files, _ := readArchive(t, agentsFile)
	src, ok := files[name]
	if !ok {
		t.Fatalf("%s holds no %s", agentsFile, name)
	}
	return src
}

// edit replaces old, which must occur exactly once, with new.
type edit struct{ old, new string }

// applyEdits applies edits to src in turn, failing the test when an edit
// does not match exactly once or changes nothing.
func applyEdits(t *testing.T, src string, edits ...edit) string {
	t.Helper()
	for _, e := range edits {
		if n := strings.Count(src, e.old); n != 1 {
			t.Fatalf("edit %q matches %d times, want exactly once", e.old, n)
		}
		if e.old == e.new {
			t.Fatalf("edit %q changes nothing", e.old)
		}
		src = strings.Replace(src, e.old, e.new, 1)
	}
	return src
}

var digestRE = regexp.MustCompile(`^blake3:[0-9a-f]{64}$`)

// digests are the two digests of one built agent.
type digests struct {
	contract, plan digest.Digest
}

// writeFiles writes files (name → content) below dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, src := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// buildDigests loads the agent at path (a file or a package directory),
// builds it and returns its digests. It fails the test on any error
// diagnostic, on a digest that is not blake3:<64 hex>, and when the contract
// digest equals the plan digest.
func buildDigests(t *testing.T, cp *compile.Compiler, path string) digests {
	t.Helper()
	insts, err := cp.Loader().Load([]string{path})
	if err != nil {
		t.Fatalf("Load(%s): %v", path, err)
	}
	if len(insts) != 1 {
		t.Fatalf("Load(%s): %d agents, want 1", path, len(insts))
	}
	p, ds, err := cp.Build(insts[0])
	if err != nil {
		t.Fatalf("Build(%s): %v", path, err)
	}
	for _, d := range ds {
		if d.Severity == compile.Error {
			t.Errorf("Build(%s): %s", path, d.Format(filepath.Dir(path)))
		} else {
			t.Logf("Build(%s): %s", path, d.Format(filepath.Dir(path)))
		}
	}
	if p == nil {
		t.Fatalf("Build(%s): no plan", path)
	}
	got := digests{p.Digests.Contract, p.Digests.Plan}
	for _, d := range []digest.Digest{got.contract, got.plan} {
		if !digestRE.MatchString(string(d)) {
			t.Errorf("%s: digest %q does not match %s", path, d, digestRE)
		}
	}
	if got.contract == got.plan {
		t.Errorf("%s: contract digest equals plan digest %s", path, got.plan)
	}
	return got
}

// baseDigests writes base.cue into dir and returns its digests.
func baseDigests(t *testing.T, cp *compile.Compiler, dir string) digests {
	t.Helper()
	writeFiles(t, dir, map[string]string{"base.cue": agentSource(t, "base.cue")})
	d := buildDigests(t, cp, filepath.Join(dir, "base.cue"))
	t.Logf("base: contract %s plan %s", d.contract, d.plan)
	return d
}

// TestDigestFormat checks that both digests of the base agent are
// blake3:<64 lower-case hex>, differ from each other, and are stable across
// builds and compilers.
func TestDigestFormat(t *testing.T) {
	dir := t.TempDir()
	a := baseDigests(t, compile.New(manifest.NewLoader()), dir)
	b := buildDigests(t, compile.New(manifest.NewLoader()), filepath.Join(dir, "base.cue"))
	if a != b {
		t.Errorf("building the same file twice gave different digests:\n%+v\n%+v", a, b)
	}
	for _, d := range []digest.Digest{a.contract, a.plan} {
		if _, err := digest.Parse(string(d)); err != nil {
			t.Error(err)
		}
	}
}

// TestDigestInvariance checks that writing the base agent differently
// leaves both its contract digest and its plan digest unchanged.
func TestDigestInvariance(t *testing.T) {
	cp := compile.New(manifest.NewLoader())
	root := t.TempDir()
	base := baseDigests(t, cp, filepath.Join(root, "base"))

	tests := []struct {
		name string
		// Either edits of base.cue, written to <name>.cue, or files
		// (relative name → the file of agentsFile written there) with
		// load, the path to load relative to the case's directory.
		edits []edit
		files map[string]string
		load  string
	}{
		{name: "reordered at every level", files: map[string]string{"reordered.cue": "reordered.cue"}, load: "reordered.cue"},
		{name: "reformatted", files: map[string]string{"layout.cue": "layout.cue"}, load: "layout.cue"},
		{name: "comments", edits: []edit{
			{`name:        "ticket-triage"`, "// ticket-triage triages support tickets.\n// It is a test agent.\nname:        \"ticket-triage\" // the agent's name"},
			{"model: {\n", "// The model.\nmodel: { // the model block\n\t// a dated snapshot\n"},
			{"\tprovides: \"support.triage\"\n", "\t// what callers get\n\tprovides: \"support.triage\" // a dotted name\n\t// tools follow\n"},
			{"\t\t\troot:        \"policies\"\n", "\t\t\troot:        \"policies\" // relative to the manifest\n"},
			{"\t\t\trefund: $ref: \"#/$defs/money\"\n", "\t\t\t// refund points into $defs.\n\t\t\trefund: $ref: \"#/$defs/money\" // a reference\n"},
			{"\t\t\t\t\tminimum: 1.50\n", "\t\t\t\t\tminimum: 1.50 // a small fee at least\n"},
			{"\ttools:    8\n}\n", "\ttools:    8\n\t// no rounds cap\n}\n// trailing comment\n"},
		}},
		{name: "package of three files", files: map[string]string{
			"pkg/agent.cue":   "pkg/agent.cue",
			"pkg/schemas.cue": "pkg/schemas.cue",
			"pkg/tools.cue":   "pkg/tools.cue",
		}, load: "pkg"},
		{name: "JSON", files: map[string]string{"agent.json": "agent.json"}, load: "agent.json"},
		{name: "YAML", files: map[string]string{"agent.yaml": "agent.yaml"}, load: "agent.yaml"},
		{name: "YAML .yml", files: map[string]string{"agent.yml": "agent.yaml"}, load: "agent.yml"},
		{name: "number 1.5", edits: []edit{{"minimum: 1.50\n", "minimum: 1.5\n"}}},
		{name: "number 15e-1", edits: []edit{{"minimum: 1.50\n", "minimum: 15e-1\n"}}},
		{name: "number 150e-2 and 5e2", edits: []edit{{"minimum: 1.50\n", "minimum: 150e-2\n"}, {"maximum: 500\n", "maximum: 5e2\n"}}},
		{name: "integer bound 10.0", edits: []edit{{"maximum: 10\n", "maximum: 10.0\n"}}},
		{name: "temperature 0.20", edits: []edit{{"temperature: 0.2\n", "temperature: 0.20\n"}}},
		{name: "cache default explicit", edits: []edit{{"temperature: 0.2\n", "temperature: 0.2\n\tcache:       true\n"}}},
		{name: "deadline 1m", edits: []edit{{`deadline: "60s"`, `deadline: "1m"`}}},
		{name: "deadline 1m0s", edits: []edit{{`deadline: "60s"`, `deadline: "1m0s"`}}},
		{name: "deadline 60000ms", edits: []edit{{`deadline: "60s"`, `deadline: "60000ms"`}}},
		{name: "output defaults explicit", edits: []edit{{
			"\tname:        \"file_triage\"\n",
			"\tname:        \"file_triage\"\n\tkeeps_tools: false\n\tmode:        \"auto\"\n\tenforce:     \"local\"\n\tretries:     2\n",
		}}},
		{name: "strategy defaults explicit", edits: []edit{{`strategy: on_prose: "remind"`, `strategy: {on_prose: "remind", reminders: 2}`}}},
		{name: "strategy on_prose default omitted", edits: []edit{{`strategy: on_prose: "remind"`, `strategy: {}`}}},
		{name: "fs tool defaults explicit", edits: []edit{{
			"\t\t\troot:        \"policies\"\n",
			"\t\t\troot:        \"policies\"\n\t\t\tops: [\"read\", \"list\"]\n\t\t\tmax_bytes: 1048576\n",
		}}},
		{name: "http tool defaults explicit", edits: []edit{{
			"\t\t\tallow: [\"https://crm.example.com/customers/\"]\n",
			"\t\t\tallow: [\"https://crm.example.com/customers/\"]\n\t\t\tmethod: \"GET\"\n\t\t\ttimeout: \"30s\"\n\t\t\tmax_bytes: 1048576\n",
		}}},
		{name: "http tool timeout 0.5m", edits: []edit{{
			"\t\t\tallow: [\"https://crm.example.com/customers/\"]\n",
			"\t\t\tallow: [\"https://crm.example.com/customers/\"]\n\t\t\ttimeout: \"0.5m\"\n",
		}}},
		{name: "definition #Enum reused", files: map[string]string{"defs.cue": "defs.cue"}, load: "defs.cue"},
		{name: "let, hidden fields, interpolation, arithmetic, references", files: map[string]string{"refs.cue": "refs.cue"}, load: "refs.cue"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(root, fmt.Sprintf("case%02d", i))
			files, load := map[string]string{}, tt.load
			for name, from := range tt.files {
				files[name] = agentSource(t, from)
			}
			if tt.edits != nil {
				load = strings.NewReplacer(" ", "-", ",", "").Replace(tt.name) + ".cue"
				files = map[string]string{load: applyEdits(t, agentSource(t, "base.cue"), tt.edits...)}
			}
			writeFiles(t, dir, files)
			got := buildDigests(t, cp, filepath.Join(dir, load))
			if got.contract != base.contract {
				t.Errorf("contract digest moved:\n base %s\n got  %s", base.contract, got.contract)
			}
			if got.plan != base.plan {
				t.Errorf("plan digest moved:\n base %s\n got  %s", base.plan, got.plan)
			}
		})
	}
}

// TestDigestDefaultOutputName checks that output.name: "answer" written
// out is the same agent as output.name left to its default.
func TestDigestDefaultOutputName(t *testing.T) {
	cp := compile.New(manifest.NewLoader())
	dir := t.TempDir()
	base := agentSource(t, "base.cue")
	omitted := applyEdits(t, base, edit{"\tname:        \"file_triage\"\n", ""})
	written := applyEdits(t, base, edit{"\tname:        \"file_triage\"\n", "\tname:        \"answer\"\n"})
	writeFiles(t, dir, map[string]string{"omitted.cue": omitted, "written.cue": written})
	a := buildDigests(t, cp, filepath.Join(dir, "omitted.cue"))
	b := buildDigests(t, cp, filepath.Join(dir, "written.cue"))
	if a != b {
		t.Errorf("output.name \"answer\" written and omitted differ:\n omitted %+v\n written %+v", a, b)
	}
}

// sensitivityCase is one change of the base agent.
type sensitivityCase struct {
	name  string
	edits []edit
}

// contractChanges each change the contract: capabilities.provides, the
// input schema, or the output's name, description, schema or keeps_tools.
var contractChanges = []sensitivityCase{
	{"add maxLength to a string property", []edit{{
		`description: "One sentence for the person on duty."`,
		`description: "One sentence for the person on duty.", maxLength: 200`,
	}}},
	{"remove an enum value", []edit{{`enum: ["billing", "bug", "question"]`, `enum: ["billing", "bug"]`}}},
	{"add an enum value", []edit{{`enum: ["billing", "bug", "question"]`, `enum: ["billing", "bug", "question", "spam"]`}}},
	{"make a property required", []edit{{`required: ["category", "urgency", "refund"]`, `required: ["category", "urgency", "refund", "summary"]`}}},
	{"make a required property optional", []edit{{`required: ["category", "urgency", "refund"]`, `required: ["category", "urgency"]`}}},
	{"change an output property's description", []edit{{`"One sentence for the person on duty."`, `"Two sentences for the person on duty."`}}},
	{"change output.description", []edit{{
		`description: "Submit the triage once you have read the ticket and the policy."`,
		`description: "Submit the triage once you have read the ticket."`,
	}}},
	{"change output.name", []edit{{`name:        "file_triage"`, `name:        "submit_triage"`}}},
	{"set keeps_tools", []edit{{"\tname:        \"file_triage\"\n", "\tname:        \"file_triage\"\n\tkeeps_tools: true\n"}}},
	{"change a type", []edit{{"type:    \"integer\"\n", "type:    \"number\"\n"}}},
	{"change capabilities.provides", []edit{{`provides: "support.triage"`, `provides: "support.triage.v2"`}}},
	{"remove capabilities.provides", []edit{{"\tprovides: \"support.triage\"\n", ""}}},
	{"add an input property", []edit{{
		"\t\tbody: {type: \"string\", maxLength: 4000}\n",
		"\t\tbody: {type: \"string\", maxLength: 4000}\n\t\tlocale: {type: \"string\"}\n",
	}}},
	{"change an input bound", []edit{{`maxLength: 4000`, `maxLength: 8000`}}},
	{"drop additionalProperties: false from the input", []edit{{"\tadditionalProperties: false\n", ""}}},
	{"add additionalProperties: false to the output", []edit{{
		`required: ["category", "urgency", "refund"]`,
		`required: ["category", "urgency", "refund"], additionalProperties: false`,
	}}},
	{"change a $defs entry referenced by $ref", []edit{{`enum: ["EUR", "USD"]`, `enum: ["EUR", "USD", "GBP"]`}}},
	{"change a number bound 10 to 11", []edit{{"maximum: 10\n", "maximum: 11\n"}}},
	{"change a number bound 1.50 to 1.25", []edit{{"minimum: 1.50\n", "minimum: 1.25\n"}}},
	{"remove an output property", []edit{{
		"\t\t\tsummary: {\n\t\t\t\ttype:        \"string\"\n\t\t\t\tdescription: \"One sentence for the person on duty.\"\n\t\t\t}\n",
		"",
	}}},
}

// planOnlyChanges each change what the agent does without changing its
// contract.
var planOnlyChanges = []sensitivityCase{
	{"change instructions", []edit{{"before you answer.", "before you answer, and be brief."}}},
	{"change the prompt", []edit{{`prompt: "Triage ticket {{.id}}`, `prompt: "Please triage ticket {{.id}}`}}},
	{"change model.name", []edit{{`"gpt-4o-2024-08-06"`, `"gpt-4o-2024-11-20"`}}},
	{"change model.provider", []edit{{`provider:    "openai"`, `provider:    "anthropic"`}}},
	{"change temperature", []edit{{"temperature: 0.2\n", "temperature: 0.3\n"}}},
	{"add max_output_tokens", []edit{{"temperature: 0.2\n", "temperature: 0.2\n\tmax_output_tokens: 2048\n"}}},
	{"turn prompt caching off", []edit{{"temperature: 0.2\n", "temperature: 0.2\n\tcache:       false\n"}}},
	{"rename the agent", []edit{{`name:        "ticket-triage"`, `name:        "ticket-sorter"`}}},
	{"change the agent's description", []edit{{`"Classifies a support ticket and proposes a refund."`, `"Classifies a ticket."`}}},
	{"change budgets.deadline", []edit{{`deadline: "60s"`, `deadline: "90s"`}}},
	{"change budgets.tokens", []edit{{"tokens:   20000\n", "tokens:   30000\n"}}},
	{"change budgets.tools", []edit{{"tools:    8\n", "tools:    9\n"}}},
	{"add budgets.rounds", []edit{{"tools:    8\n", "tools:    8\n\trounds:   6\n"}}},
	{"add a tool", []edit{{
		"\t\tget_customer: {\n",
		"\t\tfaq: {kind: \"fs\", description: \"Read the FAQ.\", root: \"faq\"}\n\t\tget_customer: {\n",
	}}},
	{"remove a tool", []edit{{
		"\t\tdocs: {\n\t\t\tkind:        \"fs\"\n\t\t\tdescription: \"Read or list the refund policy documents.\"\n\t\t\troot:        \"policies\"\n\t\t}\n",
		"",
	}}},
	{"change a tool's description", []edit{{`"Fetch one customer record by id."`, `"Fetch a customer."`}}},
	{"change a tool's input schema", []edit{{`"^c-[0-9]{1,12}$"`, `"^c-[0-9]{1,16}$"`}}},
	{"change a tool's url", []edit{{`url:         "https://crm.example.com/customers/{{.id}}"`, `url:         "https://crm.example.com/customers/{{.id}}?full=1"`}}},
	{"change an fs tool's ops", []edit{{"\t\t\troot:        \"policies\"\n", "\t\t\troot:        \"policies\"\n\t\t\tops: [\"read\"]\n"}}},
	{"change a tool's timeout", []edit{{
		"\t\t\tallow: [\"https://crm.example.com/customers/\"]\n",
		"\t\t\tallow: [\"https://crm.example.com/customers/\"]\n\t\t\ttimeout: \"10s\"\n",
	}}},
	{"change strategy.on_prose", []edit{{`on_prose: "remind"`, `on_prose: "force"`}}},
	{"change strategy.reminders", []edit{{`strategy: on_prose: "remind"`, `strategy: {on_prose: "remind", reminders: 3}`}}},
	{"change output.retries", []edit{{"\tname:        \"file_triage\"\n", "\tname:        \"file_triage\"\n\tretries:     3\n"}}},
	{"change output.mode", []edit{{"\tname:        \"file_triage\"\n", "\tname:        \"file_triage\"\n\tmode:        \"tool\"\n"}}},
	{"change output.enforce", []edit{{"\tname:        \"file_triage\"\n", "\tname:        \"file_triage\"\n\tenforce:     \"provider\"\n"}}},
}

// runSensitivity builds each case and compares it with the base. Every
// case must move the plan digest; the contract digest must move exactly
// when contractMoves. No two cases may share a digest of the kind they
// move.
func runSensitivity(t *testing.T, cases []sensitivityCase, contractMoves bool) {
	cp := compile.New(manifest.NewLoader())
	dir := t.TempDir()
	base := baseDigests(t, cp, dir)
	seen := map[digest.Digest]string{base.plan: "the base agent"}
	if contractMoves {
		seen[base.contract] = "the base agent"
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := filepath.Join(dir, fmt.Sprintf("change%02d.cue", i))
			writeFiles(t, dir, map[string]string{filepath.Base(name): applyEdits(t, agentSource(t, "base.cue"), tc.edits...)})
			got := buildDigests(t, cp, name)
			t.Logf("contract %s plan %s", got.contract, got.plan)
			if got.plan == base.plan {
				t.Errorf("plan digest did not move: %s", got.plan)
			}
			switch {
			case contractMoves && got.contract == base.contract:
				t.Errorf("contract digest did not move: %s", got.contract)
			case !contractMoves && got.contract != base.contract:
				t.Errorf("contract digest moved:\n base %s\n got  %s", base.contract, got.contract)
			}
			moved := got.plan
			if contractMoves {
				moved = got.contract
			}
			if prev, ok := seen[moved]; ok && prev != "the base agent" {
				t.Errorf("digest %s is also that of %q", moved, prev)
			}
			seen[moved] = tc.name
		})
	}
}

// TestDigestSensitivityContract checks that each change to the contract
// moves the contract digest, and with it the plan digest.
func TestDigestSensitivityContract(t *testing.T) {
	if len(contractChanges) < 12 {
		t.Fatalf("only %d contract changes", len(contractChanges))
	}
	runSensitivity(t, contractChanges, true)
}

// TestDigestSensitivityPlanOnly checks that each change to behaviour
// outside the contract moves the plan digest and leaves the contract digest
// alone.
func TestDigestSensitivityPlanOnly(t *testing.T) {
	if len(planOnlyChanges) < 8 {
		t.Fatalf("only %d plan-only changes", len(planOnlyChanges))
	}
	runSensitivity(t, planOnlyChanges, false)
}

// TestDigestStrategyDefault: leaving the strategy block out means the
// default strategy, so it digests as writing the defaults does.
func TestDigestStrategyDefault(t *testing.T) {
	file := filepath.Join("testdata", "digest", "strategy.txtar")
	srcs, names := readArchive(t, file)
	if len(names) < 3 {
		t.Fatalf("%s holds %d agents, want 3", file, len(names))
	}
	var first plan.Digests
	for i, name := range names {
		l := manifest.NewLoader()
		p, ds, err := compile.New(l).Build(l.LoadBytes("s.cue", []byte(srcs[name])))
		if err != nil || p == nil {
			t.Fatalf("%s: build: %v %v", name, err, ds)
		}
		if i == 0 {
			first = p.Digests
		} else if p.Digests != first {
			t.Errorf("%s digests to %v, %s to %v", name, p.Digests, names[0], first)
		}
	}
}
