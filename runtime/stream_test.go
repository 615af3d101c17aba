package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/provider/openai"
	"agentc.dev/agentc/runtime/redact"
)

// streamServer streams a prose reply in pieces of three bytes, as Chat
// Completions does for "stream": true.
func streamServer(t *testing.T, text string) string {
	var pieces []string
	for i := 0; i < len(text); i += 3 {
		pieces = append(pieces, text[i:min(i+3, len(text))])
	}
	return streamPieces(t, pieces)
}

// streamPieces is streamServer sending each of pieces as a delta.
func streamPieces(t *testing.T, pieces []string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(delta map[string]any, finish any) {
			b, _ := json.Marshal(map[string]any{"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test",
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
			fmt.Fprintf(w, "data: %s\n\n", b)
			w.(http.Flusher).Flush()
		}
		send(map[string]any{"role": "assistant", "content": ""}, nil)
		for _, p := range pieces {
			send(map[string]any{"content": p}, nil)
		}
		send(map[string]any{}, "stop")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// talker is an agent that talks, its model OpenAI's client of the server
// at url.
func talker(t *testing.T, url string) (*plan.Plan, *openai.Model) {
	t.Helper()
	m, err := openai.New(openai.Config{BaseURL: url, APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	p := &plan.Plan{Agent: plan.Agent{Name: "talker", Model: plan.Model{Provider: "openai", Name: "gpt-test"}, Instructions: "Talk.",
		Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{}}, Strategy: plan.Strategy{OnProse: "accept"}}}
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	return p, m
}

// TestStreamRedacted: a streamed reply reaches the events in pieces, in
// order, before the model_response event; a secret the model writes,
// though it arrives cut in many pieces, is never shown, whole or in part,
// and the pieces put together are the reply with the secret replaced.
func TestStreamRedacted(t *testing.T) {
	const secret = "sk-streamed-secret-0123456789"
	text := "The key is " + secret + ", and that is all I will say about the matter at hand."
	p, m := talker(t, streamServer(t, text))
	var events []agentrt.Event
	r, err := agentrt.New(p, agentrt.Options{Model: m, Stream: true, Secrets: redact.Of(secret),
		Events: func(e agentrt.Event) { events = append(events, e) }})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background(), nil)
	if err != nil || rep.Outcome != agentrt.OutcomeOK {
		t.Fatalf("%v %+v", err, rep)
	}
	var shown strings.Builder
	pieces, responded := 0, false
	for _, e := range events {
		switch e.Type {
		case agentrt.EventModelDelta:
			if responded {
				t.Error("a piece after the model_response event")
			}
			if e.Part != agentrt.PartText {
				t.Errorf("part %q", e.Part)
			}
			for n := 6; n <= len(secret); n++ {
				for i := 0; i+n <= len(secret); i++ {
					if strings.Contains(e.Delta, secret[i:i+n]) {
						t.Fatalf("piece %q shows %q of the secret", e.Delta, secret[i:i+n])
					}
				}
			}
			pieces++
			shown.WriteString(e.Delta)
		case agentrt.EventModelResponse:
			responded = true
		}
	}
	if want := redact.Of(secret).String(text); shown.String() != want {
		t.Errorf("shown %q, want %q", shown.String(), want)
	}
	if pieces < 2 {
		t.Errorf("%d pieces: the reply was not shown as it came", pieces)
	}
}

// TestStreamRedactedSpread: a secret split by runs of characters left
// out before matching (zero-width spaces, soft hyphens and joiners), however
// long the runs, is never shown in part, though its bytes spread far past
// the lookahead; and a secret's start followed by a megabyte of them, in
// pieces of four, is held until the rest comes, the held text checked
// again only as it grows by half (at every piece, the stream took
// minutes).
func TestStreamRedactedSpread(t *testing.T) {
	const secret = "sk-streamed-secret-0123456789"
	run := func(t *testing.T, pieces []string) string {
		t.Helper()
		p, m := talker(t, streamPieces(t, pieces))
		var shown strings.Builder
		r, err := agentrt.New(p, agentrt.Options{Model: m, Stream: true, Secrets: redact.Of(secret),
			Events: func(e agentrt.Event) {
				if e.Type == agentrt.EventModelDelta {
					shown.WriteString(e.Delta)
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		if rep, err := r.Run(context.Background(), nil); err != nil || rep.Outcome != agentrt.OutcomeOK {
			t.Fatalf("%v %s %s", err, rep.Outcome, rep.Error)
		}
		return shown.String()
	}
	for _, k := range []int{2, 10, 40, 400} {
		for _, gap := range []string{"\u200b", "\u00ad\u2060"} {
			t.Run(fmt.Sprintf("%d %q", k, gap), func(t *testing.T) {
				var pieces []string
				for _, r := range "The key is " + secret + ", and that is all." {
					pieces = append(pieces, string(r))
					for range k {
						pieces = append(pieces, gap)
					}
				}
				shown := strings.ReplaceAll(run(t, pieces), gap, "")
				for i := 0; i+6 <= len(secret); i++ {
					if strings.Contains(shown, secret[i:i+6]) {
						t.Fatalf("shown %q holds %q of the secret", shown, secret[i:i+6])
					}
				}
			})
		}
	}
	t.Run("a start held through a megabyte", func(t *testing.T) {
		pieces := []string{"The key is ", secret[:6]}
		for range 1 << 20 / 12 {
			pieces = append(pieces, strings.Repeat("\u200b", 4))
		}
		pieces = append(pieces, secret[6:], " no more.")
		if shown := run(t, pieces); strings.Contains(shown, secret[:6]) || !strings.HasSuffix(shown, "[redacted] no more.") {
			t.Errorf("shown %.40q…%q, want the secret held whole and replaced", shown, shown[max(0, len(shown)-40):])
		}
	})
}

// TestStreamRedactedEscaped: a secret written with every character a JSON
// \u escape (six bytes a byte, twice the longest form the lookahead
// covers), in the reply's text and in the answer as it forms, streamed in
// pieces of 1, 5 and 6 bytes, never shows three characters of itself in
// a piece, and the pieces put together are the reply as redacted whole.
// Before, the pieces showed every escape of it: the held-back check read
// the text only with its escapes kept.
func TestStreamRedactedEscaped(t *testing.T) {
	const secret = "sk-streamed-secret-0123456789"
	secrets := redact.Of(secret)
	esc := func(s, f string) string {
		var b strings.Builder
		for _, c := range []byte(s) {
			fmt.Fprintf(&b, f, c)
		}
		return b.String()
	}
	for _, f := range []string{`\u%04x`, `\u%04X`} {
		for _, size := range []int{1, 5, 6} {
			t.Run(fmt.Sprintf("%s in %d-byte pieces", f, size), func(t *testing.T) {
				text := "The key is " + esc(secret, f) + ", and that is all I will say about the matter at hand."
				args := `{"label":"` + esc(secret, f) + `"}`
				cut := func(s string) (pieces []string) {
					for i := 0; i < len(s); i += size {
						pieces = append(pieces, s[i:min(i+size, len(s))])
					}
					return pieces
				}
				streamed := func(req *agentrt.Request) (*agentrt.Response, error) {
					for _, p := range cut(text) {
						req.Stream(agentrt.Delta{Text: p})
					}
					for _, p := range cut(args) {
						req.Stream(agentrt.Delta{Answer: p})
					}
					return &agentrt.Response{Message: agentrt.Message{Content: text, ToolCalls: []agentrt.ToolCall{
						{ID: "a1", Name: req.OutputTool, Arguments: json.RawMessage(args)}}}, Usage: agentrt.Usage{Input: 5, Output: 5}}, nil
				}
				p := agent(t, func(a *plan.Agent) {
					a.Output.Schema = json.RawMessage(`{"type":"object","properties":{"label":{"type":"string"}},"required":["label"],"additionalProperties":false}`)
					a.Output.Mode = plan.ModeTool
				})
				res := runWith(t, p, agentrt.Options{Stream: true, Secrets: secrets}, streamed)
				shown := map[string]*strings.Builder{agentrt.PartText: {}, agentrt.PartAnswer: {}}
				for _, e := range res.events {
					if e.Type != agentrt.EventModelDelta {
						continue
					}
					for i := 0; i+3 <= len(secret); i++ {
						if part := esc(secret[i:i+3], f); strings.Contains(e.Delta, part) {
							t.Fatalf("%s piece %q shows %q of the secret", e.Part, e.Delta, part)
						}
					}
					shown[e.Part].WriteString(e.Delta)
				}
				if got, want := shown[agentrt.PartText].String(), secrets.String(text); got != want {
					t.Errorf("text shown %q, want %q", got, want)
				}
				if got, want := shown[agentrt.PartAnswer].String(), secrets.String(args); got != want {
					t.Errorf("answer shown %q, want %q", got, want)
				}
			})
		}
	}
}

// TestStreamFallbackRestarts: a streamed call that fails after some of
// its reply came, and goes to a fallback model, voids what came (a
// restart) before the fallback's pieces, as a retried attempt does: the
// pieces after the last restart are the reply the run took. The failed
// call's text ran on into the fallback's, with nothing to tell them apart.
func TestStreamFallbackRestarts(t *testing.T) {
	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"id":"chatcmpl-c","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","content":"Half a rep"},"finish_reason":null}]}`+"\n\n")
		// Cut: no finish_reason, no [DONE].
	}))
	t.Cleanup(cut.Close)
	primary, err := openai.New(openai.Config{BaseURL: cut.URL, APIKey: "sk-test", Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	fallback, err := openai.New(openai.Config{BaseURL: streamServer(t, "The whole reply."), APIKey: "sk-test", Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	p := &plan.Plan{Agent: plan.Agent{Name: "talker", Model: plan.Model{Provider: "openai", Name: "gpt-test", Fallback: &plan.Fallback{Models: []string{"openai:gpt-test-2"}}},
		Instructions: "Talk.", Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{}}, Strategy: plan.Strategy{OnProse: "accept"}},
		Fallbacks: []plan.FallbackModel{{Model: plan.Model{Provider: "openai", Name: "gpt-test-2"}}}}
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	var events []agentrt.Event
	r, err := agentrt.New(p, agentrt.Options{Model: primary, Stream: true,
		FallbackModel: func(*plan.Plan) (agentrt.Model, error) { return fallback, nil },
		Events:        func(e agentrt.Event) { events = append(events, e) }})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background(), nil)
	if err != nil || rep.Outcome != agentrt.OutcomeOK || string(rep.Answer) != `"The whole reply."` || len(rep.Fallbacks) != 1 {
		t.Fatalf("run: %v, %+v", err, rep)
	}
	var shown strings.Builder
	for _, e := range events {
		if e.Type != agentrt.EventModelDelta {
			continue
		}
		if e.Part == agentrt.PartRestart {
			shown.Reset()
			continue
		}
		shown.WriteString(e.Delta)
	}
	if shown.String() != "The whole reply." {
		t.Errorf("the pieces after the last restart are %q, want the fallback's reply", shown.String())
	}
}

// TestStreamOneAnswer: a reply that came whole and calls the output tool
// twice shows the first call's arguments as the answer, the one the run
// takes: the pieces were both answers run together.
func TestStreamOneAnswer(t *testing.T) {
	two := func(req *agentrt.Request) (*agentrt.Response, error) {
		return &agentrt.Response{Message: agentrt.Message{ToolCalls: []agentrt.ToolCall{
			{ID: "a1", Name: req.OutputTool, Arguments: json.RawMessage(`{"label":"bug"}`)},
			{ID: "a2", Name: req.OutputTool, Arguments: json.RawMessage(`{"label":"feature"}`)}}}, Usage: usage(10)}, nil
	}
	res := runWith(t, agent(t, nil), agentrt.Options{Stream: true}, two)
	var shown strings.Builder
	for _, e := range res.events {
		if e.Type == agentrt.EventModelDelta && e.Part == agentrt.PartAnswer {
			shown.WriteString(e.Delta)
		}
	}
	if string(res.rep.Answer) != `{"label":"bug"}` || shown.String() != string(res.rep.Answer) {
		t.Errorf("answer %s, its pieces %s; want the first call's", res.rep.Answer, shown.String())
	}
}
