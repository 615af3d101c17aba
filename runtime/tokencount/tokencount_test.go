package tokencount

import (
	"os"
	"strings"
	"sync"
	"testing"
)

// TestFor: a provider's model gets the profile of its tokeniser; a model
// of no public tokeniser, or another provider, a token a byte.
func TestFor(t *testing.T) {
	for _, c := range []struct {
		provider, model, profile string
		exact                    bool
	}{
		{"openai", "gpt-4o-mini", "openai o200k_base", true},
		{"openai", "gpt-4o-2024-08-06", "openai o200k_base", true},
		{"openai", "gpt-4.1-nano", "openai o200k_base", true},
		{"openai", "gpt-5", "openai o200k_base", true},
		{"openai", "o3-mini", "openai o200k_base", true},
		{"openai", "o4-mini", "openai o200k_base", true},
		{"openai", "openai/gpt-4o", "openai o200k_base", true},
		{"openai", "GPT-4o", "openai o200k_base", true},
		{"openai", "ft:gpt-4o-mini-2024-07-18:acme::abc123", "openai o200k_base", true},
		{"openai", "gpt-4-turbo", "openai cl100k_base", true},
		{"openai", "gpt-3.5-turbo", "openai cl100k_base", true},
		{"openai", "llama3.1:8b", "a token a byte", false},
		{"openai", "", "a token a byte", false},
		{"anthropic", "claude-sonnet-4-5", "anthropic, a token a byte", false},
		{"anthropic", "gpt-4o", "anthropic, a token a byte", false},
		{"test", "gpt-4o", "a token a byte", false},
	} {
		got := For(c.provider, c.model)
		if got.Profile().Name != c.profile || got.Exact() != c.exact {
			t.Errorf("For(%q, %q) = %s (exact %v); want %s (exact %v)", c.provider, c.model, got.Profile().Name, got.Exact(), c.profile, c.exact)
		}
	}
}

// TestText: the counts OpenAI's cookbook ("How to count tokens with
// tiktoken") gives for its examples, and a token a byte where the
// tokeniser is not public.
func TestText(t *testing.T) {
	o, cl := For("openai", "gpt-4o"), For("openai", "gpt-4")
	for _, c := range []struct {
		text      string
		o200k, cl int
	}{
		{"", 0, 0},
		{"tiktoken is great!", 6, 6},
		{"antidisestablishmentarianism", 6, 6},
		{"お誕生日おめでとう", 8, 9},
		{"2 + 2 = 4", 7, 7},
	} {
		if n := o.Text(c.text); n != c.o200k {
			t.Errorf("o200k_base %q: %d tokens, want %d", c.text, n, c.o200k)
		}
		if n := cl.Text(c.text); n != c.cl {
			t.Errorf("cl100k_base %q: %d tokens, want %d", c.text, n, c.cl)
		}
		for _, b := range []Counter{{}, For("anthropic", "claude-opus-4-1"), For("openai", "qwen3")} {
			if n := b.Text(c.text); n != len(c.text) {
				t.Errorf("%s %q: %d tokens, want %d", b.Profile().Name, c.text, n, len(c.text))
			}
		}
	}
}

// TestTextMemo: a long text counts the same from the memo as counted
// afresh, from many goroutines at once (run with -race), and the memo
// stays within its bounds.
func TestTextMemo(t *testing.T) {
	c := For("openai", "gpt-4o")
	long := strings.Repeat("The export button does nothing on Firefox; ", 40)
	want := c.Text(long)
	if want < 100 || want > len(long)/3 {
		t.Fatalf("%d tokens for %d bytes of English", want, len(long))
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				if n := c.Text(long); n != want {
					t.Errorf("counted again: %d, want %d", n, want)
				}
				// Texts that fill the memo, so that it starts again.
				_ = c.Text(strings.Repeat("x", memoFrom) + string(rune('a'+g)) + strings.Repeat("y", i))
			}
		}()
	}
	wg.Wait()
	e := encodings["o200k_base"]
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.memo) > memoSize || e.held > memoBytes {
		t.Errorf("memo of %d texts, %d bytes", len(e.memo), e.held)
	}
}

// TestPastWhole: a text past a mebibyte is counted a token a byte.
func TestPastWhole(t *testing.T) {
	s := strings.Repeat("word ", Whole/5+1)
	if n := For("openai", "gpt-4o").Text(s); n != len(s) {
		t.Errorf("%d bytes: %d tokens, want a token a byte", len(s), n)
	}
}

// TestInvalidUTF8: text that is not UTF-8 (a tool's binary output) is
// counted without error, and never as more than a token a byte.
func TestInvalidUTF8(t *testing.T) {
	s := "\xff\xfe\x00binary\x80\x81 data"
	for _, c := range []Counter{For("openai", "gpt-4o"), For("openai", "gpt-4")} {
		if n := c.Text(s); n <= 0 || n > len(s) {
			t.Errorf("%s: %d tokens for %d bytes", c.Profile().Name, n, len(s))
		}
	}
}

// BenchmarkText counts English prose, JSON and Japanese of about 4 KiB
// with each tokeniser, the vocabularies already loaded and the memo off.
func BenchmarkText(b *testing.B) {
	texts := map[string]string{
		"prose": strings.Repeat("The export button does nothing on Firefox 128; the console shows a TypeError. ", 52),
		"json":  strings.Repeat(`{"kind":"bug","severity":"high","component":"export","id":1234567},`, 62),
		"ja":    strings.Repeat("東京は日本の首都であり、世界最大級の都市圏を持つ。", 55),
	}
	for _, enc := range []string{"o200k_base", "cl100k_base"} {
		e := encodings[enc]
		c := e.load()
		for _, name := range []string{"prose", "json", "ja"} {
			s := texts[name]
			b.Run(enc+"/"+name, func(b *testing.B) {
				b.SetBytes(int64(len(s)))
				for b.Loop() {
					if _, err := c.Count(s); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestParts: a long text counted in parts counts as it does whole where
// the parts are cut at the places both patterns end a piece (prose,
// code, JSON on one line, YAML, several scripts), and never less, nor
// more than a few tokens a cut more, where a window held no such place;
// a pathological text (a long run of blanks and newlines) is counted in
// parts too, quickly.
func TestParts(t *testing.T) {
	texts := map[string]string{
		"ja+ru+ar": strings.Repeat("東京は日本の首都である。\nМосква — столица России.\nالقاهرة هي عاصمة مصر.\n  /path/to\n", 300),
		"one line": strings.Repeat(`{"kind":"bug","severity":"high","component":"export","id":1234567},`, 200),
		"blanks":   strings.Repeat(" \n", 6000),
		"base64":   strings.Repeat("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NTY3ODk=", 300),
		"letters":  strings.Repeat("a", 20000),
	}
	for _, f := range []string{"../../README.md", "../../docs/run.md", "../run.go", "../../testdata/corpora/openai-openapi/openapi.yaml", "../../testdata/corpora/schemastore-sample/index.json"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts[f] = string(b[:min(len(b), 128<<10)])
	}
	for _, enc := range []string{"o200k_base", "cl100k_base"} {
		e := encodings[enc]
		for name, s := range texts {
			whole, err := e.load().Count(s)
			if err != nil {
				t.Fatal(err)
			}
			extra := 0
			for rest := s; rest != ""; {
				part, x := cut(rest)
				extra += x
				rest = rest[len(part):]
			}
			got := (&encoding{load: e.load}).count(s)
			if got < whole || extra == 0 && got != whole || got > whole+4*extra {
				t.Errorf("%s, %s: %d tokens in parts (%d cuts that may split a piece), %d whole", enc, name, got, extra, whole)
			}
		}
	}
}

// FuzzText: any text (a model's, a tool's output) is counted by each
// tokeniser without a panic, at least one token when it is not empty and
// never more tokens than bytes.
func FuzzText(f *testing.F) {
	for _, s := range []string{"hello world", "  \n\t", "日本語のテキスト", "\xff\xfe\x00", "<|endoftext|>", "a\u0301\u0301\u0301", strings.Repeat("ab1 ", 300)} {
		f.Add(s)
	}
	counters := []Counter{For("openai", "gpt-4o"), For("openai", "gpt-4"), For("anthropic", "claude-sonnet-4-5")}
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range counters {
			n := c.Text(s)
			if s != "" && n < 1 || n > len(s) && c.Exact() {
				t.Errorf("%s: %d tokens for %d bytes", c.Profile().Name, n, len(s))
			}
		}
	})
}

// TestDEL: a DEL (0x7f), which the tokeniser's library drops unencoded,
// counts a token of its own, as in the model's tokeniser.
func TestDEL(t *testing.T) {
	for _, model := range []string{"gpt-4o", "gpt-4"} {
		c := For("openai", model)
		// "a", then the DEL and "b" as one piece of two bytes, which no
		// token merges.
		if got := c.Text("a\x7fb"); got != 3 {
			t.Errorf("%s: a DEL between two letters counts %d tokens, want 3", model, got)
		}
		if got := c.Text(strings.Repeat("\x7f", 100)); got < 100 {
			t.Errorf("%s: 100 DELs count %d tokens", model, got)
		}
	}
}

// TestInvalidRuns: a long run of bytes that start no character (invalid
// UTF-8, as a tool's output may be) is cut and counted: it panicked where
// no byte of the run started one, and looped for ever where only its first
// byte did. Each byte counts at least a token.
func TestInvalidRuns(t *testing.T) {
	for _, model := range []string{"gpt-4o", "gpt-4"} {
		c := For("openai", model)
		for _, s := range []string{
			strings.Repeat("\x9a", 2*window+1),
			"\xc1" + strings.Repeat("\x9a", 2*window),
			"ab" + strings.Repeat("\x9a", window) + "\xc1" + strings.Repeat("\x9a", window),
		} {
			if got := c.Text(s); got < len(s)/4 {
				t.Errorf("%s: %d bytes of invalid UTF-8 count %d tokens", model, len(s), got)
			}
		}
	}
}

// TestMaxTokenBytes: no token of either vocabulary covers more bytes than
// MaxTokenBytes, and the longest covers that many.
func TestMaxTokenBytes(t *testing.T) {
	for name, e := range encodings {
		c := e.load()
		longest, tokens := 0, 0
		for id := uint(0); id < 1<<18; id++ {
			s, err := c.Decode([]uint{id})
			if err != nil {
				continue // an ID no token has (a special token's, or past the last)
			}
			tokens++
			longest = max(longest, len(s))
		}
		if tokens < 100000 || longest != MaxTokenBytes {
			t.Errorf("%s: %d tokens, the longest %d bytes; MaxTokenBytes is %d", name, tokens, longest, MaxTokenBytes)
		}
	}
}
