// Package tokencount counts the tokens a text costs a model: with the
// model's own tokeniser where one is public (OpenAI's o200k_base and
// cl100k_base, compiled in), and else as a bound that never counts fewer
// than a byte-level tokeniser can use, a token a byte. The vocabularies
// are decoded on first use, never at start.
//
// Profiles also hold what a provider adds to a request around the text it
// carries (the markers around each message, the preamble tools are
// rendered under), from the figures the providers publish; docs/tokens.md
// says where each comes from.
package tokencount

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer/codec"
)

// MaxTokenBytes is the most bytes one token covers in the vocabularies
// agentc has, o200k_base and cl100k_base: in both the longest is a run of
// 128 blanks (TestMaxTokenBytes), and English text makes about four bytes
// a token. So a text of n bytes is at least n/MaxTokenBytes tokens, and n
// tokens make at most n*MaxTokenBytes bytes. Anthropic's and Google's
// tokenisers are not public; theirs are taken to be no longer.
const MaxTokenBytes = 128

// Profile is how one family of models is counted: the tokeniser of its
// text and the tokens a provider adds around it.
type Profile struct {
	// Name says which profile counted, for docs and messages.
	Name string
	// Encoding is the tokeniser: "o200k_base", "cl100k_base", or "" for a
	// token a byte.
	Encoding string
	// Message is added for each message (its role's markers), Call for each
	// tool call in a message, Tool for each tool (and for a native answer
	// format), Tools once for a request that sends tools (the preamble
	// they are rendered under), and Reply once for a request (the markers
	// that start the reply).
	Message, Call, Tool, Tools, Reply int
}

// The profiles, by provider and model. The figures are upper bounds of
// what each provider documents; docs/tokens.md gives their origin.
var (
	// OpenAI's cookbook ("How to count tokens with tiktoken"): 3 a message
	// and 1 for a name, 3 to prime the reply; for tools, 7 (gpt-4o) or 10
	// (gpt-4, gpt-3.5) a function and 12 for the list. A tool's schema is
	// counted as the JSON sent, longer than the form it is rendered in.
	o200k  = Profile{Name: "openai o200k_base", Encoding: "o200k_base", Message: 4, Call: 8, Tool: 10, Tools: 12, Reply: 3}
	cl100k = Profile{Name: "openai cl100k_base", Encoding: "cl100k_base", Message: 4, Call: 8, Tool: 10, Tools: 12, Reply: 3}
	// Anthropic publishes no tokeniser, nor what a message adds; it does
	// publish the system prompt tool use adds: 346 tokens at most for the
	// current models.
	anthropic = Profile{Name: "anthropic, a token a byte", Message: 8, Call: 16, Tool: 16, Tools: 346, Reply: 8}
	// Any other model: a chat template whose tool preamble is unknown.
	bytes = Profile{Name: "a token a byte", Message: 8, Call: 16, Tool: 16, Tools: 512, Reply: 8}
)

// openAIModels maps the start of an OpenAI model's name to its profile;
// the first that matches counts. A gateway's prefix ("openai/") and a
// fine-tuned model's ("ft:") are dropped first.
var openAIModels = []struct {
	prefix string
	p      *Profile
}{
	{"gpt-5", &o200k},
	{"gpt-4.1", &o200k},
	{"gpt-4.5", &o200k},
	{"gpt-4o", &o200k},
	{"chatgpt-4o", &o200k},
	{"gpt-oss", &o200k},
	{"o1", &o200k},
	{"o3", &o200k},
	{"o4", &o200k},
	{"gpt-4", &cl100k},
	{"gpt-3.5", &cl100k},
	{"gpt-35", &cl100k},
}

// For returns the counter of a provider's model: "openai" covers every
// OpenAI-compatible server, and a model whose name is not one of
// OpenAI's is counted a token a byte.
func For(provider, model string) Counter {
	switch provider {
	case "anthropic":
		return Counter{&anthropic}
	case "openai":
		name := strings.ToLower(model)
		name = strings.TrimPrefix(strings.TrimPrefix(name, "openai/"), "ft:")
		for _, m := range openAIModels {
			if strings.HasPrefix(name, m.prefix) {
				return Counter{m.p}
			}
		}
	}
	return Counter{&bytes}
}

// Counter counts text for one profile. The zero Counter counts a token a
// byte with no allowances.
type Counter struct{ p *Profile }

// Profile returns the counter's profile.
func (c Counter) Profile() Profile {
	if c.p == nil {
		return Profile{Name: "a token a byte"}
	}
	return *c.p
}

// Exact reports whether the counter uses the model's own tokeniser, so
// that its count is close above what the provider charges rather than a
// bound several times it.
func (c Counter) Exact() bool { return c.p != nil && c.p.Encoding != "" }

// Text returns the tokens of s.
func (c Counter) Text(s string) int {
	if s == "" {
		return 0
	}
	if c.p == nil || c.p.Encoding == "" || len(s) > Whole {
		return len(s)
	}
	return encodings[c.p.Encoding].count(s)
}

// encoding is a tokeniser loaded on first use, with the counts of the
// long texts it has counted (a conversation is sent again each round).
type encoding struct {
	load func() *codec.Codec
	mu   sync.Mutex
	memo map[string]int
	held int // bytes of the texts in memo
}

var encodings = map[string]*encoding{
	"o200k_base":  {load: sync.OnceValue(codec.NewO200kBase)},
	"cl100k_base": {load: sync.OnceValue(codec.NewCl100kBase)},
}

// Texts shorter than memoFrom are counted again, faster than looked up;
// the memo holds at most memoSize texts and memoBytes of them (it keeps
// them alive, not copies) and starts again empty when full.
const (
	memoFrom  = 256
	memoSize  = 4096
	memoBytes = 16 << 20
)

func (e *encoding) count(s string) int {
	if len(s) >= memoFrom {
		e.mu.Lock()
		n, ok := e.memo[s]
		e.mu.Unlock()
		if ok {
			return n
		}
	}
	n := 0
	c := e.load()
	for rest := s; rest != ""; {
		part, extra := cut(rest)
		k, err := c.Count(part)
		if err != nil {
			k = len(part) // the tokeniser failed: no count a byte-level one could pass
		} else {
			// The tokeniser's pre-tokenising pattern (tiktoken-go v0.10.0)
			// matches no DEL (0x7f), so it drops each one unencoded; the
			// model's tokeniser makes a token of it. A text of DELs (a
			// tool's output can be anything) would count nothing.
			k += strings.Count(part, "\x7f")
		}
		n += k + extra
		rest = rest[len(part):]
	}
	if len(s) >= memoFrom {
		e.mu.Lock()
		if e.memo == nil || len(e.memo) >= memoSize || e.held+len(s) > memoBytes {
			e.memo, e.held = make(map[string]int), 0
		}
		if len(s) <= memoBytes {
			e.memo[s] = n
			e.held += len(s)
		}
		e.mu.Unlock()
	}
	return n
}

// The tokeniser's pre-tokenising pattern takes time quadratic in the
// length of some pieces (a run of blanks and newlines), so a text is
// counted in parts of at most window bytes, cut where both OpenAI
// patterns end a piece (see cuttable): the parts then count as the whole
// does. A window holding no such place is cut at short bytes, on a
// character's start, and the part counts one token more, as a margin for
// the piece the cut may split (which, split, takes more tokens, not
// fewer, in every text TestParts counts).
const (
	window = 4096
	short  = 256
)

// Texts longer than Whole bytes are counted a token a byte, bounding the
// time one count takes: so long a text is more than the context window of
// most of OpenAI's models holds. Such a count is a ceiling, about four
// times the real one; the least such a text can be is a token for every
// MaxTokenBytes.
const Whole = 1 << 20

// cut returns the first part of s to count, and the tokens to add to its
// count.
func cut(s string) (part string, extra int) {
	if len(s) <= window {
		return s, 0
	}
	for i := window - 1; i > 0; i-- {
		if utf8.RuneStart(s[i]) && cuttable(s, i) {
			return s[:i], 0
		}
	}
	// A character's start within short bytes; in a run of bytes that
	// start none (invalid UTF-8, which a tool's output may be), at short
	// itself: the part is never empty, so the count goes on.
	i := short
	for i > 1 && !utf8.RuneStart(s[i]) {
		i--
	}
	if !utf8.RuneStart(s[i]) {
		i = short
	}
	return s[:i], 1
}

// cuttable reports whether o200k_base's and cl100k_base's patterns both
// end a piece at s[i], a character's start: after a newline before a
// character that is not blank (nor a slash, which o200k_base's piece of
// punctuation takes after newlines); before a space between a character
// that is not blank and a letter (the space starts the word's piece);
// after a letter or digit before a character that is neither, nor a mark
// or an apostrophe (which a word's piece may take).
func cuttable(s string, i int) bool {
	p, _ := utf8.DecodeLastRuneInString(s[:i])
	r, n := utf8.DecodeRuneInString(s[i:])
	switch {
	case p == '\n':
		return !unicode.IsSpace(r) && r != '/'
	case r == ' ':
		next, _ := utf8.DecodeRuneInString(s[i+n:])
		if !unicode.IsSpace(p) && unicode.IsLetter(next) {
			return true
		}
	}
	return (unicode.IsLetter(p) || unicode.IsNumber(p)) &&
		!unicode.IsLetter(r) && !unicode.IsNumber(r) && !unicode.IsMark(r) && r != '\'' && r != '’'
}
