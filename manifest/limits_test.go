package manifest

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// runaways receives what Runaway says in this package's tests, which must
// not end the test binary: a test that abandons an evaluation leaves its
// heap watched until the evaluation ends.
var runaways = make(chan string, 100)

func TestMain(m *testing.M) {
	Runaway = func(msg string) {
		select {
		case runaways <- msg:
		default:
		}
	}
	os.Exit(m.Run())
}

// disjunctions returns a manifest that unifies n two-way disjunctions of
// structs: CUE's work doubles with each (n = 11 takes seconds).
func disjunctions(n int) []byte {
	var b strings.Builder
	b.WriteString(validManifest)
	var all []string
	for i := range n {
		fmt.Fprintf(&b, "_v%d: {f%d: 1} | {g%d: 1}\n", i, i, i)
		all = append(all, fmt.Sprintf("_v%d", i))
	}
	fmt.Fprintf(&b, "_all: %s\n", strings.Join(all, " & "))
	return []byte(b.String())
}

// TestEvalTimeout: a manifest whose evaluation passes the time bound is
// reported as too complex, with no value for later checks to evaluate,
// and the loader goes on loading other manifests.
func TestEvalTimeout(t *testing.T) {
	l := NewLoader()
	l.EvalTimeout = 50 * time.Millisecond
	start := time.Now()
	inst := l.LoadBytes("bomb.cue", disjunctions(11))
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("gave up after %v, want about %v", took, l.EvalTimeout)
	}
	if len(inst.Errors) != 1 || inst.Errors[0].Code != CodeTooComplex || !strings.Contains(inst.Errors[0].Msg, "took longer than 50ms") {
		t.Fatalf("errors = %v, want one %s about time", inst.Errors, CodeTooComplex)
	}
	if inst.Value.Exists() || inst.Manifest != nil {
		t.Error("an abandoned instance has a value")
	}
	if p := inst.Errors[0].Pos; p.Filename() != "bomb.cue" {
		t.Errorf("position %v, want the file", p)
	}
	// The loader loads nothing more, while the evaluation given up may
	// still allocate: which agents are checked does not hang on how fast.
	l.EvalTimeout = 0 // the default, ample for a small manifest
	inst = l.LoadBytes("ok.cue", []byte(validManifest))
	if len(inst.Errors) != 1 || inst.Errors[0].Code != CodeTooComplex || !strings.Contains(inst.Errors[0].Msg, "not loaded: the evaluation of bomb.cue passed a bound") || inst.Value.Exists() {
		t.Fatalf("after an abandoned evaluation, a valid manifest: %v", inst.Errors)
	}
	// Another loader loads it.
	if inst := NewLoader().LoadBytes("ok.cue", []byte(validManifest)); len(inst.Errors) > 0 || inst.Manifest == nil {
		t.Fatalf("another loader, a valid manifest: %v", inst.Errors)
	}
}

// TestRunaway: while an abandoned evaluation runs, the process's heap is
// watched past the agent's load, and Runaway is called once it passes the
// bound (here below what the process already holds), naming the agent.
func TestRunaway(t *testing.T) {
	for len(runaways) > 0 {
		<-runaways // earlier tests' watches
	}
	l := NewLoader()
	l.EvalMemory = 1
	l.LoadBytes("runaway.cue", disjunctions(9)) // runs well past the watch's first look
	for msg := range runaways {
		if strings.HasPrefix(msg, "runaway.cue: the evaluation of the manifest, given up, went on past the memory limit (0 MiB)") {
			return
		}
	}
}

// TestEvalMemory: past the memory bound (here below what the process
// already holds) a manifest is reported as too complex.
func TestEvalMemory(t *testing.T) {
	l := NewLoader()
	l.EvalMemory = 1
	inst := l.LoadBytes("bomb.cue", disjunctions(11))
	if len(inst.Errors) != 1 || inst.Errors[0].Code != CodeTooComplex || !strings.Contains(inst.Errors[0].Msg, "memory") {
		t.Fatalf("errors = %v, want one %s about memory", inst.Errors, CodeTooComplex)
	}
}

// TestEvalUnbounded: a negative EvalTimeout loads on the caller's
// goroutine with no bound.
func TestEvalUnbounded(t *testing.T) {
	l := NewLoader()
	l.EvalTimeout = -1
	l.EvalMemory = 1
	if inst := l.LoadBytes("ok.cue", []byte(validManifest)); len(inst.Errors) > 0 {
		t.Fatal(inst.Errors)
	}
}
