// Package journal reads and writes the journal of a run: one line per
// effect (each model call and each tool call), in JSON lines, so that a run
// can be replayed without the network, resumed after a crash, and compared
// with a run whose requests changed.
//
// A journal file holds, one JSON object a line, each ending in a newline:
//
//   - a header, first: {"journal":"agentc.journal/v2","plan":…,"run":…,
//     "output_suffix":…,"agent":…,"started":…,"tools":…};
//   - value lines, {"value":"blake3:…","json":…}: a part of a request
//     stored once under its digest, before the first entry that refers to
//     it;
//   - entry lines, {"effect":"1.0","kind":"model","fingerprint":…,
//     "request":…,"response":…,"error":…,"usage":…,"started":…,
//     "duration_ms":…,"lost":[{"attempt":1,"started":…}]}, one per
//     effect; "response" is left out only for an effect that failed
//     without one, "error", "usage" and "lost" when empty.
//
// # Request storage
//
// Requests repeat themselves: each model call sends the conversation so far
// and the same tool specs and schemas. An entry therefore stores its
// request shredded: the value of each top-level member, and each element of
// a top-level member whose value is an array, is replaced by a reference
// {"$value":"blake3:…"} to a value line when its canonical JSON is longer
// than 64 bytes. Nothing deeper is ever replaced.
//
// A reference is an object with exactly the one member "$value". So that a
// request's own data may have that shape, such a value, in a position that
// can hold a reference, is always stored as a value line however short it
// is: in those positions an object with the single member "$value" is
// always a reference, and the value it points to is taken verbatim. Values
// of that shape anywhere else are plain data.
//
// Value digests are blake3 in derive-key mode over the RFC 8785 canonical
// JSON, with their own context string, distinct from the fingerprint's.
// The reader checks every value line against its digest, and keeps each
// request as stored, its size with the references replaced counted
// (MaxRequest): Entry.ExpandRequest puts it together, in canonical form,
// when asked.
//
// # Durability
//
// Every Append ends with an fsync, and a line counts only once its newline
// is written: a final line without one is what a crash mid-write leaves,
// and the reader drops it (Journal.Truncated) instead of failing, so a
// journal survives kill -9 up to its last completed effect. Create syncs
// the header, then the directory it renamed the journal into; Resume
// syncs the cut it makes. A failed write or sync is Append's error, and
// every later Append's: what the file holds is then known only up to the
// last effect acknowledged. The tests hold all this against a disk that
// loses every write not yet synced when the machine stops.
//
// Lines are read as JSON, white space between tokens and around the
// object included (CRLF line ends read); a blank line, an object over
// two lines or a byte order mark is an error at its line.
//
// # One writer
//
// A journal is written only under its Lock, an advisory lock on a file
// beside it that Create and Resume take and their Writer holds until
// Close: a second writer is refused at once (LockedError), and OpenShared
// reads only while no writer holds it.
package journal

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zeebo/blake3"

	"agentc.dev/agentc/digest"
)

// Format is the header's "journal" member, the version of the format.
const Format = "agentc.journal/v2"

// Kinds of effect.
const (
	KindModel = "model"
	KindTool  = "tool"
	// KindApproval is the decision about a tool call that needed
	// approval, under the key of the call's nested effects (Round and
	// Ordinal 0: no nested run has a round 0). A resume asks again about
	// a call it makes live, so a later decision may supersede one.
	KindApproval = "approval"
)

// refLimit is the longest canonical value a shredded request keeps inline.
const refLimit = 64

// The derive-key contexts are part of the format: changing one is a format
// version bump.
var (
	fingerprintHash = newHashes("agentc.dev 2026-11-30 effect fingerprint v1")
	valueHash       = newHashes("agentc.dev 2026-11-30 journal value v1")
)

// hashes hands out hashers of one derive-key context. A blake3 hasher
// holds an 8 KiB buffer: one cloned per digest was a twentieth of a
// replay's time, so they are kept and reset, which keeps the context.
type hashes struct{ pool sync.Pool }

func newHashes(context string) *hashes {
	proto := blake3.NewDeriveKey(context)
	return &hashes{pool: sync.Pool{New: func() any { return proto.Clone() }}}
}

func sum(hs *hashes, canonical []byte) string {
	h := hs.pool.Get().(*blake3.Hasher)
	h.Reset()
	h.Write(canonical)
	var out [32]byte
	b := make([]byte, 0, len(digest.Prefix)+64)
	b = append(b, digest.Prefix...)
	d := string(hex.AppendEncode(b, h.Sum(out[:0])))
	hs.pool.Put(h)
	return d
}

// Fingerprint returns an effect's fingerprint: blake3 in derive-key mode
// over the canonical JSON of the whole request. It depends on the request
// only, never on how a journal stores it: member order, white space and
// the spelling of numbers (1, 1.0, 1e0) do not change it.
func Fingerprint(request json.RawMessage) (string, error) {
	c, err := digest.CanonicalExact(request)
	if err != nil {
		return "", fmt.Errorf("journal: fingerprint: %w", err)
	}
	return sum(fingerprintHash, c), nil
}

// FingerprintCanonical is Fingerprint of a request already in canonical
// JSON (digest.CanonicalExact's form): a caller that assembles the
// canonical form from parts it keeps saves canonicalising it whole. The
// caller must give exactly the canonical bytes, or the fingerprint is
// another request's.
func FingerprintCanonical(canonical []byte) string { return sum(fingerprintHash, canonical) }

// ValueDigest returns the digest a journal stores a value under: blake3
// in derive-key mode (a context of its own) over its canonical JSON. A
// request may name its large parts by their value digests, so that its
// fingerprint costs what the new parts cost, not the whole.
func ValueDigest(v json.RawMessage) (string, error) {
	c, err := canonical(v)
	if err != nil {
		return "", fmt.Errorf("journal: value digest: %w", err)
	}
	return sum(valueHash, c), nil
}

// Header is a journal's first line: what was run, and when.
type Header struct {
	Plan         string // the plan digest
	Run          string // the run's id
	OutputSuffix string // the output tool's name suffix, for replay
	Agent        string
	Started      time.Time
	// Tools, if set, are the tool specs the run saw when it started, such
	// as an MCP server's tool set.
	Tools json.RawMessage
	// CalleeBudget says the agents the run called ran within what its
	// token budget had left when it called them (runtime.TokensLeft), as
	// every run since this member came does; a journal recorded before
	// says nothing, and its callees ran within their own budgets alone,
	// as its replay runs them.
	CalleeBudget bool
	// ExactUsage says the run held a provider's usage reports to the
	// model's own tokeniser's count where agentc has one, as a run that
	// reserves its calls in a token pool does (it counts them with the
	// tokeniser anyway); a run with a journal does as its header says, so
	// a replay charges as the run did, with a pool or without. A journal
	// that says nothing is held to the local estimate alone
	// (runtime.WithUsageByBytes).
	ExactUsage bool
}

// Entry is one effect: a model call or a tool call.
type Entry struct {
	Key  Key
	Kind string // KindModel or KindTool
	// Fingerprint is Fingerprint(Request); Append fills it in if empty.
	Fingerprint string
	// Request is the request given to Append, a JSON object. An entry
	// read back leaves it nil: it keeps the request as the journal stores
	// it, its large parts references to values, and ExpandRequest puts it
	// together when asked, so that a journal costs a reader what its file
	// holds, not what it names.
	Request json.RawMessage
	// Response is the effect's result; it may be nil only when Error is
	// set.
	Response   json.RawMessage
	Error      string
	Usage      json.RawMessage // optional
	Started    time.Time
	DurationMS int64
	// Lost are the attempts at the effect made before this one that did
	// not complete: their worker was lost mid-call (a run on Temporal).
	// Each may have reached the provider or run the tool.
	Lost []Attempt

	// Read back: the request as stored (canonical, shredded), its line,
	// and the journal's values.
	stored []byte
	line   int
	from   *store
}

// ExpandRequest returns the entry's request in canonical form, its value
// references replaced by the values they name: the whole request, or,
// when members are named, the object of those of its members it has. It
// counts the size before it makes anything, and refuses a request larger
// than MaxRequest, or, given a budget, one larger than what the budget
// has left, which it then spends. For an entry read back its errors are
// *Error, at the entry's line.
func (e *Entry) ExpandRequest(b *Budget, members ...string) (json.RawMessage, error) {
	c := e.stored
	var values map[string][]byte
	if e.from != nil {
		values = e.from.values
	}
	if c == nil {
		var err error
		if c, err = digest.CanonicalExact(e.Request); err != nil {
			return nil, fmt.Errorf("journal: effect %s: request: %w", e.Key, err)
		}
		if c[0] != '{' {
			return nil, fmt.Errorf("journal: effect %s: request: want a JSON object, found %s", e.Key, short(c))
		}
	}
	if len(members) > 0 {
		c = pick(c, members)
	}
	out, err := unshred(c, values, b)
	switch {
	case err != nil && e.from != nil:
		return nil, &Error{File: e.from.file, Line: e.line, Msg: fmt.Sprintf("effect %s: %v", e.Key, err)}
	case err != nil:
		return nil, fmt.Errorf("journal: effect %s: %w", e.Key, err)
	}
	return out, nil
}

// Attempt is an attempt at an effect that did not complete.
type Attempt struct {
	Attempt int // from 1
	Started time.Time
}

// Key is an effect's place in a run: the round, and the effect's ordinal
// within it. Path nests the effects of a child run (an agent called as a
// tool) under the parent's effect that ran it.
type Key struct {
	Path    string // the parent effect's key, "" at the top
	Round   int
	Ordinal int
}

// String returns "ROUND.ORDINAL", after "PATH/" when Path is set.
func (k Key) String() string {
	var b []byte
	if k.Path != "" {
		b = append(b, k.Path...)
		b = append(b, '/')
	}
	b = strconv.AppendInt(b, int64(k.Round), 10)
	b = append(b, '.')
	b = strconv.AppendInt(b, int64(k.Ordinal), 10)
	return string(b)
}

// Child returns the Path of the effects of a run nested under k.
func (k Key) Child() string { return k.String() }

// ParseKey reads a key written by Key.String. Numbers are decimal, without
// sign or leading zeros, so that every key has one spelling.
func ParseKey(s string) (Key, error) {
	var k Key
	rest := s
	for {
		seg, more, nested := strings.Cut(rest, "/")
		r, o, ok := strings.Cut(seg, ".")
		if !ok {
			return Key{}, fmt.Errorf("malformed effect key %q: want ROUND.ORDINAL, optionally after a parent key and /", s)
		}
		var err error
		if k.Round, err = keyNumber(r); err == nil {
			k.Ordinal, err = keyNumber(o)
		}
		if err != nil {
			return Key{}, fmt.Errorf("malformed effect key %q: %v", s, err)
		}
		if !nested {
			break
		}
		rest = more
	}
	k.Path = strings.TrimSuffix(s[:len(s)-len(rest)], "/")
	return k, nil
}

func keyNumber(s string) (int, error) {
	if s == "" {
		return 0, fmt.Errorf("empty number")
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%q is not a decimal number", s)
		}
	}
	if len(s) > 1 && s[0] == '0' {
		return 0, fmt.Errorf("%q has a leading zero", s)
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return int(n), nil
}

// check reports a key that ParseKey would not read back.
func (k Key) check() error {
	if k.Round < 0 || k.Ordinal < 0 || k.Round > 1<<31-1 || k.Ordinal > 1<<31-1 {
		return fmt.Errorf("malformed effect key %s: round and ordinal must be in 0…2147483647", k)
	}
	if k.Path != "" {
		if _, err := ParseKey(k.Path); err != nil {
			return fmt.Errorf("effect key path: %v", err)
		}
	}
	return nil
}

// checkKind reports an effect of an unknown kind, or an approval at a key
// other than PATH/0.0, under its call's key (a run's rounds count from 1).
func checkKind(k Key, kind string) error {
	switch {
	case kind != KindModel && kind != KindTool && kind != KindApproval:
		return fmt.Errorf("unknown kind %q, want %q, %q or %q", kind, KindModel, KindTool, KindApproval)
	case kind == KindApproval && (k.Path == "" || k.Round != 0 || k.Ordinal != 0):
		return fmt.Errorf("an approval is under its call's key, at PATH/0.0")
	}
	return nil
}

// Error is a problem in a journal file, at a line.
type Error struct {
	File string // empty when read from an io.Reader
	Line int    // 1-based; 0 for the file as a whole
	Msg  string
}

func (e *Error) Error() string {
	name := e.File
	if name == "" {
		name = "journal"
	}
	if e.Line == 0 {
		return name + ": " + e.Msg
	}
	return name + ":" + strconv.Itoa(e.Line) + ": " + e.Msg
}

// timeLayout writes times in UTC, so that every time a writer accepts is
// one the reader can parse.
const timeLayout = time.RFC3339Nano

func formatTime(t time.Time) (string, error) {
	u := t.UTC()
	if y := u.Year(); y < 0 || y > 9999 {
		return "", fmt.Errorf("time %s is outside the years 0000…9999", t)
	}
	return u.Format(timeLayout), nil
}

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not an RFC 3339 time", s)
	}
	if _, err := formatTime(t); err != nil {
		return time.Time{}, err
	}
	return t, nil
}
