package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"agentc.dev/agentc/internal/await"
)

// mcpStdio is the script command
//
//	mcpstdio [-answers ANSWERS] REQUESTS FILE REGEXP ARGS...
//
// It is an MCP client of agentc ARGS... (agentc serve over stdio), started
// in the script's directory: it sends the lines of REQUESTS, JSON-RPC
// messages, one a line, waiting for the answer to an initialize before
// it sends the next line and for no other; waits, up to 60 s, until FILE
// matches REGEXP (a tool saying it runs), or with FILE -, until a line
// the server wrote does; sends the server SIGTERM; and reads what the
// server writes until it ends. With -answers, the server's Nth
// elicitation/create request is answered, as it comes, by the Nth line of
// ANSWERS: the members of a JSON-RPC response but its version and id
// ({"result":...} or {"error":...}), written as they stand, so a line may
// hold what an encoder would not (a member twice). It prints each line
// the server wrote to standard output, then "exit: N", the server's exit
// code, and the server's standard error to standard error. The server's
// environment is PATH, HOME, TMPDIR and the fake provider's variables.
func mcpStdio(ts *testscript.TestScript, neg bool, args []string) {
	var answers []string
	if len(args) > 1 && args[0] == "-answers" {
		answers = strings.Split(strings.TrimSpace(ts.ReadFile(args[1])), "\n")
		args = args[2:]
	}
	if neg || len(args) < 4 {
		ts.Fatalf("usage: mcpstdio [-answers ANSWERS] REQUESTS FILE REGEXP ARGS...")
	}
	re, err := regexp.Compile(args[2])
	ts.Check(err)
	prog, err := exec.LookPath("agentc")
	ts.Check(err)
	cmd := exec.Command(prog, args[3:]...)
	cmd.Dir = ts.MkAbs(".")
	var env []string
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "AGENTC_PRICES_MAX_AGE", "GORACE"} {
		env = append(env, k+"="+ts.Getenv(k))
	}
	for _, k := range []string{"OPENAI_BASE_URL", "OPENAI_API_KEY"} {
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v) // fakeprovider's
		}
	}
	cmd.Env = env
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	ts.Check(err)
	stdout, err := cmd.StdoutPipe()
	ts.Check(err)
	ts.Check(cmd.Start())
	// The requests and the answers to the server's requests are written
	// by two goroutines, a line each time.
	var stdinMu sync.Mutex
	send := func(line string) error {
		stdinMu.Lock()
		defer stdinMu.Unlock()
		_, err := fmt.Fprintln(stdin, line)
		return err
	}
	// What the server writes, a line at a time, as it comes; once it has
	// closed its standard output, how it ended. A script that fails
	// before reading it all kills it.
	lines := make(chan string)
	exited, quit := make(chan struct{}), make(chan struct{})
	var waitErr error
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		asked := 0
		for sc.Scan() {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if answers != nil && json.Unmarshal(sc.Bytes(), &m) == nil && m.Method == "elicitation/create" && len(m.ID) > 0 && asked < len(answers) {
				a := strings.TrimSpace(answers[asked])
				asked++
				_ = send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,%s`, m.ID, strings.TrimPrefix(a, "{")))
			}
			select {
			case lines <- sc.Text():
			case <-quit:
			}
		}
		close(lines)
		waitErr = cmd.Wait()
	}()
	ts.Defer(func() {
		close(quit)
		_ = cmd.Process.Kill()
		<-exited
	})
	var got []string
	// A bound, not a measure: a server that never answers fails the
	// script instead of hanging it.
	bound := time.After(60 * time.Second)
	next := func() (string, bool) {
		select {
		case l, ok := <-lines:
			if ok {
				got = append(got, l)
			}
			return l, ok
		case <-bound:
			ts.Fatalf("mcpstdio: the server wrote nothing more in 60 s; it wrote:\n%s\nstandard error:\n%s", strings.Join(got, "\n"), stderr.String())
			return "", false
		}
	}
	for _, req := range strings.Split(strings.TrimSpace(ts.ReadFile(args[0])), "\n") {
		if err := send(req); err != nil {
			ts.Fatalf("mcpstdio: writing to the server: %v", err)
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.Unmarshal([]byte(req), &m); err != nil {
			ts.Fatalf("mcpstdio: %s: %v", req, err)
		}
		if m.Method != "initialize" {
			continue
		}
		for {
			l, ok := next()
			if !ok {
				ts.Fatalf("mcpstdio: the server ended before it answered initialize: %s", stderr.String())
			}
			var r struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal([]byte(l), &r) == nil && bytes.Equal(r.ID, m.ID) {
				break
			}
		}
	}
	if args[1] == "-" {
		for {
			l, ok := next()
			if !ok {
				ts.Fatalf("mcpstdio: the server ended before it wrote a line matching %q: %s", args[2], stderr.String())
			}
			if re.MatchString(l) {
				break
			}
		}
	} else if _, err := await.File(ts.MkAbs(args[1]), re.Match, 60*time.Second); err != nil {
		ts.Fatalf("mcpstdio: %s did not match %q: %v", args[1], args[2], err)
	}
	ts.Check(cmd.Process.Signal(syscall.SIGTERM))
	for {
		if _, ok := next(); !ok {
			break
		}
	}
	<-exited
	stdin.Close()
	code := 0
	if ee, ok := waitErr.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if waitErr != nil {
		ts.Fatalf("mcpstdio: %v", waitErr)
	}
	for _, l := range got {
		fmt.Fprintln(ts.Stdout(), l)
	}
	fmt.Fprintf(ts.Stdout(), "exit: %d\n", code)
	fmt.Fprint(ts.Stderr(), stderr.String())
}

// lockedBuffer is a buffer a process writes while a test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
