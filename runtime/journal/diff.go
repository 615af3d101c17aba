package journal

import (
	"bytes"
	"encoding/json"
	"io"
	"sort"
	"strconv"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/internal/leaf/jsonpointer"
)

// Change is one difference between two JSON values.
type Change struct {
	// Path is a JSON pointer (RFC 6901) to the value that changed, such as
	// /output/schema/properties/title/maxLength; "" for the whole value.
	Path string
	// Was and Now are the value before and after, in compact JSON; nil
	// where there is none.
	Was, Now json.RawMessage
}

// String describes the change on one line, values cut to about 80 bytes
// (two that begin alike, from a little before where they part):
//
//	/model: "gpt-a" -> "gpt-b"
//	/output/schema/properties/title/maxLength: added 80
//	/messages/3: removed
func (c Change) String() string {
	p := c.Path
	if p == "" {
		p = "(whole value)"
	}
	switch {
	case c.Was == nil:
		return p + ": added " + short(c.Now)
	case c.Now == nil:
		return p + ": removed"
	default:
		was, now := parted(c.Was, c.Now)
		return p + ": " + short(was) + " -> " + short(now)
	}
}

// parted returns two values that begin alike for most of what short keeps
// from a little before where they part, so that the change shows: a long
// system prompt edited past its first 80 bytes read the same on both sides.
func parted(was, now []byte) ([]byte, []byte) {
	const shown, before = 60, 20
	n := 0
	for n < len(was) && n < len(now) && was[n] == now[n] {
		n++
	}
	if n < shown {
		return was, now
	}
	start := n - before
	for start > 0 && !isRuneStart(was[start]) {
		start--
	}
	return append([]byte("..."), was[start:]...), append([]byte("..."), now[start:]...)
}

// Diff compares a recorded JSON value with a current one, structurally:
// objects member by member (member order never matters), arrays element by
// element and then the elements one has beyond the other, numbers by
// value (1 and 1.0 are equal), everything else by value. Changes come
// sorted by object member names and array positions, depth first. Nil or
// empty input is an absent value; input that is not JSON is compared as
// bytes, as a whole.
func Diff(recorded, current json.RawMessage) []Change {
	var d differ
	was, wasOK := decode(recorded)
	now, nowOK := decode(current)
	if !wasOK || !nowOK {
		if !bytes.Equal(bytes.TrimSpace(recorded), bytes.TrimSpace(current)) {
			d.add("", raw(recorded), raw(current))
		}
		return d.changes
	}
	d.compare("", was, now)
	return d.changes
}

// absent stands for a missing value, distinct from JSON null.
type absent struct{}

func decode(data json.RawMessage) (any, bool) {
	if len(bytes.TrimSpace(data)) == 0 {
		return absent{}, true
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return v, true
}

func raw(data json.RawMessage) json.RawMessage {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil
	}
	return data
}

type differ struct{ changes []Change }

func (d *differ) add(path string, was, now json.RawMessage) {
	d.changes = append(d.changes, Change{Path: path, Was: was, Now: now})
}

func (d *differ) compare(path string, was, now any) {
	switch w := was.(type) {
	case map[string]any:
		if n, ok := now.(map[string]any); ok {
			names := make([]string, 0, len(w)+len(n))
			for k := range w {
				names = append(names, k)
			}
			for k := range n {
				if _, ok := w[k]; !ok {
					names = append(names, k)
				}
			}
			sort.Strings(names)
			for _, k := range names {
				wv, inW := w[k]
				nv, inN := n[k]
				if !inW {
					wv = absent{}
				}
				if !inN {
					nv = absent{}
				}
				d.compare(path+"/"+jsonpointer.Escape(k), wv, nv)
			}
			return
		}
	case []any:
		if n, ok := now.([]any); ok {
			for i := range max(len(w), len(n)) {
				var wv, nv any = absent{}, absent{}
				if i < len(w) {
					wv = w[i]
				}
				if i < len(n) {
					nv = n[i]
				}
				d.compare(path+"/"+strconv.Itoa(i), wv, nv)
			}
			return
		}
	}
	if !equal(was, now) {
		d.add(path, encode(was), encode(now))
	}
}

// equal compares values that are not both objects or both arrays.
func equal(was, now any) bool {
	switch w := was.(type) {
	case json.Number:
		n, ok := now.(json.Number)
		if !ok {
			return false
		}
		cw, exactW, errW := digest.CanonicalNumber(string(w))
		cn, exactN, errN := digest.CanonicalNumber(string(n))
		if errW != nil || errN != nil || !exactW || !exactN {
			return w == n // fingerprints refuse what a double cannot hold
		}
		return cw == cn
	case map[string]any, []any:
		return false
	default:
		return was == now
	}
}

func encode(v any) json.RawMessage {
	if _, ok := v.(absent); ok {
		return nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return json.RawMessage("null")
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
