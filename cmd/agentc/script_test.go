package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	nethttp "net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"agentc.dev/agentc/internal/await"
	"agentc.dev/agentc/internal/cli"
	"agentc.dev/agentc/internal/cli/cuecmd"
	"agentc.dev/agentc/internal/devserver"
	"agentc.dev/agentc/internal/leaf/cueproc"
	"agentc.dev/agentc/internal/runcmd"
	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/runtime/journal"
)

func TestMain(m *testing.M) {
	// The tests that run agentc in this process (cli.Run) check
	// constraints in children of this program, as agentc does in children
	// of itself: the test binary serves them too.
	if len(os.Args) > 1 && os.Args[1] == cueproc.Verb {
		os.Exit(cli.Main(cuecmd.Compiler()))
	}
	testscript.Main(m, map[string]func(){
		// The two programs, as their mains run them, installed on PATH.
		"agentc":              func() { os.Exit(cli.Main(cuecmd.Compiler())) },
		runcmd.RuntimeProgram: func() { os.Exit(runcmd.Main()) },
		"docs-mcp-server":     docsServer,
		"tcpconnect":          tcpConnect,
		"nolandlock":          nolandlock,
		"nouserns":            nouserns,
		"noseccomp":           noseccomp,
		"noipcns":             noipcns,
		"nomountsetattr":      nomountsetattr,
		"hupdefault":          hupdefault,
	})
}

// TestScripts runs the CLI scenarios in testdata/script. Set AGENTC_UPDATE=1
// to rewrite their expected output after a deliberate change.
func TestScripts(t *testing.T) {
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	docs, err := filepath.Abs("../../docs")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       *update,
		Setup: func(e *testscript.Env) error {
			e.Setenv("EXAMPLES", examples)
			e.Setenv("DOCS", docs)
			// The built-in price table's age depends on the day the
			// scripts run: no script sees its warning unless it asks
			// (price-date.txtar).
			e.Setenv("AGENTC_PRICES_MAX_AGE", "0")
			// A program built with the race detector sleeps a second as
			// it exits (GORACE's atexit_sleep_ms), and the scripts run
			// agentc more than a thousand times: none of them waits.
			// Races are still reported, and fail the command.
			gorace := "atexit_sleep_ms=0"
			if v, ok := os.LookupEnv("GORACE"); ok {
				gorace = v
			}
			e.Setenv("GORACE", gorace)
			mcpInspectorSetup(e)
			return nil
		},
		// [temporal]: the temporal program is there to start a dev server
		// with, or it must be (AGENTC_REQUIRE_TEMPORAL), so that a script
		// fails for its lack rather than skips. [chromium]: the same for a
		// browser (AGENTC_REQUIRE_CHROMIUM); [otelcol] for an OpenTelemetry
		// Collector (AGENTC_REQUIRE_OTELCOL); [mcpinspector] for the MCP
		// Inspector (AGENTC_REQUIRE_MCP_INSPECTOR: an error where it is
		// missing).
		Condition: func(cond string) (bool, error) {
			if cond == "mcpinspector" {
				return mcpInspectorCondition()
			}
			if cond == "chromium" {
				return chromiumCondition(), nil
			}
			if cond == "otelcol" {
				return otelcolCondition(), nil
			}
			if cond == "landlock" || cond == "landlocktcp" || cond == "userns" {
				return confineCondition(cond), nil
			}
			if cond == "refuse" {
				return refuseCondition(), nil
			}
			if cond != "temporal" {
				return false, fmt.Errorf("unknown condition %q", cond)
			}
			prog, why := devserver.Program()
			if prog == "" && os.Getenv("AGENTC_REQUIRE_TEMPORAL") == "" {
				fmt.Fprintf(os.Stderr, "SKIPPED: scripts that need a Temporal dev server: %s\n", why)
				return false, nil
			}
			return true, nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"fakeprovider": fakeProvider,
			// readyurl, http and capture talk to agentc serve --http (see
			// httpcall_test.go).
			"readyurl":    readyURL,
			"http":        httpCall,
			"capture":     captureVar,
			"httpwait":    httpWait,
			"filegone":    fileGone,
			"tcplisten":   tcpListen,
			"tcpaccepted": tcpAccepted,
			"procgone":    procGone,
			"screenshot":  screenshot,
			"dom":         dom,
			"ptyexec":     ptyExec,
			// otlpreceiver starts a collector that takes OTLP over HTTP
			// (see otlp_test.go).
			"otlpreceiver": otlpReceiver,
			// otelcol starts a real OpenTelemetry Collector, and otelcolwait
			// reads back what it wrote (see otelcol_test.go).
			"otelcol":     otelcolStart,
			"otelcolwait": otelcolWait,
			// mcptool and mcpresult check what an MCP client printed of
			// tools/list and tools/call, and servehttp starts agentc serve
			// --http (see inspector_test.go).
			"mcptool":   mcpTool,
			"mcpresult": mcpResult,
			"servehttp": serveHTTP,
			// mcpstdio is an MCP client of agentc serve over stdio that
			// stops the server while its calls run (see mcpstdio_test.go).
			"mcpstdio": mcpStdio,
			// temporal starts a Temporal dev server for the script, stopped
			// when it ends, and sets $TEMPORAL to its address and
			// $TEMPORAL_CLI to the temporal program. Scripts that
			// use it skip first where the [temporal] condition is false.
			"temporal": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 0 {
					ts.Fatalf("usage: temporal")
				}
				s, err := devserver.New()
				if err != nil {
					ts.Fatalf("the Temporal dev server: %v", err)
				}
				ts.Defer(s.Stop)
				ts.Setenv("TEMPORAL", s.HostPort)
				prog, _ := devserver.Program()
				ts.Setenv("TEMPORAL_CLI", prog)
			},
			// cue ARGS... runs the cue command of the CUE version agentc
			// builds with (built the first time, see tools_test.go).
			"cue": func(ts *testscript.TestScript, neg bool, args []string) {
				prog, err := cueTool.program()
				if err != nil {
					ts.Fatalf("the cue command: %v", err)
				}
				err = ts.Exec(prog, args...)
				if err != nil && !neg {
					ts.Fatalf("cue %s: %v", strings.Join(args, " "), err)
				}
				if err == nil && neg {
					ts.Fatalf("cue %s: unexpected success", strings.Join(args, " "))
				}
			},
			// serve FILE... starts an HTTP server on loopback that answers
			// every request with a JSON echo of its method, path and body
			// (and its Authorization header, where it has one), but a GET of /file/NAME with the script's file NAME, and
			// writes its URL over "http://SERVER" in the files.
			"serve": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) == 0 {
					ts.Fatalf("usage: serve FILE...")
				}
				srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
					if name, ok := strings.CutPrefix(r.URL.Path, "/file/"); ok && r.Method == nethttp.MethodGet {
						data, _ := os.ReadFile(ts.MkAbs(name))
						_, _ = w.Write(data)
						return
					}
					body, _ := io.ReadAll(r.Body)
					w.Header().Set("Content-Type", "application/json")
					echo := map[string]string{"method": r.Method, "path": r.URL.Path, "body": string(body)}
					if a := r.Header.Get("Authorization"); a != "" {
						// As a debugging endpoint would: the request's
						// credential, quoted back.
						echo["authorization"] = a
					}
					_ = json.NewEncoder(w).Encode(echo)
				}))
				ts.Defer(srv.Close)
				for _, f := range args {
					data, err := os.ReadFile(ts.MkAbs(f))
					ts.Check(err)
					ts.Check(os.WriteFile(ts.MkAbs(f), bytes.ReplaceAll(data, []byte("http://SERVER"), []byte(srv.URL)), 0o644))
				}
			},
			// redirect [-chain] CODE port|host|scheme VAR FILE... starts an
			// HTTP server on loopback that answers every request with a
			// redirect CODE to the origin $VAR names (a fake provider's base
			// URL) on another port (its own), another host (localhost for
			// 127.0.0.1) or another scheme (https), the request's path kept;
			// with -chain, first to /hop on its own origin. It writes its URL
			// over "http://REDIRECT" in the files.
			"redirect": func(ts *testscript.TestScript, neg bool, args []string) {
				chain := len(args) > 0 && args[0] == "-chain"
				if chain {
					args = args[1:]
				}
				if neg || len(args) < 3 {
					ts.Fatalf("usage: redirect [-chain] CODE port|host|scheme VAR FILE...")
				}
				code, err := strconv.Atoi(args[0])
				ts.Check(err)
				to, err := url.Parse(ts.Getenv(args[2]))
				ts.Check(err)
				switch args[1] {
				case "port":
				case "host":
					to.Host = strings.Replace(to.Host, "127.0.0.1", "localhost", 1)
				case "scheme":
					to.Scheme = "https"
				default:
					ts.Fatalf("redirect: %q is not port, host or scheme", args[1])
				}
				var srv *httptest.Server
				srv = httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
					if chain && !strings.HasPrefix(r.URL.Path, "/hop/") {
						nethttp.Redirect(w, r, srv.URL+"/hop"+r.URL.Path, code)
						return
					}
					nethttp.Redirect(w, r, to.Scheme+"://"+to.Host+strings.TrimPrefix(r.URL.Path, "/hop"), code)
				}))
				ts.Defer(srv.Close)
				for _, f := range args[3:] {
					data, err := os.ReadFile(ts.MkAbs(f))
					ts.Check(err)
					ts.Check(os.WriteFile(ts.MkAbs(f), bytes.ReplaceAll(data, []byte("http://REDIRECT"), []byte(srv.URL)), 0o644))
				}
			},
			// killstaging DIR PROG ARGS... starts PROG ARGS... with a
			// standard input that sends a PDF's first bytes and then never
			// ends, waits until a file being staged in the file store DIR
			// holds those bytes, and kills PROG outright (SIGKILL): a
			// process killed while it stages a file.
			"killstaging": killStaging,
			// waitfor FILE REGEXP waits, up to 60 s (a loaded machine is slow), until the file
			// matches: for synchronising with a command in the background. It waits on the
			// writes to the file's directory (package await), not for a while.
			"waitfor": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 2 {
					ts.Fatalf("usage: waitfor FILE REGEXP")
				}
				re, err := regexp.Compile(args[1])
				if err != nil {
					ts.Fatalf("waitfor: %v", err)
				}
				if _, err := await.File(ts.MkAbs(args[0]), re.Match, 60*time.Second); err != nil {
					ts.Fatalf("waitfor: %s did not match %q: %v", args[0], args[1], err)
				}
			},
			// gone FILE waits, up to 10 s, until the process whose pid the
			// file holds has ended: it no longer exists, or is a zombie
			// (which PID 1 in a container may never reap). With !, it
			// checks at once that the process runs.
			"gone": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 1 {
					ts.Fatalf("usage: gone PIDFILE")
				}
				pid, err := strconv.Atoi(strings.TrimSpace(ts.ReadFile(args[0])))
				if err != nil || pid <= 0 {
					ts.Fatalf("gone: no pid in %s", args[0])
				}
				if neg {
					if ended(pid) {
						ts.Fatalf("process %d has ended", pid)
					}
					return
				}
				if err := await.ProcessEnd(pid, 10*time.Second); err != nil {
					ts.Fatalf("gone: %v", err)
				}
			},
			// samejson A B FIELD... checks that two JSON objects have equal
			// values (compared as JSON) in the named top-level fields.
			"samejson": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) < 3 {
					ts.Fatalf("usage: samejson A B FIELD...")
				}
				var a, b map[string]any
				ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[0])), &a))
				ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[1])), &b))
				for _, f := range args[2:] {
					va, _ := json.Marshal(a[f])
					vb, _ := json.Marshal(b[f])
					if same := string(va) == string(vb) && a[f] != nil; same == neg {
						ts.Fatalf("field %s: %s and %s", f, va, vb)
					}
				}
			},
			// editplan PLAN FIELD JSON sets the value at a dotted path of a
			// plan file (agent.capabilities.tools.docs.root), keeping the
			// digests it records, as a hand edit does; reseal PLAN FIELD
			// JSON then seals the plan again with the plan package's own
			// digests, as anyone who can write a plan can.
			"editplan": func(ts *testscript.TestScript, neg bool, args []string) { editPlan(ts, neg, args, false) },
			"reseal":   func(ts *testscript.TestScript, neg bool, args []string) { editPlan(ts, neg, args, true) },
			// pluck FILE FIELD OUT writes the top-level FIELD of each JSON
			// line of FILE to OUT, one a line, its bytes as they stand:
			// for comparing what two runs sent.
			"pluck": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 3 {
					ts.Fatalf("usage: pluck FILE FIELD OUT")
				}
				var out bytes.Buffer
				for i, line := range bytes.Split(bytes.TrimSuffix([]byte(ts.ReadFile(args[0])), []byte("\n")), []byte("\n")) {
					var obj map[string]json.RawMessage
					if err := json.Unmarshal(line, &obj); err != nil {
						ts.Fatalf("pluck: %s line %d: %v", args[0], i+1, err)
					}
					v, ok := obj[args[1]]
					if !ok {
						ts.Fatalf("pluck: %s line %d has no %q", args[0], i+1, args[1])
					}
					out.Write(v)
					out.WriteByte('\n')
				}
				ts.Check(os.WriteFile(ts.MkAbs(args[2]), out.Bytes(), 0o644))
			},
			// mkfile FILE N writes a file of N bytes: a JSON string of
			// spaces, so it is valid JSON whatever its size (N >= 2).
			"mkfile": func(ts *testscript.TestScript, neg bool, args []string) {
				n, err := strconv.Atoi(args[len(args)-1])
				if neg || len(args) != 2 || err != nil || n < 2 {
					ts.Fatalf("usage: mkfile FILE N (N >= 2)")
				}
				data := bytes.Repeat([]byte(" "), n)
				data[0], data[n-1] = '"', '"'
				ts.Check(os.WriteFile(ts.MkAbs(args[0]), data, 0o644))
			},
			// sparse FILE N [png|text] makes a file of N zero bytes that
			// takes no room on disk (where the file system allows): a file
			// too large to read, cheap to make. With png, it begins with a
			// PNG's signature, so it is sniffed as image/png; with text,
			// with 1,000 bytes of text, more than the first bytes a
			// signature is read from.
			"sparse": func(ts *testscript.TestScript, neg bool, args []string) {
				var head []byte
				if len(args) == 3 && args[2] == "png" {
					head, args = []byte("\x89PNG\r\n\x1a\n"), args[:2]
				}
				if len(args) == 3 && args[2] == "text" {
					head, args = []byte(strings.Repeat("Some text.\n", 90)+strings.Repeat(".", 10)), args[:2]
				}
				n, err := strconv.ParseInt(args[len(args)-1], 10, 64)
				if neg || len(args) != 2 || err != nil || n < int64(len(head)) {
					ts.Fatalf("usage: sparse FILE N [png|text]")
				}
				f, err := os.Create(ts.MkAbs(args[0]))
				ts.Check(err)
				_, err = f.Write(head)
				ts.Check(err)
				ts.Check(f.Truncate(n))
				ts.Check(f.Close())
			},
			// ordered FILE N checks that FILE holds N JSON lines whose
			// "index" members are 0, 1, … N-1 in that order: a batch's
			// results, each item once, in input order.
			"ordered": func(ts *testscript.TestScript, neg bool, args []string) {
				n, err := strconv.Atoi(args[len(args)-1])
				if neg || len(args) != 2 || err != nil {
					ts.Fatalf("usage: ordered FILE N")
				}
				lines := strings.Split(strings.TrimSuffix(ts.ReadFile(args[0]), "\n"), "\n")
				if len(lines) != n {
					ts.Fatalf("%s holds %d lines, want %d", args[0], len(lines), n)
				}
				for i, line := range lines {
					var r struct{ Index *int }
					if err := json.Unmarshal([]byte(line), &r); err != nil || r.Index == nil || *r.Index != i {
						ts.Fatalf("%s line %d is not item %d: %s", args[0], i+1, i, line)
					}
				}
			},
			// repeat FILE N TEXT [END] appends TEXT N times to FILE, then
			// END: a large file of one pattern, cheap to describe.
			"repeat": func(ts *testscript.TestScript, neg bool, args []string) {
				n, err := 0, error(nil)
				if len(args) >= 3 {
					n, err = strconv.Atoi(args[1])
				}
				if neg || len(args) < 3 || len(args) > 4 || err != nil || n < 0 {
					ts.Fatalf("usage: repeat FILE N TEXT [END]")
				}
				f, err := os.OpenFile(ts.MkAbs(args[0]), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
				ts.Check(err)
				_, err = f.WriteString(strings.Repeat(args[2], n) + strings.Join(args[3:], ""))
				ts.Check(err)
				ts.Check(f.Close())
			},
			// hardlink OLD NEW makes NEW another name of the file OLD.
			"hardlink": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 2 {
					ts.Fatalf("usage: hardlink OLD NEW")
				}
				ts.Check(os.Link(ts.MkAbs(args[0]), ts.MkAbs(args[1])))
			},
			// valuebomb OUT SIZE REFS ENTRIES array|members|run writes a
			// journal whose one value line holds a string of SIZE bytes,
			// which each of its ENTRIES model calls references REFS times: in
			// one array member of the request, or in as many members, or, as
			// a long run's tool specs, in the array "tools", beside the
			// call's own new message.
			"valuebomb": valueBomb,
			// mkfifo FILE makes a named pipe, which nothing writes.
			"mkfifo": mkfifo,
			// rewritejournal FILE rewrites a journal's lines after its
			// header as another writer or an editor might: members in
			// reverse order, white space around them, and the requests and
			// values spread over one line with spaces. Nothing they say
			// changes.
			"rewritejournal": rewriteJournal,
			// nestjournal FILE DEPTH makes the request of the journal's
			// first entry arrays nested DEPTH deep.
			"nestjournal": nestJournal,
			// exits N cmd args... runs a command and checks its exit code,
			// keeping its output for stdout and stderr.
			// replace FILE OLD NEW replaces the one occurrence of OLD in
			// FILE with NEW; OLD not there, or there more than once, fails.
			"replace": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 3 {
					ts.Fatalf("usage: replace FILE OLD NEW")
				}
				file := ts.MkAbs(args[0])
				data, err := os.ReadFile(file)
				ts.Check(err)
				if n := strings.Count(string(data), args[1]); n != 1 {
					ts.Fatalf("replace: %q occurs %d times in %s, want once", args[1], n, args[0])
				}
				ts.Check(os.WriteFile(file, []byte(strings.Replace(string(data), args[1], args[2], 1)), 0o644))
			},
			"exits": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) < 2 {
					ts.Fatalf("usage: exits CODE command [args...]")
				}
				want, err := strconv.Atoi(args[0])
				if err != nil {
					ts.Fatalf("exits: bad code %q", args[0])
				}
				err = ts.Exec(args[1], args[2:]...)
				got := 0
				var ee *exec.ExitError
				switch {
				case errors.As(err, &ee):
					got = ee.ExitCode()
				case err != nil:
					ts.Fatalf("exits: %v", err)
				}
				if got != want {
					ts.Fatalf("exit code %d, want %d", got, want)
				}
			},
		},
	})
}

// run runs the command line args in this process with every verb, as the
// agentc program does, and returns the exit code.
func run(args []string, e cli.Env) int { return cli.Run(args, e, cuecmd.Compiler()) }

func rewriteJournal(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: rewritejournal FILE")
	}
	editJournal(ts, args[0], func(m map[string]json.RawMessage) {
		for _, k := range []string{"request", "json"} {
			if v, ok := m[k]; ok {
				var b bytes.Buffer
				ts.Check(json.Indent(&b, v, "", " "))
				m[k] = json.RawMessage(strings.ReplaceAll(b.String(), "\n", ""))
			}
		}
	})
}

func nestJournal(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: nestjournal FILE DEPTH")
	}
	depth, err := strconv.Atoi(args[1])
	ts.Check(err)
	done := false
	editJournal(ts, args[0], func(m map[string]json.RawMessage) {
		if _, ok := m["effect"]; ok && !done {
			m["request"] = json.RawMessage(`{"a":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`)
			done = true
		}
	})
	if !done {
		ts.Fatalf("nestjournal: %s has no entry", args[0])
	}
}

// editJournal rewrites each line of a journal after its header, members
// in reverse order with white space around them, after edit.
func editJournal(ts *testscript.TestScript, file string, edit func(map[string]json.RawMessage)) {
	path := ts.MkAbs(file)
	data, err := os.ReadFile(path)
	ts.Check(err)
	lines := strings.SplitAfter(string(data), "\n")
	for i, line := range lines {
		if i == 0 || strings.TrimSpace(line) == "" {
			continue
		}
		var m map[string]json.RawMessage
		ts.Check(json.Unmarshal([]byte(line), &m))
		edit(m)
		keys := slices.Sorted(maps.Keys(m))
		slices.Reverse(keys)
		var b strings.Builder
		b.WriteString("{ ")
		for j, k := range keys {
			if j > 0 {
				b.WriteString(" , ")
			}
			fmt.Fprintf(&b, "%q : %s", k, m[k])
		}
		b.WriteString(" }\n")
		lines[i] = b.String()
	}
	ts.Check(os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600))
}

func valueBomb(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 5 || (args[4] != "array" && args[4] != "members" && args[4] != "run") {
		ts.Fatalf("usage: valuebomb OUT SIZE REFS ENTRIES array|members|run")
	}
	var n [3]int
	for i, a := range args[1:4] {
		var err error
		if n[i], err = strconv.Atoi(a); err != nil || n[i] < 1 {
			ts.Fatalf("valuebomb: %q is not a positive number", a)
		}
	}
	size, refs, entries := n[0], n[1], n[2]
	value := make([]byte, size)
	for i := range value {
		value[i] = 'a'
	}
	value[0], value[size-1] = '"', '"'
	d, err := journal.ValueDigest(value)
	ts.Check(err)
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"journal":%q,"plan":"blake3:%s","run":"bomb","output_suffix":"1a2b3c4d","agent":"bomb","started":"2026-12-01T00:00:00Z"}`+"\n", journal.Format, strings.Repeat("0", 64))
	fmt.Fprintf(&b, `{"value":%q,"json":%s}`+"\n", d, value)
	ref := fmt.Sprintf(`{"$value":%q}`, d)
	for e := range entries {
		var req []string
		switch args[4] {
		case "array":
			req = append(req, `"messages":[`+strings.Repeat(ref+",", refs-1)+ref+`]`)
		case "run":
			req = append(req, fmt.Sprintf(`"messages":{"after":%d,"new":[{"role":"user","content":"turn %d"}]}`, 2*e, e),
				`"tools":[`+strings.Repeat(ref+",", refs-1)+ref+`]`)
		default:
			for i := range refs {
				req = append(req, fmt.Sprintf(`"m%06d":%s`, i, ref))
			}
		}
		fmt.Fprintf(&b, `{"effect":"%d.0","kind":"model","fingerprint":%q,"request":{%s},"response":{"message":{"role":"assistant","content":"ok"}},"started":"2026-12-01T00:00:01Z","duration_ms":1}`+"\n",
			e+1, d, strings.Join(req, ","))
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), b.Bytes(), 0o644))
}

func editPlan(ts *testscript.TestScript, neg bool, args []string, reseal bool) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: editplan|reseal PLAN FIELD JSON")
	}
	file := ts.MkAbs(args[0])
	data, err := os.ReadFile(file)
	ts.Check(err)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc map[string]any
	ts.Check(dec.Decode(&doc))
	keys := strings.Split(args[1], ".")
	m := doc
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			ts.Fatalf("%s: no object %q in the plan", args[1], k)
		}
		m = next
	}
	var v any
	ts.Check(json.Unmarshal([]byte(args[2]), &v))
	m[keys[len(keys)-1]] = v
	out, err := json.MarshalIndent(doc, "", "  ")
	ts.Check(err)
	if reseal {
		var p plan.Plan
		ts.Check(json.Unmarshal(out, &p))
		ts.Check(p.Seal())
		out, err = p.Encode()
		ts.Check(err)
	}
	ts.Check(os.WriteFile(file, out, 0o644))
}

func killStaging(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: killstaging DIR PROG ARGS...")
	}
	prog, err := exec.LookPath(args[1])
	ts.Check(err)
	cmd := exec.Command(prog, args[2:]...)
	cmd.Dir = ts.MkAbs(".")
	for _, k := range []string{"PATH", "HOME", "TMPDIR"} {
		cmd.Env = append(cmd.Env, k+"="+ts.Getenv(k))
	}
	stdin, err := cmd.StdinPipe()
	ts.Check(err)
	ts.Check(cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	ts.Defer(func() {
		_ = cmd.Process.Kill()
		stdin.Close()
	})
	head := []byte("%PDF-1.4\n% a document that never ends\n")
	_, err = stdin.Write(head)
	ts.Check(err)
	staging, err := await.Glob(filepath.Join(ts.MkAbs(args[0]), ".put-*"), func(b []byte) bool { return bytes.Equal(b, head) }, 60*time.Second)
	if err != nil {
		ts.Fatalf("killstaging: %v", err)
	}
	ts.Check(cmd.Process.Kill())
	var xe *exec.ExitError
	if err := <-exited; !errors.As(err, &xe) || xe.ExitCode() != -1 {
		ts.Fatalf("killstaging: %s ended with %v, not killed", args[1], err)
	}
	ts.Logf("killed %s while it staged %s", args[1], filepath.Base(staging))
}
