package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentc.dev/agentc/internal/cli"
)

// TestBatchFilesStoredOnce: a batch of 1,000 items naming 10 distinct
// files records 1,000 journals and stores 10 files, each once, in the
// store the journals share.
func TestBatchFilesStoredOnce(t *testing.T) {
	dir := t.TempDir()
	agent := `name: "reader"
model: {provider: "anthropic", name: "claude-sonnet-4-5"}
instructions: "Read the document and give its title."
prompt: "The document: {{.doc}}"
input: schema: {type: "object", required: ["doc"], properties: doc: {type: "string", contentEncoding: "base64", contentMediaType: "application/pdf", maxLength: 4000}}
output: {
	description: "The document's title."
	schema: {type: "object", required: ["title"], properties: title: {type: "string", minLength: 1}, additionalProperties: false}
}
budgets: {deadline: "30s", tokens: 20000}
`
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("reader.cue", agent)
	var lines strings.Builder
	for i := range 10 {
		write(fmt.Sprintf("doc-%d.pdf", i), fmt.Sprintf("%%PDF-1.4\n%% document %d\n", i))
	}
	for i := range 1000 {
		fmt.Fprintf(&lines, `{"doc": "@doc-%d.pdf"}`+"\n", i%10)
	}
	write("batch.jsonl", lines.String())
	var stdout, stderr bytes.Buffer
	code := run([]string{"run", filepath.Join(dir, "reader.cue"), "--model", "test", "--batch", filepath.Join(dir, "batch.jsonl"),
		"--record", filepath.Join(dir, "runs"), "--parallel", "8", "--quiet"},
		cli.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Dir: dir})
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if n := strings.Count(stdout.String(), `"outcome":"ok"`); n != 1000 {
		t.Errorf("%d items answered, want 1000", n)
	}
	blobs, err := os.ReadDir(filepath.Join(dir, "runs", "files"))
	if err != nil {
		t.Fatal(err)
	}
	journals, _ := filepath.Glob(filepath.Join(dir, "runs", "*.jsonl"))
	if len(blobs) != 10 || len(journals) != 1000 {
		t.Errorf("%d files stored and %d journals, want 10 and 1,000", len(blobs), len(journals))
	}
}
