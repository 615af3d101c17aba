// Package redact holds the secret values a run read — provider keys, the
// variables its tools are given — and replaces each, wherever it appears,
// by Marker: in the text that leaves the process (output, events, the
// report, the journal) and in what is sent to a model.
//
// A secret is found as written and in the forms JSON gives it inside a
// string (escaped quotes, backslashes and control characters, with or
// without Go's HTML escapes), since journals, events and reports are JSON.
// Overlapping occurrences of several secrets are replaced as one span, so
// no part of either is left. Values shorter than MinLen bytes are not
// secrets here: replacing every "1" or "dev" would garble all text and
// hide nothing worth hiding.
package redact

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Marker replaces every secret.
const Marker = "[redacted]"

// MinLen is the length, in bytes, below which a value is not redacted.
const MinLen = 8

// Set is a set of secret values. The zero value is an empty set, and a nil
// *Set redacts nothing. It is safe for concurrent use.
type Set struct {
	mu     sync.RWMutex
	values map[string]bool
	forms  []string // every form of every value, longest first
}

// Of returns a set of values, as Add adds them.
func Of(values ...string) *Set {
	var s Set
	s.Add(values...)
	return &s
}

// Add adds values to the set; those shorter than MinLen, and those Marker
// holds (redacting them would never end), are left out.
func (s *Set) Add(values ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// A new slice: readers may hold the old one.
	all := slices.Clone(s.forms)
	for _, v := range values {
		if len(v) < MinLen || strings.Contains(Marker, v) || s.values[v] {
			continue
		}
		if s.values == nil {
			s.values = map[string]bool{}
		}
		s.values[v] = true
		for _, f := range forms(v) {
			if !slices.Contains(all, f) {
				all = append(all, f)
			}
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return len(all[i]) > len(all[j]) })
	s.forms = all
}

// Len returns the number of secret values in the set.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.values)
}

// forms returns how v may be written: as it is, and inside a JSON string
// as encoding/json writes it (HTML escapes on and off) and as canonical
// JSON (RFC 8785) does.
func forms(v string) []string {
	out := []string{v}
	add := func(f string) {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	html, _ := json.Marshal(v)
	add(string(html[1 : len(html)-1]))
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	plain := strings.TrimSuffix(b.String(), "\n")
	plain = plain[1 : len(plain)-1]
	add(plain)
	// Canonical JSON leaves U+2028 and U+2029 as they are.
	add(strings.NewReplacer(`\u2028`, "\u2028", `\u2029`, "\u2029").Replace(plain))
	return out
}

func (s *Set) snapshot() []string {
	if s == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.forms
}

// String returns t with every secret replaced by Marker.
func (s *Set) String(t string) string {
	forms := s.snapshot()
	if len(forms) == 0 || len(t) < MinLen {
		return t
	}
	var spans [][2]int
	for _, f := range forms {
		for i := 0; i <= len(t)-len(f); {
			j := strings.Index(t[i:], f)
			if j < 0 {
				break
			}
			spans = append(spans, [2]int{i + j, i + j + len(f)})
			i += j + 1
		}
	}
	if len(spans) == 0 {
		return t
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i][0] < spans[j][0] })
	var b strings.Builder
	b.Grow(len(t))
	at := 0
	for i := 0; i < len(spans); {
		start, end := spans[i][0], spans[i][1]
		// Spans that overlap this one are one secret to hide.
		for i++; i < len(spans) && spans[i][0] < end; i++ {
			end = max(end, spans[i][1])
		}
		b.WriteString(t[at:start])
		b.WriteString(Marker)
		at = end
	}
	b.WriteString(t[at:])
	return b.String()
}

// Bytes is String for bytes; it returns b itself when it holds no secret.
func (s *Set) Bytes(b []byte) []byte {
	if len(s.snapshot()) == 0 {
		return b
	}
	r := s.String(string(b))
	if len(r) == len(b) && r == string(b) {
		return b
	}
	return []byte(r)
}

// JSON returns the JSON text b with every secret replaced, still valid
// JSON if b was. A secret is replaced in place where the text allows. One
// that the JSON syntax straddles (a number, or text across a string's
// quotes) makes JSON decode b, replace in every string, member name and
// number, and encode it again; if the secret is still there, the whole
// value becomes the string Marker.
func (s *Set) JSON(b json.RawMessage) json.RawMessage {
	out := s.Bytes(b)
	if len(out) == len(b) && bytes.Equal(out, b) {
		return b
	}
	if json.Valid(out) || !json.Valid(b) {
		return out
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if dec.Decode(&v) == nil && enc.Encode(s.walk(v)) == nil {
		re := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		if bytes.Equal(s.Bytes(re), re) {
			return re
		}
	}
	return json.RawMessage(`"` + Marker + `"`)
}

func (s *Set) walk(v any) any {
	switch v := v.(type) {
	case string:
		return s.String(v)
	case json.Number:
		if s.String(string(v)) != string(v) {
			return Marker
		}
		return v
	case []any:
		for i := range v {
			v[i] = s.walk(v[i])
		}
		return v
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[s.String(k)] = s.walk(e)
		}
		return out
	}
	return v
}

// Error returns err with its message redacted; errors.Is and errors.As
// still see the errors it wraps. It returns err itself when its message
// holds no secret.
func (s *Set) Error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	r := s.String(msg)
	if r == msg {
		return err
	}
	return &redactedError{msg: r, err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// Writer returns a writer that redacts each write before passing it on
// to w. A secret split across two writes is not found: give it whole
// lines or whole values, as fmt.Fprint and json.Encoder do.
func (s *Set) Writer(w io.Writer) io.Writer { return &writer{s, w} }

type writer struct {
	s *Set
	w io.Writer
}

func (w *writer) Write(p []byte) (int, error) {
	if _, err := w.w.Write(w.s.Bytes(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
