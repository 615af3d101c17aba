//go:build unix

package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/creack/pty"
	"github.com/rogpeppe/go-internal/testscript"
)

// ptyExec runs a program of the script with its standard input and error
// on a pseudo terminal, as a person runs it, and answers its approval
// prompts with the lines of a file, one a prompt; standard output is
// the command's, and what the terminal showed (the prompts, the answers
// echoed, the program's stderr) is its stderr. With -stdout, standard
// output is on the terminal too. With -ahead N, the first N lines are
// typed at once, before any prompt is shown, as a person types ahead;
// a line holding \n (those two characters) is typed as several lines at
// once. With -cols N the terminal is N columns wide and 24 lines high
// (else it has no size, and a batch draws no bar on it). Usage:
//
//	ptyexec [-stdout] [-cols N] [-ahead N] ANSWERS-FILE PROGRAM [ARGS...]
func ptyExec(ts *testscript.TestScript, neg bool, args []string) {
	const usage = "usage: ptyexec [-stdout] [-cols N] [-ahead N] ANSWERS-FILE PROGRAM [ARGS...]"
	onTerminal := len(args) > 0 && args[0] == "-stdout"
	if onTerminal {
		args = args[1:]
	}
	cols := 0
	if len(args) > 1 && args[0] == "-cols" {
		n, err := strconv.Atoi(args[1])
		if err != nil || n <= 0 || n > 1000 {
			ts.Fatalf("%s", usage)
		}
		cols, args = n, args[2:]
	}
	ahead := 0
	if len(args) > 1 && args[0] == "-ahead" {
		n, err := strconv.Atoi(args[1])
		if err != nil || n < 0 {
			ts.Fatalf("%s", usage)
		}
		ahead, args = n, args[2:]
	}
	if len(args) < 2 {
		ts.Fatalf("%s", usage)
	}
	answers := strings.Split(strings.TrimRight(ts.ReadFile(args[0]), "\n"), "\n")
	for i := range answers {
		answers[i] = strings.ReplaceAll(answers[i], `\n`, "\n")
	}
	if ahead > len(answers) {
		ts.Fatalf("ptyexec: -ahead %d, and %s has %d lines", ahead, args[0], len(answers))
	}
	typed := ""
	for _, a := range answers[:ahead] {
		typed += a + "\n"
	}
	answers = answers[ahead:]
	prog := ""
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		if p := filepath.Join(dir, args[1]); fileExists(p) {
			prog = p
			break
		}
	}
	if prog == "" {
		ts.Fatalf("ptyexec: no program %s on the script's PATH", args[1])
	}
	ptmx, tty, err := pty.Open()
	ts.Check(err)
	defer ptmx.Close()
	if cols > 0 {
		ts.Check(pty.Setsize(ptmx, &pty.Winsize{Rows: 24, Cols: uint16(cols)}))
	}
	cmd := exec.Command(prog, args[2:]...)
	cmd.Dir = ts.Getenv("WORK")
	for _, v := range []string{"PATH", "HOME", "TMPDIR", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "GOCOVERDIR"} {
		if val := ts.Getenv(v); val != "" {
			cmd.Env = append(cmd.Env, v+"="+val)
		}
	}
	var stdout bytes.Buffer
	cmd.Stdin, cmd.Stderr, cmd.Stdout = tty, tty, &stdout
	if onTerminal {
		cmd.Stdout = tty
	}
	if typed != "" {
		// Typed before the program reads: the terminal holds it.
		_, err := io.WriteString(ptmx, typed)
		ts.Check(err)
	}
	ts.Check(cmd.Start())
	tty.Close()

	var mu sync.Mutex
	var shown bytes.Buffer
	done := make(chan struct{})
	more := make(chan struct{}, 1) // something more was shown
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			mu.Lock()
			shown.Write(buf[:n])
			mu.Unlock()
			select {
			case more <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	// Each prompt gets the next answer once it is shown.
	go func() {
		next := 0
		for next < len(answers) {
			mu.Lock()
			prompts := strings.Count(shown.String(), "approve? ")
			mu.Unlock()
			if prompts > next {
				if _, err := io.WriteString(ptmx, answers[next]+"\n"); err != nil {
					return
				}
				next++
				continue
			}
			select {
			case <-done:
				return
			case <-more:
			}
		}
	}()
	werr := cmd.Wait()
	<-done
	ts.Stdout().Write(stdout.Bytes())
	mu.Lock()
	ts.Stderr().Write(bytes.ReplaceAll(shown.Bytes(), []byte("\r\n"), []byte("\n")))
	mu.Unlock()
	var xe *exec.ExitError
	if werr != nil && !errors.As(werr, &xe) {
		ts.Fatalf("ptyexec: %v", werr)
	}
	if failed := werr != nil; failed != neg {
		ts.Fatalf("ptyexec %s: %v (negated: %v)", args[1], werr, neg)
	}
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}
