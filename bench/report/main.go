// Report turns what bench/run.sh measured into the markdown section of
// BENCHMARKS.md: per pair, the median wall time of agentc and of its floor
// (from hyperfine's JSON export), their peak resident set sizes (from
// /usr/bin/time -v), the ratios and whether each meets its target. The
// ratio of mean CPU time (user and system) comes too: on a busy machine it
// moves less than wall time does.
//
// Usage:
//
//	report -results DIR [-env FILE] [-write BENCHMARKS.md]
//
// DIR holds, for each pair ID (see Pairs), ID.json or blocks ID.1.json,
// ID.2.json... (hyperfine's exports of two commands, agentc's first) and the outputs of time -v named
// ID.agentc.time.* and ID.floor.time.* (the peak is their maximum). The env
// file lists what the section says about the run, one "key: value" a line.
// The section goes to standard output; -write also puts it in place of the
// one between the bench markers of FILE (appended when FILE has none).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Pair is one side-by-side comparison and its targets: the largest
// acceptable ratios of agentc's measure to the floor's, 0 for none, and
// the most agentc's median may exceed the floor's by, where the floor is
// agentc doing less (the same replay of a shorter journal).
type Pair struct {
	ID     string  // the results' file names
	Name   string  // what the table calls it
	Floor  string  // what agentc is compared with
	Wall   float64 // of the median wall times
	CPU    float64 // of the mean CPU times
	Memory float64 // of the peak RSS
	Over   float64 // seconds: the most the median wall times may differ by
}

// Pairs are the comparisons, in the order of the issues that set the
// targets. 2a has none: beside 2, it shows whether vet's peak memory
// grows with the number of manifests. 5 is a replay of 1,002 effects
// beside the same replay of 4: the difference is what 998 effects cost,
// whose target is 50 ms. 6 is a one-call run on Temporal's dev server,
// its worker another process, beside the same run in process; its target
// (3× in process and a round trip an effect) is taken as 3×, the round
// trips on loopback left out. 7 and 8 put agentc beside its peer, a
// Genkit program running the same agent from a prompt file (bench/peer);
// no issue sets a target for them.
var Pairs = []Pair{
	{ID: "vet-example", Name: "1. `vet` one example", Floor: "`cue vet`", Wall: 1.5, Memory: 1.5},
	{ID: "vet-dir100", Name: "2a. `vet` 100 manifests", Floor: "`cue vet ./...`"},
	{ID: "vet-dir1000", Name: "2. `vet` 1,000 manifests", Floor: "`cue vet ./...`", CPU: 1.5, Memory: 1},
	{ID: "run-plan", Name: "3. `run plan.json`", Floor: "floor", Wall: 1.2, Memory: 1.3},
	{ID: "run-manifest", Name: "4. `run manifest.cue`", Floor: "floor", Wall: 2},
	{ID: "replay", Name: "5. `run --replay`, 1,002 effects", Floor: "the same, 4 effects", Over: 0.05},
	{ID: "temporal", Name: "6. `run --temporal`", Floor: "`run` in process", Wall: 3},
	{ID: "peer-plan", Name: "7. `run plan.json`", Floor: "Genkit peer"},
	{ID: "peer-manifest", Name: "8. `run manifest.cue`", Floor: "Genkit peer"},
}

// Markers delimit the section report writes.
const (
	StartMarker = "<!-- bench:start -->"
	EndMarker   = "<!-- bench:end -->"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("report", flag.ContinueOnError)
	fl.SetOutput(stderr)
	results := fl.String("results", "", "the directory of results (required)")
	envFile := fl.String("env", "", "a file of \"key: value\" lines describing the run")
	write := fl.String("write", "", "replace the marked section of this file")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *results == "" || fl.NArg() > 0 {
		fl.Usage()
		return errors.New("usage: report -results DIR [-env FILE] [-write FILE]")
	}
	var rows []Row
	for _, p := range Pairs {
		r, err := Measure(*results, p)
		if err != nil {
			return err
		}
		rows = append(rows, r)
	}
	var env []byte
	if *envFile != "" {
		var err error
		if env, err = os.ReadFile(*envFile); err != nil {
			return err
		}
	}
	section := Section(rows, env)
	if _, err := stdout.Write(section); err != nil {
		return err
	}
	if *write == "" {
		return nil
	}
	doc, err := os.ReadFile(*write)
	if err != nil {
		return err
	}
	doc, err = Replace(doc, section)
	if err != nil {
		return fmt.Errorf("%s: %w", *write, err)
	}
	return os.WriteFile(*write, doc, 0o644)
}

// Row is one pair's measurements: medians in seconds, peaks in KiB.
type Row struct {
	Pair
	AgentcMedian, FloorMedian float64
	AgentcCPU, FloorCPU       float64 // mean user + system seconds
	AgentcPeak, FloorPeak     int64
}

// WallRatio is agentc's median over the floor's.
func (r Row) WallRatio() float64 { return r.AgentcMedian / r.FloorMedian }

// CPURatio is agentc's mean CPU time over the floor's.
func (r Row) CPURatio() float64 { return r.AgentcCPU / r.FloorCPU }

// MemoryRatio is agentc's peak RSS over the floor's.
func (r Row) MemoryRatio() float64 { return float64(r.AgentcPeak) / float64(r.FloorPeak) }

// Met reports whether the row meets every target of its pair.
func (r Row) Met() bool {
	return (r.Wall == 0 || r.WallRatio() <= r.Wall) &&
		(r.CPU == 0 || r.CPURatio() <= r.CPU) &&
		(r.Memory == 0 || r.MemoryRatio() <= r.Memory) &&
		(r.Over == 0 || r.AgentcMedian-r.FloorMedian <= r.Over)
}

// Target says the pair's targets, "–" for none.
func (p Pair) Target() string {
	var ts []string
	for _, t := range []struct {
		ratio float64
		what  string
	}{{p.Wall, "wall"}, {p.CPU, "CPU"}, {p.Memory, "memory"}} {
		if t.ratio > 0 {
			ts = append(ts, fmt.Sprintf("≤%s× %s", num(t.ratio), t.what))
		}
	}
	if p.Over > 0 {
		ts = append(ts, fmt.Sprintf("≤%s wall over it", Duration(p.Over)))
	}
	if len(ts) == 0 {
		return "–"
	}
	return strings.Join(ts, ", ")
}

// Measure reads one pair's results from dir: ID.json, or the blocks
// ID.1.json, ID.2.json... that run.sh alternates between the two commands
// so that a machine's load drifting during the pair weighs on both. The
// median is over every time of every block; the CPU time is the mean.
func Measure(dir string, p Pair) (Row, error) {
	r := Row{Pair: p}
	files := []string{filepath.Join(dir, p.ID+".json")}
	if _, err := os.Stat(files[0]); errors.Is(err, os.ErrNotExist) {
		blocks, _ := filepath.Glob(filepath.Join(dir, p.ID+".[0-9]*.json"))
		if len(blocks) > 0 {
			files = blocks
		}
	}
	var times [2][]float64
	var medians [2][]float64
	var cpu, weight [2]float64
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return r, err
		}
		name := filepath.Base(f)
		var export struct {
			Results []struct {
				Command string    `json:"command"`
				Median  *float64  `json:"median"`
				Times   []float64 `json:"times"`
				User    float64   `json:"user"`
				System  float64   `json:"system"`
			} `json:"results"`
		}
		if err := json.Unmarshal(data, &export); err != nil {
			return r, fmt.Errorf("%s: %w", name, err)
		}
		if len(export.Results) != 2 {
			return r, fmt.Errorf("%s: %d commands, want 2 (agentc, then its floor)", name, len(export.Results))
		}
		for i, res := range export.Results {
			var m float64
			switch {
			case res.Median != nil:
				m = *res.Median
			case len(res.Times) > 0:
				m = Median(res.Times)
			default:
				return r, fmt.Errorf("%s: %q has no times", name, res.Command)
			}
			if m <= 0 {
				return r, fmt.Errorf("%s: %q has a median of %g s", name, res.Command, m)
			}
			medians[i] = append(medians[i], m)
			times[i] = append(times[i], res.Times...)
			w := float64(max(len(res.Times), 1))
			cpu[i] += w * (res.User + res.System)
			weight[i] += w
		}
	}
	median := func(i int) float64 {
		if len(files) == 1 || len(times[i]) == 0 {
			return Median(medians[i])
		}
		return Median(times[i])
	}
	r.AgentcMedian, r.FloorMedian = median(0), median(1)
	r.AgentcCPU, r.FloorCPU = cpu[0]/weight[0], cpu[1]/weight[1]
	var err error
	if r.AgentcPeak, err = Peak(dir, p.ID+".agentc.time.*"); err != nil {
		return r, err
	}
	if r.FloorPeak, err = Peak(dir, p.ID+".floor.time.*"); err != nil {
		return r, err
	}
	return r, nil
}

// Median returns the median of xs, which must not be empty.
func Median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Peak returns the largest "Maximum resident set size (kbytes)" among the
// time -v outputs in dir matching pattern.
func Peak(dir, pattern string) (int64, error) {
	names, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return 0, err
	}
	if len(names) == 0 {
		return 0, fmt.Errorf("no time -v output matches %s", pattern)
	}
	var peak int64
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			return 0, err
		}
		kb, err := MaxRSS(data)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", filepath.Base(name), err)
		}
		peak = max(peak, kb)
	}
	return peak, nil
}

// MaxRSS reads the peak resident set size, in KiB, from the output of GNU
// time -v. It refuses an output whose command failed.
func MaxRSS(out []byte) (int64, error) {
	var kb int64 = -1
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		key, value, ok := strings.Cut(strings.TrimSpace(sc.Text()), ": ")
		if !ok {
			continue
		}
		switch key {
		case "Maximum resident set size (kbytes)":
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("maximum resident set size: %w", err)
			}
			kb = n
		case "Exit status":
			if value != "0" {
				return 0, fmt.Errorf("the command exited with status %s", value)
			}
		}
	}
	if kb <= 0 {
		return 0, errors.New("no maximum resident set size: not the output of time -v?")
	}
	return kb, nil
}

// Section returns the markdown section, markers included: the table, then
// the env lines as a list.
func Section(rows []Row, env []byte) []byte {
	var b bytes.Buffer
	b.WriteString(StartMarker + "\n")
	b.WriteString("| pair | agentc median | floor | floor median | ratio | CPU ratio | agentc peak RSS | floor peak RSS | RSS ratio | target | met |\n")
	b.WriteString("|---|--:|---|--:|--:|--:|--:|--:|--:|---|---|\n")
	for _, r := range rows {
		target, met := r.Target(), "met"
		switch {
		case target == "–":
			met = "–"
		case !r.Met():
			met = "**not met**"
		}
		cpu := "–"
		if r.AgentcCPU > 0 && r.FloorCPU > 0 {
			cpu = fmt.Sprintf("%.2f×", r.CPURatio())
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %.2f× | %s | %s | %s | %.2f× | %s | %s |\n",
			r.Name, Duration(r.AgentcMedian), r.Floor, Duration(r.FloorMedian), r.WallRatio(), cpu,
			Size(r.AgentcPeak), Size(r.FloorPeak), r.MemoryRatio(), target, met)
	}
	sc := bufio.NewScanner(bytes.NewReader(env))
	first := true
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ": ")
		if !ok || strings.TrimSpace(value) == "" {
			continue
		}
		if first {
			b.WriteString("\n")
			first = false
		}
		fmt.Fprintf(&b, "- %s: %s\n", strings.TrimSpace(key), strings.TrimSpace(value))
	}
	b.WriteString(EndMarker + "\n")
	return b.Bytes()
}

// num prints a target without trailing zeros: 2, 1.5.
func num(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// Duration prints seconds in ms below one second.
func Duration(s float64) string {
	if s < 1 {
		return fmt.Sprintf("%.1f ms", s*1000)
	}
	return fmt.Sprintf("%.3f s", s)
}

// Size prints KiB as MiB.
func Size(kb int64) string { return fmt.Sprintf("%.1f MiB", float64(kb)/1024) }

// Replace returns doc with its marked section replaced by section, or with
// section appended when doc has no markers.
func Replace(doc, section []byte) ([]byte, error) {
	start := bytes.Index(doc, []byte(StartMarker))
	end := bytes.Index(doc, []byte(EndMarker))
	switch {
	case start < 0 && end < 0:
		out := bytes.TrimRight(doc, "\n")
		out = append(out, "\n\n"...)
		return append(out, section...), nil
	case start < 0 || end < start:
		return nil, errors.New("the bench markers are missing or out of order")
	}
	end += len(EndMarker)
	if end < len(doc) && doc[end] == '\n' {
		end++
	}
	out := append([]byte(nil), doc[:start]...)
	out = append(out, section...)
	return append(out, doc[end:]...), nil
}
