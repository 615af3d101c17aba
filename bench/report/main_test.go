package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// timeV is the output of GNU time -v, cut to the lines around the ones
// report reads.
func timeV(kb int64, status int) string {
	return fmt.Sprintf(`	Command being timed: "agentc vet x.cue"
	User time (seconds): 0.03
	Percent of CPU this job got: 95%%
	Elapsed (wall clock) time (h:mm:ss or m:ss): 0:00.08
	Average resident set size (kbytes): 0
	Maximum resident set size (kbytes): %d
	Minor (reclaiming a frame) page faults: 3650
	Exit status: %d
`, kb, status)
}

// hyperfine is an export of two commands: agentc's with a median, the
// floor's with times only.
func hyperfine(agentcMedian float64, floorTimes []float64) string {
	times, _ := json.Marshal(floorTimes)
	return fmt.Sprintf(`{"results": [
		{"command": "agentc", "mean": 1, "median": %v, "user": 0.2, "system": 0.1, "times": [1, 2, 3], "exit_codes": [0, 0, 0]},
		{"command": "floor", "mean": 1, "user": 0.1, "system": 0.05, "times": %s, "exit_codes": [0, 0, 0]}
	]}`, agentcMedian, times)
}

func write(t *testing.T, dir, name, data string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// results writes a results directory for every pair: agentc's median is
// ratio times the floor's 0.1 s, and its peak 2 MiB against the floor's
// 1 MiB (the largest of two runs each).
func results(t *testing.T, ratios map[string]float64) string {
	dir := t.TempDir()
	for _, p := range Pairs {
		// The floor's median comes from its times: 0.1 of 0.05, 0.1, 0.3.
		write(t, dir, p.ID+".json", hyperfine(0.1*ratios[p.ID], []float64{0.05, 0.3, 0.1}))
		write(t, dir, p.ID+".agentc.time.1", timeV(1024, 0))
		write(t, dir, p.ID+".agentc.time.2", timeV(2048, 0))
		write(t, dir, p.ID+".floor.time.1", timeV(1024, 0))
	}
	return dir
}

// pair returns the pair with an ID.
func pair(t *testing.T, id string) Pair {
	t.Helper()
	for _, p := range Pairs {
		if p.ID == id {
			return p
		}
	}
	t.Fatalf("no pair %s", id)
	return Pair{}
}

func TestMeasure(t *testing.T) {
	dir := results(t, map[string]float64{"vet-example": 1.5, "vet-dir100": 1, "vet-dir1000": 1, "run-plan": 1.2, "run-manifest": 2})
	for _, tc := range []struct {
		pair      string
		wallRatio float64
		met       bool
	}{
		{"vet-example", 1.5, false}, // wall exactly at 1.5×, memory 2× > 1.5×
		{"vet-dir100", 1, true},     // no target
		{"vet-dir1000", 1, false},   // CPU 2× > 1.5×, memory 2× > 1×
		{"run-plan", 1.2, false},    // wall within 1.3×, memory 2× > 1.3×
		{"run-manifest", 2, true},   // wall exactly at 2×, no memory target
	} {
		p := pair(t, tc.pair)
		r, err := Measure(dir, p)
		if err != nil {
			t.Fatal(err)
		}
		if r.FloorMedian != 0.1 || r.AgentcPeak != 2048 || r.FloorPeak != 1024 {
			t.Errorf("%s: floor median %g, peaks %d and %d; want 0.1, 2048 and 1024", p.ID, r.FloorMedian, r.AgentcPeak, r.FloorPeak)
		}
		if d := r.WallRatio() - tc.wallRatio; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s: wall ratio %g, want %g", p.ID, r.WallRatio(), tc.wallRatio)
		}
		if d := r.CPURatio() - 2; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s: CPU ratio %g, want 2", p.ID, r.CPURatio())
		}
		if r.MemoryRatio() != 2 {
			t.Errorf("%s: memory ratio %g, want 2", p.ID, r.MemoryRatio())
		}
		if r.Met() != tc.met {
			t.Errorf("%s: met = %v, want %v", p.ID, r.Met(), tc.met)
		}
	}
}

// TestMeasureBlocks: a pair timed in alternating blocks has the median of
// all its times, and the mean CPU time of all its runs.
func TestMeasureBlocks(t *testing.T) {
	dir := results(t, map[string]float64{"run-plan": 1})
	os.Remove(filepath.Join(dir, "run-plan.json"))
	runPlan := pair(t, "run-plan")
	block := func(agentc, floor []float64, cpu float64) string {
		a, _ := json.Marshal(agentc)
		f, _ := json.Marshal(floor)
		return fmt.Sprintf(`{"results": [
			{"command": "agentc", "median": 99, "user": %v, "system": 0, "times": %s},
			{"command": "floor", "user": 0.1, "system": 0, "times": %s}]}`, cpu, a, f)
	}
	write(t, dir, "run-plan.1.json", block([]float64{0.1, 0.2, 0.3}, []float64{0.1, 0.1, 0.1}, 0.2))
	write(t, dir, "run-plan.2.json", block([]float64{0.4, 0.5, 0.6}, []float64{0.2, 0.2, 0.2}, 0.4))
	r, err := Measure(dir, runPlan)
	if err != nil {
		t.Fatal(err)
	}
	near := func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
	if !near(r.AgentcMedian, 0.35) || !near(r.FloorMedian, 0.15) {
		t.Errorf("medians %g and %g; want 0.35 and 0.15, over both blocks", r.AgentcMedian, r.FloorMedian)
	}
	if !near(r.AgentcCPU, 0.3) {
		t.Errorf("agentc's CPU time %g, want 0.3", r.AgentcCPU)
	}
	write(t, dir, "run-plan.3.json", `{"results": [{"command": "agentc", "median": 1}]}`)
	if _, err := Measure(dir, runPlan); err == nil {
		t.Error("a block with one command was taken")
	}
}

func TestMeasureRefuses(t *testing.T) {
	for name, spoil := range map[string]func(dir string){
		"no export": func(dir string) { os.Remove(filepath.Join(dir, "vet-example.json")) },
		"one command": func(dir string) {
			write(t, dir, "vet-example.json", `{"results": [{"command": "agentc", "median": 1}]}`)
		},
		"no times": func(dir string) {
			write(t, dir, "vet-example.json", `{"results": [{"command": "a", "median": 1}, {"command": "b"}]}`)
		},
		"no time output":   func(dir string) { os.Remove(filepath.Join(dir, "vet-example.floor.time.1")) },
		"a failed command": func(dir string) { write(t, dir, "vet-example.agentc.time.2", timeV(2048, 1)) },
		"not time -v":      func(dir string) { write(t, dir, "vet-example.agentc.time.2", "0.08 real\n") },
	} {
		dir := results(t, map[string]float64{"vet-example": 1})
		spoil(dir)
		if _, err := Measure(dir, pair(t, "vet-example")); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		if got := Median(tc.xs); got != tc.want {
			t.Errorf("Median(%v) = %g, want %g", tc.xs, got, tc.want)
		}
	}
}

func TestSection(t *testing.T) {
	rows := []Row{
		{Pair: pair(t, "vet-example"), AgentcMedian: 0.0853, FloorMedian: 0.0412, AgentcCPU: 0.08, FloorCPU: 0.05, AgentcPeak: 61440, FloorPeak: 40960},
		{Pair: pair(t, "run-plan"), AgentcMedian: 0.012, FloorMedian: 0.010, AgentcPeak: 20480, FloorPeak: 15360},
		{Pair: pair(t, "vet-dir1000"), AgentcMedian: 1.25, FloorMedian: 1.5, AgentcCPU: 1.2, FloorCPU: 1, AgentcPeak: 61440, FloorPeak: 102400},
		{Pair: pair(t, "vet-dir100"), AgentcMedian: 0.25, FloorMedian: 0.2, AgentcCPU: 0.2, FloorCPU: 0.1, AgentcPeak: 51200, FloorPeak: 40960},
		{Pair: pair(t, "replay"), AgentcMedian: 0.149, FloorMedian: 0.1, AgentcPeak: 30720, FloorPeak: 30720},
		{Pair: pair(t, "replay"), AgentcMedian: 0.151, FloorMedian: 0.1, AgentcPeak: 30720, FloorPeak: 30720},
	}
	env := "Date: 2026-12-01\nMode: full\nempty: \nnot a pair\nCommand: `bash bench/run.sh --write`\n"
	want := StartMarker + `
| pair | agentc median | floor | floor median | ratio | CPU ratio | agentc peak RSS | floor peak RSS | RSS ratio | target | met |
|---|--:|---|--:|--:|--:|--:|--:|--:|---|---|
| 1. ` + "`vet` one example | 85.3 ms | `cue vet` | 41.2 ms | 2.07× | 1.60× | 60.0 MiB | 40.0 MiB | 1.50× | ≤1.5× wall, ≤1.5× memory | **not met** |" + `
| 3. ` + "`run plan.json` | 12.0 ms | floor | 10.0 ms | 1.20× | – | 20.0 MiB | 15.0 MiB | 1.33× | ≤1.2× wall, ≤1.3× memory | **not met** |" + `
| 2. ` + "`vet` 1,000 manifests | 1.250 s | `cue vet ./...` | 1.500 s | 0.83× | 1.20× | 60.0 MiB | 100.0 MiB | 0.60× | ≤1.5× CPU, ≤1× memory | met |" + `
| 2a. ` + "`vet` 100 manifests | 250.0 ms | `cue vet ./...` | 200.0 ms | 1.25× | 2.00× | 50.0 MiB | 40.0 MiB | 1.25× | – | – |" + `
| 5. ` + "`run --replay`, 1,002 effects | 149.0 ms | the same, 4 effects | 100.0 ms | 1.49× | – | 30.0 MiB | 30.0 MiB | 1.00× | ≤50.0 ms wall over it | met |" + `
| 5. ` + "`run --replay`, 1,002 effects | 151.0 ms | the same, 4 effects | 100.0 ms | 1.51× | – | 30.0 MiB | 30.0 MiB | 1.00× | ≤50.0 ms wall over it | **not met** |" + `

- Date: 2026-12-01
- Mode: full
- Command: ` + "`bash bench/run.sh --write`" + `
` + EndMarker + "\n"
	if got := string(Section(rows, []byte(env))); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestReplace(t *testing.T) {
	section := []byte(StartMarker + "\nnew\n" + EndMarker + "\n")
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"between markers", "# B\n\ntext\n" + StartMarker + "\nold\nolder\n" + EndMarker + "\nafter\n",
			"# B\n\ntext\n" + StartMarker + "\nnew\n" + EndMarker + "\nafter\n"},
		{"at the end", "# B\n" + StartMarker + "\nold\n" + EndMarker,
			"# B\n" + StartMarker + "\nnew\n" + EndMarker + "\n"},
		{"no markers", "# B\n\ntext\n\n\n", "# B\n\ntext\n\n" + StartMarker + "\nnew\n" + EndMarker + "\n"},
	} {
		got, err := Replace([]byte(tc.doc), section)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !bytes.Equal(got, []byte(tc.want)) {
			t.Errorf("%s: got\n%q\nwant\n%q", tc.name, got, tc.want)
		}
	}
	for _, doc := range []string{
		"a\n" + StartMarker + "\nb\n",
		"a\n" + EndMarker + "\nb\n",
		EndMarker + "\n" + StartMarker + "\n",
	} {
		if _, err := Replace([]byte(doc), section); err == nil {
			t.Errorf("Replace(%q): no error", doc)
		}
	}
}

func TestRun(t *testing.T) {
	dir := results(t, map[string]float64{"vet-example": 1, "vet-dir100": 1, "vet-dir1000": 1, "run-plan": 1, "run-manifest": 1, "replay": 1, "temporal": 1, "peer-plan": 1, "peer-manifest": 1})
	env := filepath.Join(dir, "env")
	write(t, dir, "env", "Mode: short\n")
	doc := filepath.Join(dir, "BENCHMARKS.md")
	write(t, dir, "BENCHMARKS.md", "# Benchmarks\n\n"+StartMarker+"\nold\n"+EndMarker+"\n\nmore\n")
	var stdout, stderr bytes.Buffer
	if err := run([]string{"-results", dir, "-env", env, "-write", doc}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	got, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	if want := "# Benchmarks\n\n" + stdout.String() + "\nmore\n"; string(got) != want {
		t.Errorf("BENCHMARKS.md:\n%s\nwant\n%s", got, want)
	}
	if rows := strings.Count(stdout.String(), "\n| "); rows != len(Pairs)+1 {
		t.Errorf("%d table lines, want a header and %d rows:\n%s", rows, len(Pairs), stdout.String())
	}
	if !strings.Contains(stdout.String(), "- Mode: short\n") {
		t.Errorf("the env lines are missing:\n%s", stdout.String())
	}
}
