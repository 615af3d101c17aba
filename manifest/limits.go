package manifest

import (
	"cmp"
	"fmt"
	"os"
	"runtime/metrics"
	"time"
)

// CodeTooComplex reports a manifest whose evaluation passed the loader's
// bounds on time or memory.
const CodeTooComplex = "MANIFEST_TOO_COMPLEX"

// Bounds on evaluating one agent; see Loader.EvalTimeout and
// Loader.EvalMemory.
const (
	// DefaultEvalTimeout bounds the time one agent's evaluation may take.
	// Every agent in examples/ loads in well under 100 ms.
	DefaultEvalTimeout = 10 * time.Second
	// DefaultEvalMemory bounds the Go heap while an agent is evaluated:
	// vetting every agent in examples/ stays under 100 MiB.
	DefaultEvalMemory = 2 << 30
)

// watchEvery is how often the heap is measured while an agent is
// evaluated.
const watchEvery = 20 * time.Millisecond

// heapMetric is the bytes of heap objects, live or not yet swept: what the
// process holds, read without stopping the world.
const heapMetric = "/memory/classes/heap/objects:bytes"

// bounded loads one unit within the loader's bounds. CUE cannot be
// interrupted while it evaluates (cuelang.org/go v0.17 has no limits and
// takes no context), so the unit is loaded on another goroutine (see
// evaluate), by a copy of the loader. When a bound is passed, that
// goroutine is abandoned: it runs on until it ends or the process exits,
// holding the CUE context it started with, and the loader goes on with a
// fresh context. The instance returned for the abandoned agent holds one
// CodeTooComplex error and no value, so no later check evaluates it again.
//
// Once the loader has abandoned an evaluation, it loads no other agent:
// each is reported not loaded, naming the agent given up on, at once. The
// abandoned goroutine goes on allocating, and the memory bound holds only
// while the process does little else; so which agents are vetted does not
// hang on how fast the runaway grows, and the command ends soon, with
// what it found before. Until that evaluation ends, the whole process's
// heap is watched (see Runaway), as a backstop for the little the command
// still does.
func (l *Loader) bounded(source string, files []string, load func(*Loader) *Instance) *Instance {
	if l.abandoned > 0 {
		return &Instance{Source: source, Files: files, Errors: []*Error{{Code: CodeTooComplex, Pos: filePos(files[0]),
			Msg: fmt.Sprintf("not loaded: the evaluation of %s passed a bound and was given up, and may still run; no agent after it is loaded, so that the bounds hold: make it simpler and check again", l.abandonedSource)}}}
	}
	if l.ctx == nil || l.built >= agentsPerContext {
		l.renew()
	}
	l.built++
	timeout := cmp.Or(l.EvalTimeout, DefaultEvalTimeout)
	if timeout < 0 {
		return load(l)
	}
	memory := cmp.Or(l.EvalMemory, DefaultEvalMemory)
	work := *l
	done := make(chan *Instance, 1)
	evaluate(func() { done <- load(&work) })
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	tick := time.NewTicker(watchEvery)
	defer tick.Stop()
	sample := []metrics.Sample{{Name: heapMetric}}
	for {
		select {
		case inst := <-done:
			l.module = work.module
			return inst
		case <-timer.C:
			go watchRunaway(source, memory, done)
			return l.abandon(source, files, fmt.Sprintf("evaluating the manifest took longer than %v and was given up: disjunctions that multiply, large comprehensions and values repeated by reference make CUE's work grow fast; write it more simply", timeout))
		case <-tick.C:
			metrics.Read(sample)
			if sample[0].Value.Kind() != metrics.KindUint64 || sample[0].Value.Uint64() <= memory {
				continue
			}
			why := fmt.Sprintf("evaluating the manifest needed more than %d MiB of memory and was given up: large comprehensions and values repeated by reference make CUE's work grow fast; write it more simply", memory>>20)
			go watchRunaway(source, memory, done)
			return l.abandon(source, files, why)
		}
	}
}

// Runaway is called, from another goroutine, when the process's heap
// passes an agent's memory bound while that agent's abandoned evaluation
// still runs: nothing else stops it. It writes msg and ends the process,
// exit 1; a test or a program embedding the loader may set another.
var Runaway = func(msg string) {
	fmt.Fprintln(os.Stderr, "agentc: "+msg)
	os.Exit(1)
}

// watchRunaway watches the process's heap until the abandoned evaluation
// of source ends (done), calling Runaway once it passes memory.
func watchRunaway(source string, memory uint64, done <-chan *Instance) {
	tick := time.NewTicker(watchEvery)
	defer tick.Stop()
	sample := []metrics.Sample{{Name: heapMetric}}
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 && sample[0].Value.Uint64() > memory {
				Runaway(fmt.Sprintf("%s: the evaluation of the manifest, given up, went on past the memory limit (%d MiB): ended; make it simpler and check again", source, memory>>20))
				return
			}
		}
	}
}

// evalIdle is how long an evaluator goroutine waits for another agent to
// load before it ends.
const evalIdle = 5 * time.Second

// evalJobs hands a job to an idle evaluator.
var evalJobs = make(chan func())

// evaluate runs job on an evaluator, a goroutine that runs bounded's loads
// one after another: an idle one if there is one, else a new one. CUE's
// evaluation recurses deeply, and growing a new goroutine's stack to fit
// it costs about a tenth of loading a small agent; an evaluator's stack
// has grown already. One left behind by a passed bound is busy, so the
// next load goes to another.
func evaluate(job func()) {
	select {
	case evalJobs <- job:
	default:
		go evaluator(job)
	}
}

func evaluator(job func()) {
	idle := time.NewTimer(evalIdle)
	defer idle.Stop()
	for {
		job()
		job = nil // what it holds is the loader's to keep, not ours
		idle.Reset(evalIdle)
		select {
		case job = <-evalJobs:
		case <-idle.C:
			return
		}
	}
}

// abandon replaces the loader's CUE context and module answers, which the
// abandoned goroutine goes on using, and returns the instance that reports
// why.
func (l *Loader) abandon(source string, files []string, why string) *Instance {
	l.renew()
	l.module = nil
	l.abandoned++
	if l.abandonedSource == "" {
		l.abandonedSource = source
	}
	return &Instance{Source: source, Files: files, Errors: []*Error{{Code: CodeTooComplex, Pos: filePos(files[0]), Msg: why}}}
}
