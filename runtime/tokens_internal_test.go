package runtime

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestInputTokensKept: the count a run keeps of its conversation
// (run.inputTokens), which counts only the messages it has not counted,
// equals InputTokens counting the whole request, for every counter, round
// after round, with the tool set and the answer format changing between
// requests (a gathering and an answering turn), the model and the provider
// changing (a fallback), and the conversation starting again shorter.
// A run's conversation is never cut or rewritten (run.say only appends to
// it), so starting again shorter is the one change there is to follow.
func TestInputTokensKept(t *testing.T) {
	specs := []ToolSpec{
		{Name: "lookup", Description: "Looks up a word.", Schema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)},
		{Name: "fetch", Description: strings.Repeat("Fetches a page. ", 30), Schema: json.RawMessage(`{"type":"object"}`)},
	}
	withOut := append(specs[:len(specs):len(specs)], ToolSpec{Name: "answer_1a2b", Description: "The answer.", Schema: json.RawMessage(`{"type":"object","required":["label"]}`)})
	outOnly := withOut[2:]
	// Another set of as many tools: what tells tool sets apart is the
	// slice that holds them.
	others := []ToolSpec{{Name: "search", Description: "Searches the tracker for issues like this one.", Schema: json.RawMessage(`{"type":"object","properties":{"terms":{"type":"array","items":{"type":"string"}}}}`)}, specs[0]}
	answer := &AnswerFormat{Mode: "native", Name: "answer", Description: "The answer.", Schema: json.RawMessage(`{"type":"object"}`)}
	shapes := []struct {
		tools  []ToolSpec
		answer *AnswerFormat
	}{{specs, nil}, {outOnly, nil}, {withOut, nil}, {specs, answer}, {nil, answer}, {nil, nil}, {others, nil}, {[]ToolSpec{}, nil}}
	models := []struct{ provider, model string }{
		{"openai", "gpt-4o-mini"}, {"openai", "gpt-4-turbo"}, {"openai", "llama3.1:8b"},
		{"anthropic", "claude-sonnet-4-5"}, {"google", "gemini-2.5-pro"}, {"test", "m"},
	}
	round := func(i int) []Message {
		args := fmt.Sprintf(`{"q":"%s"}`, strings.Repeat("é\x7f", i*11))
		return []Message{
			{Role: Assistant, Content: strings.Repeat("Thinking. ", i%3*40), ToolCalls: []ToolCall{
				{ID: fmt.Sprintf("call_%d", i), Name: "lookup", Arguments: json.RawMessage(args)},
				{ID: fmt.Sprintf("call_%db", i), Name: "fetch", Arguments: json.RawMessage(`{}`)},
			}},
			{Role: ToolRole, ToolCallID: fmt.Sprintf("call_%d", i), Name: "lookup", Content: strings.Repeat("result  \n\n ", i*13)},
			{Role: ToolRole, ToolCallID: fmt.Sprintf("call_%db", i), Name: "fetch", Parts: []Part{
				{Text: "the page"}, {File: &File{Name: "page", MediaType: []string{"image/png", "application/pdf", "text/plain"}[i%3], Size: int64(1000 * i)}},
			}},
		}
	}
	for _, m := range models {
		t.Run(m.provider+"/"+m.model, func(t *testing.T) {
			x := &run{provider: m.provider}
			req := &Request{Model: m.model}
			n := 0
			check := func(step string) {
				t.Helper()
				n++
				sh := shapes[n%len(shapes)]
				req.Tools, req.Answer = sh.tools, sh.answer
				if got, want := x.inputTokens(req), InputTokens(x.provider, req); got != want {
					t.Fatalf("%s, request %d: kept count %d, counted afresh %d", step, n, got, want)
				}
			}
			check("no messages")
			req.Messages = []Message{}
			check("an empty conversation")
			req.Messages = append(req.Messages, Message{Role: System, Content: "Label the issue."}, Message{Role: User, Parts: []Part{{Text: "the issue"}, {File: &File{Name: "shot", MediaType: "image/png", Size: 5000}}}})
			for range 3 {
				check("the first round")
			}
			for i := range 12 {
				req.Messages = append(req.Messages, round(i)...)
				check("a later round")
				check("the same round again")
				if i == 6 {
					req.Messages = append(req.Messages, Message{Role: User, Content: "Give your answer now."})
					check("a reminder")
				}
			}
			// A fallback to another model of the same provider, and to
			// another provider, in the same conversation.
			other := models[0]
			if other.provider == m.provider {
				other = models[len(models)-1]
			}
			req.Model = "gpt-4o"
			check("another model")
			x.provider, req.Model = other.provider, other.model
			check("another provider")
			x.provider, req.Model = m.provider, m.model
			check("the first model again")
			req.Messages = req.Messages[:2]
			check("a conversation started again")
			req.Messages = append(req.Messages, round(20)...)
			check("a round after it")
			req.Messages = nil
			check("no messages again")
		})
	}
}
