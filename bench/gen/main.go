// Gen writes the manifests bench/run.sh vets, in the layouts each tool
// expects: agentc's (one directory of agents, one agent a file) and the cue
// command's (a CUE module, one package a directory, each manifest unified
// with agentc's #Manifest schema).
//
// Usage:
//
//	gen -schema manifest/schema.cue -example examples/issue-triage.cue -n 200 -out DIR
//
// writes
//
//	DIR/flat/agent-NNN.cue          the n manifests, for `agentc vet DIR/flat`
//	DIR/tree/cue.mod/module.cue     module bench.example/agents
//	DIR/tree/manifest/schema.cue    the #Manifest schema, package manifest
//	DIR/tree/agent-NNN/agent.cue    the same manifest as manifest.#Manifest & {...}, for `cue vet ./...`
//	DIR/example/schema.cue          the schema again
//	DIR/example/agent.cue           the example as #Manifest & {...}, for `cue vet schema.cue agent.cue`
//
// The tree imports one schema package rather than copying the schema into
// every package: it is how a CUE user would lay it out, and cue vet is
// faster that way (it builds the imported package once).
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// cueModule is the generated module's path.
const cueModule = "bench.example/agents"

// cueLanguage is the language version the generated module declares; the
// cue command refuses a module without one.
const cueLanguage = "v0.17.0"

func run(args []string, stderr io.Writer) error {
	fl := flag.NewFlagSet("gen", flag.ContinueOnError)
	fl.SetOutput(stderr)
	schemaPath := fl.String("schema", "manifest/schema.cue", "agentc's #Manifest schema")
	example := fl.String("example", "examples/issue-triage.cue", "the example of pair (1)")
	n := fl.Int("n", 200, "how many manifests")
	out := fl.String("out", "", "the directory to write into (required)")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *out == "" || fl.NArg() > 0 || *n < 1 {
		fl.Usage()
		return errors.New("usage: gen [-schema FILE] [-example FILE] [-n N] -out DIR")
	}
	schema, err := os.ReadFile(*schemaPath)
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(skipComments(schema), []byte("package manifest\n")) {
		return fmt.Errorf("%s: want the package clause \"package manifest\" first", *schemaPath)
	}
	ex, err := os.ReadFile(*example)
	if err != nil {
		return err
	}
	files := map[string][]byte{
		"tree/cue.mod/module.cue":  fmt.Appendf(nil, "module: %q\nlanguage: version: %q\n", cueModule, cueLanguage),
		"tree/manifest/schema.cue": schema,
		"example/schema.cue":       schema,
		"example/agent.cue":        wrap("package manifest", "#Manifest", ex),
	}
	imported := fmt.Sprintf("package agent\n\nimport %q", cueModule+"/manifest")
	for i := range *n {
		m := Manifest(i)
		name := fmt.Sprintf("agent-%03d", i)
		files["flat/"+name+".cue"] = m
		files["tree/"+name+"/agent.cue"] = wrap(imported, "manifest.#Manifest", m)
	}
	for name, data := range files {
		path := filepath.Join(*out, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// wrap turns a manifest file (no package clause, no imports) into a CUE
// file whose value is the manifest unified with #Manifest, which is what
// agentc's loader does to every agent. head is the package clause and any
// import; def names the definition. Embedding the definition alone at the
// top of a file would not close the package's root, so unknown fields would
// pass.
func wrap(head, def string, src []byte) []byte {
	var b bytes.Buffer
	b.WriteString(head + "\n\n" + def + " & {\n")
	b.Write(src)
	if !bytes.HasSuffix(src, []byte("\n")) {
		b.WriteByte('\n')
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// skipComments returns src after its leading comment lines and blank lines.
func skipComments(src []byte) []byte {
	for len(src) > 0 {
		line, rest, _ := bytes.Cut(src, []byte("\n"))
		t := bytes.TrimSpace(line)
		if len(t) > 0 && !bytes.HasPrefix(t, []byte("//")) {
			break
		}
		src = rest
	}
	return src
}

var areas = []string{"billing", "auth", "api", "ui", "storage", "search", "mobile", "infra"}

// Manifest returns the i'th generated agent: a ticket classifier with an
// input schema, a prompt template over it, an output schema and budgets,
// like compile's BenchmarkVetDir200. Every fourth agent also declares an
// http tool and every fourth, from the second, an exec tool, so the tool
// checks run too.
func Manifest(i int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "name: \"agent-%03d\"\n", i)
	fmt.Fprintf(&b, "description: \"Classifies support tickets for team %d by area and urgency.\"\n", i)
	b.WriteString(`model: {provider: "openai", name: "gpt-4o-2024-08-06", temperature: 0}
instructions: """
	Classify the ticket you are given by area and urgency.
	Urgency 1 is cosmetic; the highest urgency is an outage with no workaround.
	"""
prompt: "Ticket {{.id}} from {{.customer}}: {{.title}}"
input: schema: {
	type: "object"
	properties: {
		id: {type: "integer", minimum: 1}
		customer: {type: "string", minLength: 1, maxLength: 100}
		title: {type: "string", maxLength: 200}
	}
	required: ["id", "customer", "title"]
	additionalProperties: false
}
`)
	tools := ""
	budget := `budgets: {deadline: "60s", tokens: 20000}`
	switch i % 4 {
	case 0:
		tools = `capabilities: tools: lookup_customer: {
	kind: "http"
	description: "Fetch the customer's plan and open incidents by customer id."
	url: "https://support.example.com/api/customers/{{.customer}}"
	allow: ["https://support.example.com/api/customers/"]
	timeout: "10s"
	input: schema: {
		type: "object"
		properties: customer: {type: "string", pattern: "^[a-z0-9-]+$"}
		required: ["customer"]
		additionalProperties: false
	}
}
`
		budget = `budgets: {deadline: "60s", tokens: 20000, tools: 3}`
	case 1:
		tools = `capabilities: tools: recent_deploys: {
	kind: "exec"
	description: "List the last deploys of a service, newest first."
	argv: ["deployctl", "history", "--limit=5", "--service={{.service}}"]
	timeout: "10s"
	input: schema: {
		type: "object"
		properties: service: {enum: ["web", "api", "worker"]}
		required: ["service"]
		additionalProperties: false
	}
}
`
		budget = `budgets: {deadline: "60s", tokens: 20000, tools: 2}`
	}
	b.WriteString(tools)
	k := 3 + i%(len(areas)-2)
	enum := `"` + strings.Join(areas[:k], `", "`) + `"`
	fmt.Fprintf(&b, `output: {
	description: "The ticket's area and urgency. Answer once you have read it."
	schema: {
		type: "object"
		properties: {
			area: {enum: [%s]}
			urgency: {type: "integer", minimum: 1, maximum: %d}
			summary: {type: "string", maxLength: 280}
		}
		required: ["area", "urgency", "summary"]
		additionalProperties: false
	}
}
`, enum, 3+i%5)
	b.WriteString(budget + "\n")
	return []byte(b.String())
}
