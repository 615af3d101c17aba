package runtime_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/testmodel"
)

// noteSchema has an optional property; notePlan lowers it the way a strict
// dialect does: required and nullable, a null standing for absence.
const noteSchema = `{"type":"object","properties":{"label":{"enum":["bug","feature"]},"note":{"type":"string","maxLength":20}},"required":["label"],"additionalProperties":false}`

func notePlan(t *testing.T, mode string, mut func(a *plan.Agent)) *plan.Plan {
	t.Helper()
	p := agent(t, func(a *plan.Agent) {
		a.Output.Schema = json.RawMessage(noteSchema)
		a.Output.Mode = mode
		if mut != nil {
			mut(a)
		}
	})
	p.Output = &plan.Lowering{Provider: "openai", Mode: mode, Strict: true,
		Schema:   json.RawMessage(`{"additionalProperties":false,"properties":{"label":{"enum":["bug","feature"]},"note":{"type":["string","null"],"description":"{maxLength: 20}"}},"required":["label","note"],"type":"object"}`),
		Nullable: []string{"/properties/note"},
		Local:    []plan.Constraint{{Pointer: "/properties/note/maxLength", Keyword: "maxLength"}}}
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	return p
}

// text replies with text; it checks the request could answer in it.
func text(t *testing.T, content string) turn {
	return func(req *agentrt.Request) (*agentrt.Response, error) {
		if req.Answer == nil {
			t.Errorf("a text answer to a request without an answer format")
		}
		return &agentrt.Response{Message: agentrt.Message{Content: content}, Usage: usage(10)}, nil
	}
}

func TestNativeAnswer(t *testing.T) {
	r := runWith(t, notePlan(t, plan.ModeNative, nil), agentrt.Options{}, text(t, `{"label":"bug","note":null}`))
	if r.rep.Outcome != agentrt.OutcomeOK || string(r.rep.Answer) != `{"label":"bug"}` {
		t.Fatalf("outcome %s (%s), answer %s; want ok and the null raised away", r.rep.Outcome, r.rep.Error, r.rep.Answer)
	}
	req := r.model.reqs[0]
	if req.Answer == nil || req.Answer.Mode != plan.ModeNative || !req.Answer.Strict || req.Answer.Name != "answer" ||
		!strings.Contains(string(req.Answer.Schema), `"null"`) {
		t.Errorf("answer format %+v: want native, strict, the lowered schema", req.Answer)
	}
	if len(req.Tools) != 0 || req.OutputTool != "" {
		t.Errorf("a native shaping turn sent tools %v, output tool %q", req.Tools, req.OutputTool)
	}
}

func TestNativeInvalidAnswerRetried(t *testing.T) {
	r := runWith(t, notePlan(t, plan.ModeNative, nil), agentrt.Options{},
		text(t, `I cannot answer that.`),
		text(t, `{"label":"bug","note":"a note far longer than twenty characters"}`),
		text(t, `{"label":"feature","note":"short"}`))
	if r.rep.Outcome != agentrt.OutcomeOK || string(r.rep.Answer) != `{"label":"feature","note":"short"}` || r.rep.InvalidAnswers != 2 {
		t.Fatalf("outcome %s (%s), answer %s, invalid %d", r.rep.Outcome, r.rep.Error, r.rep.Answer, r.rep.InvalidAnswers)
	}
	// The locally-only maxLength was caught, and the model told so.
	fb := r.model.reqs[2].Messages[len(r.model.reqs[2].Messages)-1]
	if fb.Role != agentrt.User || !strings.Contains(fb.Content, "maxLength") && !strings.Contains(fb.Content, "length") ||
		!strings.Contains(fb.Content, "Reply again with only the corrected JSON value") {
		t.Errorf("feedback %+v", fb)
	}
}

// strategyFunc is a RoundStrategy of one function.
type strategyFunc func(s *agentrt.State) agentrt.Decision

func (f strategyFunc) Decide(_ context.Context, s *agentrt.State) agentrt.Decision { return f(s) }

// TestNativeSaysWhatIsUsed: a run in native mode offers no output tool,
// and its events and report name none; the strategy is consulted after an
// invalid text answer at a boundary of its own.
func TestNativeSaysWhatIsUsed(t *testing.T) {
	var boundaries []agentrt.Boundary
	strategy := strategyFunc(func(s *agentrt.State) agentrt.Decision {
		boundaries = append(boundaries, s.Boundary)
		if s.OutputTool != "" {
			t.Errorf("the strategy sees output tool %q in native mode", s.OutputTool)
		}
		return agentrt.Decision{Action: agentrt.Continue}
	})
	r := runWith(t, notePlan(t, plan.ModeNative, nil), agentrt.Options{Strategy: strategy},
		text(t, `{"label":"none"}`), text(t, `{"label":"bug","note":null}`))
	if r.rep.Outcome != agentrt.OutcomeOK || r.rep.OutputTool != "" {
		t.Fatalf("outcome %s (%s), output tool %q; want ok and none", r.rep.Outcome, r.rep.Error, r.rep.OutputTool)
	}
	if len(boundaries) != 1 || boundaries[0] != agentrt.AfterTextAnswer || boundaries[0].String() != "after_text_answer" {
		t.Errorf("boundaries %v, want one after_text_answer", boundaries)
	}
	for _, e := range r.events {
		switch e.Type {
		case agentrt.EventRunStart:
			if !strings.Contains(e.Message, "native mode") || strings.Contains(e.Message, "output tool answer") {
				t.Errorf("run_start says %q", e.Message)
			}
		case agentrt.EventDecision:
			if !strings.HasPrefix(e.Message, "after_text_answer: ") {
				t.Errorf("decision event %q", e.Message)
			}
		}
	}
}

// TestNativeEscalates: the built-in strategy escalates after invalid text
// answers as it does after invalid calls of the output tool.
func TestNativeEscalates(t *testing.T) {
	p := notePlan(t, plan.ModeNative, func(a *plan.Agent) {
		a.Strategy.Escalate = &plan.Escalate{AfterInvalid: 1, Model: "m2"}
	})
	r := runWith(t, p, agentrt.Options{}, text(t, `{"label":"none"}`), text(t, `{"label":"bug","note":null}`))
	if r.rep.Outcome != agentrt.OutcomeOK || r.model.reqs[1].Model != "m2" {
		t.Errorf("outcome %s (%s), second turn's model %q; want ok and m2", r.rep.Outcome, r.rep.Error, r.model.reqs[1].Model)
	}
}

// TestOutputToolFromPlan: the output tool is the one the plan names; a
// plan built without the compiler gets the name the compiler would give,
// the same on every runner.
func TestOutputToolFromPlan(t *testing.T) {
	p := notePlan(t, plan.ModeTool, nil)
	p.Output.Tool = "answer_0a1b2c3d"
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	r := runWith(t, p, agentrt.Options{}, answer(`{"label":"bug","note":null}`, 10))
	if r.rep.OutputTool != "answer_0a1b2c3d" || r.model.reqs[0].Tools[0].Name != "answer_0a1b2c3d" {
		t.Errorf("report names %q, request offers %q; want the plan's answer_0a1b2c3d", r.rep.OutputTool, r.model.reqs[0].Tools[0].Name)
	}
	for _, e := range r.events {
		if e.Type == agentrt.EventRunStart && e.Message != "output tool answer_0a1b2c3d" {
			t.Errorf("run_start says %q", e.Message)
		}
	}

	built := agent(t, nil)
	want, err := plan.OutputToolName(&built.Agent)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if r := runWith(t, built, agentrt.Options{}, answer(`{"label":"bug"}`, 10)); r.rep.OutputTool != want {
			t.Errorf("a plan without an output section: output tool %q, want %q", r.rep.OutputTool, want)
		}
	}

	_, err = agentrt.New(p, agentrt.Options{Model: &scripted{}, Tools: map[string]agentrt.Tool{"answer_0a1b2c3d": &echoTool{name: "answer_0a1b2c3d"}}})
	if err == nil || !strings.Contains(err.Error(), `output tool name "answer_0a1b2c3d" is taken by a tool`) {
		t.Errorf("a tool of the output tool's name: %v", err)
	}
}

func TestNativeKeepsTools(t *testing.T) {
	p := notePlan(t, plan.ModeNative, keepsTools)
	r := runWith(t, p, agentrt.Options{}, call(10, "search", `{"q":"x"}`), text(t, `{"label":"bug","note":"seen"}`))
	if r.rep.Outcome != agentrt.OutcomeOK || r.tool.calls != 1 {
		t.Fatalf("outcome %s (%s), tool calls %d", r.rep.Outcome, r.rep.Error, r.tool.calls)
	}
	req := r.model.reqs[0]
	if req.Answer == nil || len(req.Tools) != 1 || req.Tools[0].Name != "search" {
		t.Errorf("a keeps_tools turn in native mode: answer %v, tools %v; want the format and the gathering tools", req.Answer, req.Tools)
	}
}

func TestPromptedAnswer(t *testing.T) {
	p := notePlan(t, plan.ModePrompted, nil)
	p.Output.Schema, p.Output.Strict, p.Output.Nullable, p.Output.Local = json.RawMessage(noteSchema), false, nil, nil
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	r := runWith(t, p, agentrt.Options{}, text(t, "Sure.\n```json\n{\"label\": \"feature\"}\n```\nThat is all."))
	if r.rep.Outcome != agentrt.OutcomeOK || string(r.rep.Answer) != `{"label": "feature"}` {
		t.Fatalf("outcome %s (%s), answer %s", r.rep.Outcome, r.rep.Error, r.rep.Answer)
	}
	sys := r.model.reqs[0].Messages[0]
	if sys.Role != agentrt.System || !strings.HasPrefix(sys.Content, "Label the issue.") || !strings.Contains(sys.Content, noteSchema) {
		t.Errorf("system message %q: want the instructions and the contract schema", sys.Content)
	}
}

func TestPromptedProseGoesToStrategy(t *testing.T) {
	p := notePlan(t, plan.ModePrompted, keepsTools)
	r := runWith(t, p, agentrt.Options{}, text(t, "Let me look first, as the guide [1] says."), text(t, `{"label":"bug"}`))
	if r.rep.Outcome != agentrt.OutcomeOK || r.rep.InvalidAnswers != 0 {
		t.Fatalf("outcome %s (%s), invalid %d", r.rep.Outcome, r.rep.Error, r.rep.InvalidAnswers)
	}
	last := r.model.reqs[1].Messages[len(r.model.reqs[1].Messages)-1]
	if !strings.Contains(last.Content, "only a JSON value that satisfies the schema in your instructions") {
		t.Errorf("reminder %q", last.Content)
	}
}

func TestStrictOutputToolRaised(t *testing.T) {
	r := runWith(t, notePlan(t, plan.ModeTool, nil), agentrt.Options{}, answer(`{"label":"bug","note":null}`, 10))
	if r.rep.Outcome != agentrt.OutcomeOK || string(r.rep.Answer) != `{"label":"bug"}` {
		t.Fatalf("outcome %s (%s), answer %s", r.rep.Outcome, r.rep.Error, r.rep.Answer)
	}
	spec := r.model.reqs[0].Tools[0]
	if !spec.Strict || !strings.Contains(string(spec.Schema), `"null"`) {
		t.Errorf("output tool %+v: want strict, with the lowered schema", spec)
	}
}

func TestUnknownModeRefused(t *testing.T) {
	p := notePlan(t, plan.ModeTool, nil)
	p.Output.Mode = "telepathy"
	_, err := agentrt.New(p, agentrt.Options{Model: testmodel.Model{}})
	if err == nil || !strings.Contains(err.Error(), `output mode "telepathy"`) {
		t.Errorf("err = %v", err)
	}
}

// The test model answers every mode.
func TestTestModelModes(t *testing.T) {
	for _, mode := range []string{plan.ModeTool, plan.ModeNative, plan.ModePrompted} {
		r, err := agentrt.New(notePlan(t, mode, keepsTools), agentrt.Options{Model: testmodel.Model{Seed: 1},
			Tools: map[string]agentrt.Tool{"search": &echoTool{name: "search"}}})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := r.Run(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Outcome != agentrt.OutcomeOK || strings.Contains(string(rep.Answer), "null") {
			t.Errorf("%s: outcome %s (%s), answer %s", mode, rep.Outcome, rep.Error, rep.Answer)
		}
	}
}

// TestPromptedBrackets: a bracketed span in a prompted reply is the answer
// when it is a valid one, and prose when it is an aside.
func TestPromptedBrackets(t *testing.T) {
	arr := agent(t, func(a *plan.Agent) {
		keepsTools(a)
		a.Output.Schema = json.RawMessage(`{"type":"array","items":{"enum":["bug","feature"]}}`)
		a.Output.Mode = plan.ModePrompted
	})
	arr.Output = &plan.Lowering{Provider: "test", Mode: plan.ModePrompted, Schema: arr.Agent.Output.Schema}
	if err := arr.Seal(); err != nil {
		t.Fatal(err)
	}
	r := runWith(t, arr, agentrt.Options{}, text(t, `The labels are ["bug"].`))
	if r.rep.Outcome != agentrt.OutcomeOK || string(r.rep.Answer) != `["bug"]` || len(r.model.reqs) != 1 {
		t.Errorf("an inline array answer: outcome %s (%s), answer %s, calls %d", r.rep.Outcome, r.rep.Error, r.rep.Answer, len(r.model.reqs))
	}
	p := notePlan(t, plan.ModePrompted, keepsTools)
	r = runWith(t, p, agentrt.Options{}, text(t, "Per [1], run:\n```sh\nls\n```"), text(t, `{"label":"bug"}`))
	if r.rep.Outcome != agentrt.OutcomeOK || r.rep.InvalidAnswers != 0 {
		t.Errorf("an aside and a shell block: outcome %s (%s), invalid answers %d", r.rep.Outcome, r.rep.Error, r.rep.InvalidAnswers)
	}
}

// TestRaisedAnswerNotIJSON: whether an answer is I-JSON is asked of what
// the model wrote, before its nulls are raised away or it is taken out of
// the member that wraps it. Both decode the answer and encode it again,
// which kept the last of two members of one name and turned a lone
// surrogate into U+FFFD: the run printed {"label":"bug"} for an answer
// whose first label was "rm -rf /", and ["bug"] for arguments whose first
// "value" broke maxItems.
func TestRaisedAnswerNotIJSON(t *testing.T) {
	surrogate := func(t *testing.T) *plan.Plan {
		p := agent(t, func(a *plan.Agent) {
			a.Output.Schema = json.RawMessage(`{"type":"object","properties":{"label":{"enum":["bug","feature"]},"note":{"type":"string"},"by":{"type":"string"}},"required":["label"],"additionalProperties":false}`)
			a.Output.Mode = plan.ModeNative
		})
		p.Output = &plan.Lowering{Provider: "openai", Mode: plan.ModeNative, Strict: true,
			Schema:   json.RawMessage(`{"additionalProperties":false,"properties":{"by":{"type":["string","null"]},"label":{"enum":["bug","feature"]},"note":{"type":["string","null"]}},"required":["by","label","note"],"type":"object"}`),
			Nullable: []string{"/properties/by", "/properties/note"}}
		if err := p.Seal(); err != nil {
			t.Fatal(err)
		}
		return p
	}
	wrapped := func(t *testing.T) *plan.Plan {
		p := agent(t, func(a *plan.Agent) {
			a.Output.Schema = json.RawMessage(`{"type":"array","items":{"enum":["bug","feature"]},"maxItems":2}`)
			a.Output.Mode = plan.ModeTool
		})
		p.Output = &plan.Lowering{Provider: "test", Mode: plan.ModeTool, Wrap: plan.AnswerMember,
			Schema: json.RawMessage(`{"type":"object","properties":{"value":{"type":"array","items":{"enum":["bug","feature"]},"maxItems":2}},"required":["value"],"additionalProperties":false}`)}
		if err := p.Seal(); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name      string
		plan      func(t *testing.T) *plan.Plan
		turn      func(string) turn
		bad, good string
		want      string
	}{
		{"native, a member twice beside a null", func(t *testing.T) *plan.Plan { return notePlan(t, plan.ModeNative, nil) },
			func(s string) turn { return text(t, s) },
			`{"label":"rm -rf /","label":"bug","note":null}`, `{"label":"feature","note":null}`, `duplicate member name "label"`},
		{"native, a lone surrogate beside a null", surrogate,
			func(s string) turn { return text(t, s) },
			`{"label":"bug","note":null,"by":"\ud800"}`, `{"label":"feature","note":null,"by":"x"}`, `lone surrogate \ud800 in a string`},
		{"tool, a member twice beside a null", func(t *testing.T) *plan.Plan { return notePlan(t, plan.ModeTool, nil) },
			func(s string) turn { return answer(s, 10) },
			`{"label":"rm -rf /","label":"bug","note":null}`, `{"label":"feature","note":null}`, `duplicate member name "label"`},
		{"tool, the wrapping member twice", wrapped,
			func(s string) turn { return answer(s, 10) },
			`{"value":["rm -rf /","x","y"],"value":["bug"]}`, `{"value":["feature"]}`, `duplicate member name "value"`},
	} {
		r := runWith(t, c.plan(t), agentrt.Options{}, c.turn(c.bad), c.turn(c.good))
		if r.rep.Outcome != agentrt.OutcomeOK || r.rep.InvalidAnswers != 1 || strings.Contains(string(r.rep.Answer), "bug") {
			t.Errorf("%s: outcome %s (%s), answer %s, %d invalid answers; want the first refused", c.name, r.rep.Outcome, r.rep.Error, r.rep.Answer, r.rep.InvalidAnswers)
			continue
		}
		msgs := r.model.reqs[1].Messages
		if fb := msgs[len(msgs)-1]; !strings.Contains(fb.Content, "not I-JSON (RFC 7493), which it must be: ") || !strings.Contains(fb.Content, c.want) {
			t.Errorf("%s: feedback %q, want it to say %s", c.name, fb.Content, c.want)
		}
	}
}
