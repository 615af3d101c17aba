// Package redact holds the secret values a run read — provider keys, the
// variables its tools are given — and replaces each, wherever it appears,
// by Marker: in the text that leaves the process (output, events, the
// report, the journal) and in what is sent to a model.
//
// A secret is found in these forms:
//   - as written, and as JSON writes it inside a string (escaped quotes,
//     backslashes and control characters, with or without Go's HTML
//     escapes, and as canonical JSON does), since journals, events and
//     reports are JSON;
//   - in any letter case (ASCII), and so are the forms below but base64,
//     which is read in the case it is written;
//   - hex-encoded; percent-encoded as Go writes a URL path or a query
//     (a form), with every byte but ASCII letters and digits encoded, and
//     with every byte encoded;
//   - base64-encoded, in the standard and the URL alphabet, padded or
//     not, whole or inside a longer base64 text at any of the three byte
//     alignments (there, with the character it shares with each
//     neighbour); the base64 of the secret upper- and lower-cased too;
//   - split by line breaks (CR, LF, and JSON's \n and \r, and \u000a and
//     \u000d where escapes are read) and by
//     Unicode format characters (zero-width spaces and joiners, the byte
//     order mark, soft hyphens: category Cf), raw or as JSON \u escapes,
//     which are left out before matching and replaced with the secret.
//
// A JSON text may escape any character of a string, as writers other than
// Go's do (PHP's \/, .NET's \u002B, Python's \u00e9, every character as
// \u escapes): a text holding such escapes is also matched with every
// escape read as the character it stands for, and a secret found there is
// replaced with the escapes that write it. A text cut to be shown in part
// (Prefix, Suffix) is held back before a secret begun in any of these
// forms, and never cut inside a JSON escape, which may stand for a
// secret's first or last character.
//
// A backslash in plain text before a secret that starts with n, r or u
// reads as a JSON escape; the text is matched with JSON escapes left in
// as well, so such a secret is found, but not when it is also split by
// JSON escapes. Other disguises are not found: a part of a secret, one split by spaces
// or other characters, spread over several texts, reversed, or in another
// encoding (base32, compression, encryption). Overlapping occurrences of
// several secrets are replaced as one span, so no part of either is left.
// Values shorter than MinLen bytes are not secrets here: replacing every
// "1" or "dev" would garble all text and hide nothing worth hiding.
package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/url"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"agentc.dev/agentc/internal/leaf/textcut"
)

// Marker replaces every secret.
const Marker = "[redacted]"

// MinLen is the length, in bytes, below which a value is not redacted.
const MinLen = 8

// Set is a set of secret values. The zero value is an empty set, and a nil
// *Set redacts nothing. It is safe for concurrent use.
type Set struct {
	mu      sync.RWMutex
	values  map[string]bool
	forms   []form // every form of every value
	longest int    // the length of the longest form
	ix      *index // forms, indexed; nil when there are none
}

// form is one way a secret may be written.
type form struct {
	text string // lower-cased when fold
	fold bool   // matched in any ASCII letter case
	b64  bool   // a base64 text: its neighbours share a character with it
	// json says the form is one JSON's escapes wrote (it differs from
	// the value as written): not matched in a text whose escapes were
	// read (decoding), where it would stand for other text.
	json bool
}

// Of returns a set of values, as Add adds them.
func Of(values ...string) *Set {
	var s Set
	s.Add(values...)
	return &s
}

// Add adds values to the set; those shorter than MinLen without their line
// breaks and format characters, and those Marker holds in any case
// (redacting them would never end), are left out. It may be called while
// others redact with the set, as a provider adds a credential it obtains
// in the middle of a run: what is redacted once Add returns finds the
// values. Adding values the set holds already costs a look-up, no more.
func (s *Set) Add(values ...string) {
	if s.holds(values) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// A new slice: readers may hold the old one.
	all := append([]form(nil), s.forms...)
	seen := map[form]bool{}
	for _, f := range all {
		seen[f] = true
	}
	added := false
	for _, v := range values {
		if len(normalize(v).text) < MinLen || strings.Contains(lower(Marker), lower(v)) || s.values[v] {
			continue
		}
		if s.values == nil {
			s.values = map[string]bool{}
		}
		s.values[v] = true
		for _, f := range forms(v) {
			if !seen[f] {
				seen[f] = true
				all = append(all, f)
				s.longest = max(s.longest, len(f.text))
				added = true
			}
		}
	}
	if !added {
		return
	}
	s.forms = all
	s.ix = newIndex(all)
}

// holds reports whether the set has each of values already.
func (s *Set) holds(values []string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, v := range values {
		if !s.values[v] {
			return false
		}
	}
	return true
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

// Lookahead returns how many bytes past a cut a text must hold for a
// secret that starts before the cut to be seen whole (see Prefix): the
// length of the longest form of a secret in the set.
func (s *Set) Lookahead() int {
	if s == nil {
		return 0
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.longest
}

// forms returns how v may be written (see the package documentation).
func forms(v string) []form {
	var out []form
	add := func(f form) {
		// Texts are matched without what may split a secret; so are
		// its forms.
		f.text = normalize(f.text).text
		if f.fold {
			f.text = lower(f.text)
		}
		if len(f.text) > 0 && !containsForm(out, f) {
			out = append(out, f)
		}
	}
	for _, j := range jsonForms(v) {
		add(form{text: j, fold: true, json: j != v})
	}
	for _, c := range []string{v, strings.ToUpper(v), strings.ToLower(v)} {
		add(form{text: c, fold: true})
		add(form{text: hex.EncodeToString([]byte(c)), fold: true})
		add(form{text: url.PathEscape(c), fold: true})
		add(form{text: url.QueryEscape(c), fold: true})
		add(form{text: percentAll(c, false), fold: true})
		add(form{text: percentAll(c, true), fold: true})
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			for a := range 3 {
				add(form{text: base64Core(enc, c, a), b64: true})
			}
		}
	}
	return out
}

func containsForm(fs []form, f form) bool {
	for _, g := range fs {
		if g == f {
			return true
		}
	}
	return false
}

// jsonForms returns how v is written inside a JSON string: as
// encoding/json writes it (HTML escapes on and off) and as canonical JSON
// (RFC 8785) does.
func jsonForms(v string) []string {
	html, _ := json.Marshal(v)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	plain := strings.TrimSuffix(b.String(), "\n")
	plain = plain[1 : len(plain)-1]
	// Canonical JSON leaves U+2028 and U+2029 as they are.
	canonical := strings.NewReplacer(`\u2028`, "\u2028", `\u2029`, "\u2029").Replace(plain)
	return []string{string(html[1 : len(html)-1]), plain, canonical}
}

// percentAll returns v with every byte percent-encoded, or, with
// alnum, every byte but ASCII letters and digits.
func percentAll(v string, alnum bool) string {
	const digits = "0123456789ABCDEF"
	b := make([]byte, 0, 3*len(v))
	for i := 0; i < len(v); i++ {
		c := v[i]
		if alnum && ('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			b = append(b, c)
			continue
		}
		b = append(b, '%', digits[c>>4], digits[c&15])
	}
	return string(b)
}

// base64Core returns the characters of the base64 encoding of v that
// depend on v alone when v starts a bytes into a longer text (after
// (3-a)%3 bytes of the text's group): the characters that mix v's first
// or last bits with its neighbours' are left out.
func base64Core(enc *base64.Encoding, v string, a int) string {
	e := enc.EncodeToString(append(make([]byte, a), v...))
	first, end := (8*a+5)/6, (8*a+8*len(v))/6
	return e[first:end]
}

// lower returns s with its ASCII letters in lower case.
func lower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

func (s *Set) snapshot() *index {
	if s == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.ix
}

// index finds every form of a set in one pass over a text: a rolling
// hash of each position's first bytes, in lower case, is looked up in a
// bit set, then in a table of the forms that start so, each then compared
// in any case (fold) or as written (base64).
type index struct {
	forms  []form
	n      int    // the bytes hashed: the length of the shortest form
	pow    uint32 // hashBase to the power n
	bits   []uint64
	byHash map[uint32][]int // indices in forms
}

const hashBase = 16777619

func hashOf(s string) uint32 {
	var h uint32
	for i := 0; i < len(s); i++ {
		h = h*hashBase + uint32(folded[s[i]])
	}
	return h
}

func newIndex(forms []form) *index {
	ix := &index{forms: forms, n: len(forms[0].text), pow: 1, bits: make([]uint64, 1<<16/64), byHash: map[uint32][]int{}}
	for _, f := range forms {
		ix.n = min(ix.n, len(f.text))
	}
	for range ix.n {
		ix.pow *= hashBase
	}
	for i, f := range forms {
		h := hashOf(f.text[:ix.n])
		ix.bits[(h&0xffff)/64] |= 1 << (h & 63)
		ix.byHash[h] = append(ix.byHash[h], i)
	}
	return ix
}

// each calls found with the start and end in hay of each occurrence of a
// form.
func (ix *index) each(hay string, found func(f form, start, end int)) {
	n := ix.n
	if len(hay) < n {
		return
	}
	h := hashOf(hay[:n])
	for i := 0; ; i++ {
		if ix.bits[(h&0xffff)/64]&(1<<(h&63)) != 0 {
			for _, k := range ix.byHash[h] {
				f := ix.forms[k]
				tab := &same
				if f.fold {
					tab = &folded
				}
				if matches(tab, hay[i:], f.text) {
					found(f, i, i+len(f.text))
				}
			}
		}
		if i+n >= len(hay) {
			return
		}
		h = h*hashBase + uint32(folded[hay[i+n]]) - ix.pow*uint32(folded[hay[i]])
	}
}

// same maps each byte to itself, folded each to its ASCII lower case.
var same, folded = func() (s, f [256]byte) {
	for i := range 256 {
		s[i], f[i] = byte(i), byte(i)
		if 'A' <= i && i <= 'Z' {
			f[i] += 'a' - 'A'
		}
	}
	return s, f
}()

// matches tells whether t starts with f, each byte of t mapped by tab.
func matches(tab *[256]byte, t, f string) bool {
	if len(t) < len(f) {
		return false
	}
	for i := 0; i < len(f); i++ {
		if tab[t[i]] != f[i] {
			return false
		}
	}
	return true
}

// String returns t with every secret replaced by Marker.
func (s *Set) String(t string) string {
	ix := s.snapshot()
	if ix == nil || len(t) < MinLen {
		return t
	}
	spans := find(ix, t)
	if len(spans) == 0 {
		return t
	}
	return replace(t, spans)
}

// Prefix returns the start of t that a cut at max bytes keeps, with every
// secret replaced, and how many bytes of t that start stands for. The cut
// is on a rune boundary and never reveals part of a secret: a secret that
// starts before max and that t holds whole is replaced whole (the count
// then passes max), and text just before the cut that could begin a
// secret t does not hold whole is left out. Give t, where there is more,
// Lookahead bytes past max.
func (s *Set) Prefix(t string, max int) (string, int) {
	n := len(textcut.Prefix(t, max))
	ix := s.snapshot()
	if ix == nil {
		return t[:n], n
	}
	spans := find(ix, t)
	from := 0 // where text after the last secret before the cut starts
	for _, sp := range spans {
		if sp[0] < n && sp[1] > n {
			n = sp[1]
		}
		if sp[1] <= n {
			from = sp[1]
		}
	}
	if n < len(t) {
		n = partial(ix.forms, t, from, n)
	}
	var kept [][2]int
	for _, sp := range spans {
		if sp[1] <= n {
			kept = append(kept, sp)
		}
	}
	return replace(t[:n], kept), n
}

// Suffix is Prefix for the end of t: it returns the end of t that a cut
// keeping its last keep bytes leaves, with every secret replaced, and how
// many bytes of t that end stands for. Give t, where there is more,
// Lookahead bytes before its last keep.
func (s *Set) Suffix(t string, keep int) (string, int) {
	from := max(len(t)-keep, 0)
	for from < len(t) && !utf8.RuneStart(t[from]) {
		from++
	}
	ix := s.snapshot()
	if ix == nil {
		return t[from:], len(t) - from
	}
	spans := find(ix, t)
	to := len(t) // where text before the first secret after the cut ends
	for i := len(spans) - 1; i >= 0; i-- {
		sp := spans[i]
		if sp[0] < from && sp[1] > from {
			from = sp[0]
		}
		if sp[0] >= from {
			to = sp[0]
		}
	}
	if from > 0 {
		from = partialEnd(ix.forms, t, from, to)
	}
	var kept [][2]int
	for _, sp := range spans {
		if sp[0] >= from {
			kept = append(kept, [2]int{sp[0] - from, sp[1] - from})
		}
	}
	return replace(t[from:], kept), len(t) - from
}

// partialEnd returns where the end of a secret's form that t[from:] may
// start with ends (from if it starts with none), looking no further on
// than to.
func partialEnd(forms []form, t string, from, to int) int {
	// An escape the cut falls inside is left out with what is before it:
	// it may stand for a secret's last character.
	from = min(to, escapeEnd(t, from))
	longest := 0
	for _, f := range forms {
		longest = max(longest, len(f.text))
	}
	// A form split by characters left out before matching, or written in
	// escapes, takes more bytes than its own: the window reaches on until
	// it holds longest bytes that are kept, however long the runs left out
	// (seven bytes of text for each, a \u escape after each byte, to
	// start).
	hi := min(to, from+8*longest)
	for hi < to && kept(t[from:hi]) < longest {
		hi = min(to, from+2*(hi-from))
	}
	cut := partialEndIn(forms, t, from, normalizing(t[from:hi], true), false)
	cut = max(cut, partialEndIn(forms, t, from, normalizing(t[from:hi], false), false))
	if d, ok := decoding(t[from:hi]); ok {
		cut = max(cut, partialEndIn(forms, t, from, d, true))
	}
	return cut
}

// partialEndIn is partialEnd for v, a view of the text from on; read
// says its escapes were read (decoding).
func partialEndIn(forms []form, t string, from int, v view, read bool) int {
	folded := lower(v.text)
	cut := 0
	for _, f := range forms {
		if read && f.json {
			continue
		}
		hay := v.text
		if f.fold {
			hay = folded
		}
		for k := min(len(f.text)-1, len(hay)); k > 0; k-- {
			// The first byte first: most k fail there.
			if hay[0] == f.text[len(f.text)-k] && strings.HasPrefix(hay, f.text[len(f.text)-k:]) {
				at := k
				if f.b64 && at < len(hay) && isBase64(hay[at]) {
					at++
				}
				cut = max(cut, at)
				break
			}
		}
	}
	if cut == 0 {
		return from
	}
	// A character read from an escape stands where the escape begins:
	// the escape goes whole.
	n := escapeEnd(t, from+v.orig(cut-1)+1)
	for n < len(t) && !utf8.RuneStart(t[n]) {
		n++
	}
	return n
}

// partial returns where the start of a secret's form that t[:n] may end
// with begins (n if it ends with none), looking no further back than
// from.
func partial(forms []form, t string, from, n int) int {
	// An escape the cut falls inside is left out with what follows it: it
	// may stand for a secret's first character.
	n = max(from, escapeStart(t, n))
	longest := 0
	for _, f := range forms {
		longest = max(longest, len(f.text))
	}
	// A form split by characters left out before matching, or written in
	// escapes, takes more bytes than its own: the window looks back until
	// it holds longest bytes that are kept, however long the runs left out
	// (seven bytes of text for each, a \u escape after each byte, to
	// start). A secret's start followed by a long run of them is so held
	// back for as long as the run lasts; the caller bounds how often it
	// asks (see runtime's streamer).
	lo := max(from, n-8*longest)
	for lo > from && kept(t[lo:n]) < longest {
		lo = max(from, n-2*(n-lo))
	}
	cut := partialIn(forms, t, lo, n, normalizing(t[lo:n], true), false)
	cut = min(cut, partialIn(forms, t, lo, n, normalizing(t[lo:n], false), false))
	if d, ok := decoding(t[lo:n]); ok {
		cut = min(cut, partialIn(forms, t, lo, n, d, true))
	}
	return cut
}

// partialIn is partial for v, a view of t[lo:n]; read says its escapes
// were read (decoding).
func partialIn(forms []form, t string, lo, n int, v view, read bool) int {
	folded := lower(v.text)
	cut := len(v.text)
	for _, f := range forms {
		if read && f.json {
			continue
		}
		hay := v.text
		if f.fold {
			hay = folded
		}
		for k := min(len(f.text)-1, len(hay)); k > 0; k-- {
			// The last byte first: most k fail there.
			if hay[len(hay)-1] == f.text[k-1] && strings.HasSuffix(hay, f.text[:k]) {
				at := len(hay) - k
				if f.b64 && at > 0 && isBase64(hay[at-1]) {
					at--
				}
				cut = min(cut, at)
				break
			}
		}
	}
	if cut == len(v.text) {
		return n
	}
	n = escapeStart(t, lo+v.orig(cut))
	for n > 0 && !utf8.RuneStart(t[n]) {
		n--
	}
	return n
}

// kept returns how many bytes of t count toward a secret's length: those
// of the shortest view matching reads, with its escapes read as
// characters where it holds any.
func kept(t string) int {
	if d, ok := decoding(t); ok {
		return len(d.text)
	}
	return len(normalize(t).text)
}

// find returns the spans of t that hold a secret, in order, overlapping
// ones merged.
func find(ix *index, t string) [][2]int {
	var spans [][2]int
	v := normalize(t)
	spans = ix.spans(v, spans)
	if v.escaped {
		spans = ix.spans(normalizing(t, false), spans)
	}
	if d, ok := decoding(t); ok {
		spans = ix.spansRead(d, spans)
	}
	if len(spans) == 0 {
		return nil
	}
	if strings.IndexByte(t, '\\') >= 0 {
		// A span never cuts a JSON escape: a secret matched where
		// escapes stand beside it (its hex digits after \u00) takes them
		// whole, so that JSON stays JSON.
		for i, sp := range spans {
			spans[i] = [2]int{escapeStart(t, sp[0]), escapeEnd(t, sp[1])}
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i][0] < spans[j][0] })
	merged := spans[:1]
	for _, sp := range spans[1:] {
		last := &merged[len(merged)-1]
		if sp[0] < last[1] {
			last[1] = max(last[1], sp[1])
			continue
		}
		merged = append(merged, sp)
	}
	return merged
}

// spans appends to spans those of the text v views that hold a form.
func (ix *index) spans(v view, spans [][2]int) [][2]int { return ix.spansOf(v, spans, false) }

// spansRead is spans for a view whose JSON escapes were read (decoding):
// the forms JSON's escapes write are not matched there, since the text
// they would match is not escapes but what they stood for (a secret
// ending in a quote, written `...\"`, is not in `...\\"`, whose decoded
// `\` and the string's closing quote look alike).
func (ix *index) spansRead(v view, spans [][2]int) [][2]int { return ix.spansOf(v, spans, true) }

func (ix *index) spansOf(v view, spans [][2]int, read bool) [][2]int {
	add := func(hay string) func(f form, start, end int) {
		return func(f form, start, end int) {
			if read && f.json {
				return
			}
			if f.b64 {
				// The character an offset encoding shares with what
				// comes before or after the secret, where the text has
				// it beside the match: not one past a line break the
				// view left out, which begins other text (the next
				// line's first character is not the encoding's).
				if start > 0 && isBase64(hay[start-1]) && v.orig(start-1)+1 == v.orig(start) {
					start--
				}
				if end < len(hay) && isBase64(hay[end]) && v.orig(end-1)+1 == v.orig(end) {
					end++
				}
			}
			spans = append(spans, [2]int{v.orig(start), v.orig(end-1) + 1})
		}
	}
	ix.each(v.text, add(v.text))
	return spans
}

// replace returns t with each of the ordered, disjoint spans replaced by
// Marker.
func replace(t string, spans [][2]int) string {
	if len(spans) == 0 {
		return t
	}
	var b strings.Builder
	b.Grow(len(t))
	at := 0
	for _, sp := range spans {
		b.WriteString(t[at:sp[0]])
		b.WriteString(Marker)
		at = sp[1]
	}
	b.WriteString(t[at:])
	return b.String()
}

func isBase64(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
}

// view is a text with the characters that may split a secret left out,
// and the way back to the text's offsets.
type view struct {
	text    string
	gaps    []gap
	escaped bool // a JSON escape was left out
}

// gap says that before the view's byte at, cum bytes of the text in all
// were left out.
type gap struct{ at, cum int }

// orig returns the offset in the text of the view's byte i.
func (v view) orig(i int) int {
	k := sort.Search(len(v.gaps), func(k int) bool { return v.gaps[k].at > i })
	if k == 0 {
		return i
	}
	return i + v.gaps[k-1].cum
}

// normalize returns the view of t without its line breaks and format
// characters, raw or as JSON escapes.
func normalize(t string) view { return normalizing(t, true) }

// normalizing is normalize, leaving JSON escapes in the text unless
// escapes: a backslash in plain text may stand before a secret that starts
// with n, r or u.
func normalizing(t string, escapes bool) view {
	var b []byte
	var gaps []gap
	escaped := false
	copied, removed := 0, 0
	for i := 0; i < len(t); {
		for i < len(t) && !special[t[i]] {
			i++
		}
		if i == len(t) {
			break
		}
		c := t[i]
		n := skip(t, i)
		if n > 1 && c == '\\' {
			if !escapes {
				n = 0
			} else {
				escaped = true
			}
		}
		if n == 0 {
			i++
			if c == '\\' && i < len(t) && t[i] == '\\' {
				i++ // an escaped backslash escapes nothing after it
			}
			continue
		}
		if b == nil {
			b = make([]byte, 0, len(t))
		}
		b = append(b, t[copied:i]...)
		removed += n
		if len(gaps) > 0 && gaps[len(gaps)-1].at == len(b) {
			gaps[len(gaps)-1].cum = removed
		} else {
			gaps = append(gaps, gap{len(b), removed})
		}
		i += n
		copied = i
	}
	if b == nil {
		return view{text: t}
	}
	b = append(b, t[copied:]...)
	return view{text: string(b), gaps: gaps, escaped: escaped}
}

// decoding returns the view of t that normalize gives, but with every
// other JSON escape in t read as the character it stands for: a text
// whose writer escaped a secret's characters as Go does not (\/, \u002B,
// \u0073). ok is false when t holds no such escape, the view then being
// normalize's.
func decoding(t string) (v view, ok bool) {
	if !otherEscapes(t) {
		return view{}, false
	}
	var b []byte
	var gaps []gap
	copied, removed := 0, 0
	left := func(at, n int) {
		removed += n
		if len(gaps) > 0 && gaps[len(gaps)-1].at == at {
			gaps[len(gaps)-1].cum = removed
		} else {
			gaps = append(gaps, gap{at, removed})
		}
	}
	for i := 0; i < len(t); {
		for i < len(t) && !special[t[i]] {
			i++
		}
		if i == len(t) {
			break
		}
		if n := skip(t, i); n > 0 {
			b = append(b, t[copied:i]...)
			left(len(b), n)
			i += n
			copied = i
			continue
		}
		if t[i] != '\\' {
			i++
			continue
		}
		r, n := unescape(t, i)
		if n == 0 {
			i++
			continue
		}
		b = append(b, t[copied:i]...)
		if r == '\n' || r == '\r' {
			// A line break written \u000a is left out as \n is.
			left(len(b), n)
		} else {
			// The character's bytes stand where the escape begins; the
			// rest of the escape is left out after them.
			b = utf8.AppendRune(b, r)
			left(len(b), n-utf8.RuneLen(r))
		}
		i += n
		copied = i
	}
	b = append(b, t[copied:]...)
	return view{text: string(b), gaps: gaps}, true
}

// escapeAt returns the end of the JSON escape that starts at t[i], a
// backslash that no backslash escapes, or i when there is none.
func escapeAt(t string, i int) int {
	if i+1 >= len(t) || t[i] != '\\' {
		return i
	}
	n := 0
	for j := i - 1; j >= 0 && t[j] == '\\'; j-- {
		n++
	}
	if n%2 == 1 {
		return i // itself escaped
	}
	switch t[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return i + 2
	case 'u':
		if _, n := unescape(t, i); n > 0 {
			return i + n // a surrogate pair's two escapes are one
		}
		if _, ok := hex4(t, i+2); ok {
			return i + 6
		}
	}
	return i
}

// escapeStart returns a, or the start of the JSON escape a falls inside
// (a surrogate pair's two escapes being one).
func escapeStart(t string, a int) int {
	start := a
	for s := a - 1; s >= 0 && s > a-12; s-- {
		if t[s] == '\\' && escapeAt(t, s) > a {
			start = s
		}
	}
	return start
}

// escapeEnd returns b, or the end of the JSON escape b falls inside.
func escapeEnd(t string, b int) int {
	end := b
	for s := b - 1; s >= 0 && s > b-12; s-- {
		if t[s] == '\\' {
			end = max(end, escapeAt(t, s))
		}
	}
	return end
}

// otherEscapes says whether t holds a JSON escape that normalize keeps
// and Go's encoder would not write for a secret's character: \/, or a
// \u escape of a character that is not a format character.
func otherEscapes(t string) bool {
	for i := strings.IndexByte(t, '\\'); i >= 0 && i+1 < len(t); {
		switch t[i+1] {
		case '/':
			return true
		case 'u':
			if skip(t, i) == 0 {
				if _, n := unescape(t, i); n > 0 {
					return true
				}
			}
		case '\\':
			i++ // an escaped backslash escapes nothing after it
		}
		j := strings.IndexByte(t[i+1:], '\\')
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

// unescape reads the JSON escape at t[i], a backslash: the character it
// stands for and its length, or 0 when it is not one that stands for a
// character (a lone surrogate's).
func unescape(t string, i int) (rune, int) {
	if i+1 >= len(t) {
		return 0, 0
	}
	switch c := t[i+1]; c {
	case '"', '\\', '/':
		return rune(c), 2
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 't':
		return '\t', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 'u':
		r, ok := hex4(t, i+2)
		if !ok {
			return 0, 0
		}
		if utf16.IsSurrogate(r) {
			if r >= 0xdc00 || i+12 > len(t) || t[i+6] != '\\' || t[i+7] != 'u' {
				return 0, 0
			}
			lo, ok := hex4(t, i+8)
			if !ok {
				return 0, 0
			}
			if r = utf16.DecodeRune(r, lo); r == utf8.RuneError {
				return 0, 0
			}
			return r, 12
		}
		return r, 6
	}
	return 0, 0
}

// hex4 reads the four hexadecimal digits at t[i:].
func hex4(t string, i int) (rune, bool) {
	if i+4 > len(t) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(t[i : i+4]) {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// special holds the bytes that may start what normalize leaves out.
var special = func() (s [256]bool) {
	for i := range 256 {
		s[i] = i == '\n' || i == '\r' || i == '\\' || i >= utf8.RuneSelf
	}
	return s
}()

// skip returns how many bytes of what may split a secret start t[i:]: a
// line break or a format character, raw or escaped as JSON escapes it.
func skip(t string, i int) int {
	switch c := t[i]; {
	case c == '\n' || c == '\r':
		return 1
	case c == '\\' && i+1 < len(t):
		switch t[i+1] {
		case 'n', 'r':
			return 2
		case 'u':
			if i+6 <= len(t) {
				if r, ok := hex4(t, i+2); ok && unicode.Is(unicode.Cf, r) {
					return 6
				}
			}
		}
	case c >= utf8.RuneSelf:
		if r, n := utf8.DecodeRuneInString(t[i:]); r != utf8.RuneError && unicode.Is(unicode.Cf, r) {
			return n
		}
	}
	return 0
}

// Bytes is String for bytes; it returns b itself when it holds no secret.
func (s *Set) Bytes(b []byte) []byte {
	if s.snapshot() == nil {
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
