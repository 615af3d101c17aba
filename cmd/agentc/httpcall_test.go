package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	nethttp "net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"agentc.dev/agentc/internal/await"
)

// readyURL is the script command readyurl FILE: it waits, up to 60 s, for
// a server's --ready-file, and sets $SERVE_URL to the URL it holds.
func readyURL(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: readyurl FILE")
	}
	b, err := await.File(ts.MkAbs(args[0]), regexp.MustCompile(`^http://\S+\n$`).Match, 60*time.Second)
	if err != nil {
		ts.Fatalf("readyurl: %s: %v", args[0], err)
	}
	ts.Setenv("SERVE_URL", strings.TrimSpace(string(b)))
}

// httpCall is the script command
//
//	http [-notoken] [-token T] [-sse] [-mcp] [-H NAME:VALUE]... [-until STATUS] [-to FILE] METHOD PATH [BODYFILE]
//
// It makes a request of the server at $SERVE_URL, with the bearer token
// of $AGENTC_SERVE_TOKEN (-token: another; -notoken: none), and prints
// "status: N", "run: ID" when the answer names a run, "session: ID" when
// it names an MCP session (Mcp-Session-Id), and the body. -sse asks for
// an event stream; -mcp sends what MCP's streamable HTTP transport wants
// of a POST (JSON, answered as JSON or an event stream); -H sets a header.
// -until asks again, at once, until the answer's status is STATUS (within
// the command's bound), and prints the last answer: for what a server
// does just after a client has seen an effect of it. -to makes the request in the background and writes the same, as it
// arrives, to FILE (waitfor reads it); the script waits for it at its end.
// -stall N (with -to) sends a body that says it is N bytes long but is
// only BODYFILE, and no more: a client whose body stopped coming. It asks
// to continue (Expect: 100-continue), and writes "continue" to FILE once
// told to, which a server tells as it begins to read the body.
// -drop REGEXP (with -to) goes away once what came matches REGEXP: the
// request is cancelled and its connection closed, as a client that
// leaves does.
func httpCall(ts *testscript.TestScript, neg bool, args []string) {
	fs := flag.NewFlagSet("http", flag.ContinueOnError)
	notoken := fs.Bool("notoken", false, "")
	token := fs.String("token", "", "")
	sse := fs.Bool("sse", false, "")
	mcp := fs.Bool("mcp", false, "")
	to := fs.String("to", "", "")
	until := fs.Int("until", 0, "")
	stall := fs.Int64("stall", 0, "")
	drop := fs.String("drop", "", "")
	var headers []string
	fs.Func("H", "", func(v string) error { headers = append(headers, v); return nil })
	var fields []string
	fs.Func("F", "", func(v string) error { fields = append(fields, v); return nil })
	if err := fs.Parse(args); err != nil || neg || fs.NArg() < 2 || fs.NArg() > 3 || len(fields) > 0 && fs.NArg() == 3 {
		ts.Fatalf("usage: http [-notoken] [-token T] [-sse] [-mcp] [-H NAME:VALUE]... [-until STATUS] [-to FILE [-stall N] [-drop REGEXP]] [-F NAME=VALUE|NAME=@FILE[;filename=SENT]]... METHOD PATH [BODYFILE]")
	}
	if *until != 0 && *to != "" {
		ts.Fatalf("http: -until goes without -to")
	}
	if *stall != 0 && (*to == "" || fs.NArg() != 3) {
		ts.Fatalf("http: -stall goes with -to and a BODYFILE")
	}
	var dropAt *regexp.Regexp
	if *drop != "" {
		if *to == "" {
			ts.Fatalf("http: -drop goes with -to")
		}
		var err error
		if dropAt, err = regexp.Compile(*drop); err != nil {
			ts.Fatalf("http: -drop: %v", err)
		}
	}
	base := ts.Getenv("SERVE_URL")
	if base == "" {
		ts.Fatalf("http: no $SERVE_URL: run readyurl first")
	}
	var payload []byte
	if fs.NArg() == 3 {
		b, err := os.ReadFile(ts.MkAbs(fs.Arg(2)))
		ts.Check(err)
		payload = b
	}
	contentType := ""
	if len(fields) > 0 {
		// A multipart form, as curl -F sends one.
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		for _, fl := range fields {
			name, v, _ := strings.Cut(fl, "=")
			if file, ok := strings.CutPrefix(v, "@"); ok {
				// NAME=@FILE;filename=SENT sends SENT as the file's
				// name, as curl does.
				file, sent, named := strings.Cut(file, ";filename=")
				if !named {
					sent = filepath.Base(file)
				}
				data, err := os.ReadFile(ts.MkAbs(file))
				ts.Check(err)
				w, err := mw.CreateFormFile(name, sent)
				ts.Check(err)
				w.Write(data)
			} else {
				ts.Check(mw.WriteField(name, v))
			}
		}
		ts.Check(mw.Close())
		payload, contentType = b.Bytes(), mw.FormDataContentType()
	}
	// A bound, not a measure: a server that never answers fails the
	// script instead of hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := nethttp.NewRequestWithContext(ctx, fs.Arg(0), base+fs.Arg(1), body)
	ts.Check(err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	tok := ts.Getenv("AGENTC_SERVE_TOKEN")
	if *token != "" {
		tok = *token
	}
	if !*notoken {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if *sse {
		req.Header.Set("Accept", "text/event-stream")
	}
	if *mcp {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	for _, h := range headers {
		name, v, ok := strings.Cut(h, ":")
		if !ok {
			ts.Fatalf("http: -H %q: want NAME: VALUE", h)
		}
		req.Header.Set(strings.TrimSpace(name), strings.TrimSpace(v))
	}
	do := func(w io.Writer) error {
		resp, err := nethttp.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if *until != 0 && resp.StatusCode != *until {
			// Once more, as it was.
			io.Copy(io.Discard, resp.Body)
			if payload != nil {
				req.Body = io.NopCloser(bytes.NewReader(payload))
			}
			return errAgain
		}
		fmt.Fprintf(w, "status: %d\n", resp.StatusCode)
		if id := resp.Header.Get("Agentc-Run-Id"); id != "" {
			fmt.Fprintf(w, "run: %s\n", id)
		}
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
			fmt.Fprintf(w, "session: %s\n", id)
		}
		_, err = io.Copy(w, resp.Body)
		return err
	}
	if *to == "" {
		defer cancel()
		var out strings.Builder
		err := do(&out)
		for errors.Is(err, errAgain) {
			err = do(&out)
		}
		if err != nil {
			ts.Fatalf("http: %v", err)
		}
		fmt.Fprint(ts.Stdout(), out.String())
		return
	}
	f, err := os.Create(ts.MkAbs(*to))
	ts.Check(err)
	if *stall != 0 {
		req.ContentLength = *stall
		req.Body, req.GetBody = &stalledBody{head: payload, ctx: ctx}, nil
		req.Header.Set("Expect", "100-continue")
		req = req.WithContext(httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
			Got100Continue: func() { fmt.Fprintln(f, "continue") },
		}))
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer f.Close()
		var w io.Writer = f
		if dropAt != nil {
			w = &dropper{w: f, re: dropAt, cancel: cancel}
		}
		if err := do(w); err != nil {
			fmt.Fprintf(w, "\nerror: %v\n", err)
		}
		fmt.Fprintf(w, "\nended\n")
	}()
	ts.Defer(func() { cancel(); wg.Wait() })
}

// dropper is http -drop's writer: it writes on to w, and cancels the
// request once what it wrote matches re.
type dropper struct {
	w      io.Writer
	re     *regexp.Regexp
	cancel context.CancelFunc
	seen   []byte
}

func (d *dropper) Write(p []byte) (int, error) {
	n, err := d.w.Write(p)
	d.seen = append(d.seen, p[:n]...)
	if d.re.Match(d.seen) {
		d.cancel()
	}
	return n, err
}

// stalledBody is http -stall's body: its head, then nothing until the
// command's context ends.
type stalledBody struct {
	head []byte
	ctx  context.Context
}

func (b *stalledBody) Read(p []byte) (int, error) {
	if len(b.head) > 0 {
		n := copy(p, b.head)
		b.head = b.head[n:]
		return n, nil
	}
	<-b.ctx.Done()
	return 0, b.ctx.Err()
}

func (b *stalledBody) Close() error { return nil }

// errAgain says an answer was not the one http -until waits for.
var errAgain = errors.New("not yet")

// httpWait is the script command httpwait PATH REGEXP: it GETs PATH of
// the server at $SERVE_URL, with the token, until the body matches, up
// to 60 s: for what a server does in the background (a resumed run).
func httpWait(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: httpwait PATH REGEXP")
	}
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(60 * time.Second)
	var last []byte
	for {
		req, err := nethttp.NewRequest(nethttp.MethodGet, ts.Getenv("SERVE_URL")+args[0], nil)
		ts.Check(err)
		req.Header.Set("Authorization", "Bearer "+ts.Getenv("AGENTC_SERVE_TOKEN"))
		if resp, err := nethttp.DefaultClient.Do(req); err == nil {
			last, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if re.Match(last) {
				fmt.Fprintf(ts.Stdout(), "%s", last)
				return
			}
		}
		select {
		case <-tick.C:
		case <-deadline:
			ts.Fatalf("httpwait: %s did not match %q in 60 s; last: %s", args[0], args[1], last)
		}
	}
}

// fileGone is the script command filegone FILE: it waits, up to 60 s,
// until FILE no longer exists (a server's --ready-file, removed when it
// stops taking requests).
func fileGone(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: filegone FILE")
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(60 * time.Second)
	for {
		if _, err := os.Stat(ts.MkAbs(args[0])); os.IsNotExist(err) {
			return
		}
		select {
		case <-tick.C:
		case <-deadline:
			ts.Fatalf("filegone: %s still exists after 60 s", args[0])
		}
	}
}

// captureVar is the script command capture FILE REGEXP VAR: it sets $VAR
// to the first group of REGEXP's first match in FILE.
func captureVar(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: capture FILE REGEXP VAR")
	}
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	sc := bufio.NewScanner(strings.NewReader(ts.ReadFile(args[0])))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); len(m) > 1 {
			ts.Setenv(args[2], m[1])
			return
		}
	}
	ts.Fatalf("capture: nothing in %s matches %q", args[0], args[1])
}
