package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/internal/leaf/userfile"
	"agentc.dev/agentc/runtime/internal/replylimit"
)

// Journal is a journal file, read.
type Journal struct {
	Header Header
	// Entries are in file order, their requests as the journal stores
	// them: see Entry.ExpandRequest.
	Entries []Entry
	// Truncated says the file ended in an incomplete line, which was left
	// out: what a crash during a write leaves.
	Truncated bool
	// CutLine is the number of the line cut short, and CutBytes its
	// bytes, which were left out; 0 unless Truncated.
	CutLine  int
	CutBytes int64
	// ValidBytes is the length of the file's complete lines: where the
	// next line goes.
	ValidBytes int64

	index map[Key]int // into Entries
	store *store
	// done is the number of entries up to the last that completed (one
	// without an error), in file order: see WentOn.
	done int

	scratch []member // a line's members, while it is read
}

// store is what the entries of a journal read back share: the values
// their requests refer to, and where they were read, for errors.
type store struct {
	values map[string][]byte // canonical JSON by digest
	file   string
}

// The bounds on what a journal may make a reader hold. A journal of a few
// megabytes could name gigabytes: one large value referenced a thousand
// times. So a reader keeps each request as the journal stores it, and
// replaces its value references only when asked (Entry.ExpandRequest),
// one request at a time; a reader that keeps what it expands of many
// requests bounds that with a Budget.
var (
	// MaxFile bounds the journal file itself.
	MaxFile int64 = 256 << 20
	// MaxRequest bounds one request, its references replaced: as large
	// as a provider accepts (32 MB at Anthropic).
	MaxRequest int64 = 32 << 20
)

// CutShort says, of a journal whose last line was cut short (Truncated),
// that it was, which line it is and how many bytes are left out.
func (j *Journal) CutShort() string {
	return fmt.Sprintf("its last line was cut short (a crash during a write) and is left out: line %d, %d bytes", j.CutLine, j.CutBytes)
}

// Lookup returns the entry of an effect: the last, where a failed attempt
// was made again.
func (j *Journal) Lookup(k Key) (*Entry, bool) {
	i, ok := j.index[k]
	if !ok {
		return nil, false
	}
	return &j.Entries[i], true
}

// WentOn reports whether the run went on past the entry of the effect at
// k (the last, where a failed attempt was made again): an effect that
// completed was written after it. A run makes its effects one at a time,
// so an effect written after a failure was made once the failure was
// known: a fallback's answer after the call that failed, a caller's next
// call after the failure that ended the agent it called.
func (j *Journal) WentOn(k Key) bool {
	i, ok := j.index[k]
	return ok && i+1 < j.done
}

// Open reads a journal file. Its errors are *Error, naming the file, or
// errors of the file system.
// Only a regular file is read, of at most MaxFile bytes.
func Open(path string) (*Journal, error) {
	f, err := userfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	defer f.Close()
	return read(f, path)
}

func read(f *os.File, path string) (*Journal, error) {
	data, err := userfile.ReadFrom(f, MaxFile, path, "a journal")
	var tl *userfile.TooLargeError
	if errors.As(err, &tl) {
		return nil, &Error{File: path, Msg: fmt.Sprintf("the file is larger than the %s a journal may be", userfile.Size(MaxFile))}
	}
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	j, err := parse(data)
	if e, ok := err.(*Error); ok {
		e.File = path
	}
	if j != nil {
		j.store.file = path
	}
	return j, err
}

// Read reads a journal, of at most MaxFile bytes. Its errors are *Error,
// or those of r.
func Read(r io.Reader) (*Journal, error) {
	data, err := userfile.ReadFrom(r, MaxFile, "journal", "a journal")
	var tl *userfile.TooLargeError
	if errors.As(err, &tl) {
		return nil, &Error{Msg: fmt.Sprintf("larger than the %s a journal may be", userfile.Size(MaxFile))}
	}
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	return parse(data)
}

func parse(data []byte) (*Journal, error) {
	if len(data) == 0 {
		return nil, &Error{Msg: "empty file, not a journal"}
	}
	// Sized for a line an effect, but no more than the file's size
	// suggests: a file of newlines makes no more than it would.
	n := min(bytes.Count(data, []byte{'\n'}), len(data)/entrySizeGuess+1)
	j := &Journal{Entries: make([]Entry, 0, n), index: make(map[Key]int, n), store: &store{values: map[string][]byte{}}}
	lines := make(map[Key]int, n) // where each effect is, for errors
	pos := 0
	j.scratch = make([]member, 0, maxFields)
	for n := 1; pos < len(data); n++ {
		nl := bytes.IndexByte(data[pos:], '\n')
		if nl < 0 {
			if n == 1 {
				return nil, &Error{Line: 1, Msg: "incomplete header: the file ends before its first line does"}
			}
			j.Truncated, j.CutLine, j.CutBytes = true, n, int64(len(data)-pos)
			break
		}
		line := data[pos : pos+nl]
		var err error
		if n == 1 {
			err = j.header(line)
		} else {
			err = j.line(line, n, lines)
		}
		if err != nil {
			return nil, &Error{Line: n, Msg: err.Error()}
		}
		pos += nl + 1
		j.ValidBytes = int64(pos)
	}
	j.scratch = nil
	return j, nil
}

// entrySizeGuess is a size few entry lines are shorter than (an entry's
// fingerprint alone is 71 bytes, its request at least its model and
// messages): the reader sizes what it keeps by it, and a journal of
// shorter entries grows it as it reads.
const entrySizeGuess = 512

// member is one member of a line's object.
type member struct {
	name  string
	value json.RawMessage
}

// maxFields is more than any line has, and bounds the search for
// repeated names.
const maxFields = 16

// members splits a line into its object's members, in order, matching
// names exactly (encoding/json alone would match them ignoring case and
// let a repeated name win silently). The values share the line's bytes.
func members(line []byte) ([]member, error) {
	return appendMembers(nil, line)
}

// appendMembers is members, appending to ms.
func appendMembers(ms []member, line []byte) ([]member, error) {
	if len(bytes.TrimSpace(line)) == 0 {
		return nil, errors.New("empty line")
	}
	if !digest.Valid(line) {
		// A line cut short (a crash while it was written, an object
		// across lines) ends inside its value; one with a byte after a
		// whole value ({…}x) ends at that byte too, and is not cut short.
		if err := json.NewDecoder(bytes.NewReader(line)).Decode(new(json.RawMessage)); errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errors.New("not a JSON object: the line ends inside it")
		}
		return nil, fmt.Errorf("not a JSON object: %v", json.Unmarshal(line, new(json.RawMessage)))
	}
	i := skipSpace(line, 0)
	if line[i] != '{' {
		return nil, errors.New("not a JSON object")
	}
	start := len(ms)
	for i = skipSpace(line, i+1); line[i] != '}'; i = skipSpace(line, i) {
		if line[i] == ',' {
			i = skipSpace(line, i+1)
		}
		k := stringEnd(line, i)
		name, err := memberName(line[i:k])
		if err != nil {
			return nil, err
		}
		i = skipSpace(line, skipSpace(line, k)+1) // past the colon
		end := valueEnd(line, i)
		for _, m := range ms[start:] {
			if m.name == name {
				return nil, fmt.Errorf("field %q appears twice", name)
			}
		}
		if len(ms)-start == maxFields {
			return nil, fmt.Errorf("more than %d fields", maxFields)
		}
		// Capped, so that appending to a value read never overwrites the
		// bytes after it.
		ms = append(ms, member{name, line[i:end:end]})
		i = end
	}
	return ms, nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// lineNames are the member names lines have.
var lineNames = [...]string{"effect", "kind", "fingerprint", "request", "response", "error", "usage",
	"started", "duration_ms", "lost", "attempt", "value", "json",
	"journal", "plan", "run", "output_suffix", "agent", "tools"}

// memberName decodes a member's name, known to be a valid JSON string,
// without a copy where it is a name lines have.
func memberName(q []byte) (string, error) {
	for _, n := range lineNames {
		if len(q) == len(n)+2 && string(q[1:len(q)-1]) == n {
			return n, nil
		}
	}
	return unquote(q)
}

// unquote decodes a JSON string, known to be valid.
func unquote(q []byte) (string, error) {
	if bytes.IndexByte(q, '\\') < 0 && utf8.Valid(q) {
		return string(q[1 : len(q)-1]), nil
	}
	var s string
	err := json.Unmarshal(q, &s)
	return s, err
}

// field is a member a line may have, and where it is decoded to.
type field struct {
	name     string
	target   any
	optional bool
}

// fields decodes members into their fields' targets, rejecting unknown
// members and missing required ones.
func fields(what string, ms []member, fs ...field) error {
	for _, m := range ms {
		i := slices.IndexFunc(fs, func(f field) bool { return f.name == m.name })
		if i < 0 {
			return fmt.Errorf("unknown field %q in %s", m.name, what)
		}
		if err := decodeField(m, fs[i].target); err != nil {
			return err
		}
	}
	for _, f := range fs {
		if !f.optional && !slices.ContainsFunc(ms, func(m member) bool { return m.name == f.name }) {
			return fmt.Errorf("missing field %q in %s", f.name, what)
		}
	}
	return nil
}

func decodeField(m member, target any) error {
	switch t := target.(type) {
	case *json.RawMessage:
		*t = m.value
		return nil
	case *string:
		if len(m.value) > 0 && m.value[0] == '"' {
			var err error
			*t, err = unquote(m.value)
			return err
		}
	}
	if err := json.Unmarshal(m.value, target); err != nil || bytes.Equal(m.value, []byte("null")) {
		want := "a string"
		switch target.(type) {
		case *int64:
			want = "an integer"
		case *bool:
			want = "true or false"
		}
		return fmt.Errorf("field %q: want %s, found %s", m.name, want, short(m.value))
	}
	return nil
}

func (j *Journal) header(line []byte) error {
	ms, err := members(line)
	if err != nil {
		return fmt.Errorf("no journal header: %v", err)
	}
	var format string
	if !slices.ContainsFunc(ms, func(m member) bool { return m.name == "journal" }) {
		return fmt.Errorf(`no journal header: want {"journal":%q,…} on the first line`, Format)
	}
	for _, m := range ms {
		if m.name == "journal" {
			if err := decodeField(m, &format); err != nil {
				return err
			}
		}
	}
	if format == "agentc.journal/v1" {
		return fmt.Errorf("journal format %q was recorded by an earlier agentc, which fingerprinted tool arguments as the model wrote them; %q fingerprints them as canonical JSON, so it cannot replay this one: record it again", format, Format)
	}
	if format != Format {
		return fmt.Errorf("unknown journal format %q, want %q", format, Format)
	}
	var h headerLine
	err = fields("the header", ms,
		field{"journal", &h.Journal, false}, field{"plan", &h.Plan, false}, field{"run", &h.Run, false},
		field{"output_suffix", &h.OutputSuffix, false}, field{"agent", &h.Agent, false},
		field{"started", &h.Started, false}, field{"tools", &h.Tools, true}, field{"callee_budget", &h.CalleeBudget, true},
		field{"exact_usage", &h.ExactUsage, true})
	if err != nil {
		return err
	}
	if _, err := digest.Parse(h.Plan); err != nil {
		return fmt.Errorf("header: plan: %v", err)
	}
	started, err := parseTime(h.Started)
	if err != nil {
		return fmt.Errorf("header: started: %v", err)
	}
	j.Header = Header{Plan: h.Plan, Run: h.Run, OutputSuffix: h.OutputSuffix, Agent: h.Agent, Started: started, Tools: h.Tools, CalleeBudget: h.CalleeBudget, ExactUsage: h.ExactUsage}
	return nil
}

func (j *Journal) line(line []byte, n int, lines map[Key]int) error {
	ms, err := appendMembers(j.scratch[:0], line)
	if err != nil {
		return err
	}
	for _, m := range ms {
		switch m.name {
		case "value":
			return j.value(ms)
		case "effect":
			return j.entry(ms, n, lines)
		case "journal":
			return errors.New("a second journal header")
		}
	}
	return errors.New(`neither a value line (with "value") nor an entry (with "effect")`)
}

func (j *Journal) value(ms []member) error {
	var d string
	var v json.RawMessage
	if err := fields("a value line", ms, field{"value", &d, false}, field{"json", &v, false}); err != nil {
		return err
	}
	if _, err := digest.Parse(d); err != nil {
		return fmt.Errorf("value: %v", err)
	}
	c, err := canonical(v)
	if err != nil {
		return fmt.Errorf("value %s: %v", d, err)
	}
	if got := sum(valueHash, c); got != d {
		return fmt.Errorf("value line %s: its JSON has digest %s; the line is corrupt", d, got)
	}
	j.store.values[d] = c
	return nil
}

// lostAttempts reads an entry's "lost" member: an array of objects, each
// with exactly an attempt number (from 1) and a start time.
func lostAttempts(v json.RawMessage) ([]Attempt, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(v, &raw); err != nil || raw == nil {
		return nil, fmt.Errorf("want an array of attempts, found %s", short(v))
	}
	out := make([]Attempt, 0, len(raw))
	for i, r := range raw {
		ms, err := members(r)
		if err != nil {
			return nil, fmt.Errorf("attempt %d: %v", i+1, err)
		}
		var (
			n       int64
			started string
		)
		if err := fields("an attempt", ms, field{"attempt", &n, false}, field{"started", &started, false}); err != nil {
			return nil, fmt.Errorf("attempt %d: %v", i+1, err)
		}
		if n < 1 || n > 1<<31-1 {
			return nil, fmt.Errorf("attempt %d: its number %d is not from 1", i+1, n)
		}
		t, err := parseTime(started)
		if err != nil {
			return nil, fmt.Errorf("attempt %d: started: %v", i+1, err)
		}
		out = append(out, Attempt{Attempt: int(n), Started: t})
	}
	return out, nil
}

func (j *Journal) entry(ms []member, n int, lines map[Key]int) error {
	var (
		key, started string
		lost         json.RawMessage
		e            Entry
	)
	err := fields("an entry", ms,
		field{"effect", &key, false}, field{"kind", &e.Kind, false}, field{"fingerprint", &e.Fingerprint, false},
		field{"request", &e.Request, false}, field{"response", &e.Response, true}, field{"error", &e.Error, true},
		field{"usage", &e.Usage, true}, field{"started", &started, false}, field{"duration_ms", &e.DurationMS, false},
		field{"lost", &lost, true})
	if err != nil {
		return err
	}
	if e.Key, err = ParseKey(key); err != nil {
		return err
	}
	if lost != nil {
		if e.Lost, err = lostAttempts(lost); err != nil {
			return fmt.Errorf("effect %s: lost: %v", key, err)
		}
	}
	// An effect that failed may be made again, and a decision asked
	// again (a resume asks about every call it makes live): a later entry
	// supersedes it. Any other effect that completed is there once.
	if first, dup := lines[e.Key]; dup && !supersedable(&j.Entries[j.index[e.Key]]) {
		return fmt.Errorf("effect %s appears twice, first on line %d", key, first)
	}
	if err := checkKind(e.Key, e.Kind); err != nil {
		return fmt.Errorf("effect %s: %v", key, err)
	}
	if _, err := digest.Parse(e.Fingerprint); err != nil {
		return fmt.Errorf("effect %s: fingerprint: %v", key, err)
	}
	if e.Response == nil && e.Error == "" {
		return fmt.Errorf(`effect %s: missing field "response" (an entry without an error needs one)`, key)
	}
	if e.Started, err = parseTime(started); err != nil {
		return fmt.Errorf("effect %s: started: %v", key, err)
	}
	if e.DurationMS < 0 {
		return fmt.Errorf("effect %s: negative duration_ms %d", key, e.DurationMS)
	}
	if err := checkUsage(e.Usage); err != nil {
		return fmt.Errorf("effect %s: usage: %v", key, err)
	}
	if e.Kind == KindModel {
		// Held, whoever reads the journal, to what the reply to any
		// request could be; a replay holds it to its request's limit.
		if err := replylimit.CheckRecorded(e.Response, 0); err != nil {
			return fmt.Errorf("effect %s: the response is not a reply any request could have had: %v", key, err)
		}
		var resp struct {
			Usage json.RawMessage `json:"usage"`
		}
		if json.Unmarshal(e.Response, &resp) == nil {
			if err := checkUsage(resp.Usage); err != nil {
				return fmt.Errorf("effect %s: response: usage: %v", key, err)
			}
		}
	}
	c, err := canonical(e.Request)
	if err != nil {
		return fmt.Errorf("effect %s: request: %v", key, err)
	}
	if c[0] != '{' {
		return fmt.Errorf("effect %s: request: want a JSON object, found %s", key, short(c))
	}
	// Counted now, so that a request too large to expand is an error at
	// its line, whoever reads the journal; made only when asked.
	if _, err := expandedSize(c, j.store.values, nil); err != nil {
		return fmt.Errorf("effect %s: %v", key, err)
	}
	e.Request, e.stored, e.line, e.from = nil, c, n, j.store
	lines[e.Key] = n
	j.index[e.Key] = len(j.Entries)
	j.Entries = append(j.Entries, e)
	if e.Error == "" {
		j.done = len(j.Entries)
	}
	return nil
}

// canonical returns the canonical JSON of v, v itself when it is
// canonical already: a value a line stores (a journal's writer stores them
// canonical, so most are checked rather than built again, and then shared
// with the line, which the reader keeps), or one a value digest hashes.
func canonical(v json.RawMessage) ([]byte, error) {
	if digest.IsCanonical(v) {
		return v, nil
	}
	return digest.CanonicalExact(v)
}

// supersedable reports whether a later entry of the same effect may follow e.
func supersedable(e *Entry) bool { return e.Error != "" || e.Kind == KindApproval }

// short returns a JSON text for a message, cut to about 80 bytes.
func short(v []byte) string {
	const max = 80
	s := string(v)
	if len(s) <= max {
		return s
	}
	cut := max - 3
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return strings.TrimSpace(s[:cut]) + "..."
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// usageCounts are the members of a model call's usage, each a count of
// tokens.
var usageCounts = []string{"input", "output", "cached", "cache_write"}

// checkUsage refuses a usage object that holds a negative count of tokens,
// as a negative duration is refused: priced, it would cost less than
// nothing, and on replay give back what a budget spent. Usage that is not
// an object of numbers is left to its reader.
func checkUsage(v json.RawMessage) error {
	var m map[string]json.RawMessage
	if len(v) == 0 || json.Unmarshal(v, &m) != nil {
		return nil
	}
	for _, name := range usageCounts {
		if f, err := strconv.ParseFloat(string(m[name]), 64); err == nil && f < 0 {
			return fmt.Errorf("negative %s %s", name, m[name])
		}
	}
	return nil
}
