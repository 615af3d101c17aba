package compile_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

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
	dir := b.TempDir()
	for i := range 200 {
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
	for b.Loop() {
		vet(b, dir)
	}
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
