package runtime_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/tiktoken-go/tokenizer/codec"

	agentrt "agentc.dev/agentc/runtime"
)

type cookbookRequest struct {
	Messages []struct {
		Role, Content, Name string
	}
	Tools []struct {
		Name, Description string
		Parameters        struct {
			Properties map[string]struct {
				Type, Description string
				Enum              []string
			}
		}
	}
	raw []json.RawMessage // the tools' parameters as sent
}

// cookbook counts a request's input by the method of OpenAI's cookbook
// ("How to count tokens with tiktoken", num_tokens_from_messages and
// num_tokens_for_tools), written out independently of InputTokens.
func cookbook(enc *codec.Codec, funcInit int, r *cookbookRequest) int {
	count := func(s string) int { n, _ := enc.Count(s); return n }
	n := 3 // the reply
	for _, m := range r.Messages {
		n += 3 + count(m.Role) + count(m.Content)
		if m.Name != "" {
			n += 1 + count(m.Name)
		}
	}
	if len(r.Tools) == 0 {
		return n
	}
	for _, f := range r.Tools {
		n += funcInit + count(f.Name+":"+strings.TrimSuffix(f.Description, "."))
		if len(f.Parameters.Properties) > 0 {
			n += 3
		}
		for key, p := range f.Parameters.Properties {
			n += 3
			if len(p.Enum) > 0 {
				n -= 3
				for _, e := range p.Enum {
					n += 3 + count(e)
				}
			}
			n += count(key + ":" + p.Type + ":" + strings.TrimSuffix(p.Description, "."))
		}
	}
	return n + 12
}

// TestInputTokensCookbook: for OpenAI's models, a request's count is at
// least what OpenAI's published method counts (so a reservation holds the
// call), and at most half more (the schemas are counted as the JSON
// sent, longer than the form they are rendered in) and under a third of
// the byte bound (so it is not the coarse bound of a
// token a byte).
func TestInputTokensCookbook(t *testing.T) {
	ar, err := txtar.ParseFile("testdata/tokens.txtar")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		var r cookbookRequest
		var wire struct {
			Tools []struct {
				Parameters json.RawMessage
			}
		}
		if err := json.Unmarshal(f.Data, &r); err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		_ = json.Unmarshal(f.Data, &wire)
		req := &agentrt.Request{}
		for _, m := range r.Messages {
			req.Messages = append(req.Messages, agentrt.Message{Role: agentrt.Role(m.Role), Content: m.Content, Name: m.Name})
		}
		for i, tl := range r.Tools {
			req.Tools = append(req.Tools, agentrt.ToolSpec{Name: tl.Name, Description: tl.Description, Schema: wire.Tools[i].Parameters})
		}
		for _, c := range []struct {
			model    string
			enc      *codec.Codec
			funcInit int
		}{
			{"gpt-4o-mini", codec.NewO200kBase(), 7},
			{"gpt-4-turbo", codec.NewCl100kBase(), 10},
		} {
			req.Model = c.model
			got, want := agentrt.InputTokens("openai", req), cookbook(c.enc, c.funcInit, &r)
			if got < want || got > want+want/2 {
				t.Errorf("%s, %s: %d tokens; the cookbook's method counts %d", f.Name, c.model, got, want)
			}
			if b := agentrt.InputBound(req); got*3 > b {
				t.Errorf("%s, %s: %d tokens, more than a third of the byte bound %d", f.Name, c.model, got, b)
			}
		}
	}
}

// TestInputTokensProfiles: a model of no public tokeniser is counted a
// token a byte of every text sent, with its provider's allowances; the
// test model, what it charges.
func TestInputTokensProfiles(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"label":{"type":"string"}}}`)
	req := &agentrt.Request{Model: "claude-sonnet-4-5", Messages: []agentrt.Message{
		{Role: agentrt.System, Content: "Label the issue."},
		{Role: agentrt.User, Content: "The export button does nothing."},
		{Role: agentrt.Assistant, ToolCalls: []agentrt.ToolCall{{ID: "toolu_1", Name: "search", Arguments: json.RawMessage(`{"q":"export"}`)}}},
		{Role: agentrt.ToolRole, ToolCallID: "toolu_1", Content: "no results"},
	}, Tools: []agentrt.ToolSpec{{Name: "search", Description: "Search.", Schema: schema}}}
	text := 0
	for _, m := range req.Messages {
		text += len(m.Role) + len(m.Content) + len(m.ToolCallID)
		for _, c := range m.ToolCalls {
			text += len(c.ID) + len(c.Name) + len(c.Arguments)
		}
	}
	text += len("search") + len("Search.") + len(schema)
	// Anthropic: 8 a message and for the reply, 16 a call and a tool, and
	// the 346 tokens of its tool-use system prompt.
	if got, want := agentrt.InputTokens("anthropic", req), text+8*4+8+16+16+346; got != want {
		t.Errorf("anthropic: %d, want %d", got, want)
	}
	req.Model = "llama3.1:8b"
	if got, want := agentrt.InputTokens("openai", req), text+8*4+8+16+16+512; got != want {
		t.Errorf("an OpenAI-compatible model: %d, want %d", got, want)
	}
	if got, want := agentrt.InputTokens("test", req), agentrt.EstimateUsage(req, agentrt.Message{}).Input; got != want {
		t.Errorf("the test model: %d, want %d", got, want)
	}
}

func BenchmarkInputTokens(b *testing.B) {
	ar, err := txtar.ParseFile("testdata/tokens.txtar")
	if err != nil {
		b.Fatal(err)
	}
	var r struct {
		Messages []agentrt.Message
	}
	if err := json.Unmarshal(ar.Files[0].Data, &r); err != nil {
		b.Fatal(err)
	}
	for _, model := range []string{"gpt-4o-mini", "gpt-4-turbo", "claude-sonnet-4-5"} {
		req := &agentrt.Request{Model: model, Messages: r.Messages}
		provider := "openai"
		if strings.HasPrefix(model, "claude") {
			provider = "anthropic"
		}
		agentrt.InputTokens(provider, req) // the vocabulary is loaded
		b.Run(model, func(b *testing.B) {
			for b.Loop() {
				agentrt.InputTokens(provider, req)
			}
		})
	}
}

// TestReplayCountsLinear: a run with a token budget counts its requests'
// input every round (the answer reserve counts a gathering and an
// answering turn, and the call made is counted again), and a replay does
// too; each message is counted once, not every round, so the texts a
// replay of 4R rounds gives the tokeniser are about 4 times those of R
// rounds, not 16.
func TestReplayCountsLinear(t *testing.T) {
	const r = 40
	texts := func(rounds int) int {
		file := recordRun(t, rounds, tokenBudget, gpt)
		stop := agentrt.CountTexts()
		defer func() {
			if stop != nil {
				stop()
			}
		}()
		replayRun(t, file, rounds, tokenBudget, gpt)
		n := stop()
		stop = nil
		return n
	}
	short, long := texts(r), texts(4*r)
	t.Logf("%d rounds: %d texts counted; %d rounds: %d", r, short, 4*r, long)
	if long > 5*short {
		t.Errorf("a replay of %d rounds counted %d texts, of %d rounds %d: %.1f times as many", r, short, 4*r, long, float64(long)/float64(short))
	}
}
