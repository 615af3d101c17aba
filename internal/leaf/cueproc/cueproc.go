// Package cueproc evaluates CUE over values agentc does not trust (a
// model's arguments and answers) in a child process of the program,
// bounded in CPU time, memory and wall time. CUE's evaluation cannot be
// cancelled, and a constraint that is quick on its own (a comprehension,
// list.Repeat, strings.Repeat) can take unbounded time and memory once
// unified with a value the model chose; a child can be killed. The
// program serves the child's side on a hidden verb (Serve); its parent
// side is Program.Run.
package cueproc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

// Verb is the hidden argument that makes agentc the child.
const Verb = "__cue-eval"

// The bounds of one evaluation.
const (
	// MaxInput is the most bytes of value a request may hand a child; a
	// larger one is not evaluated.
	MaxInput = 1 << 20
	// CPU is the CPU time a child may use (RLIMIT_CPU, where the system
	// has it).
	CPU = 5 * time.Second
	// Memory is the address space a child may map beyond what it holds
	// when it starts (RLIMIT_AS, set to the two together), on Linux: a
	// system that does not say what a process holds gets no memory limit,
	// the CPU and wall-time bounds alone.
	Memory = 2 << 30
	// Wall is how long a child may take, whatever it is doing.
	Wall = 20 * time.Second
	// maxOutput bounds what the parent reads back.
	maxOutput = 4 << 20
)

// Program is how to start the child: a program and the arguments that
// reach Serve (Args[0] is the name it is run as).
type Program struct {
	Path string
	Args []string
}

// Self is this program as the child: its executable, run with Verb.
func Self() (Program, error) {
	exe, err := os.Executable()
	if err != nil {
		return Program{}, fmt.Errorf("cannot start a child to evaluate CUE: %w", err)
	}
	return Program{Path: exe, Args: []string{os.Args[0], Verb}}, nil
}

// BoundError says an evaluation did not end within its bounds, or its
// child failed: nothing was decided.
type BoundError struct{ Msg string }

func (e *BoundError) Error() string { return e.Msg }

type request struct {
	Job string          `json:"job"`
	In  json.RawMessage `json:"in"`
}

type response struct {
	Out   json.RawMessage `json:"out,omitempty"`
	Error string          `json:"error,omitempty"`
}

// Run evaluates job over in (encoded as JSON) in a child, and decodes
// what it answers into out. The child is killed when ctx ends or Wall
// passes; an evaluation that does not end within its bounds, or whose
// child fails, is a *BoundError.
func (p Program) Run(ctx context.Context, job string, in, out any) error {
	if p.Path == "" {
		return &BoundError{Msg: "no program to evaluate CUE in"}
	}
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	if len(data) > MaxInput+64<<10 {
		return &BoundError{Msg: fmt.Sprintf("the value is larger than CUE is evaluated over (%d bytes)", MaxInput)}
	}
	req, err := json.Marshal(request{Job: job, In: data})
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, Wall)
	defer cancel()
	cmd := exec.CommandContext(wctx, p.Path)
	if len(p.Args) > 0 {
		cmd.Args = p.Args
	}
	cmd.Env = []string{}
	// Nothing of the environment but what a test build reads: where its
	// coverage goes, and the race detector's options (without which a
	// race-built child sleeps a second as it exits).
	for _, name := range []string{"GOCOVERDIR", "GORACE"} {
		if v, ok := os.LookupEnv(name); ok {
			cmd.Env = append(cmd.Env, name+"="+v)
		}
	}
	cmd.Stdin = bytes.NewReader(req)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &limited{w: &stdout, n: maxOutput}
	cmd.Stderr = &limited{w: &stderr, n: 4 << 10}
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("the evaluation was stopped: %w", ctx.Err())
	case wctx.Err() != nil:
		return &BoundError{Msg: fmt.Sprintf("the evaluation did not end within its bounds (%s of wall time)", Wall)}
	case err != nil:
		bounds := fmt.Sprintf("%s of CPU time", CPU)
		if memoryBounded() {
			bounds += fmt.Sprintf(", %d MiB of memory beyond the child's start", Memory>>20)
		}
		msg := fmt.Sprintf("the evaluation did not end within its bounds (%s), or its child failed: %v", bounds, err)
		if line := firstLine(stderr.Bytes()); line != "" {
			msg += fmt.Sprintf(" (%q)", line)
		}
		return &BoundError{Msg: msg}
	}
	var r response
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		return &BoundError{Msg: fmt.Sprintf("the evaluation's answer is not readable: %v", err)}
	}
	if r.Error != "" {
		return &BoundError{Msg: r.Error}
	}
	return json.Unmarshal(r.Out, out)
}

// Job is the child's side of one kind of evaluation: it decodes in and
// returns what to answer.
type Job func(in json.RawMessage) (any, error)

// ServeChild makes this process the child when it was started as one
// (its first argument is Verb): it serves jobs on standard input and
// output and exits. A program that links its own main, such as a test
// binary, calls it first; agentc serves Verb as a hidden command instead.
func ServeChild(jobs map[string]Job) {
	if len(os.Args) < 2 || os.Args[1] != Verb {
		return
	}
	if err := Serve(os.Stdin, os.Stdout, jobs); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Serve is the child: it limits its own CPU time and memory, reads one
// request from r, runs the job it names and writes the answer to w.
func Serve(r io.Reader, w io.Writer, jobs map[string]Job) error {
	if err := limit(); err != nil {
		return err
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxInput+128<<10))
	if err != nil {
		return err
	}
	var req request
	if err := json.Unmarshal(data, &req); err != nil {
		return fmt.Errorf("%s: the request is not readable: %w", Verb, err)
	}
	var resp response
	job, ok := jobs[req.Job]
	if !ok {
		resp.Error = fmt.Sprintf("no evaluation %q", req.Job)
	} else if out, err := job(req.In); err != nil {
		resp.Error = err.Error()
	} else if resp.Out, err = json.Marshal(out); err != nil {
		resp.Error = err.Error()
	}
	return json.NewEncoder(w).Encode(resp)
}

// firstLine is the first line of what a child wrote to its standard error
// (where Go's runtime says why it ended the child: "runtime: out of memory:
// cannot allocate ..."), at most 200 bytes of it.
func firstLine(b []byte) string {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	b = bytes.TrimSpace(b)
	if len(b) > 200 {
		b = b[:200]
	}
	return string(b)
}

// limited writes at most n bytes to w, dropping the rest.
type limited struct {
	w io.Writer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if len(p) > l.n {
		l.w.Write(p[:l.n])
		l.n = 0
		return len(p), nil
	}
	l.n -= len(p)
	return l.w.Write(p)
}
