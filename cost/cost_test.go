package cost

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
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
		{"openai", "o4-mini-high", "o4-mini"},
		{"openai", "gpt-4o-audio-preview-2025-06-03", "gpt-4o-audio-preview"},
		{"openai", "gpt-4o-mini-x", ""}, // no prefix match
		{"openai", "llama3.1:8b", ""},
		{"openai", "claude-sonnet-4-5", ""}, // another provider's model
		{"anthropic", "claude-sonnet-4-5-20250929", "claude-sonnet-4-5"},
		{"anthropic", "claude-sonnet-4-20250514", "claude-sonnet-4-0"}, // an alias, itself dated
		{"anthropic", "claude-sonnet-4", "claude-sonnet-4-0"},
		{"anthropic", "claude-3-5-haiku-latest", "claude-3-5-haiku-latest"},
		{"anthropic", "claude-3-5-haiku-20241022", "claude-3-5-haiku-latest"}, // an alias without its date
		{"anthropic", "claude-sonnet-4-5-2025", ""},                           // not a date
		{"test", "anything", "test"},                                          // the offline model is free
	} {
		p, ok := tab.Lookup(c.provider, c.model)
		if ok != (c.key != "") || p.Key != c.key {
			t.Errorf("Lookup(%s, %s) = %q, %v; want %q", c.provider, c.model, p.Key, ok, c.key)
		}
	}
}

// TestEmbedded: the vendored table reads, says its date and origin, and
// every entry is a plausible price.
func TestEmbedded(t *testing.T) {
	tab := Embedded()
	if _, err := time.Parse(time.DateOnly, tab.AsOf); err != nil || !strings.HasPrefix(tab.Source, "genai-prices (MIT") {
		t.Fatalf("the embedded table lacks its date or origin: %q, %q", tab.AsOf, tab.Source)
	}
	if got := tab.Describe(); got != "the built-in table (genai-prices), as of "+tab.AsOf {
		t.Errorf("Describe() = %q", got)
	}
	for _, prov := range []string{"openai", "anthropic", "google", "bedrock", "azure"} {
		if ms, _ := tab.base.provider(prov); len(ms) == 0 {
			t.Errorf("no prices for %s", prov)
		}
	}
	for _, e := range tab.Entries() {
		prov, model, _ := strings.Cut(e, "/")
		p, _ := tab.Lookup(prov, model)
		if p.Input <= 0 || p.Output <= 0 || p.CachedInput > p.Input || p.MaxOutput > 0 && p.ContextWindow > 0 && p.MaxOutput > p.ContextWindow {
			t.Errorf("%s: implausible entry %+v", e, p)
		}
		for _, tier := range p.Tiers {
			if tier.Input < p.Input || tier.Output < p.Output {
				t.Errorf("%s: a tier cheaper than the base price: %+v", e, p)
			}
		}
	}
}

// TestEmbeddedRead: the shipped table, read a provider at a time and
// unchecked, is what a price file of the same bytes reads as, checked
// whole; so the check here is the check of every run's table.
func TestEmbeddedRead(t *testing.T) {
	whole, err := Parse("prices.json", embedded, "")
	if err != nil {
		t.Fatalf("the shipped table does not read as a price file: %v", err)
	}
	sameShipped(t, embedded, whole)
	if got, want := Embedded().Entries(), whole.Entries(); !slices.Equal(got, want) {
		t.Errorf("Entries() = %d entries, want %d", len(got), len(want))
	}
}

// TestEmbeddedShared: the runs of a batch look models up in tables
// over one shipped table at once, each provider read once.
func TestEmbeddedShared(t *testing.T) {
	s := readShipped(embedded)
	var wg sync.WaitGroup
	keys := make([]string, 16)
	for i := range keys {
		wg.Go(func() {
			tab := &Table{base: s}
			prov, model := "openai", "gpt-4o-2024-08-06"
			if i%2 == 1 {
				prov, model = "anthropic", "claude-sonnet-4"
			}
			p, _ := tab.Lookup(prov, model)
			keys[i] = p.Key
		})
	}
	wg.Wait()
	for i, k := range keys {
		if want := []string{"gpt-4o", "claude-sonnet-4-0"}[i%2]; k != want {
			t.Errorf("lookup %d found %q, want %q", i, k, want)
		}
	}
}

// modelName is a model of OpenAI's or Anthropic's as the docs write it.
var modelName = regexp.MustCompile(`\b(gpt-[0-9][a-z0-9.-]*[a-z0-9]|o[134](-mini)?(-[0-9]{4}-[0-9]{2}-[0-9]{2})?|claude-[a-z0-9.-]*[a-z0-9])\b`)

// TestCoversDocs: every model the examples, the README and the docs name
// has a price, a context window and an output limit, so that an estimate
// of it is bounded.
func TestCoversDocs(t *testing.T) {
	files, _ := filepath.Glob("../docs/*.md")
	more, _ := filepath.Glob("../examples/*.*")
	files = append(append(files, "../README.md"), more...)
	tab := Embedded()
	seen := map[string]bool{}
	for _, f := range files {
		if filepath.Base(f) == "tokens.md" {
			continue // names the prefixes a tokeniser is chosen by, not models
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range modelName.FindAllString(string(data), -1) {
			prov := "openai"
			if strings.HasPrefix(m, "claude-") {
				prov = "anthropic"
			}
			if seen[m] {
				continue
			}
			seen[m] = true
			p, ok := tab.Lookup(prov, m)
			if !ok || p.ContextWindow == 0 || p.MaxOutput == 0 {
				t.Errorf("%s names %s/%s, which the table prices as %+v, %v", f, prov, m, p, ok)
			}
		}
	}
	for _, m := range []string{"gpt-4o-2024-08-06", "claude-sonnet-4-5-20250929", "o4-mini-2025-04-16", "claude-sonnet-4-20250514"} {
		if !seen[m] {
			t.Errorf("the docs and examples name no %s: the scan missed it", m)
		}
	}
}

func TestUSD(t *testing.T) {
	p := Price{Input: 2.5, CachedInput: 1.25, Output: 10}
	// 1e6 input of which 4e5 cached, 1e5 output:
	// 6e5×2.5/1e6 + 4e5×1.25/1e6 + 1e5×10/1e6 = 1.5 + 0.5 + 1 = 3.
	if got := p.USD(1_000_000, 400_000, 0, 100_000); got != 3 {
		t.Errorf("USD = %v, want 3", got)
	}
}

// TestUSDCacheWrites: input written to the prompt cache is priced at
// cache_write, input's price when the file gives none; reads and writes
// are apart, and what they claim past the input is not priced.
func TestUSDCacheWrites(t *testing.T) {
	tab, err := Parse("p.json", []byte(`{"as_of": "2025-01-01", "models": {"anthropic": {
		"m": {"input": 3, "cached_input": 0.3, "cache_write": 3.75, "output": 15},
		"plain": {"input": 2, "output": 8},
		"tiered": {"input": 3, "cached_input": 0.3, "cache_write": 3.75, "output": 15,
			"tiers": [{"above": 200000, "input": 6, "cached_input": 0.6, "cache_write": 7.5, "output": 22.5}, {"above": 500000, "input": 9, "output": 30}]}}}}`), "")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := tab.Lookup("anthropic", "m")
	plain, _ := tab.Lookup("anthropic", "plain")
	tiered, _ := tab.Lookup("anthropic", "tiered")
	for _, c := range []struct {
		p                        Price
		in, cached, written, out int
		want                     float64
	}{
		// 1e5 uncached × $3 + 7e5 read × $0.3 + 2e5 written × $3.75 + 1e4 out × $15, per million.
		{m, 1_000_000, 700_000, 200_000, 10_000, 0.3 + 0.21 + 0.75 + 0.15},
		{m, 1000, 0, 1000, 0, 1000 * 3.75e-6},
		// Writes past the input that reads leave: only those priced.
		{m, 1000, 800, 900, 0, 800*0.3e-6 + 200*3.75e-6},
		{m, 1000, 0, -5, 0, 1000 * 3e-6},
		{plain, 1000, 0, 1000, 0, 1000 * 2e-6},
		{tiered, 300000, 100000, 200000, 0, 100000*0.6e-6 + 200000*7.5e-6},
		{tiered, 600000, 0, 600000, 0, 600000 * 9e-6}, // the tier's input when it gives no cache_write
	} {
		if got := c.p.USD(c.in, c.cached, c.written, c.out); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: USD(%d, %d, %d, %d) = %v, want %v", c.p.Key, c.in, c.cached, c.written, c.out, got, c.want)
		}
	}
	if m.CacheWrite != 3.75 || plain.CacheWrite != 2 || tiered.Tiers[1].CacheWrite != 9 {
		t.Errorf("cache_write read as %v, %v, %v; want 3.75, 2 (input's) and 9 (the tier's input)", m.CacheWrite, plain.CacheWrite, tiered.Tiers[1].CacheWrite)
	}
	if got := m.perToken(true); got != 15e-6 {
		t.Errorf("perToken = %v, want the output price", got)
	}
	hi := Price{Input: 3, CacheWrite: 20, Output: 15}
	if got, off := hi.perToken(true), hi.perToken(false); got != 20e-6 || off != 15e-6 {
		t.Errorf("perToken with writes %v, without %v; want 20e-6 and 15e-6", got, off)
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
		{"{\"as_of\": \"2025-01-01\", \"models\": {\"anthropic\": {\"m\": {\"input\": 1, \"output\": 2, \"cache_write\": -1.25}}}}", "p.json:1:96: models.anthropic.m.cache_write: want a number of at least 0, not -1.25"},
		{"{\"as_of\": \"2025-01-01\", \"models\": {\"anthropic\": {\"m\": {\"input\": 1, \"output\": 2, \"cache_write\": \"1.25\"}}}}", "models.anthropic.m.cache_write: want a number"},
		{"{\"as_of\": \"2025-01-01\", \"models\": {\"openai\": {\"m\": {\"input\": 1, \"output\": 1, \"context_window\": 1.5}}}}", "context_window: want a whole number"},
		{"{\"as_of\": \"2025-01-01\",\n \"models\": {\"openai\": [1]}}", "p.json:2:23: models.openai: want an object"},
		{"{\"as_of\": \"2025-01-01\", \"as_of\": \"2025-01-02\", \"models\": {}}", `p.json:1:25: "as_of" appears twice`},
		{"{\"as_of\": \"2025-01-01\",\n \"models\": {,}}", "p.json:2:"},
		{"{} {}", "p.json:1:4: data after"},
		{"{\"as_of\": \"2025-01-01\", \"models\": {\"openai\": {\"m\": {\"input\": 1, \"output\": 2, \"tiers\": {}}}}}", "p.json:1:87: models.openai.m.tiers: want a list of tiers"},
		{"{\"as_of\": \"2025-01-01\", \"models\": {\"openai\": {\"m\": {\"input\": 1, \"output\": 2, \"tiers\": [{\"above\": 10, \"input\": 2, \"output\": 4}, {\"above\": 10, \"input\": 3, \"output\": 5}]}}}}", "p.json:1:128: models.openai.m.tiers[1].above: want more than the tier before's (10)"},
		{"{\"as_of\": \"2025-01-01\", \"models\": {\"openai\": {\"m\": {\"input\": 1, \"output\": 2, \"tiers\": [{\"input\": 2, \"output\": 4}]}}}}", "models.openai.m.tiers[0]: missing above"},
		{"{\"as_of\": \"2025-01-01\", \"models\": {\"openai\": {\"m\": {\"input\": 1, \"output\": 2, \"aliases\": [\"n\", 3]}}}}", "p.json:1:95: models.openai.m.aliases: want a model name"},
		{"{\"as_of\": \"2025-01-01\", \"models\": {\"openai\": {\"m\": {\"input\": 1, \"output\": 2, \"aliases\": [\"n\"]}, \"k\": {\"input\": 1, \"output\": 2, \"aliases\": [\"n\"]}}}}", `models.openai.k.aliases: "n" is already another name of m`},
		{"{\"as_of\": \"2025-01-01\", \"models\": {\"openai\": {\"m\": {\"input\": 1, \"output\": 2, \"aliases\": [\"k\"]}, \"k\": {\"input\": 1, \"output\": 2}}}}", `p.json:1:90: models.openai.m.aliases: "k" is the name of an entry`},
		{"", "p.json:1:1: not JSON"},
		// Nested past what json.Valid allows: read by the decoder, refused
		// where it passes the bound.
		{`{"as_of": "2025-01-01", "models": {"openai": {"m": {"input": 1, "output": 2, "tiers": ` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}}}}`, "p.json:1:147: nested more than 64 levels deep"},
		// Nested deeper than a table is, whether or not the JSON is valid:
		// refused where it passes the bound, not read level by level (a
		// file of three million "[" ran the reader out of stack).
		{`{"as_of": "2025-01-01", "models": {"openai": {"m": {"input": 1, "output": 2, "tiers": ` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}}}}`, "p.json:1:147: nested more than 64 levels deep"},
		{strings.Repeat("[", 3_000_000), "p.json:1:65: nested more than 64 levels deep"},
		{strings.Repeat(`{"a":`, 1_000_000), "p.json:1:321: nested more than 64 levels deep"},
		// A price past a dollar a token: a run's cost could pass what a
		// float64 holds.
		{"{\"as_of\": \"2025-01-01\", \"models\": {\"openai\": {\"m\": {\"input\": 1e308, \"output\": 2}}}}", "p.json:1:62: models.openai.m.input: a price of at most 1e+06 USD a million tokens (a dollar a token), not 1e308"},
		{"{\"as_of\": \"2025-01-01\", \"models\": {\"openai\": {\"m\": {\"input\": 1, \"output\": 2, \"tiers\": [{\"above\": 10, \"input\": 2, \"output\": 1000001}]}}}}", "models.openai.m.tiers[0].output: a price of at most"},
		{"{\"as_of\": \"2025-01-01\", \"models\": {\"openai\": {\"m\": {\"input\": 1000000, \"output\": 2, \"context_window\": 1099511627776}}}}", ""},
		// A name that is not UTF-8 is named as the decoder reads it.
		{"{\"as_of\": \"2025-01-01\", \"models\": {\"openai\": {\"m\xff\": {\"input\": 1, \"output\": -1}}}}", "models.openai.m\ufffd.output: want a number of at least 0, not -1"},
	} {
		_, err := Parse("p.json", []byte(c.data), "p.json")
		var fe *FileError
		switch {
		case c.want == "" && err != nil:
			t.Errorf("Parse(%.200q): %.300v", c.data, err)
		case c.want != "" && (!errors.As(err, &fe) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("Parse(%.200q) = %.300v, want an error with %q", c.data, err, c.want)
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
	// An alias of the embedded entry names the file's entry of its key.
	if p, _ := tab.Lookup("openai", "gpt-4o-2024-11-20"); p.Input != 1 || p.From != "mine.json" {
		t.Errorf("gpt-4o-2024-11-20 after Extend: %+v", p)
	}
	if p, _ := tab.Lookup("openai", "gpt-4o-mini"); p.Input != 0.15 || p.From != "" {
		t.Errorf("gpt-4o-mini after Extend: %+v", p)
	}
	// The shipped table extending a file's replaces the file's entries
	// of the same key, and adds the rest.
	mine, err := Parse("mine.json", []byte(`{"as_of": "2026-01-01", "models": {"openai": {"gpt-4o": {"input": 1, "output": 2}, "llama3.1:8b": {"input": 0, "output": 0}}}}`), "mine.json")
	if err != nil {
		t.Fatal(err)
	}
	mine.Extend(Embedded())
	if p, _ := mine.Lookup("openai", "gpt-4o"); p.Input != 2.5 || p.From != "" {
		t.Errorf("gpt-4o of a file extended by the shipped table: %+v", p)
	}
	if p, ok := mine.Lookup("openai", "llama3.1:8b"); !ok || p.From != "mine.json" {
		t.Errorf("llama3.1:8b of a file extended by the shipped table: %+v, %v", p, ok)
	}
	if p, ok := mine.Lookup("anthropic", "claude-sonnet-4"); !ok || p.Key != "claude-sonnet-4-0" {
		t.Errorf("claude-sonnet-4 of a file extended by the shipped table: %+v, %v", p, ok)
	}
	// Each Embedded is a table of its own: the one extended changed no other.
	if p, _ := Embedded().Lookup("openai", "gpt-4o-2024-11-20"); p.Input != 2.5 || p.From != "" || len(Embedded().Files) != 0 {
		t.Errorf("another Embedded after Extend: %+v", p)
	}
}

// TestTiers: a tier's prices apply to every token of a call whose input is
// more than its above, and the dearest rate of any tier bounds a token.
func TestTiers(t *testing.T) {
	tab, err := Parse("p.json", []byte(`{"as_of": "2025-01-01", "models": {"anthropic": {"m": {"input": 3, "cached_input": 0.3, "output": 15,
		"tiers": [{"above": 200000, "input": 6, "output": 22.5}]}}}}`), "")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := tab.Lookup("anthropic", "m")
	for _, c := range []struct {
		in, cached, out int
		want            float64
	}{
		{200000, 0, 1000, 0.6 + 0.015},                 // at the threshold: the base price
		{200001, 0, 1000, 200001*6e-6 + 1000*22.5e-6},  // past it: the tier's, for every token
		{300000, 100000, 0, 200000*6e-6 + 100000*6e-6}, // cached_input absent from the tier: its input's
	} {
		if got := p.USD(c.in, c.cached, 0, c.out); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("USD(%d, %d, %d) = %v, want %v", c.in, c.cached, c.out, got, c.want)
		}
	}
	// Calls of 150000 in each, 300000 together, are each below the tier.
	if got, want := p.USDCalls(150000, 300000, 0, 0, 1000), 300000*3e-6+1000*15e-6; math.Abs(got-want) > 1e-12 {
		t.Errorf("USDCalls(150000, 300000, 0, 0, 1000) = %v, want %v at the base price", got, want)
	}
	if got := p.perToken(true); got != 22.5e-6 {
		t.Errorf("perToken = %v, want the tier's output price", got)
	}
	// A tier no call can reach, past the context window, prices nothing.
	p.ContextWindow = 200000
	if got := p.perToken(true); got != 15e-6 {
		t.Errorf("perToken with a 200000-token window = %v, want the base output price", got)
	}
	p.ContextWindow = 200001
	if got := p.perToken(true); got != 22.5e-6 {
		t.Errorf("perToken with a 200001-token window = %v, want the tier's output price", got)
	}
}

// TestStale: a table dated more than the bound before now is warned of,
// once, the built-in table first; a bound of 0 warns of nothing.
func TestStale(t *testing.T) {
	tab := Embedded()
	u, err := Parse("mine.json", []byte(`{"as_of": "2020-01-01", "models": {"openai": {"gpt-test-1": {"input": 1, "output": 2}}}}`), "mine.json")
	if err != nil {
		t.Fatal(err)
	}
	tab.Extend(u)
	mine, _ := tab.Lookup("openai", "gpt-test-1")
	built, _ := tab.Lookup("openai", "gpt-4o")
	free, _ := tab.Lookup("test", "x")
	asOf, _ := time.Parse(time.DateOnly, tab.AsOf)
	prices := []Price{mine, free, built, mine, built}
	fresh := asOf.AddDate(0, 0, MaxAge)
	if got := Stale(prices, fresh, MaxAge); len(got) != 1 || !strings.HasPrefix(got[0], "the price file mine.json is dated 2020-01-01, more than 120 days ago") {
		t.Errorf("on the last fresh day: %q", got)
	}
	old := fresh.Add(24 * time.Hour)
	got := Stale(prices, old, MaxAge)
	if len(got) != 2 || !strings.HasPrefix(got[0], "the built-in price table is dated "+tab.AsOf+", more than 120 days ago") || !strings.Contains(got[1], "mine.json") {
		t.Errorf("a day later: %q", got)
	}
	if got := Stale(prices, old, 0); got != nil {
		t.Errorf("with the warning off: %q", got)
	}
	// A bound of more days than a date can add (AGENTC_PRICES_MAX_AGE
	// past 2^62) warns of nothing: the date it gave wrapped round to the
	// table's own, and every table was "more than 4611686018427387904
	// days" old.
	for _, days := range []int{1 << 40, 1 << 62, math.MaxInt} {
		if got := Stale(prices, old, days); got != nil {
			t.Errorf("a bound of %d days: %q", days, got)
		}
	}
	if got := tab.Describe(); got != "the built-in table (genai-prices), as of "+tab.AsOf+", extended by mine.json (as of 2020-01-01)" {
		t.Errorf("Describe() = %q", got)
	}
	// A date to come is warned of too: it would hide any age.
	future, err := Parse("future.json", []byte(`{"as_of": "2999-01-01", "models": {"openai": {"gpt-test-2": {"input": 1, "output": 2}}}}`), "future.json")
	if err != nil {
		t.Fatal(err)
	}
	tab.Extend(future)
	ahead, _ := tab.Lookup("openai", "gpt-test-2")
	if got := Stale([]Price{ahead, built}, asOf, MaxAge); len(got) != 1 || !strings.HasPrefix(got[0], "the price file future.json is dated 2999-01-01, a day still to come") {
		t.Errorf("a file dated 2999: %q", got)
	}
	if got := Stale([]Price{built}, asOf.AddDate(0, 0, -1), MaxAge); got != nil {
		t.Errorf("a table dated tomorrow (another time zone's today): %q", got)
	}
}

// BenchmarkEmbedded: what a run pays for the shipped table, once: its
// providers found, and one provider's entries read for a lookup.
func BenchmarkEmbedded(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		tab := &Table{base: readShipped(embedded)}
		if _, ok := tab.Lookup("openai", "gpt-4o-mini"); !ok {
			b.Fatal("no price for gpt-4o-mini")
		}
	}
}

// BenchmarkParse reads the shipped table whole, as a price file is read.
func BenchmarkParse(b *testing.B) {
	b.SetBytes(int64(len(embedded)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("prices.json", embedded, ""); err != nil {
			b.Fatal(err)
		}
	}
}

// wide is a price file whose root holds n members of short names besides
// its own (and, with dup, one more naming the one before it again: a name
// an object kept after it began to keep a map): as JSON, and, with a
// trailing comma, as text the decoder reads.
func wide(n int, dup, valid bool) []byte {
	var b strings.Builder
	b.WriteString(`{"as_of": "2025-01-01", "models": {}`)
	for i := range n {
		fmt.Fprintf(&b, `,"%x":0`, i)
	}
	if dup {
		fmt.Fprintf(&b, `,"%x":0`, n-1)
	}
	if !valid {
		b.WriteString(",")
	}
	b.WriteString("}")
	return []byte(b.String())
}

// TestParseWide: a name appearing twice is found among many (past the 16
// an object compares before it keeps a map of its names), in one pass
// and by the decoder, where it is. How long many names take to read is
// BenchmarkParseWide's to show (400,000 took six minutes before the map).
func TestParseWide(t *testing.T) {
	for _, valid := range []bool{true, false} {
		data := wide(1000, true, valid)
		_, err := Parse("p.json", data, "p.json")
		if want := fmt.Sprintf(`p.json:1:%d: "3e7" appears twice`, bytes.LastIndex(data, []byte(`"3e7"`))+1); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("valid %v: %v; want %q", valid, err, want)
		}
	}
}

// BenchmarkParseWide reads a 4 MiB price file of one object of many
// members (a price file's bound), to the first unknown one.
func BenchmarkParseWide(b *testing.B) {
	data := wide(400_000, false, true)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Parse("p.json", data, ""); err == nil {
			b.Fatal("read")
		}
	}
}
