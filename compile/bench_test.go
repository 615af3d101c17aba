package compile_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"agentc.dev/agentc/compile"
	"agentc.dev/agentc/manifest"
	"agentc.dev/agentc/plan"
)

// vet runs what `agentc vet args...` runs, schema compilation included.
func vet(b *testing.B, args ...string) {
	results, err := compile.New(manifest.NewLoader()).Vet(args)
	if err != nil {
		b.Fatal(err)
	}
	for _, r := range results {
		for _, d := range r.Diagnostics {
			if d.Severity != compile.Note {
				b.Fatalf("unexpected finding: %s", d)
			}
		}
	}
}

// BenchmarkVetExample vets one example agent.
func BenchmarkVetExample(b *testing.B) {
	for b.Loop() {
		vet(b, "../examples/issue-triage.cue")
	}
}

// BenchmarkVetDir200 vets a directory of 200 manifests, one agent a file.
func BenchmarkVetDir200(b *testing.B) {
	dir := manifestDir(b, 200)
	for b.Loop() {
		vet(b, dir)
	}
}

// BenchmarkVetDir vets directories of 100 and 1,000 manifests and reports
// the heap's high-water mark (peak-heap-MiB, sampled every millisecond) and
// the largest live heap a collection found (peak-live-MiB): vet lets each
// agent go once it is checked, so both stay flat as the number grows.
func BenchmarkVetDir(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			dir := manifestDir(b, n)
			runtime.GC()
			peak := watchHeap()
			for b.Loop() {
				vet(b, dir)
			}
			heap, live := peak()
			b.ReportMetric(float64(heap)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(live)/(1<<20), "peak-live-MiB")
		})
	}
}

// watchHeap samples the heap every millisecond until the function it
// returns is called, which returns the largest heap (live objects and
// garbage not yet swept) and the largest live heap seen.
func watchHeap() func() (heap, live uint64) {
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
	var heap, live uint64
	read := func() {
		metrics.Read(samples)
		heap = max(heap, samples[0].Value.Uint64())
		live = max(live, samples[1].Value.Uint64())
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				read()
				return
			case <-tick.C:
				read()
			}
		}
	}()
	return func() (uint64, uint64) {
		close(stop)
		<-done
		return heap, live
	}
}

// manifestDir writes n manifests, one agent a file, into a new directory.
func manifestDir(b *testing.B, n int) string {
	dir := b.TempDir()
	for i := range n {
		src := fmt.Sprintf(`name: "agent-%03d"
model: {provider: "openai", name: "gpt-4o-2024-08-06", temperature: 0}
instructions: "Classify the ticket you are given by area and urgency."
prompt: "Ticket {{.id}}: {{.title}}"
input: schema: {
	type: "object"
	properties: {id: {type: "integer", minimum: 1}, title: {type: "string", maxLength: 200}}
	required: ["id", "title"]
	additionalProperties: false
}
output: {
	description: "The ticket's area and urgency. Answer once you have read it."
	schema: {
		type: "object"
		properties: {
			area: {enum: ["billing", "auth", "api", "ui"]}
			urgency: {type: "integer", minimum: 1, maximum: %d}
		}
		required: ["area", "urgency"]
		additionalProperties: false
	}
}
budgets: {deadline: "60s", tokens: 20000}
`, i, 3+i%5)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("agent-%03d.cue", i)), []byte(src), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// BenchmarkDigestExample computes both digests of each example, from the
// built plan (BenchmarkBuildExample includes loading and checking).
func BenchmarkDigestExample(b *testing.B) {
	for _, name := range examples(b) {
		b.Run(filepath.Base(name), func(b *testing.B) {
			p := buildOne(b, name)
			b.ReportAllocs()
			for b.Loop() {
				if err := p.Seal(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBuildExample loads, checks and compiles each example.
func BenchmarkBuildExample(b *testing.B) {
	for _, name := range examples(b) {
		b.Run(filepath.Base(name), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				buildOne(b, name)
			}
		})
	}
}

func examples(b *testing.B) []string {
	names, err := filepath.Glob("../examples/*.*") // the manifests, not examples/input
	if err != nil || len(names) == 0 {
		b.Fatalf("no examples: %v", err)
	}
	return names
}

func buildOne(b *testing.B, name string) *plan.Plan {
	comp := compile.New(manifest.NewLoader())
	insts, err := comp.Loader().Load([]string{name})
	if err != nil {
		b.Fatal(err)
	}
	p, ds, err := comp.Build(insts[0])
	if err != nil || p == nil {
		b.Fatalf("%s: %v %v", name, err, ds)
	}
	return p
}

// BenchmarkVetDeepSchema vets manifests whose output schema nests "not"
// inside "not" (6,002 JSON values at 3,000): vet reads 64 levels, reports
// SCHEMA_TOO_DEEP and checks that schema no further, so the cost is CUE's
// evaluation, linear in the depth, where it grew with the cube of it.
func BenchmarkVetDeepSchema(b *testing.B) {
	for _, depth := range []int{64, 3000} {
		b.Run(fmt.Sprint(depth), func(b *testing.B) {
			file := filepath.Join(b.TempDir(), "deep.cue")
			src := fmt.Sprintf(`import "list"

name: "deep"
model: {provider: "test", name: "test"}
instructions: "Answer."
_s: {"0": {type: "string"}, for i in list.Range(1, %d, 1) {"\(i)": {not: _s["\(i-1)"]}}}
output: {description: "The answer.", schema: _s["%d"]}
budgets: deadline: "60s"
`, depth, depth-1)
			if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
				b.Fatal(err)
			}
			want := compile.CodeSchemaTooDeep
			if depth <= plan.MaxSchemaDepth {
				want = ""
			}
			for b.Loop() {
				results, err := compile.New(manifest.NewLoader()).Vet([]string{file})
				if err != nil {
					b.Fatal(err)
				}
				got := ""
				for _, d := range results[0].Diagnostics {
					if d.Severity == compile.Error {
						got = d.Code
					}
				}
				if got != want {
					b.Fatalf("error %q, want %q", got, want)
				}
			}
		})
	}
}
