package runtime

import (
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/zeebo/blake3"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/runtime/journal"
)

// wholeFingerprint is a model call's fingerprint as it was first
// defined: the request, its messages as their hash chain, encoded and
// canonicalised whole. modelFingerprint assembles the same canonical
// bytes from members it keeps; recorded journals hold these fingerprints,
// so the two must agree on every request.
func wholeFingerprint(t *testing.T, id modelRequest) string {
	t.Helper()
	chain := blake3.New()
	for _, m := range id.Messages {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		d, err := journal.ValueDigest(b)
		if err != nil {
			t.Fatal(err)
		}
		chain.WriteString(d + "\n")
	}
	form := struct {
		modelRequest
		Messages string `json:"messages"`
		Count    int    `json:"message_count"`
	}{id, hex.EncodeToString(chain.Sum(nil)), len(id.Messages)}
	b, err := json.Marshal(form)
	if err != nil {
		t.Fatal(err)
	}
	fp, err := journal.Fingerprint(b)
	if err != nil {
		t.Fatal(err)
	}
	return fp
}

// TestFingerprintAssembled: the fingerprint assembled member by member,
// with the repeated values canonicalised once, is the one of the whole
// request, whichever members are there or empty, and whatever their text
// holds (HTML characters, which encoding/json escapes and canonical JSON
// does not; non-ASCII; numbers), round after round.
func TestFingerprintAssembled(t *testing.T) {
	temp := 0.25
	tools := []ToolSpec{
		{Name: "search", Description: "Search <docs> & code — ünïcode", Schema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","maxLength":100,"default":"a<b"},"n":{"type":"number","minimum":1e-7,"maximum":1E21}},"required":["q"]}`)},
		{Name: "answer_1", Description: "The answer.", Schema: json.RawMessage(`{"type":"object"}`), Strict: true},
	}
	msgs := []identMessage{{Role: System, Content: "Be brief."}, {Role: User, Content: "Find <x> & y \u2028"}}
	for i, id := range []modelRequest{
		{Provider: "openai", Model: "gpt-4o", Messages: msgs, Tools: tools, ToolChoice: ToolChoice{Mode: ChooseAuto}, OutputTool: "answer_1", Contract: json.RawMessage(`{"type":"object","properties":{"label":{"enum":["bug","feature"]}}}`)},
		{Provider: "anthropic", Model: "claude", Sampling: sampling{Temperature: &temp, MaxOutputTokens: 100, Reasoning: "low"}, Messages: msgs[:1], Tools: []ToolSpec{}, ToolChoice: ToolChoice{Mode: ChooseTool, Name: "answer_1"}},
		{Provider: "test", Model: "m", Messages: msgs, Tools: tools[:1], ToolChoice: ToolChoice{Mode: ChooseRequired},
			Answer: &AnswerFormat{Mode: "native", Name: "answer", Description: "é", Schema: json.RawMessage(`{"type":"string","pattern":"^<a>$"}`), Strict: true}},
	} {
		x := &run{}
		for round := 1; round <= 3; round++ {
			got, err := x.modelFingerprint(id)
			if err != nil {
				t.Fatal(err)
			}
			if want := wholeFingerprint(t, id); got != want {
				t.Errorf("request %d, round %d: assembled %s, whole %s", i, round, got, want)
			}
			id.Messages = append(id.Messages, identMessage{Role: Assistant, Content: "more <text>"})
		}
	}
}

// TestToolFingerprintAssembled: a tool call's fingerprint, assembled with
// its spec and declaration canonicalised once, is journal.Fingerprint of
// the whole request, with arguments as JSON or as text, with or without a
// declaration.
func TestToolFingerprintAssembled(t *testing.T) {
	spec := ToolSpec{Name: "sh", Description: "Runs <a> & b — é", Schema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)}
	decl := plan.Tool{Kind: "exec", Description: "Runs a command & more.", Argv: []string{"sh", "-c", "echo {{.q}}"}}
	text := "not <json> at all"
	// A tool's encoding is kept for its next calls: a spec that changed,
	// or another declaration, is encoded again.
	spec2 := spec
	spec2.Schema = json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","maxLength":9}}}`)
	decl2 := decl
	decl2.Argv = []string{"sh", "-c", "echo {{.q}} again"}
	// Each of these differs from the one before it in one field alone.
	spec3 := spec2
	spec3.Description = "Runs it elsewhere."
	spec4 := spec3
	spec4.Strict = true
	spec5 := spec4
	spec5.Name = "sh2"
	other := ToolSpec{Name: "ls", Description: "Lists.", Schema: json.RawMessage(`{"type":"object","maxProperties":1}`)}
	x := &run{Runner: &Runner{agent: &plan.Agent{Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{"sh": decl}}}}}
	declared := x.declaration("sh")
	if declared == nil || declared.Argv[2] != decl.Argv[2] {
		t.Fatalf("declaration of sh: %+v", declared)
	}
	if x.declaration("ls") != nil {
		t.Fatal("a tool the plan does not declare has a declaration")
	}
	for i, req := range []toolRequest{
		{Tool: "sh", Spec: spec, Declaration: &decl, callArgs: argsOf(json.RawMessage(`{"q": "git log <x>", "n": 1e3}`))},
		{Tool: "sh", Spec: spec, callArgs: callArgs{Text: &text}},
		{Tool: "sh", Spec: spec, Declaration: &decl, callArgs: argsOf(json.RawMessage(`{}`))},
		{Tool: "sh", Spec: spec, Declaration: &decl, callArgs: argsOf(json.RawMessage(`{"q": "again"}`))},
		{Tool: "sh", Spec: spec2, Declaration: &decl, callArgs: argsOf(json.RawMessage(`{"q": "again"}`))},
		{Tool: "sh", Spec: spec2, Declaration: &decl2, callArgs: argsOf(json.RawMessage(`{"q": "again"}`))},
		{Tool: "sh", Spec: spec3, Declaration: &decl2, callArgs: argsOf(json.RawMessage(`{"q": "again"}`))},
		{Tool: "sh", Spec: spec4, Declaration: &decl2, callArgs: argsOf(json.RawMessage(`{"q": "again"}`))},
		{Tool: "sh", Spec: spec5, Declaration: &decl2, callArgs: argsOf(json.RawMessage(`{"q": "again"}`))},
		{Tool: "sh", Spec: spec, Declaration: &decl2, callArgs: argsOf(json.RawMessage(`{"q": "again"}`))},
		{Tool: "sh", Spec: spec4, Declaration: declared, callArgs: argsOf(json.RawMessage(`{"q": "again"}`))},
		{Tool: "ls", Spec: other, callArgs: argsOf(json.RawMessage(`{}`))},
		{Tool: "sh", Spec: spec4, Declaration: declared, callArgs: argsOf(json.RawMessage(`{"q": "once more"}`))},
		{Tool: "ls", Spec: other, callArgs: argsOf(json.RawMessage(`{}`))},
	} {
		if i == 12 {
			// A schema changed in place is a changed spec: the last
			// call's differs from the one "ls" was first encoded with.
			copy(other.Schema[len(other.Schema)-2:], "2}")
		}
		got, err := x.toolFingerprint(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		want, err := journal.Fingerprint(b)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("request %d: assembled %s, whole %s", i, got, want)
		}
	}
}

// TestIdentCanonical: a message without files, as a run encodes it for
// its fingerprint, is already canonical JSON, whatever its text holds, so
// a fingerprint takes it as it is. A field added to identMessage out of
// its key's order fails here.
func TestIdentCanonical(t *testing.T) {
	text := "not <json> & more"
	for i, m := range []identMessage{
		{Role: System, Content: "Be brief about <tags> & \"quotes\", é, \x01 and \u00e9."},
		{Role: Assistant, Content: "calling", ToolCalls: []identCall{
			{ID: "c1", Name: "search", callArgs: argsOf(json.RawMessage(`{"q": "a<b", "n": 2, "deep": {"z": [1.5, true, null], "a": "x"}}`))},
			{ID: "c2", Name: "sh", callArgs: callArgs{Text: &text}},
		}},
		{Role: ToolRole, ToolCallID: "c1", Name: "search", Content: "no match for a<b && c>d", IsError: true},
	} {
		b, err := encodeIdent(m)
		if err != nil {
			t.Fatal(err)
		}
		if !digest.IsCanonical(b) {
			c, _ := digest.CanonicalExact(b)
			t.Errorf("message %d: encoded\n%s\nnot canonical; canonical\n%s", i, b, c)
		}
	}
}

// FuzzFingerprintAssembled: whatever a message's text and a tool call's
// arguments hold (bytes that are not UTF-8, escapes, characters JSON may
// write two ways), the fingerprint assembled from messages taken as they
// are encoded, where that is canonical, is the one of the whole request
// canonicalised.
func FuzzFingerprintAssembled(f *testing.F) {
	f.Add("plain", `{"q":"x"}`)
	f.Add("<b> & \u2028 \x01 \xff\xfe", `{"b":1,"a":[1.0,2e3,"<>"]}`)
	f.Add(`"quoted" \ back`, `not json`)
	f.Add("é\u00e9\U0001F600", `{"q":"\u00e9\ud83d\ude00"}`)
	f.Fuzz(func(t *testing.T, text, args string) {
		msgs := []identMessage{
			{Role: User, Content: text},
			{Role: Assistant, ToolCalls: []identCall{{ID: "c1", Name: "t", callArgs: argsOf(json.RawMessage(args))}}},
			{Role: ToolRole, ToolCallID: "c1", Name: "t", Content: text, IsError: len(text)%2 == 0},
		}
		id := modelRequest{Provider: "openai", Model: "m", Messages: msgs, Tools: []ToolSpec{}, ToolChoice: ToolChoice{Mode: ChooseAuto}}
		want := wholeFingerprint(t, id)
		got, err := (&run{}).modelFingerprint(id)
		if err != nil {
			t.Fatalf("assembled: %v; whole: %s", err, want)
		}
		if got != want {
			t.Fatalf("assembled %s, whole %s", got, want)
		}
	})
}
