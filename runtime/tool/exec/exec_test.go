package exec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"agentc.dev/agentc/plan"
)

const schema = `{"type":"object"}`

// These tests are of what runs a program, not of its confinement (see
// confine_linux_test.go): a tool that declares no confine runs unconfined.
func newTool(t testing.TB, base string, pt plan.Tool) *Tool {
	t.Helper()
	pt.Kind, pt.Description = "exec", "Run the program."
	if pt.Confine == nil {
		pt.Confine = &plan.Confine{Enforce: "off"}
	}
	if pt.Input == nil {
		pt.Input = &plan.Input{Schema: json.RawMessage(schema)}
	}
	tool, err := New("run", pt, base)
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// result is a call's outcome in one value: a returned error is "error: ",
// an error result "failed: ".
func call(t testing.TB, tool *Tool, args any) string {
	t.Helper()
	raw, ok := args.(string)
	if !ok {
		b, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		raw = string(b)
	}
	res, err := tool.Call(context.Background(), json.RawMessage(raw))
	switch {
	case err != nil:
		return "error: " + err.Error()
	case res.IsError:
		return "failed: " + res.Content
	}
	return res.Content
}

// checkClean fails if s shows the base directory.
func checkClean(t *testing.T, base, s string) {
	t.Helper()
	real, _ := filepath.EvalSymlinks(base)
	for _, p := range []string{base, real} {
		if p != "" && strings.Contains(s, p) {
			t.Errorf("output shows the host path %s: %q", p, s)
		}
	}
}

func TestSpec(t *testing.T) {
	s := `{"type":"object","properties":{"rev":{"type":"string"}}}`
	tool := newTool(t, t.TempDir(), plan.Tool{Argv: []string{"git", "show", "{{.rev}}"}, Input: &plan.Input{Schema: json.RawMessage(s)}})
	spec := tool.Spec()
	if spec.Name != "run" || spec.Description != "Run the program." || string(spec.Schema) != s {
		t.Errorf("spec: %+v", spec)
	}
	spec.Schema[0] = 'X'
	if string(tool.Spec().Schema) != s {
		t.Error("Spec shares its schema with the caller")
	}
}

func TestNewRefuses(t *testing.T) {
	tests := []struct {
		name string
		pt   plan.Tool
		want string
	}{
		{"no argv", plan.Tool{}, "argv needs a program"},
		{"empty program", plan.Tool{Argv: []string{""}}, "argv needs a program"},
		{"templated program", plan.Tool{Argv: []string{"{{.prog}}", "x"}}, "argv[0]: the program must be fixed, not a template"},
		{"half templated program", plan.Tool{Argv: []string{"git-{{.sub}}"}}, "the program must be fixed"},
		{"NUL in program", plan.Tool{Argv: []string{"ls\x00"}}, "argv[0] contains a NUL byte"},
		{"bad template", plan.Tool{Argv: []string{"echo", "{{.x"}}, "argv[1]:1: unclosed action"},
		{"unknown function", plan.Tool{Argv: []string{"echo", "ok", "{{shell .x}}"}}, `argv[2]:1: function "shell" not defined`},
		{"bad timeout", plan.Tool{Argv: []string{"echo"}, Timeout: "soon"}, `timeout "soon" is not a positive duration`},
		{"zero timeout", plan.Tool{Argv: []string{"echo"}, Timeout: "0s"}, "not a positive duration"},
		{"negative timeout", plan.Tool{Argv: []string{"echo"}, Timeout: "-1s"}, "not a positive duration"},
		{"negative max_bytes", plan.Tool{Argv: []string{"echo"}, MaxBytes: -1}, "max_bytes is -1"},
		{"bad env name", plan.Tool{Argv: []string{"echo"}, Env: []string{"A=B"}}, `env: "A=B" is not a variable name`},
		{"dir up", plan.Tool{Argv: []string{"echo"}, Dir: "../x"}, `dir "../x" leaves the base directory`},
		{"dir up inside", plan.Tool{Argv: []string{"echo"}, Dir: "a/../../x"}, "leaves the base directory"},
		{"dir NUL", plan.Tool{Argv: []string{"echo"}, Dir: "a\x00"}, "dir contains a NUL byte"},
		{"kind", plan.Tool{Kind: "fs", Argv: []string{"echo"}}, `kind is "fs", not exec`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pt := tt.pt
			if pt.Kind == "" {
				pt.Kind = "exec"
			}
			pt.Input = &plan.Input{Schema: json.RawMessage(schema)}
			_, err := New("run", pt, t.TempDir())
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), `exec tool "run": `) {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := New("run", plan.Tool{Kind: "exec", Argv: []string{"echo"}}, t.TempDir()); err == nil || !strings.Contains(err.Error(), "no input schema") {
		t.Errorf("no input: got %v", err)
	}
}

// TestOneArgument checks that every element becomes exactly one argument,
// whatever the value holds, and that nothing interprets it: not a shell,
// not word splitting, not globbing.
func TestOneArgument(t *testing.T) {
	base := t.TempDir()
	direct := newTool(t, base, plan.Tool{Argv: []string{"printf", `[%s]\n`, "{{.x}}", "b{{.y}}"}})
	// The value is the shell's $0: sh parses the script, never the value.
	viaShell := newTool(t, base, plan.Tool{Argv: []string{"sh", "-c", `printf '[%s] %s\n' "$0" "$#"`, "{{.x}}"}})
	tests := []struct {
		name string
		x    any
	}{
		{"spaces", "hello wide world"},
		{"quotes", `it's "quoted"`},
		{"command substitution", "$(echo pwned)"},
		{"backticks", "`echo pwned`"},
		{"semicolon", "a; echo pwned"},
		{"pipe and redirect", "a | cat > /tmp/agentc-pwned"},
		{"newlines", "line1\nline2\n"},
		{"glob", "*"},
		{"tilde", "~"},
		{"variable", "$HOME ${PATH}"},
		{"backslashes", `back\slash \n`},
		{"empty", ""},
		{"unicode", "ünïcödé ☃"},
		{"inner dash", "a-b"},
		{"percent", "%s %d"},
		{"big integer", json.Number("12345678901234567890")},
		{"float", 1.5},
		{"bool", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := fmt.Sprint(tt.x)
			got := call(t, direct, map[string]any{"x": tt.x, "y": tt.x})
			if want := "[" + x + "]\n[b" + x + "]\n"; got != want {
				t.Errorf("direct: got %q, want %q", got, want)
			}
			got = call(t, viaShell, map[string]any{"x": tt.x})
			if want := "[" + x + "] 0\n"; got != want {
				t.Errorf("through sh -c: got %q, want %q", got, want)
			}
		})
	}
	if _, err := os.Stat("/tmp/agentc-pwned"); err == nil {
		t.Error("a value was run by a shell")
	}
}

func TestTemplates(t *testing.T) {
	base := t.TempDir()
	tests := []struct {
		name string
		argv []string
		args string
		want string
	}{
		{"static", []string{"echo", "a b"}, `{}`, "a b\n"},
		{"empty arguments", []string{"echo", "static"}, ``, "static\n"},
		{"whitespace arguments", []string{"echo", "static"}, " \n", "static\n"},
		{"integer exact", []string{"echo", "{{.n}}"}, `{"n":1234567}`, "1234567\n"},
		{"json function", []string{"echo", "{{json .o}}"}, `{"o":{"a":[1,"x"]}}`, "{\"a\":[1,\"x\"]}\n"},
		{"optional given", []string{"echo", "n={{with .n}}{{.}}{{else}}10{{end}}"}, `{"n":3}`, "n=3\n"},
		{"optional left out", []string{"echo", "n={{with .n}}{{.}}{{else}}10{{end}}"}, `{}`, "n=10\n"},
		{"if", []string{"echo", "x{{if .v}}v{{end}}"}, `{"v":false}`, "x\n"},
		{"nested", []string{"echo", "{{.a.b}}"}, `{"a":{"b":"deep"}}`, "deep\n"},
		{"range", []string{"echo", "{{range $i, $e := .l}}{{if $i}},{{end}}{{$e}}{{end}}"}, `{"l":["a","b"]}`, "a,b\n"},
		{"missing", []string{"echo", "{{.x}}"}, `{}`, `error: argument 1 uses a value the call did not give, or gave as null (it rendered "<no value>")`},
		{"null", []string{"echo", "x={{.x}}"}, `{"x":null}`, "error: argument 1 uses a value the call did not give"},
		{"missing nested", []string{"echo", "{{.a.b}}"}, `{"a":{}}`, "error: argument 1 uses a value the call did not give"},
		{"field of a string", []string{"echo", "ok", "{{.a.b}}"}, `{"a":"s"}`, "error: argument 2: at <.a.b>: can't evaluate field b in type interface {}"},
		{"bad index", []string{"echo", "{{index .l 5}}"}, `{"l":[1]}`, "error: argument 1: at <index .l 5>: error calling index: index out of range: 5"},
		// Malformed arguments.
		{"not JSON", []string{"echo", "{{.x}}"}, `x=1`, "error: arguments are not valid JSON"},
		{"truncated", []string{"echo", "{{.x}}"}, `{"x":`, "error: arguments are not valid JSON"},
		{"trailing", []string{"echo", "{{.x}}"}, `{"x":1} {}`, "error: arguments have data after the JSON object"},
		{"array", []string{"echo", "{{.x}}"}, `["x"]`, "error: arguments must be a JSON object, not an array"},
		{"string", []string{"echo", "{{.}}"}, `"-rf"`, "error: arguments must be a JSON object, not a string"},
		{"JSON null", []string{"echo", "{{.}}"}, `null`, "error: arguments must be a JSON object, not null"},
		{"number", []string{"echo", "{{.}}"}, `1`, "error: arguments must be a JSON object, not a number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := call(t, newTool(t, base, plan.Tool{Argv: tt.argv}), tt.args)
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("got %q, want it to start with %q", got, tt.want)
			}
			checkClean(t, base, got)
		})
	}
}

// TestOptionInjection checks that a value never becomes an option unless
// the author wrote the option.
func TestOptionInjection(t *testing.T) {
	base := t.TempDir()
	const refused = "would start with '-' and be read as an option"
	tests := []struct {
		name string
		elem string
		x    any
		want string // output, or a part of the error
	}{
		{"short options", "{{.x}}", "-rf", refused},
		{"long option", "{{.x}}", "--output=/etc/x", refused},
		{"stdin dash", "{{.x}}", "-", refused},
		{"double dash", "{{.x}}", "--", refused},
		{"negative number", "{{.x}}", -5, refused},
		{"dash after newline is fine", "{{.x}}", "\n-x", "[\n-x]"},
		{"inner dash", "{{.x}}", "a-b", "[a-b]"},
		{"trailing dash", "{{.x}}", "a-", "[a-]"},
		{"two placeholders", "{{.y}}{{.x}}", "-x", refused},
		{"trim marker", "{{- .x}}", "-x", refused},
		{"option printed by an action", "{{if .x}}-v{{end}}", true, refused},
		{"option as a string constant", "{{`-v`}}{{.x}}", "a", refused},
		{"comment first", "{{/* c */}}{{.x}}", "-x", refused},
		// A literal prefix declares the option; any value may follow.
		{"declared long", "--rev={{.x}}", "-x", "[--rev=-x]"},
		{"declared short", "-n{{.x}}", "-5", "[-n-5]"},
		{"declared by comment and text", "{{/* c */}}--rev={{.x}}", "-x", "[--rev=-x]"},
		{"literal prefix", "./{{.x}}", "-rf", "[./-rf]"},
		{"space prefix", " {{.x}}", "-x", "[ -x]"},
		{"static option", "-l", "unused", "[-l]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := newTool(t, base, plan.Tool{Argv: []string{"printf", "[%s]", tt.elem}})
			got := call(t, tool, map[string]any{"x": tt.x, "y": ""})
			if !strings.Contains(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if tt.want == refused && !strings.HasPrefix(got, "error: argument 2 (") {
				t.Errorf("refused without naming the argument: %q", got)
			}
		})
	}
}

func TestNUL(t *testing.T) {
	base := t.TempDir()
	for _, elem := range []string{"{{.x}}", "--x={{.x}}", "{{json .x}}"} {
		got := call(t, newTool(t, base, plan.Tool{Argv: []string{"echo", elem}}), map[string]any{"x": "a\x00b"})
		if elem == "{{json .x}}" {
			// json escapes the NUL; the argument holds none.
			if got != "\"a\\u0000b\"\n" {
				t.Errorf("%s: got %q", elem, got)
			}
			continue
		}
		if got != "error: argument 1 contains a NUL byte, which no program argument can hold" {
			t.Errorf("%s: got %q", elem, got)
		}
	}
}

// TestEnvironment: the program sees PATH, the variables env lists, and
// the call's own mark (MARK here), which a manifest cannot set.
func TestEnvironment(t *testing.T) {
	t.Setenv("AGENTC_TEST_SECRET", "xyz")
	t.Setenv("AGENTC_TEST_SHARED", "shared value")
	t.Setenv("AGENTC_TOOL_PROCESS", "forged")
	base := t.TempDir()
	tests := []struct {
		name string
		env  []string
		want []string
	}{
		{"nothing listed", nil, []string{"PATH=" + os.Getenv("PATH"), "MARK"}},
		{"listed", []string{"AGENTC_TEST_SHARED", "AGENTC_TEST_UNSET"}, []string{"PATH=" + os.Getenv("PATH"), "AGENTC_TEST_SHARED=shared value", "MARK"}},
		{"PATH listed twice", []string{"PATH", "AGENTC_TEST_SECRET", "AGENTC_TEST_SECRET"}, []string{"PATH=" + os.Getenv("PATH"), "AGENTC_TEST_SECRET=xyz", "MARK"}},
		{"the mark listed", []string{"AGENTC_TOOL_PROCESS"}, []string{"PATH=" + os.Getenv("PATH"), "MARK"}},
	}
	mark := regexp.MustCompile(`(?m)^AGENTC_TOOL_PROCESS=[A-Z2-7]{26}$`)
	marks := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := call(t, newTool(t, base, plan.Tool{Argv: []string{"env"}, Env: tt.env}), `{}`)
			marks[mark.FindString(got)] = true
			got = mark.ReplaceAllString(got, "MARK")
			if want := strings.Join(tt.want, "\n") + "\n"; got != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
	if len(marks) != len(tests) {
		t.Errorf("%d calls had %d marks; each call needs its own", len(tests), len(marks))
	}
}

func TestWorkingDirectory(t *testing.T) {
	tmp := t.TempDir()
	base := filepath.Join(tmp, "base")
	outside := filepath.Join(tmp, "outside")
	for _, d := range []string{"base/sub/deep", "outside"} {
		if err := os.MkdirAll(filepath.Join(tmp, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(base, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"link-out":     "../outside",
		"link-abs-out": outside,
		"link-in":      "sub/deep",
		"sub/up":       "../..",
		"broken":       "nothing",
	} {
		if err := os.Symlink(target, filepath.Join(base, link)); err != nil {
			t.Skipf("symbolic links unavailable: %v", err)
		}
	}
	realBase, err := filepath.EvalSymlinks(base)
	if err != nil {
		t.Fatal(err)
	}
	realOutside, _ := filepath.EvalSymlinks(outside)
	tests := []struct {
		dir  string
		want string
	}{
		{"", realBase + "\n"},
		{".", realBase + "\n"},
		{"sub", filepath.Join(realBase, "sub") + "\n"},
		{"sub/deep/", filepath.Join(realBase, "sub", "deep") + "\n"},
		{"sub/../sub", filepath.Join(realBase, "sub") + "\n"},
		{"link-in", filepath.Join(realBase, "sub", "deep") + "\n"},
		{outside, outside + "\n"},
		{"link-out", `error: working directory "link-out": leaves the base directory (through a symbolic link)`},
		{"link-abs-out", `error: working directory "link-abs-out": leaves the base directory`},
		{"sub/up", `error: working directory "sub/up": leaves the base directory`},
		// ".." is taken lexically, before links: this names base/base.
		{"link-out/../base", `error: working directory "link-out/../base": no such file or directory`},
		{"link-out/../sub", filepath.Join(realBase, "sub") + "\n"},
		{"missing", `error: working directory "missing": no such file or directory`},
		{"broken", `error: working directory "broken": no such file or directory`},
		{"file", `error: working directory "file": is not a directory`},
		{filepath.Join(tmp, "gone"), "error: working directory"},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			got := call(t, newTool(t, base, plan.Tool{Argv: []string{"pwd", "-P"}, Dir: tt.dir}), `{}`)
			if got != tt.want && !(strings.HasPrefix(tt.want, "error:") && strings.HasPrefix(got, tt.want)) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if strings.HasPrefix(got, "error:") {
				checkClean(t, base, got)
			}
			if strings.Contains(got, realOutside) && tt.dir != outside {
				t.Errorf("ran outside the base directory: %q", got)
			}
		})
	}
}

func TestProgram(t *testing.T) {
	tmp := t.TempDir()
	base := filepath.Join(tmp, "base")
	if err := os.MkdirAll(filepath.Join(base, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(base, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, mode := range map[string]os.FileMode{"hello": 0o755, "plain": 0o644} {
		if err := os.WriteFile(filepath.Join(base, "bin", name), []byte("#!/bin/sh\necho \"hello $1\"\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		argv []string
		dir  string
		want string
	}{
		{"on PATH", []string{"echo", "hi"}, "", "hi\n"},
		{"absolute", []string{"/bin/sh", "-c", "echo hi"}, "", "hi\n"},
		{"relative to the base", []string{"./bin/hello", "{{.x}}"}, "", "hello world\n"},
		{"relative to the base, not dir", []string{"bin/hello", "{{.x}}"}, "sub", "hello world\n"},
		{"not on PATH", []string{"agentc-no-such-program", "{{.x}}"}, "", `error: program "agentc-no-such-program": not found on PATH`},
		{"relative missing", []string{"./bin/nope"}, "", `error: program "./bin/nope" (relative to the base directory): no such file or directory`},
		{"not executable", []string{"./bin/plain"}, "", `error: program "./bin/plain" (relative to the base directory): permission denied`},
		{"a directory", []string{"./bin"}, "", `error: program "./bin" (relative to the base directory): is a directory`},
		{"absolute missing", []string{filepath.Join(tmp, "nope")}, "", fmt.Sprintf("error: program %q: no such file or directory", filepath.Join(tmp, "nope"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := call(t, newTool(t, base, plan.Tool{Argv: tt.argv, Dir: tt.dir}), map[string]string{"x": "world"})
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if !filepath.IsAbs(tt.argv[0]) {
				checkClean(t, base, got)
			}
		})
	}

	// PATH=. would find a program in the working directory: refused.
	t.Setenv("PATH", ".")
	t.Chdir(filepath.Join(base, "bin"))
	got := call(t, newTool(t, base, plan.Tool{Argv: []string{"hello"}}), `{}`)
	if !strings.Contains(got, `program "hello" is found only through a relative entry of PATH`) {
		t.Errorf("PATH=.: got %q", got)
	}
}

func TestExitStatus(t *testing.T) {
	base := t.TempDir()
	tests := []struct {
		name string
		argv []string
		want string
	}{
		{"false", []string{"false"}, "failed: the program failed: exit status 1 (no output)"},
		{"status and output", []string{"sh", "-c", "echo out; echo err >&2; exit 3"}, "failed: the program failed: exit status 3\nstdout:\nout\nstderr:\nerr\n"},
		{"stderr only", []string{"sh", "-c", "printf err >&2; exit 2"}, "failed: the program failed: exit status 2\nstderr:\nerr"},
		{"signal", []string{"sh", "-c", "kill -TERM $$"}, "failed: the program failed: signal: terminated (no output)"},
		{"success with stderr", []string{"sh", "-c", "printf out; echo warn >&2"}, "out\nstderr:\nwarn\n"},
		{"success, stderr only", []string{"sh", "-c", "echo warn >&2"}, "stderr:\nwarn\n"},
		{"no output", []string{"true"}, "(no output)"},
		{"invalid UTF-8", []string{"printf", `caf\351 \377\376 ok`}, "caf\uFFFD \uFFFD ok"},
		{"NUL in output", []string{"printf", `a\000b`}, "a\x00b"},
		{"stdin is empty", []string{"cat"}, "(no output)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := call(t, newTool(t, base, plan.Tool{Argv: tt.argv}), `{}`); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestOutputCap(t *testing.T) {
	base := t.TempDir()
	tests := []struct {
		name   string
		script string
		want   string
	}{
		{"at the cap", "yes | head -c 10", "y\ny\ny\ny\ny\n"},
		{"over the cap", "yes | head -c 15", "y\ny\ny\ny\ny\n[stdout cut: the first 10 of 15 bytes are shown (max_bytes)]\n"},
		{"far over the cap, drained", "yes | head -c 5000000; echo done >&2", "y\ny\ny\ny\ny\n[stdout cut: the first 10 of 5000000 bytes are shown (max_bytes)]\nstderr:\ndone\n"},
		{"stderr over the cap", "printf abcdefghijklmnop >&2", "stderr:\nabcdefghij\n[stderr cut: the first 10 of 16 bytes are shown (max_bytes)]\n"},
		{"cut inside a rune", "printf 'abcdefghi☃☃'", "abcdefghi\n[stdout cut: the first 9 of 15 bytes are shown (max_bytes)]\n"},
		{"both, failing", "yes | head -c 12; yes n | head -c 12 >&2; exit 4", "failed: the program failed: exit status 4\nstdout:\ny\ny\ny\ny\ny\n[stdout cut: the first 10 of 12 bytes are shown (max_bytes)]\nstderr:\nn\nn\nn\nn\nn\n[stderr cut: the first 10 of 12 bytes are shown (max_bytes)]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := newTool(t, base, plan.Tool{Argv: []string{"sh", "-c", tt.script}, MaxBytes: 10})
			if got := call(t, tool, `{}`); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTimeout(t *testing.T) {
	base := t.TempDir()
	for _, argv := range [][]string{
		{"sleep", "10"},
		{"sh", "-c", "echo started; sleep 10"},
		{"sh", "-c", "trap '' TERM INT; echo started; sleep 10"},
	} {
		t.Run(strings.Join(argv, " "), func(t *testing.T) {
			tool := newTool(t, base, plan.Tool{Argv: argv, Timeout: "200ms"})
			start := time.Now()
			got := call(t, tool, `{}`)
			if d := time.Since(start); d > 1500*time.Millisecond {
				t.Errorf("took %v", d)
			}
			if !strings.HasPrefix(got, "failed: timed out after 200ms; the program was killed") {
				t.Errorf("got %q", got)
			}
			if argv[0] == "sh" && !strings.Contains(got, "stdout:\nstarted\n") {
				t.Errorf("the output before the timeout is lost: %q", got)
			}
		})
	}
}

func TestCancel(t *testing.T) {
	tool := newTool(t, t.TempDir(), plan.Tool{Argv: []string{"sh", "-c", "sleep 10 & wait"}})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	res, err := tool.Call(ctx, json.RawMessage(`{}`))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %+v, %v; want context.Canceled", res, err)
	}
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Errorf("took %v", d)
	}
	if _, err := tool.Call(ctx, json.RawMessage(`{}`)); !errors.Is(err, context.Canceled) {
		t.Errorf("a call on a done context: got %v", err)
	}
}

func TestConcurrentCalls(t *testing.T) {
	tool := newTool(t, t.TempDir(), plan.Tool{Argv: []string{"printf", "%s", "{{.n}}"}})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if got := call(t, tool, map[string]int{"n": i}); got != fmt.Sprint(i) {
				t.Errorf("call %d: got %q", i, got)
			}
		})
	}
	wg.Wait()
}

// TestOffline: an offline tool (a replay's) is built from the same
// declaration, refusing what New refuses, but never runs its program.
func TestOffline(t *testing.T) {
	base := t.TempDir()
	pt := plan.Tool{Kind: "exec", Description: "Touch.", Input: &plan.Input{Schema: json.RawMessage(schema)},
		Argv: []string{"touch", "touched"}, Confine: &plan.Confine{Write: []string{"."}, Enforce: "require"}}
	tool, err := New("touch", pt, base, Offline())
	if err != nil {
		t.Fatal(err)
	}
	if got := tool.Spec().Name; got != "touch" {
		t.Errorf("spec name %q", got)
	}
	_, err = tool.Call(context.Background(), json.RawMessage(`{}`))
	if err == nil || !strings.Contains(err.Error(), `exec tool "touch" is offline`) {
		t.Errorf("an offline call: %v", err)
	}
	if _, err := os.Stat(filepath.Join(base, "touched")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the program ran: %v", err)
	}
	pt.Confine.Enforce = "strict"
	if _, err := New("touch", pt, base, Offline()); err == nil || !strings.Contains(err.Error(), `confine.enforce is "strict"`) {
		t.Errorf("a bad declaration offline: %v", err)
	}
	pt.Confine.Enforce = "require"
	pt.Timeout = "soon"
	if _, err := New("touch", pt, base, Offline()); err == nil || !strings.Contains(err.Error(), "not a positive duration") {
		t.Errorf("a bad timeout offline: %v", err)
	}
}
