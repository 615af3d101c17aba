package runcmd

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"agentc.dev/agentc/compile"
	"agentc.dev/agentc/manifest"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/fault"
)

// TestFaultNeverInjected: a fault run that never reached a call its fault
// applies to is the run without the fault, and says nothing of it: it
// fails rather than pass as recovered. The script's tool calls are kept,
// so the tool faults apply, but its model answers at once, calling none.
func TestFaultNeverInjected(t *testing.T) {
	dir, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	cp := compile.New(manifest.NewLoader())
	insts, err := cp.Loader().Load([]string{filepath.Join(dir, "code-reviewer.cue")})
	if err != nil || len(insts) != 1 {
		t.Fatalf("load: %v (%d agents)", err, len(insts))
	}
	p, ds, err := cp.Build(insts[0])
	if err != nil || p == nil {
		t.Fatalf("build: %v %v", err, ds)
	}
	journal := filepath.Join(dir, "testdata", "code-reviewer", "focus.jsonl")
	script, err := fault.Load(journal)
	if err != nil {
		t.Fatal(err)
	}
	if len(script.Tools) == 0 || len(script.Models) < 2 {
		t.Fatalf("the journal holds %d model calls and %d tool calls, want both", len(script.Models), len(script.Tools))
	}
	input := json.RawMessage(`{"base":"HEAD","head":"HEAD","focus":"error handling in the parser"}`)
	e := Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Dir: dir}
	ctx := context.Background()
	for _, k := range []string{fault.ToolError, fault.ToolHang} {
		rep, err := RunCase(ctx, e, p, dir, Case{Input: input, Replay: journal, Fault: k, Script: script})
		if err != nil || rep.Outcome != agentrt.OutcomeOK {
			t.Fatalf("%s with the whole script: %v, %+v", k, err, rep)
		}
		answerOnly := *script
		answerOnly.Models = script.Models[len(script.Models)-1:]
		_, err = RunCase(ctx, e, p, dir, Case{Input: input, Replay: journal, Fault: k, Script: &answerOnly})
		if err == nil || !strings.Contains(err.Error(), "the fault "+k+" was never injected") {
			t.Errorf("%s with a script whose model calls no tool: %v", k, err)
		}
	}
}
