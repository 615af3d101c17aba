package plan

import (
	"strings"
	"testing"
)

func TestCheckModelSettings(t *testing.T) {
	temp := func(f float64) *float64 { return &f }
	for _, c := range []struct {
		m    Model
		want string // "" for none; else the field and a part of the message
	}{
		{Model{Provider: "openai", Name: "gpt-4o-2024-08-06", Temperature: temp(1.5)}, ""},
		{Model{Provider: "openai", Name: "gpt-4o-2024-08-06", Reasoning: "high"}, "reasoning: OpenAI's gpt-4o-2024-08-06 is not a reasoning model"},
		{Model{Provider: "openai", Name: "gpt-4o", Reasoning: "none"}, ""},
		{Model{Provider: "openai", Name: "gpt-5-chat-latest", Reasoning: "low"}, "reasoning: OpenAI's gpt-5-chat-latest is not a reasoning model"},
		{Model{Provider: "openai", Name: "o3-mini", Temperature: temp(0)}, "temperature: OpenAI's o3-mini is a reasoning model and refuses any temperature but 1"},
		{Model{Provider: "openai", Name: "o4-mini", Temperature: temp(1)}, ""},
		{Model{Provider: "openai", Name: "gpt-5-mini", Temperature: temp(0.2)}, "temperature: OpenAI's gpt-5-mini is a reasoning model"},
		{Model{Provider: "openai", Name: "gpt-5.1", Temperature: temp(0.2)}, ""},
		{Model{Provider: "openai", Name: "gpt-5.2-2025-12-11", Temperature: temp(0.2), Reasoning: "none"}, ""},
		{Model{Provider: "openai", Name: "gpt-5.2", Temperature: temp(0.2), Reasoning: "medium"}, "temperature: OpenAI's gpt-5.2 takes a temperature only without reasoning"},
		{Model{Provider: "openai", Name: "gpt-5.2-pro", Temperature: temp(0.2)}, "temperature: OpenAI's gpt-5.2-pro is a reasoning model"},
		{Model{Provider: "openai", Name: "llama-3.1-70b", Temperature: temp(0.2), Reasoning: "high"}, ""},
		{Model{Provider: "anthropic", Name: "claude-sonnet-4-5", Temperature: temp(1.5)}, "temperature: Anthropic takes a temperature from 0 to 1"},
		{Model{Provider: "anthropic", Name: "claude-sonnet-4-5-20250929", Temperature: temp(0)}, ""},
		{Model{Provider: "anthropic", Name: "claude-3-5-haiku-latest", Temperature: temp(0.5)}, ""},
		{Model{Provider: "anthropic", Name: "claude-opus-4-20250514", Temperature: temp(0.5)}, ""},
		{Model{Provider: "anthropic", Name: "claude-opus-4-6", Temperature: temp(0.5)}, ""},
		{Model{Provider: "anthropic", Name: "claude-opus-4-7", Temperature: temp(0)}, "temperature: Anthropic's claude-opus-4-7 takes no temperature"},
		{Model{Provider: "anthropic", Name: "claude-haiku-4-5", Temperature: temp(0)}, ""},
		{Model{Provider: "anthropic", Name: "claude-haiku-4-6", Temperature: temp(0)}, "temperature: Anthropic's claude-haiku-4-6 takes no temperature"},
		{Model{Provider: "anthropic", Name: "claude-sonnet-5", Temperature: temp(0)}, "temperature: Anthropic's claude-sonnet-5 takes no temperature"},
		{Model{Provider: "anthropic", Name: "claude-fable-5", Temperature: temp(0)}, "temperature: Anthropic's claude-fable-5 takes no temperature"},
		{Model{Provider: "anthropic", Name: "claude-sonnet-4-5", Reasoning: "none"}, "reasoning: Anthropic's effort takes low, medium or high"},
		{Model{Provider: "anthropic", Name: "claude-sonnet-4-5", Reasoning: "high"}, ""},
		{Model{Provider: "test", Name: "x", Temperature: temp(2), Reasoning: "none"}, ""},
		{Model{Provider: "google", Name: "gemini-2.5-pro", Reasoning: "none"}, "reasoning: Google's gemini-2.5-pro cannot stop thinking"},
		{Model{Provider: "google", Name: "publishers/google/models/gemini-3-pro-preview", Reasoning: "none"}, "reasoning: cannot stop thinking"},
		{Model{Provider: "google", Name: "gemini-2.5-flash", Reasoning: "none", Temperature: temp(1.5)}, ""},
		{Model{Provider: "bedrock", Name: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", Temperature: temp(0.2)}, ""},
		{Model{Provider: "bedrock", Name: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", Reasoning: "high"}, "reasoning: thinks only without a forced tool call"},
		{Model{Provider: "bedrock", Name: "anthropic.claude-3-5-sonnet-20240620-v1:0", Temperature: temp(1.5)}, "temperature: takes a temperature from 0 to 1, not 1.5"},
		{Model{Provider: "bedrock", Name: "anthropic.claude-3-5-sonnet-20240620-v1:0", Reasoning: "low"}, "reasoning: does not reason"},
		{Model{Provider: "bedrock", Name: "global.anthropic.claude-opus-4-7-v1:0", Temperature: temp(0)}, "temperature: takes no temperature"},
		{Model{Provider: "bedrock", Name: "global.anthropic.claude-opus-4-7-v1:0", Reasoning: "high"}, "reasoning: takes its effort, not the thinking budget"},
		{Model{Provider: "bedrock", Name: "us.amazon.nova-pro-v1:0", Reasoning: "low"}, "reasoning: does not reason (Amazon Nova 2 does)"},
		{Model{Provider: "bedrock", Name: "us.amazon.nova-2-lite-v1:0", Reasoning: "low", Temperature: temp(0.7)}, ""},
		{Model{Provider: "bedrock", Name: "meta.llama3-70b-instruct-v1:0", Temperature: temp(1.5)}, ""},
		{Model{Provider: "anthropic", Name: "claude-sonnet-4-5", API: "responses"}, "api: chooses among OpenAI's APIs"},
	} {
		got := CheckModelSettings(c.m)
		if c.m.Cache != nil {
			t.Fatal("a case with cache belongs to TestCacheIgnored")
		}
		switch {
		case c.want == "" && len(got) > 0:
			t.Errorf("%+v: got %+v, want none", c.m, got)
		case c.want != "" && (len(got) != 1 || !strings.HasPrefix(c.want, got[0].Field+": ") || !strings.Contains(got[0].Msg, strings.SplitN(c.want, ": ", 2)[1]) || got[0].Warning):
			t.Errorf("%+v: got %+v, want an error %s", c.m, got, c.want)
		}
	}
}

// TestCacheIgnored: cache: true on a provider agentc asks for no cache
// is a warning at the setting; elsewhere, left out or false, nothing.
func TestCacheIgnored(t *testing.T) {
	on, off := true, false
	for _, c := range []struct {
		m    Model
		want string // a part of the warning; "" for none
	}{
		{Model{Provider: "google", Name: "gemini-2.5-flash", Cache: &on}, "Gemini caches on its own"},
		{Model{Provider: "bedrock", Name: "us.amazon.nova-pro-v1:0", Cache: &on}, "no cachePoint"},
		{Model{Provider: "google", Name: "gemini-2.5-flash", Cache: &off}, ""},
		{Model{Provider: "bedrock", Name: "us.amazon.nova-pro-v1:0"}, ""},
		{Model{Provider: "anthropic", Name: "claude-sonnet-4-5", Cache: &on}, ""},
		{Model{Provider: "openai", Name: "gpt-4o", Cache: &on}, ""},
	} {
		got := CheckModelSettings(c.m)
		switch {
		case c.want == "" && len(got) > 0:
			t.Errorf("%s: got %+v, want none", c.m.Provider, got)
		case c.want != "" && (len(got) != 1 || got[0].Field != "cache" || !got[0].Warning || !strings.Contains(got[0].Msg, c.want)):
			t.Errorf("%s: got %+v, want a warning at cache saying %q", c.m.Provider, got, c.want)
		}
	}
}
