package journal_test

import (
	"bytes"
	"encoding/json"
	"errors"
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
		{"blank line", func(t *testing.T, l []string) []string { return slices.Insert(l, 2, "") }, 3, "empty line"},
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
		}, 4, `effect 1.1: unknown kind "plugin", want "model" or "tool"`},
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
		{"negative duration", func(t *testing.T, l []string) []string {
			l[3] = edit(t, l[3], map[string]any{"duration_ms": -5})
			return l
		}, 4, "effect 1.1: negative duration_ms -5"},
		{"fractional duration", func(t *testing.T, l []string) []string {
			l[3] = edit(t, l[3], map[string]any{"duration_ms": 1.5})
			return l
		}, 4, `field "duration_ms": want an integer, found 1.5`},
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
