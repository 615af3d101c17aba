package plan_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"agentc.dev/agentc/plan"
)

func TestFileFields(t *testing.T) {
	schema := `{"type": "object", "required": ["scan"], "properties": {
		"scan": {"type": "string", "contentEncoding": "base64", "anyOf": [{"contentMediaType": "image/png"}, {"contentMediaType": "application/pdf"}], "maxLength": 4000},
		"note": {"type": "string", "contentEncoding": "base64", "contentMediaType": "text/plain"},
		"photo": {"type": "string", "contentEncoding": "base64", "oneOf": [{"contentMediaType": "image/*"}]},
		"title": {"type": "string"},
		"json": {"type": "string", "contentMediaType": "application/json"}
	}}`
	got, err := plan.FileFields(json.RawMessage(schema))
	if err != nil {
		t.Fatal(err)
	}
	want := []plan.FileField{
		{Name: "note", MediaTypes: []string{"text/plain"}, MaxBytes: plan.DefaultMaxFileBytes},
		{Name: "photo", MediaTypes: []string{"image/*"}, MaxBytes: plan.DefaultMaxFileBytes},
		{Name: "scan", MediaTypes: []string{"image/png", "application/pdf"}, MaxBytes: 3000, Required: true},
	}
	if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
		t.Errorf("got %s\nwant %s", g, w)
	}
	if e := got[1].Expand(); !slices.Equal(e, []string{"image/gif", "image/jpeg", "image/png", "image/webp"}) {
		t.Errorf("image/* expands to %v", e)
	}
	if !got[2].Accepts("application/pdf") || got[2].Accepts("image/jpeg") || got[0].Accepts("") {
		t.Error("Accepts takes what is not declared, or refuses what is")
	}
}

func TestFileFieldsRefused(t *testing.T) {
	for _, c := range []struct{ prop, want string }{
		{`{"contentEncoding": "base16", "contentMediaType": "image/png"}`, "base64"},
		{`{"contentEncoding": "base64"}`, "declares its media type"},
		{`{"contentEncoding": "base64", "contentMediaType": "image/tiff"}`, "not one agentc recognises"},
		{`{"contentEncoding": "base64", "contentMediaType": "text/plain; charset=utf-8"}`, "without parameters"},
		{`{"contentEncoding": "base64", "anyOf": [{"contentMediaType": "image/png", "maxLength": 3}]}`, "each branch"},
		{`{"contentEncoding": "base64", "contentMediaType": "image/png", "maxLength": 3}`, "holds no byte"},
	} {
		_, err := plan.FileFields(json.RawMessage(`{"properties": {"f": ` + c.prop + `}}`))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `"f"`) {
			t.Errorf("%s: got %v, want an error naming f and saying %q", c.prop, err, c.want)
		}
	}
	// A bound past MaxFileBytes is held to it.
	fs, err := plan.FileFields(json.RawMessage(`{"properties": {"f": {"contentEncoding": "base64", "contentMediaType": "image/png", "maxLength": 1e12}}}`))
	if err != nil || len(fs) != 1 || fs[0].MaxBytes != plan.MaxFileBytes {
		t.Errorf("got %v, %v; want MaxBytes %d", fs, err, plan.MaxFileBytes)
	}
	// Not an object, or no properties: no files.
	for _, s := range []string{``, `true`, `{"type": "string"}`, `{"properties": 3}`} {
		if fs, err := plan.FileFields(json.RawMessage(s)); err != nil || len(fs) != 0 {
			t.Errorf("%q: got %v, %v", s, fs, err)
		}
	}
}

func TestSniffMediaType(t *testing.T) {
	long := "a" + strings.Repeat("é", plan.SniffLen) // a two-byte character cut at the end of the first SniffLen bytes
	for _, c := range []struct{ data, want string }{
		{"%PDF-1.7\n", "application/pdf"},
		{"\x89PNG\r\n\x1a\n\x00\x00", "image/png"},
		{"\xff\xd8\xff\xe0", "image/jpeg"},
		{"GIF89a", "image/gif"},
		{"GIF87a", "image/gif"},
		{"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp"},
		{"RIFF\x00\x00\x00\x00WAVE", ""},
		{"Invoice 2041\n\ttotal: EUR 120\r\n\f", "text/plain"},
		{"\xef\xbb\xbfwith a BOM", "text/plain"},
		{long, "text/plain"},
		{long[:plan.SniffLen], ""}, // a file that ends inside a character
		{"binary\x00data", ""},
		{"\xff\xfe not UTF-8", ""},
		{"", "text/plain"},
		// Text throughout, not in its head alone.
		{strings.Repeat("a", 600) + "\x00", ""},
		{strings.Repeat("a", 600) + "\x01", ""},
		{strings.Repeat("a", 600) + "\xff", ""},
		// A terminal's controls are not text.
		{"\x1b[2J", ""},
		{strings.Repeat("a", 600) + "\x1b]0;title\x07", ""},
		// C1 controls, U+0080 to U+009F, are no text: U+009B is the
		// 8-bit CSI, U+009D the OSC. DEL is text: a terminal ignores it.
		{"\x7f", "text/plain"},
		{"\u009b2J", ""},
		{strings.Repeat("a", 600) + "\u009d0;owned\u009c", ""},
		{"é\u0080", ""},
		{"\u009f", ""},
		{"\u00a0no-break space, ¡, and \u00ff", "text/plain"},
		// Bidi overrides and isolates are text: Hebrew and Arabic text
		// holds them, and a terminal shows them, where it does, as
		// they are meant.
		{"\u202eabc\u202c \u2067\u05e9\u05dc\u05d5\u05dd\u2069", "text/plain"},
	} {
		if got := plan.SniffMediaType([]byte(c.data)); got != c.want {
			t.Errorf("%.40q: got %q, want %q", c.data, got, c.want)
		}
	}
	// A head cut inside a character may be text; the whole decides.
	var s plan.Sniffer
	s.Write([]byte(long[:plan.SniffLen]))
	if s.Head() != "text/plain" || s.MediaType() != "" || s.NotTextAt() != plan.SniffLen-1 {
		t.Errorf("a head cut in a character: Head %q, MediaType %q, NotTextAt %d", s.Head(), s.MediaType(), s.NotTextAt())
	}
	s.Write([]byte(long[plan.SniffLen:]))
	if s.MediaType() != "text/plain" || s.NotTextAt() != -1 {
		t.Errorf("the rest written: MediaType %q, NotTextAt %d", s.MediaType(), s.NotTextAt())
	}
}

// TestSnifferWrites: a file sniffs as one whatever the writes it comes in,
// and names the first byte that is not text.
func TestSnifferWrites(t *testing.T) {
	for _, c := range []struct {
		data string
		at   int64
	}{
		{"héllo wörld 日本語 😀\n", -1},
		{"héllo\x1bwörld", 6},
		{"日本\xe8\xaa", 6},     // cut at the end
		{"日本\xe8x語", 6},       // cut in the middle
		{"ab\xf0\x9f\x98", 2}, // cut at the end, four bytes
		{"😀😀\x00", 8},
		{"ab\u009bc", 2},     // a C1 control, cut between writes
		{"日\xc2\x9b\x00", 3}, // a C1 control before a NUL
		{"日\xff\xc2\x9b", 3}, // a byte that is not UTF-8 before a C1 control
		{"a\xc2\xa0\xc2\x85", 3},
	} {
		for split := 0; split <= len(c.data); split++ {
			for split2 := split; split2 <= len(c.data); split2++ {
				var s plan.Sniffer
				s.Write([]byte(c.data[:split]))
				s.Write([]byte(c.data[split:split2]))
				s.Write([]byte(c.data[split2:]))
				if got := s.NotTextAt(); got != c.at {
					t.Errorf("%q written at %d, %d: NotTextAt %d, want %d", c.data, split, split2, got, c.at)
				}
			}
		}
	}
}
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// FuzzFileFields: any schema reads as file inputs or an error, never a
// panic; what it reads is a declaration agentc can check (known media
// types, a bound within MaxFileBytes), sorted by name.
func FuzzFileFields(f *testing.F) {
	for _, seed := range []string{
		`{"properties": {"f": {"type": "string", "contentEncoding": "base64", "contentMediaType": "image/png", "maxLength": 4000}}}`,
		`{"properties": {"f": {"contentEncoding": "base64", "anyOf": [{"contentMediaType": "application/pdf"}, {"contentMediaType": "image/*"}]}}, "required": ["f"]}`,
		`{"properties": {"f": {"contentEncoding": "base64", "oneOf": [{"contentMediaType": "text/plain"}]}, "g": {"type": "string"}}}`,
		`{"properties": {"f": {"contentEncoding": "base16"}}}`, `{"properties": {"f": {"contentEncoding": "base64", "maxLength": -1}}}`,
		`{"properties": []}`, `true`, `{"required": 3, "properties": {"f": {"contentEncoding": "base64", "contentMediaType": "image/png"}}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, schema []byte) {
		fs, err := plan.FileFields(schema)
		if err != nil {
			return
		}
		for i, x := range fs {
			if i > 0 && fs[i-1].Name >= x.Name {
				t.Fatalf("not sorted: %v", fs)
			}
			if x.MaxBytes <= 0 || x.MaxBytes > plan.MaxFileBytes || len(x.MediaTypes) == 0 || len(x.Expand()) == 0 {
				t.Fatalf("a declaration agentc cannot check: %+v", x)
			}
		}
	})
}

// FuzzSniffMediaType: any bytes sniff as one of FileMediaTypes or as
// none, the same whatever writes they come in; text/plain is UTF-8 with
// no control but tab, line feed, carriage return and form feed.
func FuzzSniffMediaType(f *testing.F) {
	for _, seed := range []string{"%PDF-1.7\n", "\x89PNG\r\n\x1a\n", "\xff\xd8\xff\xe0", "GIF89a", "RIFF\x00\x00\x00\x00WEBPVP8 ", "plain text\n", "\xef\xbb\xbftext", "bin\x00ary", "é", "\u009b", "a\xc2"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		mt := plan.SniffMediaType(data)
		if mt != "" && !slices.Contains(plan.FileMediaTypes, mt) {
			t.Fatalf("%q sniffs as %q", data, mt)
		}
		// Text is UTF-8 with no control character but tab, line feed,
		// carriage return, form feed and DEL, and the sniffer names the
		// first character that is not.
		notText := func(r rune) bool {
			return r == utf8.RuneError || unicode.IsControl(r) && !strings.ContainsRune("\t\n\r\f\x7f", r)
		}
		at := int64(-1)
		for i, r := range string(data) {
			if notText(r) && (r != utf8.RuneError || !strings.HasPrefix(string(data[i:]), "\ufffd")) {
				at = int64(i)
				break
			}
		}
		var whole plan.Sniffer
		whole.Write(data)
		if whole.NotTextAt() != at {
			t.Fatalf("%q: NotTextAt %d, want %d", data, whole.NotTextAt(), at)
		}
		if mt == "text/plain" && at >= 0 {
			t.Fatalf("%q sniffs as text", data)
		}
		for split := range len(data) {
			var s plan.Sniffer
			s.Write(data[:split])
			s.Write(data[split:])
			if s.MediaType() != mt {
				t.Fatalf("%q written at %d sniffs as %q, whole as %q", data, split, s.MediaType(), mt)
			}
		}
	})
}

// TestOutputFileName: an output file's name is checked as the pattern
// ^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$ checks it, on every name of up to 3
// bytes drawn from the bytes at its edges, and at the length bound.
func TestOutputFileName(t *testing.T) {
	form := regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$`)
	ok := plan.OutputFile{MediaTypes: []string{"text/plain"}}
	check := func(name string) {
		t.Helper()
		err := plan.CheckOutputFile(name, ok)
		if want := form.MatchString(name); (err == nil) != want {
			t.Fatalf("CheckOutputFile(%q) = %v; the form says %v", name, err, want)
		}
	}
	edges := []string{"", "a", "z", "A", "Z", "0", "9", "_", "-", "@", "[", "`", "{", "/", ":", ".", " ", "\x00", "\x7f", "\xc3\xa9", "é"}
	for _, a := range edges {
		for _, b := range edges {
			for _, c := range edges {
				check(a + b + c)
			}
		}
	}
	for _, n := range []int{63, 64, 65} {
		check(strings.Repeat("a", n))
		check("_" + strings.Repeat("-", n-1))
	}
}
