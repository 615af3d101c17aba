package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"slices"
	"strings"
	"unicode/utf8"
)

// A file input is a property of the input schema written in JSON Schema's
// content vocabulary: a string in base64 (contentEncoding) of a declared
// media type (contentMediaType), or of one of several (an anyOf or oneOf
// whose branches each name one):
//
//	"invoice": {"type": "string", "contentEncoding": "base64", "contentMediaType": "application/pdf", "maxLength": 14000000}
//	"scan": {"type": "string", "contentEncoding": "base64", "anyOf": [{"contentMediaType": "image/png"}, {"contentMediaType": "image/jpeg"}]}
//
// The contract stays one JSON Schema: a program that calls the agent
// sends the file's bytes in base64, as the schema says. agentc's own
// command line takes paths instead, and the runtime takes a reference to
// a file in its store (FileRef); either way the bytes are checked
// against the declaration before any call: their media type, sniffed from
// the bytes, must be one declared, and their size within the bound
// maxLength sets (a base64 text of maxLength characters holds
// maxLength/4*3 bytes), else DefaultMaxFileBytes.
//
// Files are properties of the input's top level only: the prompt places
// each by name, and a reader of the schema finds them at a glance.

// FileField is a file input an input schema declares.
type FileField struct {
	// Name is the property.
	Name string `json:"name"`
	// MediaTypes are the media types it accepts, as declared: each one
	// of FileMediaTypes, or a wildcard of a family (image/*).
	MediaTypes []string `json:"media_types"`
	// MaxBytes bounds its size.
	MaxBytes int64 `json:"max_bytes"`
	// Required says the input must hold it.
	Required bool `json:"required,omitempty"`
}

// Sizes of files.
const (
	// DefaultMaxFileBytes bounds a file input whose schema sets no
	// maxLength: 20 MiB, what OpenAI takes in one image.
	DefaultMaxFileBytes int64 = 20 << 20
	// MaxFileBytes bounds every file input, whatever its schema says.
	MaxFileBytes int64 = 256 << 20
	// DefaultMaxRunFileBytes bounds the files of one run together: 32
	// MiB, the largest request Anthropic's Messages API takes.
	DefaultMaxRunFileBytes int64 = 32 << 20
)

// FileMediaTypes are the media types a file input may declare: those
// agentc recognises from a file's bytes and some provider takes.
var FileMediaTypes = []string{"application/pdf", "image/gif", "image/jpeg", "image/png", "image/webp", "text/plain"}

// FileLimits are, by provider, the media types of files it takes, and the
// largest file of each in bytes: OpenAI's Chat Completions takes images
// as image parts (20 MiB each) and PDFs as file parts (32 MiB, the most it
// takes in a request), and text as a text part; Anthropic's Messages API
// takes images as image blocks (5 MiB each) and PDFs and text as document
// blocks (32 MiB, its largest request); Google's Gemini takes each as
// inline data, within the lower of its two backends' bounds (Vertex AI's):
// PDFs up to 50 MB, images and text up to 7 MB; Amazon Bedrock's Converse
// API takes images (3.75 MB each) in image blocks and PDFs and text in
// document blocks (4.5 MB each), the bounds its API reference gives for
// every model (some models take larger PDFs; agentc keeps to the common
// bound), in decimal megabytes. The test model takes every one.
var FileLimits = map[string]map[string]int64{
	"openai": {
		"image/png": 20 << 20, "image/jpeg": 20 << 20, "image/gif": 20 << 20, "image/webp": 20 << 20,
		"application/pdf": 32 << 20, "text/plain": 32 << 20,
	},
	"anthropic": {
		"image/png": 5 << 20, "image/jpeg": 5 << 20, "image/gif": 5 << 20, "image/webp": 5 << 20,
		"application/pdf": 32 << 20, "text/plain": 32 << 20,
	},
	"google": {
		"image/png": 7 << 20, "image/jpeg": 7 << 20, "image/webp": 7 << 20,
		"application/pdf": 50 << 20, "text/plain": 7 << 20,
	},
	"bedrock": {
		"image/png": 3_750_000, "image/jpeg": 3_750_000, "image/gif": 3_750_000, "image/webp": 3_750_000,
		"application/pdf": 4_500_000, "text/plain": 4_500_000,
	},
}

// TextOnlyModels are models that take no file but text, by provider and
// name prefix: a file input for one of them is a vet error.
var TextOnlyModels = map[string][]string{
	"openai": {"gpt-3.5-turbo", "gpt-4-0314", "gpt-4-0613", "gpt-4-32k", "o1-mini", "o3-mini"},
}

// TextOnly reports whether a provider's model takes no file but text.
func TextOnly(provider, model string) bool {
	for _, p := range TextOnlyModels[provider] {
		if model == p || strings.HasPrefix(model, p+"-") {
			return true
		}
	}
	return provider == "openai" && model == "gpt-4"
}

// FileFields returns the file inputs an input schema declares, sorted by
// name. A property in the content vocabulary that is not one as above
// (another encoding, no media type, one agentc does not recognise) is an
// error naming it; so is base64 content anywhere but a top-level
// property, which the compiler reports with its position.
func FileFields(schema json.RawMessage) ([]FileField, error) {
	if len(schema) == 0 {
		return nil, nil
	}
	var doc map[string]json.RawMessage
	if json.Unmarshal(schema, &doc) != nil {
		return nil, nil // a boolean schema, or not one: no files
	}
	var props map[string]json.RawMessage
	if raw, ok := doc["properties"]; ok && json.Unmarshal(raw, &props) != nil {
		return nil, nil
	}
	var required []string
	if raw, ok := doc["required"]; ok {
		_ = json.Unmarshal(raw, &required)
	}
	var out []FileField
	for name, raw := range props {
		f, ok, err := ReadFileField(raw)
		if err != nil {
			return nil, fmt.Errorf("input property %q: %w", name, err)
		}
		if !ok {
			continue
		}
		f.Name, f.Required = name, slices.Contains(required, name)
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b FileField) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// ReadFileField reads one property's schema as a file input (without its
// Name and Required): ok is false when it is not in the content
// vocabulary at all, and err says what is wrong with a declaration.
func ReadFileField(raw json.RawMessage) (FileField, bool, error) {
	var s struct {
		Encoding  *string           `json:"contentEncoding"`
		MediaType *string           `json:"contentMediaType"`
		MaxLength *float64          `json:"maxLength"`
		AnyOf     []json.RawMessage `json:"anyOf"`
		OneOf     []json.RawMessage `json:"oneOf"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return FileField{}, false, nil
	}
	if s.Encoding == nil {
		return FileField{}, false, nil
	}
	if *s.Encoding != "base64" {
		return FileField{}, false, fmt.Errorf("contentEncoding %q: a file input is base64", *s.Encoding)
	}
	var f FileField
	if s.MediaType != nil {
		f.MediaTypes = []string{*s.MediaType}
	} else {
		branches := s.AnyOf
		if len(branches) == 0 {
			branches = s.OneOf
		}
		for _, b := range branches {
			var br map[string]json.RawMessage
			var mt string
			if json.Unmarshal(b, &br) != nil || len(br) != 1 || json.Unmarshal(br["contentMediaType"], &mt) != nil {
				return FileField{}, false, fmt.Errorf("a file input's anyOf or oneOf lists its media types, each branch {\"contentMediaType\": ...} alone")
			}
			f.MediaTypes = append(f.MediaTypes, mt)
		}
	}
	if len(f.MediaTypes) == 0 {
		return FileField{}, false, fmt.Errorf("a file input declares its media type: contentMediaType, or an anyOf of them")
	}
	for _, mt := range f.MediaTypes {
		if err := checkMediaType(mt); err != nil {
			return FileField{}, false, err
		}
	}
	f.MaxBytes = DefaultMaxFileBytes
	if s.MaxLength != nil {
		if *s.MaxLength < 4 {
			return FileField{}, false, fmt.Errorf("maxLength %v holds no byte of base64", *s.MaxLength)
		}
		f.MaxBytes = min(int64(*s.MaxLength)/4*3, MaxFileBytes)
	}
	return f, true, nil
}

func checkMediaType(mt string) error {
	if slices.Contains(FileMediaTypes, mt) || mt == "image/*" {
		return nil
	}
	if t, params, err := mime.ParseMediaType(mt); err == nil && (len(params) > 0 || t != mt) {
		return fmt.Errorf("contentMediaType %q: name the media type alone (%s), without parameters", mt, t)
	}
	return fmt.Errorf("contentMediaType %q is not one agentc recognises from a file's bytes (%s, or image/* for any of the images)", mt, strings.Join(FileMediaTypes, ", "))
}

// Accepts reports whether a file of media type mt (as SniffMediaType
// names it) is one f declares.
func (f FileField) Accepts(mt string) bool {
	for _, d := range f.MediaTypes {
		if d == mt || d == "image/*" && strings.HasPrefix(mt, "image/") {
			return true
		}
	}
	return false
}

// Expand lists the media types f declares, wildcards expanded.
func (f FileField) Expand() []string {
	var out []string
	for _, mt := range FileMediaTypes {
		if f.Accepts(mt) {
			out = append(out, mt)
		}
	}
	return out
}

// SniffLen is how many bytes of a file's start its signature is read
// from.
const SniffLen = 512

// SniffMediaType names the media type of a file from its bytes, whole,
// as a Sniffer does.
func SniffMediaType(data []byte) string {
	var s Sniffer
	s.Write(data)
	return s.MediaType()
}

// A Sniffer names the media type of a file written to it, as one of
// FileMediaTypes, or "" when it is none of them: the images and PDF by
// their signatures in the first bytes, and text/plain for UTF-8 text
// throughout, with no control character but tab, line feed, carriage
// return, form feed and DEL. Binary data holds C0 controls, ESC opens a
// terminal's sequences, and the C1 controls (U+0080 to U+009F) include
// the 8-bit CSI, OSC and DCS a terminal takes for ESC [, ESC ] and ESC P;
// no text file written in UTF-8 holds them. DEL stays text: a terminal
// ignores it, it opens no sequence, and text files hold it (a terminal's
// log of a typed erase). It holds SniffLen bytes however much is
// written, so a file is checked whole as it is copied.
type Sniffer struct {
	head  []byte
	carry []byte // the start of a character cut at the end of a write
	n     int64  // bytes written
	bad   int64  // where the bytes stopped being text, plus one; 0 while text
}

// textControl marks the bytes below 0x20 a text file may not hold.
var textControl = func() (t [0x20]bool) {
	for c := range t {
		t[c] = c != '\t' && c != '\n' && c != '\r' && c != '\f'
	}
	return t
}()

// Write takes the file's next bytes; it never fails.
func (s *Sniffer) Write(p []byte) (int, error) {
	if room := SniffLen - len(s.head); room > 0 {
		s.head = append(s.head, p[:min(room, len(p))]...)
	}
	s.text(p)
	s.n += int64(len(p))
	return len(p), nil
}

// text checks p, the bytes after the s.n written, as text.
func (s *Sniffer) text(p []byte) {
	if s.bad > 0 {
		return
	}
	at := s.n // the offset of p[0]
	if len(s.carry) > 0 {
		b := append(s.carry[:len(s.carry):len(s.carry)], p[:min(len(p), utf8.UTFMax)]...)
		if !utf8.FullRune(b) {
			s.carry = b
			return
		}
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 || isC1(r) {
			s.bad = at - int64(len(s.carry)) + 1
			return
		}
		p = p[size-len(s.carry):]
		at += int64(size - len(s.carry))
		s.carry = s.carry[:0]
	}
	// A character cut at the end is checked with the next write's bytes.
	for k := len(p) - 1; k >= 0 && k > len(p)-utf8.UTFMax; k-- {
		if utf8.RuneStart(p[k]) {
			if !utf8.FullRune(p[k:]) {
				s.carry = append(s.carry, p[k:]...)
				p = p[:k]
			}
			break
		}
	}
	// The first of a C0 control, a byte that is not UTF-8 and a C1
	// control, each found by a fast scan where the bytes are text.
	bad := len(p)
	for i, c := range p {
		if c < 0x20 && textControl[c] {
			bad = i
			break
		}
	}
	if !utf8.Valid(p[:bad]) {
		for i := 0; i < bad; {
			r, size := utf8.DecodeRune(p[i:])
			if r == utf8.RuneError && size == 1 {
				bad = i
				break
			}
			i += size
		}
	}
	// A C1 control is C2 80 to C2 9F; C2 only ever begins a character.
	for i := 0; i < bad; {
		j := bytes.IndexByte(p[i:bad], 0xc2)
		if j < 0 {
			break
		}
		i += j
		if i+1 < len(p) && p[i+1] >= 0x80 && p[i+1] < 0xa0 {
			bad = i
			break
		}
		i++
	}
	if bad < len(p) {
		s.bad = at + int64(bad) + 1
	}
}

// isC1 reports whether r is a C1 control character.
func isC1(r rune) bool { return r >= 0x80 && r < 0xa0 }

// signature is the media type the first bytes name, or "".
func (s *Sniffer) signature() string {
	head := s.head
	switch {
	case bytes.HasPrefix(head, []byte("%PDF-")):
		return "application/pdf"
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(head, []byte("\xff\xd8\xff")):
		return "image/jpeg"
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return "image/gif"
	case len(head) >= 12 && bytes.HasPrefix(head, []byte("RIFF")) && string(head[8:12]) == "WEBP":
		return "image/webp"
	}
	return ""
}

// MediaType is the media type of the file written, taken to end here.
func (s *Sniffer) MediaType() string {
	if mt := s.signature(); mt != "" {
		return mt
	}
	if s.bad > 0 || len(s.carry) > 0 {
		return ""
	}
	return "text/plain"
}

// Head is the media type the bytes written so far say the file may be,
// more to follow: a character cut at their end is not held against
// text, whose rest is yet to be checked.
func (s *Sniffer) Head() string {
	if mt := s.signature(); mt != "" {
		return mt
	}
	if s.bad > 0 {
		return ""
	}
	return "text/plain"
}

// Size is the bytes written.
func (s *Sniffer) Size() int64 { return s.n }

// NotTextAt is the offset of the first byte that is not text (a control
// character, a byte that is not UTF-8, a character cut at the end), or
// -1 while the bytes written are text.
func (s *Sniffer) NotTextAt() int64 {
	switch {
	case s.bad > 0:
		return s.bad - 1
	case len(s.carry) > 0:
		return s.n - int64(len(s.carry))
	}
	return -1
}

// outputFileName reports whether name has the form of an exec tool's
// output file's name, which names a file in the call's directory: 1 to 64
// ASCII letters, digits, _ and -, not starting with -. (A loop, not a
// regular expression: compiling `{0,63}` was most of what this package
// did at every start of both programs.)
func outputFileName(name string) bool {
	if name == "" || len(name) > 64 || name[0] == '-' {
		return false
	}
	for _, c := range []byte(name) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// CheckOutputFile checks an exec tool's output file named name: its name
// (letters, digits, _ and -), its media types (as a file input's) and its
// bound.
func CheckOutputFile(name string, o OutputFile) error {
	if !outputFileName(name) {
		return fmt.Errorf("output file %q: a name is up to 64 letters, digits, _ and -, not starting with -", name)
	}
	if len(o.MediaTypes) == 0 {
		return fmt.Errorf("output file %q: media_types names none", name)
	}
	for _, mt := range o.MediaTypes {
		if err := checkMediaType(mt); err != nil {
			return fmt.Errorf("output file %q: %s", name, strings.Replace(err.Error(), "contentMediaType", "media type", 1))
		}
	}
	if o.MaxBytes < 0 || o.MaxBytes > DefaultMaxFileBytes {
		return fmt.Errorf("output file %q: max_bytes %d is not between 1 and %d", name, o.MaxBytes, DefaultMaxFileBytes)
	}
	return nil
}

// Field is o as a file field, for Accepts and Expand, with MaxBytes
// defaulted.
func (o OutputFile) Field(name string) FileField {
	f := FileField{Name: name, MediaTypes: o.MediaTypes, MaxBytes: o.MaxBytes}
	if f.MaxBytes <= 0 {
		f.MaxBytes = DefaultMaxFileBytes
	}
	return f
}

// extensions are the file name extensions of FileMediaTypes.
var extensions = map[string]string{
	"application/pdf": ".pdf", "image/gif": ".gif", "image/jpeg": ".jpg",
	"image/png": ".png", "image/webp": ".webp", "text/plain": ".txt",
}

// Extension is the file name extension of the first media type f
// declares (".png"), or "" when that is a wildcard (image/*).
func (f FileField) Extension() string {
	if len(f.MediaTypes) == 0 {
		return ""
	}
	return extensions[f.MediaTypes[0]]
}
