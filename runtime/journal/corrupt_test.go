package journal_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"agentc.dev/agentc/runtime/journal"
)

// baseLines is a valid journal, a line an element, without newlines:
// the header, a value line, the entry 1.0 that refers to it, the entry
// 1.1.
func baseLines(t *testing.T) []string {
	path := filepath.Join(t.TempDir(), "j")
	write(t, path, []journal.Entry{
		toolEntry(t, journal.Key{Round: 1}, `{"q":"a query long enough to be stored once, as a value line of its own"}`),
		toolEntry(t, journal.Key{Round: 1, Ordinal: 1}, `{"q":"x"}`),
	})
	j, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	data := readFile(t, path)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 4 || len(j.Entries) != 2 || !strings.HasPrefix(lines[1], `{"value":`) {
		t.Fatalf("unexpected base journal:\n%s", data)
	}
	return lines
}

// edit changes the members of a line's object; a nil value deletes one.
func edit(t *testing.T, line string, members map[string]any) string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range members {
		if v == nil {
			delete(m, k)
			continue
		}
		if s, ok := v.(json.RawMessage); ok {
			m[k] = s
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		m[k] = b
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCorrupt(t *testing.T) {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	zeros := "blake3:" + strings.Repeat("0", 64)
	tests := []struct {
		name   string
		change func(t *testing.T, l []string) []string
		line   int
		msg    string
	}{
		{"empty file", func(t *testing.T, l []string) []string { return nil }, 0, "empty file, not a journal"},
		{"header cut", func(t *testing.T, l []string) []string { return []string{l[0][:20]} }, 1, "incomplete header"},
		{"no header", func(t *testing.T, l []string) []string { return l[1:] }, 1, `no journal header: want {"journal":"agentc.journal/v2",…} on the first line`},
		{"header not JSON", func(t *testing.T, l []string) []string { l[0] = "agentc journal"; return l }, 1, "no journal header: not a JSON object: invalid character 'a'"},
		{"unknown format", func(t *testing.T, l []string) []string {
			l[0] = edit(t, l[0], map[string]any{"journal": "agentc.journal/v3"})
			return l
		}, 1, `unknown journal format "agentc.journal/v3", want "agentc.journal/v2"`},
		{"earlier format", func(t *testing.T, l []string) []string {
			l[0] = edit(t, l[0], map[string]any{"journal": "agentc.journal/v1"})
			return l
		}, 1, `journal format "agentc.journal/v1" was recorded by an earlier agentc, which fingerprinted tool arguments as the model wrote them; "agentc.journal/v2" fingerprints them as canonical JSON, so it cannot replay this one: record it again`},
		{"header unknown field", func(t *testing.T, l []string) []string {
			l[0] = edit(t, l[0], map[string]any{"colour": "red"})
			return l
		}, 1, `unknown field "colour" in the header`},
		{"header missing field", func(t *testing.T, l []string) []string {
			l[0] = edit(t, l[0], map[string]any{"plan": nil})
			return l
		}, 1, `missing field "plan" in the header`},
		{"header bad plan", func(t *testing.T, l []string) []string {
			l[0] = edit(t, l[0], map[string]any{"plan": "sha256:00"})
			return l
		}, 1, `header: plan: "sha256:00" is not a digest`},
		{"header bad time", func(t *testing.T, l []string) []string {
			l[0] = edit(t, l[0], map[string]any{"started": "yesterday"})
			return l
		}, 1, `header: started: "yesterday" is not an RFC 3339 time`},
		{"header wrong type", func(t *testing.T, l []string) []string {
			l[0] = edit(t, l[0], map[string]any{"run": 7})
			return l
		}, 1, `field "run": want a string, found 7`},
		{"second header", func(t *testing.T, l []string) []string { return slices.Insert(l, 2, l[0]) }, 3, "a second journal header"},
		{"not JSON", func(t *testing.T, l []string) []string { l[2] = `{"effect":"1.0",`; return l }, 3, "not a JSON object: the line ends inside it"},
		{"not an object", func(t *testing.T, l []string) []string { l[2] = `[1]`; return l }, 3, "not a JSON object"},
		{"data after", func(t *testing.T, l []string) []string { l[3] += " {}"; return l }, 4, "not a JSON object: invalid character '{' after top-level value"},
		// A byte right after the object ends the line, as a cut does, and
		// is not one.
		{"byte after", func(t *testing.T, l []string) []string { l[3] += "x"; return l }, 4, "not a JSON object: invalid character 'x' after top-level value"},
		{"NUL after", func(t *testing.T, l []string) []string { l[3] += "\x00"; return l }, 4, `not a JSON object: invalid character '\x00' after top-level value`},
		{"blank line", func(t *testing.T, l []string) []string { return slices.Insert(l, 2, "") }, 3, "empty line"},
		{"line of white space", func(t *testing.T, l []string) []string { return slices.Insert(l, 2, " \t\r") }, 3, "empty line"},
		{"blank last line", func(t *testing.T, l []string) []string { return append(l, "\r") }, 5, "empty line"},
		{"object across lines", func(t *testing.T, l []string) []string {
			l[3] = strings.Replace(l[3], `,"kind"`, ",\n\"kind\"", 1)
			return l
		}, 4, "not a JSON object: the line ends inside it"},
		{"CR line ends", func(t *testing.T, l []string) []string { return []string{strings.Join(l, "\r")} }, 1,
			"no journal header: not a JSON object: invalid character '{' after top-level value"},
		{"byte order mark", func(t *testing.T, l []string) []string { l[0] = "\ufeff" + l[0]; return l }, 1,
			"no journal header: not a JSON object: invalid character 'ï' looking for beginning of value"},
		{"no-break space", func(t *testing.T, l []string) []string {
			l[3] = strings.Replace(l[3], `,"kind"`, ",\u00a0\"kind\"", 1)
			return l
		}, 4, "not a JSON object: invalid character 'Â' looking for beginning of object key string"},
		{"form feed", func(t *testing.T, l []string) []string { l[3] = "\f" + l[3]; return l }, 4,
			`not a JSON object: invalid character '\f' looking for beginning of value`},
		{"repeated field", func(t *testing.T, l []string) []string {
			l[3] = `{"kind":"tool",` + l[3][1:]
			return l
		}, 4, `field "kind" appears twice`},
		{"too many fields", func(t *testing.T, l []string) []string {
			extra := ""
			for i := range 20 {
				extra += `"a` + strconv.Itoa(i) + `":1,`
			}
			l[3] = `{` + extra + l[3][1:]
			return l
		}, 4, "more than 16 fields"},
		{"neither", func(t *testing.T, l []string) []string { l[3] = `{"kind":"tool"}`; return l }, 4, `neither a value line (with "value") nor an entry (with "effect")`},
		{"entry unknown field", func(t *testing.T, l []string) []string {
			l[2] = edit(t, l[2], map[string]any{"cost": 1})
			return l
		}, 3, `unknown field "cost" in an entry`},
		{"entry field in other case", func(t *testing.T, l []string) []string {
			l[3] = strings.Replace(l[3], `"kind"`, `"Kind"`, 1)
			return l
		}, 4, `unknown field "Kind" in an entry`},
		{"value unknown field", func(t *testing.T, l []string) []string {
			l[1] = edit(t, l[1], map[string]any{"kind": "tool"})
			return l
		}, 2, `unknown field "kind" in a value line`},
		{"missing fingerprint", func(t *testing.T, l []string) []string {
			l[2] = edit(t, l[2], map[string]any{"fingerprint": nil})
			return l
		}, 3, `missing field "fingerprint" in an entry`},
		{"missing started", func(t *testing.T, l []string) []string {
			l[3] = edit(t, l[3], map[string]any{"started": nil})
			return l
		}, 4, `missing field "started" in an entry`},
		{"missing request", func(t *testing.T, l []string) []string {
			l[3] = edit(t, l[3], map[string]any{"request": nil})
			return l
		}, 4, `missing field "request" in an entry`},
		{"missing response", func(t *testing.T, l []string) []string {
			l[3] = edit(t, l[3], map[string]any{"response": nil})
			return l
		}, 4, `effect 1.1: missing field "response" (an entry without an error needs one)`},
		{"missing json", func(t *testing.T, l []string) []string {
			l[1] = edit(t, l[1], map[string]any{"json": nil})
			return l
		}, 2, `missing field "json" in a value line`},
		{"value never written", func(t *testing.T, l []string) []string { return slices.Delete(l, 1, 2) }, 2,
			`effect 1.0: request member "input" refers to value blake3:`},
		{"value written after use", func(t *testing.T, l []string) []string { l[1], l[2] = l[2], l[1]; return l }, 2,
			", which no earlier line holds"},
		{"value of an element never written", func(t *testing.T, l []string) []string {
			l[3] = edit(t, l[3], map[string]any{"request": raw(`{"messages":[1,{"$value":"` + zeros + `"}]}`)})
			return l
		}, 4, `effect 1.1: request member "messages" element 1 refers to value ` + zeros + ", which no earlier line holds"},
		{"malformed reference at element 0", func(t *testing.T, l []string) []string {
			l[3] = edit(t, l[3], map[string]any{"request": raw(`{"messages":[{"$value":5}]}`)})
			return l
		}, 4, `effect 1.1: request member "messages" element 0 holds a malformed value reference {"$value":5}`},
		{"empty reference", func(t *testing.T, l []string) []string {
			l[3] = edit(t, l[3], map[string]any{"request": raw(`{"a":{"$value":""}}`)})
			return l
		}, 4, `effect 1.1: request member "a" holds a malformed value reference: "" is not a digest`},
		{"malformed reference", func(t *testing.T, l []string) []string {
			l[3] = edit(t, l[3], map[string]any{"request": raw(`{"a":{"$value":5}}`)})
			return l
		}, 4, `effect 1.1: request member "a" holds a malformed value reference {"$value":5}`},
		{"reference not a digest", func(t *testing.T, l []string) []string {
			l[3] = edit(t, l[3], map[string]any{"request": raw(`{"a":{"$value":"blake3:12"}}`)})
			return l
		}, 4, `request member "a" holds a malformed value reference: "blake3:12" is not a digest`},
		{"value digest mismatch", func(t *testing.T, l []string) []string {
			l[1] = edit(t, l[1], map[string]any{"json": map[string]string{"q": "another query"}})
			return l
		}, 2, "its JSON has digest blake3:"},
		{"value digest malformed", func(t *testing.T, l []string) []string {
			l[1] = edit(t, l[1], map[string]any{"value": "blake3:XYZ"})
			return l
		}, 2, `value: "blake3:XYZ" is not a digest`},
		{"value not I-JSON", func(t *testing.T, l []string) []string {
			l[1] = `{"value":"` + zeros + `","json":{"a":1,"a":2}}`
			return l
		}, 2, "duplicate"},
		{"duplicate key", func(t *testing.T, l []string) []string {
			l[3] = edit(t, l[3], map[string]any{"effect": "1.0"})
			return l
		}, 4, "effect 1.0 appears twice, first on line 3"},
		{"malformed key", func(t *testing.T, l []string) []string {
			l[3] = edit(t, l[3], map[string]any{"effect": "1"})
			return l
		}, 4, `malformed effect key "1": want ROUND.ORDINAL`},
		{"key with leading zero", func(t *testing.T, l []string) []string {
			l[3] = edit(t, l[3], map[string]any{"effect": "1.01"})
			return l
		}, 4, `malformed effect key "1.01": "01" has a leading zero`},
		{"key with empty parent", func(t *testing.T, l []string) []string {
			l[3] = edit(t, l[3], map[string]any{"effect": "/1.1"})
			return l
		}, 4, `malformed effect key "/1.1"`},
		{"unknown kind", func(t *testing.T, l []string) []string {
			l[3] = edit(t, l[3], map[string]any{"kind": "plugin"})
			return l
		}, 4, `effect 1.1: unknown kind "plugin", want "model", "tool" or "approval"`},
		{"approval not under a call", func(t *testing.T, l []string) []string {
			l[3] = edit(t, l[3], map[string]any{"kind": "approval"})
			return l
		}, 4, `effect 1.1: an approval is under its call's key, at PATH/0.0`},
		{"kind not a string", func(t *testing.T, l []string) []string {
			l[3] = edit(t, l[3], map[string]any{"kind": 3})
			return l
		}, 4, `field "kind": want a string, found 3`},
		{"bad fingerprint", func(t *testing.T, l []string) []string {
			l[3] = edit(t, l[3], map[string]any{"fingerprint": "blake3:ABC"})
			return l
		}, 4, `effect 1.1: fingerprint: "blake3:ABC" is not a digest`},
		{"bad time", func(t *testing.T, l []string) []string {
			l[3] = edit(t, l[3], map[string]any{"started": "2026-13-01T00:00:00Z"})
			return l
		}, 4, `effect 1.1: started: "2026-13-01T00:00:00Z" is not an RFC 3339 time`},
		{"lost not an array", func(t *testing.T, l []string) []string {
			l[3] = edit(t, l[3], map[string]any{"lost": map[string]int{"attempt": 1}})
			return l
		}, 4, `effect 1.1: lost: want an array of attempts, found {"attempt":1}`},
		{"lost null", func(t *testing.T, l []string) []string {
			l[3] = edit(t, l[3], map[string]any{"lost": raw("null")})
			return l
		}, 4, `effect 1.1: lost: want an array of attempts, found null`},
		{"lost attempt zero", func(t *testing.T, l []string) []string {
			l[3] = edit(t, l[3], map[string]any{"lost": raw(`[{"attempt":0,"started":"2026-12-01T00:00:00Z"}]`)})
			return l
		}, 4, `effect 1.1: lost: attempt 1: its number 0 is not from 1`},
		{"lost attempt without start", func(t *testing.T, l []string) []string {
			l[3] = edit(t, l[3], map[string]any{"lost": raw(`[{"attempt":2}]`)})
			return l
		}, 4, `effect 1.1: lost: attempt 1: missing field "started" in an attempt`},
		{"lost attempt with more", func(t *testing.T, l []string) []string {
			l[3] = edit(t, l[3], map[string]any{"lost": raw(`[{"attempt":2,"started":"2026-12-01T00:00:00Z","worker":"w1"}]`)})
			return l
		}, 4, `effect 1.1: lost: attempt 1: unknown field "worker" in an attempt`},
		{"lost attempt bad time", func(t *testing.T, l []string) []string {
			l[3] = edit(t, l[3], map[string]any{"lost": raw(`[{"attempt":2,"started":"yesterday"}]`)})
			return l
		}, 4, `effect 1.1: lost: attempt 1: started: "yesterday" is not an RFC 3339 time`},
		{"negative duration", func(t *testing.T, l []string) []string {
			l[3] = edit(t, l[3], map[string]any{"duration_ms": -5})
			return l
		}, 4, "effect 1.1: negative duration_ms -5"},
		// Tokens, as durations, are counts: a negative one would price
		// a call below nothing, or give back a budget on replay.
		{"negative tokens", func(t *testing.T, l []string) []string {
			l[2] = edit(t, l[2], map[string]any{"kind": "model", "response": raw(`{"message":{"role":"assistant"},"usage":{"input":10,"output":-5}}`)})
			return l
		}, 3, "effect 1.0: response: usage: negative output -5"},
		{"negative cached tokens", func(t *testing.T, l []string) []string {
			l[2] = edit(t, l[2], map[string]any{"kind": "model", "response": raw(`{"usage":{"cached":-1e3,"input":1}}`)})
			return l
		}, 3, "effect 1.0: response: usage: negative cached -1e3"},
		// A model's response is held to what a reply to any request could
		// be, whoever reads it: a replay would decode it whole.
		{"response past any reply", func(t *testing.T, l []string) []string {
			calls := strings.TrimSuffix(strings.Repeat("{},", 1200000), ",")
			l[2] = edit(t, l[2], map[string]any{"kind": "model", "response": raw(`{"message":{"role":"assistant","tool_calls":[` + calls + `]}}`)})
			return l
		}, 3, "effect 1.0: the response is not a reply any request could have had: it holds 1200004 JSON values, more than the 1114112 a reply to 262144 output tokens (no output limit: the most any reply holds) is written in"},
		{"negative tokens in usage", func(t *testing.T, l []string) []string {
			l[3] = edit(t, l[3], map[string]any{"usage": raw(`{"input":1,"cache_write":-2}`)})
			return l
		}, 4, "effect 1.1: usage: negative cache_write -2"},
		{"fractional duration", func(t *testing.T, l []string) []string {
			l[3] = edit(t, l[3], map[string]any{"duration_ms": 1.5})
			return l
		}, 4, `field "duration_ms": want an integer, found 1.5`},
		{"wrong type, shown whole", func(t *testing.T, l []string) []string {
			l[3] = edit(t, l[3], map[string]any{"duration_ms": strings.Repeat("8", 78)})
			return l
		}, 4, `field "duration_ms": want an integer, found "` + strings.Repeat("8", 78) + `"`},
		{"wrong type, cut short", func(t *testing.T, l []string) []string {
			l[3] = edit(t, l[3], map[string]any{"duration_ms": "x" + strings.Repeat("é", 50)})
			return l
		}, 4, `field "duration_ms": want an integer, found "x` + strings.Repeat("é", 37) + `...`},
		{"null duration", func(t *testing.T, l []string) []string {
			l[3] = edit(t, l[3], map[string]any{"duration_ms": raw("null")})
			return l
		}, 4, `field "duration_ms": want an integer, found null`},
		{"request not an object", func(t *testing.T, l []string) []string {
			l[3] = edit(t, l[3], map[string]any{"request": []int{1}})
			return l
		}, 4, "effect 1.1: request: want a JSON object, found [1]"},
		{"request not I-JSON", func(t *testing.T, l []string) []string {
			l[3] = edit(t, l[3], map[string]any{"request": raw(`{"n":1e400}`)})
			return l
		}, 4, "effect 1.1: request: canonical JSON"},
		{"earlier line cut", func(t *testing.T, l []string) []string {
			return []string{l[0], l[1], l[2][:len(l[2])/2] + l[3]}
		}, 3, "not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := tt.change(t, baseLines(t))
			var data []byte
			for i, l := range lines {
				data = append(data, l...)
				if i < len(lines)-1 || tt.name != "header cut" {
					data = append(data, '\n')
				}
			}
			j, err := journal.Read(bytes.NewReader(data))
			var je *journal.Error
			if !errors.As(err, &je) {
				t.Fatalf("Read: %v, %v; want a *journal.Error\n%s", j, err, data)
			}
			t.Log(err)
			if je.Line != tt.line || !strings.Contains(je.Msg, tt.msg) {
				t.Errorf("error %q at line %d\nwant %q at line %d\n%s", je.Msg, je.Line, tt.msg, tt.line, data)
			}
			if tt.line > 0 && !strings.HasPrefix(err.Error(), "journal:"+strconv.Itoa(tt.line)+": ") {
				t.Errorf("error %q does not start with its position", err)
			}
		})
	}
}

// spaced returns a line with before and after around each of its
// structural characters, as another JSON writer might space it.
func spaced(line, before, after string) string {
	var b strings.Builder
	inString, escaped := false, false
	for _, c := range []byte(line) {
		switch {
		case inString:
			b.WriteByte(c)
			if escaped {
				escaped = false
			} else if c == '\\' {
				escaped = true
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
			b.WriteByte(c)
		case strings.IndexByte("{}[]:,", c) >= 0:
			b.WriteString(before)
			b.WriteByte(c)
			b.WriteString(after)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// TestReadSpacing: a journal another program wrote, or an editor saved,
// reads as the one the Writer wrote: with CRLF line ends, white space
// (space, tab, CR) between the tokens of a line, before and after its
// object; a last line cut short after its CR is left out as torn.
func TestReadSpacing(t *testing.T) {
	base := baseLines(t)
	want, err := journal.Read(strings.NewReader(strings.Join(base, "\n") + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	each := func(f func(string) string) func([]string) string {
		return func(ls []string) string {
			var b strings.Builder
			for _, l := range ls {
				b.WriteString(f(l))
			}
			return b.String()
		}
	}
	tests := []struct {
		name    string
		file    func([]string) string
		entries int
		torn    bool
	}{
		{"CRLF", each(func(l string) string { return l + "\r\n" }), 2, false},
		{"after separators", each(func(l string) string { return spaced(l, "", " ") + "\n" }), 2, false},
		{"spaces", each(func(l string) string { return spaced(l, " ", " ") + "\n" }), 2, false},
		{"tabs", each(func(l string) string { return spaced(l, "\t", "\t") + "\n" }), 2, false},
		{"CRs", each(func(l string) string { return spaced(l, "\r", "\r") + "\n" }), 2, false},
		{"mixed, CRLF", each(func(l string) string { return spaced(l, " \t", "\r ") + "\r\n" }), 2, false},
		{"around the object", each(func(l string) string { return " \t\r" + l + "\t \r\n" }), 2, false},
		{"torn after CR", func(ls []string) string {
			return each(func(l string) string { return l + "\r\n" })(ls[:3]) + ls[3] + "\r"
		}, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := tt.file(base)
			j, err := journal.Read(strings.NewReader(data))
			if err != nil {
				t.Fatalf("%v\n%q", err, data)
			}
			valid := len(data)
			if tt.torn {
				valid = strings.LastIndexByte(data, '\n') + 1
			}
			if j.Truncated != tt.torn || j.ValidBytes != int64(valid) || len(j.Entries) != tt.entries {
				t.Fatalf("Truncated %v, ValidBytes %d, %d entries; want %v, %d, %d", j.Truncated, j.ValidBytes, len(j.Entries), tt.torn, valid, tt.entries)
			}
			// The line cut short is said by its number and its bytes.
			if tt.torn && j.CutShort() != fmt.Sprintf("its last line was cut short (a crash during a write) and is left out: line 4, %d bytes", len(base[3])+1) {
				t.Errorf("the cut is said as %q", j.CutShort())
			}
			if g, w := j.Header, want.Header; g.Plan != w.Plan || g.Run != w.Run || g.OutputSuffix != w.OutputSuffix || g.Agent != w.Agent ||
				!g.Started.Equal(w.Started) || canonical(t, g.Tools) != canonical(t, w.Tools) {
				t.Errorf("header %+v, want %+v", g, w)
			}
			for i, e := range j.Entries {
				sameEntry(t, e, want.Entries[i])
			}
		})
	}
}
