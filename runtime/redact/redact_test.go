package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"testing"
)

func TestString(t *testing.T) {
	tests := []struct {
		name    string
		secrets []string
		in      string
		want    string
	}{
		{"as written", []string{"sk-live-12345"}, "Incorrect API key provided: sk-live-12345.", "Incorrect API key provided: [redacted]."},
		{"every occurrence", []string{"sk-live-12345"}, "sk-live-12345 and sk-live-12345", "[redacted] and [redacted]"},
		{"repeating itself", []string{"aaaaaaaa"}, "xaaaaaaaaaax", "x[redacted]x"},
		{"no secret", []string{"sk-live-12345"}, "nothing here", "nothing here"},
		{"prefix of another", []string{"sk-live-1", "sk-live-12345"}, "key sk-live-12345!", "key [redacted]!"},
		{"prefix of another, added first", []string{"sk-live-12345", "sk-live-1"}, "key sk-live-12345!", "key [redacted]!"},
		{"overlapping", []string{"AAAABBBB", "BBBBCCCC"}, "xAAAABBBBCCCCx", "x[redacted]x"},
		{"overlapping, reversed", []string{"BBBBCCCC", "AAAABBBB"}, "xAAAABBBBCCCCx", "x[redacted]x"},
		{"one inside another", []string{"0123456789abcdef", "456789ab"}, "<0123456789abcdef> <456789ab>", "<[redacted]> <[redacted]>"},
		{"adjacent", []string{"AAAAAAAA", "BBBBBBBB"}, "AAAAAAAABBBBBBBB", "[redacted][redacted]"},
		{"too short", []string{"abc", "1234567"}, "abc 1234567", "abc 1234567"},
		{"inside the marker", []string{"redacted"}, "redacted text", "redacted text"},
		{"JSON escapes", []string{`pa"ss\word`}, `{"k":"pa\"ss\\word"}`, `{"k":"[redacted]"}`},
		{"JSON control characters", []string{"line1\nline2\tx\x01"}, `"line1\nline2\tx\u0001"`, `"[redacted]"`},
		{"HTML escapes", []string{"a<b>&cdef"}, `"a\u003cb\u003e\u0026cdef" "a<b>&cdef"`, `"[redacted]" "[redacted]"`},
		{"line separators", []string{"abc\u2028defgh"}, `"abc\u2028defgh" "abc` + "\u2028" + `defgh"`, `"[redacted]" "[redacted]"`},
		{"multi-byte", []string{"clé-secrète"}, "the clé-secrète.", "the [redacted]."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Set
			s.Add(tt.secrets...)
			if got := s.String(tt.in); got != tt.want {
				t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got := s.Bytes([]byte(tt.in)); string(got) != tt.want {
				t.Errorf("Bytes(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestEncoded: a secret is gone from every encoding the run's outputs use,
// whatever characters it holds.
func TestEncoded(t *testing.T) {
	for _, secret := range []string{"sk-plain-0123456789", `q"uo\te<&>` + "\n\t\u2028\x7f", "naïve-ключ-🔑"} {
		var s Set
		s.Add(secret)
		doc := map[string]any{"message": "error: " + secret + ".", "list": []string{secret}, "name-" + secret: 1}
		html, _ := json.Marshal(doc)
		var plain bytes.Buffer
		enc := json.NewEncoder(&plain)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(doc)
		for _, text := range [][]byte{html, plain.Bytes()} {
			got := s.JSON(text)
			if !json.Valid(got) {
				t.Fatalf("%q: not JSON after redaction: %s", secret, got)
			}
			var back map[string]any
			_ = json.Unmarshal(got, &back)
			if strings.Contains(texts(back), secret) || bytes.Contains(got, []byte(secret)) {
				t.Errorf("%q survives in %s", secret, got)
			}
			if !bytes.Contains(got, []byte(Marker)) {
				t.Errorf("%q: no marker in %s", secret, got)
			}
		}
	}
}

// texts returns every string and member name in a decoded JSON value, a
// line each.
func texts(v any) string {
	var sb strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			sb.WriteString(v + "\n")
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for k, e := range v {
				sb.WriteString(k + "\n")
				walk(e)
			}
		}
	}
	walk(v)
	return sb.String()
}

// TestJSONStaysJSON: a secret that the JSON syntax straddles is still
// replaced, and the text stays JSON.
func TestJSONStaysJSON(t *testing.T) {
	tests := []struct {
		secret, in, want string
	}{
		{"12345678", `{"pin":12345678,"n":"x12345678x"}`, `{"n":"x[redacted]x","pin":"[redacted]"}`},
		{`a","b":"`, `{"x":"a","b":"c"}`, `{"x":"[redacted]c"}`},
		{`x":12345678`, `{"ax":12345678}`, `"[redacted]"`},
		{"sk-live-12345", `{"k": "sk-live-12345"}`, `{"k": "[redacted]"}`},
		{"sk-live-12345", `not json sk-live-12345`, `not json [redacted]`},
	}
	for _, tt := range tests {
		var s Set
		s.Add(tt.secret)
		got := s.JSON(json.RawMessage(tt.in))
		if string(got) != tt.want {
			t.Errorf("JSON(%s) with %q = %s, want %s", tt.in, tt.secret, got, tt.want)
		}
	}
}

func TestNoSecrets(t *testing.T) {
	var nilSet *Set
	in := "sk-live-12345"
	if nilSet.String(in) != in || string(nilSet.JSON(json.RawMessage(`"x"`))) != `"x"` || nilSet.Len() != 0 {
		t.Error("a nil set changed its input")
	}
	var s Set
	s.Add("", "short")
	if s.Len() != 0 || s.String(in) != in {
		t.Errorf("short values were added: %d", s.Len())
	}
	b := []byte("unchanged text")
	s.Add("sk-live-12345")
	if got := s.Bytes(b); &got[0] != &b[0] {
		t.Error("Bytes copied a text that holds no secret")
	}
}

func TestError(t *testing.T) {
	var s Set
	s.Add("sk-live-12345")
	base := &fs.PathError{Op: "open", Path: "sk-live-12345", Err: fs.ErrNotExist}
	err := s.Error(base)
	if got, want := err.Error(), "open [redacted]: file does not exist"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) {
		t.Error("the redacted error no longer wraps its cause")
	}
	plain := errors.New("nothing secret")
	if s.Error(plain) != plain || s.Error(nil) != nil {
		t.Error("an error without secrets was wrapped")
	}
}

func TestWriter(t *testing.T) {
	var s Set
	s.Add("sk-live-12345")
	var out bytes.Buffer
	w := s.Writer(&out)
	n, err := w.Write([]byte("key sk-live-12345\n"))
	if err != nil || n != len("key sk-live-12345\n") {
		t.Fatalf("Write = %d, %v", n, err)
	}
	// A secret added later is redacted from then on.
	s.Add("ghp_abcdefgh")
	_, _ = w.Write([]byte("token ghp_abcdefgh\n"))
	if got, want := out.String(), "key [redacted]\ntoken [redacted]\n"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
}

// TestConcurrent: values may be added while others redact (run with -race).
func TestConcurrent(t *testing.T) {
	var s Set
	s.Add("sk-live-12345")
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 100 {
			s.Add(strings.Repeat("x", 8+i))
		}
	}()
	for range 100 {
		if got := s.String("key sk-live-12345"); got != "key [redacted]" {
			t.Fatalf("String = %q", got)
		}
	}
	<-done
}

// TestAddWhileRedacting: a provider adds each credential it obtains to
// the run's set in the middle of the run, while other goroutines redact
// with it (events, the journal, a stream's deltas). Every method is safe
// meanwhile (run with -race), a value is found by whatever redacts after
// Add returned, wherever that runs, and one the set holds already is not
// added again.
func TestAddWhileRedacting(t *testing.T) {
	s := Of("sk-live-0123456789")
	const n = 200
	tokens := make([]string, n)
	for i := range tokens {
		tokens[i] = fmt.Sprintf("ya29.token-%03d-abcdefgh", i)
	}
	added := make(chan string, n)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(added)
		for _, tok := range tokens {
			s.Add(tok)
			s.Add(tok) // again, as a provider does before each request
			added <- tok
		}
	}()
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out bytes.Buffer
			w := s.Writer(&out)
			for i := range n {
				text := "key sk-live-0123456789 " + tokens[i%len(tokens)]
				_ = s.String(text)
				_, _ = s.Prefix(text, 10)
				_, _ = s.Suffix(text, 10)
				_ = s.JSON(json.RawMessage(`{"a":"` + text + `"}`))
				_ = s.Error(errors.New(text))
				_ = s.Lookahead() + s.Len()
				_, _ = w.Write([]byte(text))
				if got := s.String("key sk-live-0123456789"); got != "key [redacted]" {
					t.Errorf("String = %q", got)
					return
				}
			}
		}()
	}
	// Each token, once added, is found here: Add happened before.
	for tok := range added {
		for _, text := range []string{tok, strings.ToUpper(tok), base64.RawStdEncoding.EncodeToString([]byte(tok))} {
			if got := s.String("seen " + text); got != "seen "+Marker {
				t.Errorf("after Add(%q): String = %q", tok, got)
			}
		}
		if got, _ := s.Prefix("seen "+tok+" more", 7); strings.Contains(got, tok[:8]) {
			t.Errorf("after Add(%q): Prefix = %q", tok, got)
		}
	}
	wg.Wait()
	if s.Len() != n+1 {
		t.Errorf("Len = %d, want %d", s.Len(), n+1)
	}
	// A value the set holds is not added again: its index stays.
	ix := s.snapshot()
	s.Add(tokens[0], "sk-live-0123456789", "short")
	if s.snapshot() != ix {
		t.Error("adding what the set holds built its index again")
	}
}

// TestBase64OffsetKeepsNextLine: an encoding of the secret after other
// bytes shares a character with them at each end, which redaction takes
// with the secret; it takes none past a line break, where other text
// begins (the next line's first letter was lost with it).
func TestBase64OffsetKeepsNextLine(t *testing.T) {
	secret := "sk-test-SECRETKEY-0123456789abcdef"
	s := Of(secret)
	enc := base64.StdEncoding.EncodeToString
	text := "b64off1:" + enc([]byte("x"+secret)) + "\nb64off2:" + enc([]byte("xy"+secret)) + "\nend\n"
	got := s.String(text)
	if !strings.Contains(got, "\nb64off2:") || !strings.HasSuffix(got, "\nend\n") || !strings.HasPrefix(got, "b64off1:") {
		t.Errorf("text beside the secrets lost: %q", got)
	}
	if strings.Count(got, Marker) != 2 {
		t.Errorf("want both encodings redacted: %q", got)
	}
	for _, off := range []string{"x", "xy"} {
		e := enc([]byte(off + secret))
		if strings.Contains(got, e[2:len(e)-2]) {
			t.Errorf("the encoding after %q survives: %q", off, got)
		}
	}
}
