package runcmd

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"agentc.dev/agentc/runtime/filestore"
	"agentc.dev/agentc/runtime/tool"
)

// stopSignal is a signal that stops a run as an interrupt does, with the
// exit code of a run it stopped: 128 plus its number, as a shell reports
// a process the signal ended.
type stopSignal struct {
	sig  os.Signal
	name string
	code int
}

// stopSignals are the signals a run handles. Windows delivers SIGTERM
// when its console closes, and never SIGHUP.
var stopSignals = []stopSignal{
	{os.Interrupt, "SIGINT", 130},
	{syscall.SIGTERM, "SIGTERM", 143},
	{syscall.SIGHUP, "SIGHUP", 129},
}

// signals turns stop signals into the cancellation of a run.
type signals struct {
	ch     chan os.Signal
	done   chan struct{}
	exited chan struct{} // closed when the goroutine that waits on ch returns
	mu     sync.Mutex
	first  *stopSignal
	cancel context.CancelFunc
}

// onStopSignal returns ctx, cancelled at the first stop signal: the run
// stops at its next safe point, ending its tools' calls, and returns. In
// a program (Env.Program), a second stop signal kills the tools'
// processes and exits at once, with the first one's code.
func onStopSignal(ctx context.Context, e Env) (context.Context, *signals) {
	return onStopSignalSaying(ctx, e, "stopping the run")
}

// onStopSignalSaying is onStopSignal, saying what the first signal does.
func onStopSignalSaying(ctx context.Context, e Env, does string) (context.Context, *signals) {
	ctx, cancel := context.WithCancel(ctx)
	s := &signals{ch: make(chan os.Signal, 1), done: make(chan struct{}), exited: make(chan struct{}), cancel: cancel}
	notifyStop(s.ch)
	go func() {
		defer close(s.exited)
		var first stopSignal
		select {
		case got := <-s.ch:
			first = lookupSignal(got)
		case <-s.done:
			return
		}
		s.record(first)
		if e.Program {
			fmt.Fprintf(e.Stderr, "agentc: %s: %s (a second signal stops at once)\n", first.name, does)
		}
		cancel()
		if !e.Program {
			return
		}
		select {
		case got := <-s.ch:
			fmt.Fprintf(e.Stderr, "agentc: %s again: killing the tools' processes and exiting\n", lookupSignal(got).name)
			tool.KillProcesses()
			os.Exit(first.code)
		case <-s.done:
		}
	}()
	return ctx, s
}

// notifyStop relays the stop signals to ch. One the process started with
// ignored (nohup, a background job of a script) stays so.
func notifyStop(ch chan<- os.Signal) {
	for _, ss := range stopSignals {
		if !signal.Ignored(ss.sig) {
			signal.Notify(ch, ss.sig)
		}
	}
}

// record notes the first stop signal.
func (s *signals) record(first stopSignal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first == nil {
		s.first = &first
	}
}

// stop stops handling the signals: from then on they act as they would
// without a run. A signal that arrived before it is counted by code,
// even one the goroutine had not taken yet.
func (s *signals) stop() {
	signal.Stop(s.ch)
	close(s.done)
	<-s.exited
	select {
	case got := <-s.ch:
		s.record(lookupSignal(got))
	default:
	}
	s.cancel() // the context goes with the run, whatever its parent
}

// code is the exit code of the first stop signal received, or 0.
func (s *signals) code() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first == nil {
		return 0
	}
	return s.first.code
}

// OnStopSignal is for a command that makes many runs, one after another
// or at once (agentc test): the context it returns is cancelled at the
// first stop signal, and stderr told so, with does saying what that does;
// the runs made under it then stop as at their own signal, and a signal
// between two runs ends none of the command's work abruptly. stop stops
// handling the signals and returns the exit code of the first one
// received, 0 when none was; it may be called more than once.
func OnStopSignal(ctx context.Context, e Env, does string) (_ context.Context, stop func() int) {
	ctx, s := onStopSignalSaying(ctx, e, does)
	var once sync.Once
	return ctx, func() int {
		once.Do(s.stop)
		return s.code()
	}
}

func lookupSignal(sig os.Signal) stopSignal {
	for _, ss := range stopSignals {
		if ss.sig == sig {
			return ss
		}
	}
	return stopSignal{sig, sig.String(), exitInterrupted}
}

// whileStaging handles the stop signals while the files of a run's input
// are read into store, before the run begins and handles them itself. A
// file may be read from standard input, which nothing interrupts: a
// signal then removes the files staged and not yet stored, so that none
// is left in the store's directory, calls cleanup (which removes a
// store of the run's own) and exits with its code. Outside a program
// (Env.Program), or without a store, it does nothing. end stops handling
// the signals.
func whileStaging(e Env, store *filestore.Store, cleanup func()) (end func()) {
	if !e.Program || store == nil {
		return func() {}
	}
	ch := make(chan os.Signal, 1)
	notifyStop(ch)
	stopNow := func(got os.Signal) {
		sig := lookupSignal(got)
		store.DiscardStaged()
		cleanup()
		fmt.Fprintf(e.Stderr, "agentc: %s: stopped while reading the input's files, before the run\n", sig.name)
		os.Exit(sig.code)
	}
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		select {
		case got := <-ch:
			stopNow(got)
		case <-done:
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
		<-exited
		select {
		case got := <-ch: // one that came as the reading ended
			stopNow(got)
		default:
		}
	}
}
