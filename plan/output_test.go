package plan

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// TestRaise: each file of testdata/raise holds a lowered schema, its
// nullable pointers (one a line), and answers each followed by exactly
// what Raise returns for it.
func TestRaise(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "raise", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases in testdata/raise: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var lowered []byte
			var nullable []string
			var answer []byte
			answers := 0
			for _, f := range ar.Files {
				data := bytes.TrimSuffix(f.Data, []byte("\n"))
				switch f.Name {
				case "lowered.json":
					lowered = data
				case "nullable":
					nullable = strings.Fields(string(data))
				case "answer.json":
					answer = data
				case "want.json":
					if answer == nil {
						t.Fatalf("%s: want.json with no answer.json before it", file)
					}
					got := Raise(json.RawMessage(lowered), nullable, json.RawMessage(answer))
					if !bytes.Equal(got, data) {
						t.Errorf("answer %s\n got %s\nwant %s", answer, got, data)
					}
					answer = nil
					answers++
				default:
					t.Fatalf("%s: unknown section %q", file, f.Name)
				}
			}
			if lowered == nil || answers == 0 {
				t.Fatalf("%s needs a lowered.json and answers with their want.json", file)
			}
		})
	}
}

// TestRaiseDeep: $ref cycles are cut short, but a value nested deeper than
// the cut, through recursive properties or items, is raised at every level.
func TestRaiseDeep(t *testing.T) {
	const depth = 100
	tests := []struct {
		name     string
		lowered  string
		nullable string
		open     string // one level of the answer, around the next
		close    string
		bottom   string
		want     string // the bottom, raised
	}{
		{
			name:     "properties",
			lowered:  `{"$ref":"#/$defs/n","$defs":{"n":{"type":"object","properties":{"x":{"type":["string","null"]},"next":{"$ref":"#/$defs/n"}}}}}`,
			nullable: "/$defs/n/properties/x",
			open:     `{"x":null,"next":`, close: `}`,
			bottom: `{"x":null}`, want: `{}`,
		},
		{
			name:     "items",
			lowered:  `{"$ref":"#/$defs/l","$defs":{"l":{"type":"array","items":{"anyOf":[{"$ref":"#/$defs/l"},{"$ref":"#/$defs/o"}]}},"o":{"type":"object","properties":{"x":{"type":["string","null"]}}}}}`,
			nullable: "/$defs/o/properties/x",
			open:     `[`, close: `]`,
			bottom: `{"x":null}`, want: `{}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			answer := strings.Repeat(tt.open, depth) + tt.bottom + strings.Repeat(tt.close, depth)
			want := strings.Repeat(strings.ReplaceAll(tt.open, `"x":null,`, ""), depth) + tt.want + strings.Repeat(tt.close, depth)
			got := Raise(json.RawMessage(tt.lowered), []string{tt.nullable}, json.RawMessage(answer))
			if string(got) != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
}

// TestTypeAdmits: how a branch's type is judged against an answer's value,
// numbers as UnmarshalJSONValue keeps them. Through Raise only an object's
// or an array's type can change what is raised, so the rest is told here.
func TestTypeAdmits(t *testing.T) {
	for _, tt := range []struct {
		typ, val string
		want     bool
	}{
		{`"object"`, `{}`, true},
		{`"object"`, `[]`, false},
		{`"array"`, `[]`, true},
		{`"string"`, `"s"`, true},
		{`"string"`, `1`, false},
		{`"boolean"`, `false`, true},
		{`"null"`, `null`, true},
		{`"null"`, `0`, false},
		{`"integer"`, `1`, true},
		{`"integer"`, `-10`, true},
		{`"integer"`, `1.5`, false},
		{`"integer"`, `1e3`, false},
		{`"integer"`, `1E3`, false},
		{`"number"`, `1`, true},
		{`"number"`, `1.5`, true},
		{`"number"`, `"1"`, false},
		{`["string","null"]`, `null`, true},
		{`["string","null"]`, `"s"`, true},
		{`["string","null"]`, `1`, false},
		{`["number"]`, `2`, true},
		{`[7,"object"]`, `{}`, true},
		{`[]`, `{}`, false},
		{`7`, `{}`, true},
	} {
		typ, err := UnmarshalJSONValue([]byte(tt.typ))
		if err != nil {
			t.Fatal(err)
		}
		val, err := UnmarshalJSONValue([]byte(tt.val))
		if err != nil {
			t.Fatal(err)
		}
		if got := typeAdmits(typ, val); got != tt.want {
			t.Errorf("type %s admits %s: %v, want %v", tt.typ, tt.val, got, tt.want)
		}
	}
	// A number decoded without UseNumber is a float64.
	if got := jsonType(1.0); got != "number" {
		t.Errorf("jsonType(1.0) = %q, want number", got)
	}
}

// TestOutputToolName: the output tool's name is output.name and a suffix
// drawn from the output contract: the same for the same output, whatever
// the rest of the agent, and drawn again when a tool, or a tool an mcp
// server is allowed to expose, has the name. The values pin the
// derivation; they move only with a plan format bump.
func TestOutputToolName(t *testing.T) {
	name := func(a *Agent) string {
		t.Helper()
		n, err := OutputToolName(a)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	base := testPlan(t).Agent
	const first, second = "answer_806676ea", "answer_527ae6dd"
	if got := name(&base); got != first {
		t.Errorf("name %q, want %q", got, first)
	}
	// What the output tool's definition does not hold does not move it:
	// a run replayed after such an edit still sends the recorded name.
	edited := testPlan(t).Agent
	edited.Instructions, edited.Model.Name = "Triage it differently.", "other"
	edited.Capabilities.Provides, edited.Input = "triage.other", &Input{Schema: json.RawMessage(`{"type":"object"}`)}
	edited.Output.Retries, edited.Output.Mode = 5, ModeTool
	if got := name(&edited); got != first {
		t.Errorf("a change outside the output contract moved the name to %q", got)
	}
	narrowed := testPlan(t).Agent
	narrowed.Output.Schema = json.RawMessage(`{"enum":["bug"]}`)
	if got := name(&narrowed); got == first || !strings.HasPrefix(got, "answer_") || len(got) != len(first) {
		t.Errorf("a changed output contract gives %q, want another answer_ and 8 hex digits than %q", got, first)
	}
	for _, tt := range []struct {
		what string
		tool Tool
		as   string
	}{
		{"a tool of that name", Tool{Kind: "exec", Description: "Taken."}, first},
		{"an mcp server allowed a tool of that name", Tool{Kind: "mcp", Description: "Server.", Command: []string{"srv"}, Allow: []string{"lookup", first}}, "server"},
	} {
		clash := testPlan(t).Agent
		clash.Capabilities.Tools[tt.as] = tt.tool
		if got := name(&clash); got != second {
			t.Errorf("with %s, the name is %q, want the next draw %q", tt.what, got, second)
		}
	}
	// An mcp server's own name is not a name the model sees.
	server := testPlan(t).Agent
	server.Capabilities.Tools[first] = Tool{Kind: "mcp", Description: "Server.", Command: []string{"srv"}, Allow: []string{"lookup"}}
	if got := name(&server); got != first {
		t.Errorf("an mcp server named %q moved the name to %q", first, got)
	}
	if _, err := OutputToolName(&Agent{Name: "bare"}); err == nil {
		t.Error("an agent without output has an output tool name")
	}
	// The plan digest covers the name the plan records.
	p := testPlan(t)
	p.Output = &Lowering{Provider: "test", Mode: ModeTool, Tool: first, Strict: true, Schema: p.Agent.Output.Schema}
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	sealed := p.Digests
	p.Output.Tool = second
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	if p.Digests.Plan == sealed.Plan || p.Digests.Contract != sealed.Contract {
		t.Errorf("renaming the output tool: digests %+v, then %+v; want the plan digest alone to move", sealed, p.Digests)
	}
}

// TestWay: each output mode says how its answer comes back, naming the
// output tool in tool mode.
func TestWay(t *testing.T) {
	for _, tt := range []struct {
		l    Lowering
		want string
	}{
		{Lowering{Mode: ModeTool, Tool: "answer_806676ea"}, "output tool answer_806676ea"},
		{Lowering{Mode: ModeNative}, "answer in the provider's response format (native mode), no output tool"},
		{Lowering{Mode: ModePrompted}, "answer as JSON in the reply's text (prompted mode), no output tool"},
	} {
		if got := tt.l.Way(); got != tt.want {
			t.Errorf("mode %s: %q, want %q", tt.l.Mode, got, tt.want)
		}
	}
}

// TestOutputSuffix: the suffix a journal's header records is what follows
// the output's name and "_" in the output tool's name; none without an
// output tool.
func TestOutputSuffix(t *testing.T) {
	p := &Plan{Agent: Agent{Output: &Output{Name: "answer"}}, Output: &Lowering{Tool: "answer_22c1c95f"}}
	if got := p.OutputSuffix(); got != "22c1c95f" {
		t.Errorf("suffix %q, want 22c1c95f", got)
	}
	if got := (&Plan{Agent: Agent{Output: &Output{Name: "answer"}}}).OutputSuffix(); got != "" {
		t.Errorf("without an output tool: %q", got)
	}
	if got := (&Plan{Output: &Lowering{Tool: "x_1"}}).OutputSuffix(); got != "" {
		t.Errorf("without an output: %q", got)
	}
}

// deepRecursive is a lowered recursive schema (an optional $ref made
// nullable is an anyOf) and a value of it depth levels deep with a list of
// n items at the bottom, every optional property null; and that value
// raised.
func deepRecursive(depth, n int) (lowered json.RawMessage, nullable []string, val, want []byte) {
	lowered = json.RawMessage(`{"type":"object","additionalProperties":false,"required":["c","l","v"],"properties":{"v":{"type":"string"},"c":{"anyOf":[{"$ref":"#"},{"type":"null"}]},"l":{"type":["array","null"],"items":{"$ref":"#"}}}}`)
	nullable = []string{"/properties/c", "/properties/l"}
	var b, w bytes.Buffer
	for range depth {
		b.WriteString(`{"v":"x","l":null,"c":`)
		w.WriteString(`{"c":`)
	}
	b.WriteString(`{"v":"x","c":null,"l":[`)
	w.WriteString(`{"l":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
			w.WriteByte(',')
		}
		b.WriteString(`{"v":"y","c":null,"l":null}`)
		w.WriteString(`{"v":"y"}`)
	}
	b.WriteString(`]}`)
	w.WriteString(`],"v":"x"}`)
	for range depth {
		b.WriteByte('}')
		w.WriteString(`,"v":"x"}`)
	}
	return lowered, nullable, b.Bytes(), w.Bytes()
}

// TestRaiseDeepAndWide: a deep value of a recursive schema is raised at
// every level. Each anyOf on the way chooses its branch by the value's type
// alone when only one branch fits: validating the value below at every
// level took seconds here (size times depth), and the value is the model's.
func TestRaiseDeepAndWide(t *testing.T) {
	lowered, nullable, val, want := deepRecursive(900, 1000)
	got := Raise(lowered, nullable, val)
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if !bytes.Equal(gb, wb) {
		t.Errorf("raised %.200s…, want %.200s…", gb, wb)
	}
}

// TestUnwrap: a wrapped answer is the one member of the arguments; anything
// else is not one, and is left as it was for validation to refuse.
func TestUnwrap(t *testing.T) {
	w := &Lowering{Mode: ModeTool, Wrap: AnswerMember}
	for _, c := range []struct {
		args, want string
		ok         bool
	}{
		{`{"value":["a"]}`, `["a"]`, true},
		{`{ "value" : null }`, `null`, true},
		{`{"value":1,"other":2}`, `{"value":1,"other":2}`, false},
		{`{"other":2}`, `{"other":2}`, false},
		{`{}`, `{}`, false},
		{`["a"]`, `["a"]`, false},
		{`not json`, `not json`, false},
	} {
		got, ok := w.Unwrap(json.RawMessage(c.args))
		if string(got) != c.want || ok != c.ok {
			t.Errorf("Unwrap(%s) = %s, %v; want %s, %v", c.args, got, ok, c.want, c.ok)
		}
	}
	plain := &Lowering{Mode: ModeTool}
	if got, ok := plain.Unwrap(json.RawMessage(`{"value":1}`)); string(got) != `{"value":1}` || !ok {
		t.Errorf("not wrapped: %s, %v", got, ok)
	}
}
