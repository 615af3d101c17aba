package compile_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"agentc.dev/agentc/compile"
	"agentc.dev/agentc/manifest"
)

// vet runs what `agentc vet args...` runs, schema compilation included.
func vet(b *testing.B, args ...string) {
	results, err := compile.New(manifest.NewLoader()).Vet(args)
	if err != nil {
		b.Fatal(err)
	}
	for _, r := range results {
		for _, d := range r.Diagnostics {
			b.Fatalf("unexpected finding: %s", d)
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
