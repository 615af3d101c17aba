package exec

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"agentc.dev/agentc/plan"
)

// fuzzArgv mixes bare placeholders, declared options, literal prefixes and
// functions; bareElems marks the elements that begin with no literal text.
var (
	fuzzArgv = []string{
		"prog", "{{.v}}", "--opt={{.v}}", "-n{{.v}}", "x{{.v}}y", "{{.v}}{{.v}}",
		"{{json .v}}", "{{printf \"%q\" .v}}", "{{with .v}}{{.}}{{end}}", "static",
	}
	bareElems = []bool{false, true, false, false, false, true, true, true, true, false}
)

// FuzzRender renders a fixed argument vector over any value, and over the
// value read as raw arguments. Rendering never panics, and either refuses
// or yields exactly one argument per element, none with a NUL byte, and
// none starting with '-' where the element is a bare placeholder.
func FuzzRender(f *testing.F) {
	for _, seed := range []string{
		"plain", "-rf", "--output=/etc/x", "-", "a-b", "with space", "$(id)", "a\x00b",
		"<no value>", "line\n-x", "\xff\xfe", `{"v":"-x"}`, `{"v":12345678901234567890}`,
		`{"v":null}`, `{"v":["-a"]}`, `{"v":{"k":"-"}}`, `[]`, `{"v":"a"} x`, ``,
	} {
		f.Add(seed)
	}
	tool := newTool(f, f.TempDir(), plan.Tool{Argv: fuzzArgv})
	check := func(t *testing.T, args []byte) {
		argv, _, err := tool.render(context.Background(), args, &outputs{tool: tool})
		if err != nil {
			return
		}
		if len(argv) != len(fuzzArgv) {
			t.Fatalf("%q: %d arguments for %d elements: %q", args, len(argv), len(fuzzArgv), argv)
		}
		if argv[0] != "prog" || argv[len(argv)-1] != "static" {
			t.Fatalf("%q: literal elements changed: %q", args, argv)
		}
		for i, a := range argv {
			if strings.IndexByte(a, 0) >= 0 {
				t.Fatalf("%q: argument %d holds a NUL byte: %q", args, i, a)
			}
			if bareElems[i] && strings.HasPrefix(a, "-") {
				t.Fatalf("%q: argument %d (%s) starts with '-': %q", args, i, fuzzArgv[i], a)
			}
			if strings.Contains(a, noValue) {
				t.Fatalf("%q: argument %d is %q", args, i, a)
			}
		}
	}
	f.Fuzz(func(t *testing.T, value string) {
		args, err := json.Marshal(map[string]string{"v": value})
		if err != nil {
			t.Fatal(err)
		}
		check(t, args)
		if _, _, err := tool.render(context.Background(), args, &outputs{tool: tool}); strings.HasPrefix(value, "-") && err == nil {
			t.Fatalf("value %q was accepted by a bare placeholder", value)
		}
		check(t, []byte(value))
	})
}
