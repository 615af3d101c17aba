package journal_test

import (
	"encoding/json"
	"strings"
	"testing"

	"agentc.dev/agentc/runtime/journal"
)

func TestDiff(t *testing.T) {
	schema := func(title string) string {
		return `{"model":"gpt-a","output":{"schema":{"type":"object","properties":{"title":` + title + `}}}}`
	}
	tests := []struct {
		name     string
		was, now string
		want     []string // Change.String of each change
	}{
		{"equal", `{"a":1,"b":[1,2]}`, `{"a":1,"b":[1,2]}`, nil},
		{"member order", `{"a":1,"b":{"c":2,"d":3}}`, `{"b":{"d":3,"c":2},"a":1}`, nil},
		{"number spelling", `{"n":1,"m":[0.5,100]}`, `{"n":1.0,"m":[5e-1,1E2]}`, nil},
		{"string escapes", `{"s":"A/é"}`, `{"s":"\u0041\/\u00e9"}`, nil},
		{"white space", "{\n  \"a\" : [ 1 , 2 ]\n}", `{"a":[1,2]}`, nil},
		{"value changed", `{"model":"gpt-a"}`, `{"model":"gpt-b"}`, []string{`/model: "gpt-a" -> "gpt-b"`}},
		{"keyword added", schema(`{"type":"string"}`), schema(`{"type":"string","maxLength":80}`),
			[]string{"/output/schema/properties/title/maxLength: added 80"}},
		{"keyword removed", schema(`{"type":"string","maxLength":80}`), schema(`{"type":"string"}`),
			[]string{"/output/schema/properties/title/maxLength: removed"}},
		{"message added", `{"messages":[{"role":"user"}]}`, `{"messages":[{"role":"user"},{"role":"assistant"}]}`,
			[]string{`/messages/1: added {"role":"assistant"}`}},
		{"messages removed", `{"messages":[1,2,3,4]}`, `{"messages":[1,2]}`, []string{"/messages/2: removed", "/messages/3: removed"}},
		{"element changed", `{"messages":[{"role":"user","content":"hi"},{"role":"tool"}]}`, `{"messages":[{"role":"user","content":"ho"},{"role":"tool"}]}`,
			[]string{`/messages/0/content: "hi" -> "ho"`}},
		{"type changed", `{"a":{"b":1},"c":[1],"d":null,"e":"1"}`, `{"a":[1],"c":{"0":1},"d":false,"e":1}`,
			[]string{`/a: {"b":1} -> [1]`, `/c: [1] -> {"0":1}`, `/d: null -> false`, `/e: "1" -> 1`}},
		{"sorted changes", `{"z":1,"a":1,"m":{"y":1,"b":1}}`, `{"z":2,"a":2,"m":{"y":2,"b":2}}`,
			[]string{"/a: 1 -> 2", "/m/b: 1 -> 2", "/m/y: 1 -> 2", "/z: 1 -> 2"}},
		{"pointer escapes", `{"a/b":1,"c~d":1}`, `{"a/b":2,"c~d":2}`, []string{"/a~1b: 1 -> 2", "/c~0d: 1 -> 2"}},
		{"empty member name", `{"":1}`, `{"":2}`, []string{"/: 1 -> 2"}},
		{"whole value", `1`, `2`, []string{"(whole value): 1 -> 2"}},
		{"recorded absent", ``, `{"a":1}`, []string{`(whole value): added {"a":1}`}},
		{"current absent", `{"a":1}`, ``, []string{"(whole value): removed"}},
		{"not JSON", `{"a":`, `{"a":1}`, []string{`(whole value): {"a": -> {"a":1}`}},
		{"no HTML escapes", `{"s":"<a>"}`, `{"s":"<b>"}`, []string{`/s: "<a>" -> "<b>"`}},
		{"long values cut", `{"s":"` + strings.Repeat("a", 100) + `"}`, `{"s":"` + strings.Repeat("b", 100) + `"}`,
			[]string{`/s: "` + strings.Repeat("a", 76) + `... -> "` + strings.Repeat("b", 76) + `...`}},
		{"long values alike at first", `{"s":"` + strings.Repeat("a", 100) + `b"}`, `{"s":"` + strings.Repeat("a", 100) + `c"}`,
			[]string{`/s: ...` + strings.Repeat("a", 20) + `b" -> ...` + strings.Repeat("a", 20) + `c"`}},
		{"large integers", `{"n":18446744073709551616}`, `{"n":18446744073709551617}`,
			[]string{"/n: 18446744073709551616 -> 18446744073709551617"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			changes := journal.Diff(json.RawMessage(tt.was), json.RawMessage(tt.now))
			var got []string
			for _, c := range changes {
				got = append(got, c.String())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("Diff:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			// Swapped, the same places change.
			back := journal.Diff(json.RawMessage(tt.now), json.RawMessage(tt.was))
			if len(back) != len(changes) {
				t.Fatalf("reverse Diff has %d changes, want %d", len(back), len(changes))
			}
			for i := range back {
				if back[i].Path != changes[i].Path || string(back[i].Was) != string(changes[i].Now) || string(back[i].Now) != string(changes[i].Was) {
					t.Errorf("reverse change %d: %+v, forward %+v", i, back[i], changes[i])
				}
			}
		})
	}
}

func TestDiffChangeValues(t *testing.T) {
	changes := journal.Diff(json.RawMessage(`{"a":{"x":[1, 2]}}`), json.RawMessage(`{"b":true}`))
	want := []journal.Change{
		{Path: "/a", Was: json.RawMessage(`{"x":[1,2]}`)},
		{Path: "/b", Now: json.RawMessage(`true`)},
	}
	if len(changes) != len(want) {
		t.Fatalf("changes %+v, want %+v", changes, want)
	}
	for i, c := range changes {
		if c.Path != want[i].Path || string(c.Was) != string(want[i].Was) || string(c.Now) != string(want[i].Now) ||
			(c.Was == nil) != (want[i].Was == nil) || (c.Now == nil) != (want[i].Now == nil) {
			t.Errorf("change %d: %+v, want %+v", i, c, want[i])
		}
	}
}
