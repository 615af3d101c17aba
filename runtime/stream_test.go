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
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(delta map[string]any, finish any) {
			b, _ := json.Marshal(map[string]any{"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test",
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
			fmt.Fprintf(w, "data: %s\n\n", b)
			w.(http.Flusher).Flush()
		}
		send(map[string]any{"role": "assistant", "content": ""}, nil)
		for i := 0; i < len(text); i += 3 {
			send(map[string]any{"content": text[i:min(i+3, len(text))]}, nil)
		}
		send(map[string]any{}, "stop")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestStreamRedacted: a streamed reply reaches the events in pieces, in
// order, before the model_response event; a secret the model writes,
// though it arrives cut in many pieces, is never shown, whole or in part,
// and the pieces put together are the reply with the secret replaced.
func TestStreamRedacted(t *testing.T) {
	const secret = "sk-streamed-secret-0123456789"
	text := "The key is " + secret + ", and that is all I will say about the matter at hand."
	m, err := openai.New(openai.Config{BaseURL: streamServer(t, text), APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	p := &plan.Plan{Agent: plan.Agent{Name: "talker", Model: plan.Model{Provider: "openai", Name: "gpt-test"}, Instructions: "Talk.",
		Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{}}, Strategy: plan.Strategy{OnProse: "accept"}}}
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
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
