package cost

import (
	"errors"
	"strings"
	"testing"
)

func TestLookup(t *testing.T) {
	tab := Embedded()
	for _, c := range []struct {
		provider, model, key string // key "": no price
	}{
		{"openai", "gpt-4o", "gpt-4o"},
		{"openai", "gpt-4o-2024-08-06", "gpt-4o"},            // a dated snapshot
		{"openai", "gpt-4o-2024-05-13", "gpt-4o-2024-05-13"}, // an exact entry wins
		{"openai", "gpt-4o-mini", "gpt-4o-mini"},
		{"openai", "gpt-4o-mini-2024-07-18", "gpt-4o-mini"},
		{"openai", "o4-mini-2025-04-16", "o4-mini"},
		{"openai", "gpt-4o-audio-preview", ""}, // no prefix match
		{"openai", "gpt-4", ""},
		{"openai", "llama3.1:8b", ""},
		{"openai", "claude-sonnet-4-5", ""}, // another provider's model
		{"anthropic", "claude-sonnet-4-5-20250929", "claude-sonnet-4-5"},
		{"anthropic", "claude-sonnet-4-20250514", "claude-sonnet-4"},
		{"anthropic", "claude-3-5-haiku-latest", "claude-3-5-haiku"},
		{"anthropic", "claude-sonnet-4-5-2025", ""}, // not a date
		{"test", "anything", "test"},                // the offline model is free
	} {
		p, ok := tab.Lookup(c.provider, c.model)
		if ok != (c.key != "") || p.Key != c.key {
			t.Errorf("Lookup(%s, %s) = %q, %v; want %q", c.provider, c.model, p.Key, ok, c.key)
		}
	}
}

func TestEmbedded(t *testing.T) {
	tab := Embedded()
	if tab.AsOf == "" || tab.Source == "" {
		t.Fatalf("the embedded table lacks its date or source: %+v", tab)
	}
	for _, e := range tab.Entries() {
		prov, model, _ := strings.Cut(e, "/")
		p, _ := tab.Lookup(prov, model)
		if p.Input <= 0 || p.Output < p.Input || p.CachedInput > p.Input || p.ContextWindow <= 0 || p.MaxOutput <= 0 || p.MaxOutput > p.ContextWindow {
			t.Errorf("%s: implausible entry %+v", e, p)
		}
	}
}

func TestUSD(t *testing.T) {
	p := Price{Input: 2.5, CachedInput: 1.25, Output: 10}
	// 1e6 input of which 4e5 cached, 1e5 output:
	// 6e5×2.5/1e6 + 4e5×1.25/1e6 + 1e5×10/1e6 = 1.5 + 0.5 + 1 = 3.
	if got := p.USD(1_000_000, 400_000, 100_000); got != 3 {
		t.Errorf("USD = %v, want 3", got)
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{`{"as_of": "2025-01-01", "models": {}}`, ""},
		{"{\n  \"as_of\": \"soon\", \"models\": {}}", "p.json:2:12: as_of: want the date"},
		{`{"as_of": "2025-01-01"}`, "p.json:1:1: the price table: missing models"},
		{"{\"as_of\": \"2025-01-01\", \"models\": {\"openai\": {\"m\": {\"input\": 1, \"outptu\": 2}}}}", `p.json:1:65: models.openai.m: unknown field "outptu"`},
		{"{\"as_of\": \"2025-01-01\",\n\"models\": {\"openai\": {\"m\": {\"input\": -1, \"output\": 2}}}}", "p.json:2:38: models.openai.m.input: want a number of at least 0, not -1"},
		{"{\"as_of\": \"2025-01-01\", \"models\": {\"openai\": {\"m\": {\"input\": 1}}}}", "models.openai.m: missing output"},
		{"{\"as_of\": \"2025-01-01\", \"models\": {\"openai\": {\"m\": {\"input\": 1, \"output\": 1, \"context_window\": 1.5}}}}", "context_window: want a whole number"},
		{"{\"as_of\": \"2025-01-01\",\n \"models\": {\"openai\": [1]}}", "p.json:2:23: models.openai: want an object"},
		{"{\"as_of\": \"2025-01-01\", \"as_of\": \"2025-01-02\", \"models\": {}}", `p.json:1:25: "as_of" appears twice`},
		{"{\"as_of\": \"2025-01-01\",\n \"models\": {,}}", "p.json:2:"},
		{"{} {}", "p.json:1:4: data after"},
		{"", "p.json:1:1: not JSON"},
	} {
		_, err := Parse("p.json", []byte(c.data), "p.json")
		var fe *FileError
		switch {
		case c.want == "" && err != nil:
			t.Errorf("Parse(%q): %v", c.data, err)
		case c.want != "" && (!errors.As(err, &fe) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("Parse(%q) = %v, want an error with %q", c.data, err, c.want)
		}
	}
}

func TestExtend(t *testing.T) {
	tab := Embedded()
	u, err := Parse("mine.json", []byte(`{"as_of": "2026-01-01", "models": {"openai": {"gpt-4o": {"input": 1, "output": 2}, "llama3.1:8b": {"input": 0, "output": 0, "context_window": 8192}}}}`), "mine.json")
	if err != nil {
		t.Fatal(err)
	}
	tab.Extend(u)
	// The file's entry replaces the embedded one whole: no context window now.
	if p, _ := tab.Lookup("openai", "gpt-4o-2024-08-06"); p.Input != 1 || p.CachedInput != 1 || p.ContextWindow != 0 || p.From != "mine.json" || p.AsOf != "2026-01-01" {
		t.Errorf("gpt-4o after Extend: %+v", p)
	}
	if p, ok := tab.Lookup("openai", "llama3.1:8b"); !ok || p.ContextWindow != 8192 {
		t.Errorf("llama3.1:8b after Extend: %+v, %v", p, ok)
	}
	if p, _ := tab.Lookup("openai", "gpt-4o-mini"); p.Input != 0.15 || p.From != "" {
		t.Errorf("gpt-4o-mini after Extend: %+v", p)
	}
}
