package compile_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	cuetoken "cuelang.org/go/cue/token"
	"github.com/rogpeppe/go-internal/txtar"

	"agentc.dev/agentc/compile"
	"agentc.dev/agentc/internal/vetcase"
	"agentc.dev/agentc/manifest"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/testmodel"
	"agentc.dev/agentc/runtime/tool"
)

// TestSilencedErrorsBuild checks that a rule may be silenced only when
// nothing refuses an agent that breaks it: for every case of testdata/vet
// whose errors are all of rules that can be silenced, an agentc.yaml that
// turns them off lets the agent compile into a plan, whose tools the
// runtime builds and which it prepares to run. Every such rule must be
// exercised by some case.
func TestSilencedErrorsBuild(t *testing.T) {
	files, err := filepath.Glob("../testdata/vet/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases in ../testdata/vet: %v", err)
	}
	built := map[string]bool{}
	for _, file := range files {
		abs, err := filepath.Abs(file)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			dir := t.TempDir()
			c, err := vetcase.Read(abs, dir)
			if err != nil {
				t.Fatal(err)
			}
			var paths []string
			for _, a := range c.Args[1:] {
				switch {
				case a == "-v" || a == "--verbose" || a == "--strict":
				case strings.HasPrefix(a, "-"):
					t.Skipf("flag %s", a)
				default:
					paths = append(paths, a)
				}
			}
			if c.Args[0] != "vet" || len(paths) == 0 {
				t.Skip("not a vet case of files")
			}
			t.Chdir(dir)
			l := manifest.NewLoader()
			l.EvalTimeout = -1
			insts, err := l.Load(paths)
			if err != nil {
				t.Fatal(err)
			}
			var codes []string
			for _, inst := range insts {
				for _, d := range compile.New(l).Check(inst) {
					r, _ := compile.RuleOf(d.Code)
					if r.Refusal != "" {
						t.Skipf("%s cannot be silenced", d.Code)
					}
					if !slices.Contains(codes, d.Code) {
						codes = append(codes, d.Code)
					}
				}
			}
			if len(codes) == 0 {
				t.Skip("no findings")
			}
			cfg := fmt.Sprintf("vet:\n  except: [%s]\n", strings.Join(codes, ", "))
			if err := os.WriteFile(manifest.ConfigFile, []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			// The case's directory is a project, whose configuration
			// applies to the agents below it.
			if err := os.WriteFile("go.mod", []byte("module example.com/vetcase\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			comp := compile.New(l)
			for _, inst := range insts {
				if inst.NotAgent {
					continue
				}
				p, ds, err := comp.Build(inst)
				if err != nil || p == nil || len(ds) > 0 {
					t.Fatalf("with %s silenced, %s did not compile: plan %v, findings %v, error %v", strings.Join(codes, ", "), inst.Source, p != nil, ds, err)
				}
				if slices.ContainsFunc(slices.Collect(maps.Values(p.Agent.Capabilities.Tools)), func(t plan.Tool) bool { return t.Kind == "mcp" || t.Kind == "agent" }) {
					continue // an mcp server is the machine's, not the plan's; an agent tool is run by its host's runner
				}
				tools, closeTools, err := tool.Build(t.Context(), p, tool.Env{BaseDir: dir})
				if err != nil {
					t.Fatalf("with %s silenced, the runtime does not build the tools of %s: %v", strings.Join(codes, ", "), inst.Source, err)
				}
				t.Cleanup(func() { closeTools() })
				if _, err := agentrt.New(p, agentrt.Options{Model: testmodel.Model{}, Tools: tools,
					FallbackModel: func(*plan.Plan) (agentrt.Model, error) { return testmodel.Model{}, nil }}); err != nil {
					t.Fatalf("with %s silenced, the runtime refuses %s: %v", strings.Join(codes, ", "), inst.Source, err)
				}
			}
			for _, code := range codes {
				built[code] = true
			}
		})
	}
	for _, r := range compile.Rules {
		if r.Severity == compile.Error && r.Refusal == "" && !built[r.Code] {
			t.Errorf("no case shows that an agent breaking %s compiles once it is silenced", r.Code)
		}
	}
}

// TestConfig reads the configuration files of testdata/config: each case
// is a txtar archive of an agentc.yaml, the files its paths name, and
// "want", the error reading it gives ("" for none).
func TestConfig(t *testing.T) {
	files, err := filepath.Glob("testdata/config/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases in testdata/config: %v", err)
	}
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			dir := t.TempDir()
			want, hasWant := "", false
			for _, f := range ar.Files {
				if f.Name == "want" {
					want, hasWant = strings.TrimSpace(string(f.Data)), true
					continue
				}
				p := filepath.Join(dir, f.Name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, f.Data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if !hasWant {
				t.Fatal("case has no want section")
			}
			t.Chdir(dir)
			data, err := os.ReadFile(manifest.ConfigFile)
			if err != nil {
				t.Fatal(err)
			}
			_, err = compile.ParseConfig(manifest.ConfigFile, data)
			got := ""
			if err != nil {
				got = err.Error()
				if _, ok := err.(*compile.ConfigError); !ok {
					t.Errorf("error is a %T, want a *compile.ConfigError", err)
				}
			}
			if got != want {
				t.Errorf("got  %q\nwant %q", got, want)
			}
		})
	}
}

// TestConfigSilences checks which findings a configuration turns off:
// by code everywhere, by code under a path (a directory covers what is
// below it, and no more), never a rule that cannot be silenced.
func TestConfigSilences(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, d := range []string{"a/b", "ab", "c"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := compile.ParseConfig(manifest.ConfigFile, []byte(`vet:
  except: [SCHEMA_NUMBER]
  ignore: [c]
  ignore_only:
    BUDGET_UNBOUNDED: [a]
`))
	if err != nil {
		t.Fatal(err)
	}
	finding := func(code, file string) compile.Diagnostic {
		d := compile.Diagnostic{Code: code}
		if file != "" {
			d.Pos = filePos(t, file)
		}
		return d
	}
	for _, tc := range []struct {
		d    compile.Diagnostic
		want bool
	}{
		{finding("SCHEMA_NUMBER", "ab/x.cue"), true},
		{finding("SCHEMA_NUMBER", ""), true},
		{finding("BUDGET_UNBOUNDED", "a/x.cue"), true},
		{finding("BUDGET_UNBOUNDED", "a/b/x.cue"), true},
		{finding("BUDGET_UNBOUNDED", filepath.Join(dir, "a", "x.cue")), true},
		{finding("BUDGET_UNBOUNDED", "ab/x.cue"), false},
		{finding("BUDGET_UNBOUNDED", "x.cue"), false},
		{finding("BUDGET_UNBOUNDED", ""), false},
		{finding("SCHEMA_EMPTY", "a/x.cue"), false},
		{finding("SCHEMA_INVALID", "a/x.cue"), false},
	} {
		if got := cfg.Silences(tc.d); got != tc.want {
			t.Errorf("Silences(%s at %q) = %v, want %v", tc.d.Code, tc.d.Pos.Filename(), got, tc.want)
		}
	}
	for _, tc := range []struct {
		files []string
		want  bool
	}{
		{[]string{"c/x.cue"}, true},
		{[]string{"c/x.cue", "c/y.cue"}, true},
		{[]string{"c/x.cue", "a/y.cue"}, false},
		{[]string{"-"}, false},
		{nil, false},
	} {
		if got := cfg.Ignores(tc.files); got != tc.want {
			t.Errorf("Ignores(%v) = %v, want %v", tc.files, got, tc.want)
		}
	}
	var none *compile.Config
	if none.Silences(finding("SCHEMA_NUMBER", "")) || none.Ignores([]string{"c/x.cue"}) {
		t.Error("no configuration silences something")
	}
}

// filePos returns a position at the start of a file.
func filePos(t *testing.T, name string) cuetoken.Pos {
	t.Helper()
	p := cuetoken.NewFile(name, -1, 1).Pos(0, cuetoken.NoRelPos)
	if !p.IsValid() || p.Filename() != name {
		t.Fatalf("no position in %s", name)
	}
	return p
}

// TestConfigSilencesDiff checks which findings of agentc diff the diff
// section turns off: by rule ID everywhere, by rule ID for the agents of
// a path; and that a rule ID the differ lacks is refused with its place.
func TestConfigSilencesDiff(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.MkdirAll("a/b", 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, err := compile.ParseConfig(manifest.ConfigFile, []byte(`diff:
  except: [OUTPUT_DESCRIPTION_CHANGED]
  ignore_only:
    ANNOTATION_CHANGED: [a/b]
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id    string
		files []string
		want  bool
	}{
		{"OUTPUT_DESCRIPTION_CHANGED", nil, true},
		{"OUTPUT_DESCRIPTION_CHANGED", []string{"x.cue"}, true},
		{"ANNOTATION_CHANGED", []string{"a/b/x.cue"}, true},
		{"ANNOTATION_CHANGED", []string{"a/x.cue", "a/b/y.cue"}, true},
		{"ANNOTATION_CHANGED", []string{"a/x.cue"}, false},
		{"ANNOTATION_CHANGED", []string{"-"}, false},
		{"ENUM_VALUE_ADDED", []string{"a/b/x.cue"}, false},
		{"SCHEMA_NUMBER", nil, false}, // a vet code is not a diff rule
	} {
		if got := cfg.SilencesDiff(tc.id, tc.files); got != tc.want {
			t.Errorf("SilencesDiff(%s, %q) = %v, want %v", tc.id, tc.files, got, tc.want)
		}
	}
	if cfg.Silences(compile.Diagnostic{Code: "OUTPUT_DESCRIPTION_CHANGED"}) {
		t.Error("a diff rule ID silences a vet finding")
	}
	if err := cfg.CheckDiffRules([]string{"OUTPUT_DESCRIPTION_CHANGED", "ANNOTATION_CHANGED"}); err != nil {
		t.Errorf("CheckDiffRules: %v", err)
	}
	err = cfg.CheckDiffRules([]string{"OUTPUT_DESCRIPTION_CHANGED", "ANNOTATIONS_CHANGED"})
	want := `agentc.yaml:4:5: diff.ignore_only: "ANNOTATION_CHANGED" is not a rule agentc diff reports (did you mean ANNOTATIONS_CHANGED?)`
	if err == nil || err.Error() != want {
		t.Errorf("CheckDiffRules with a rule the differ lacks: %v, want %s", err, want)
	}
	var nilCfg *compile.Config
	if nilCfg.SilencesDiff("OUTPUT_DESCRIPTION_CHANGED", nil) || nilCfg.CheckDiffRules(nil) != nil {
		t.Error("a nil Config silences or refuses something")
	}
}
