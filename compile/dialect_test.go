package compile

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestUnenforced(t *testing.T) {
	tests := []struct {
		schema            string
		openai, anthropic []string // unenforced keywords, by pointer order
	}{
		{`{"type":"string","enum":["a","b"]}`, nil, nil},
		{`{"type":"string","maxLength":3}`, []string{"maxLength"}, []string{"maxLength"}},
		{`{"type":"integer","minimum":1}`, nil, []string{"minimum"}},
		{`{"type":"string","format":"email"}`, nil, nil},
		{`{"type":"string","format":"uri"}`, []string{"format"}, nil},
		{`{"type":"array","items":{"type":"string","pattern":"^a"},"uniqueItems":true,"minItems":1}`,
			[]string{"uniqueItems"}, []string{"pattern", "minItems", "uniqueItems"}},
		{`{"oneOf":[{"type":"string"},{"type":"integer","multipleOf":2}]}`, []string{"oneOf"}, []string{"oneOf", "multipleOf"}},
		{`{"type":"object","properties":{"a":{"not":{"type":"null"}}},"$defs":{"d":{"type":"string","minLength":1}}}`,
			[]string{"minLength", "not"}, []string{"minLength", "not"}},
	}
	for _, tt := range tests {
		var doc any
		if err := json.Unmarshal([]byte(tt.schema), &doc); err != nil {
			t.Fatal(err)
		}
		s := &Schema{Path: "output.schema", Doc: doc}
		for provider, want := range map[string][]string{"openai": tt.openai, "anthropic": tt.anthropic} {
			var got []string
			for _, u := range unenforced(s, Profiles[provider]) {
				got = append(got, u.keyword)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s, %s: unenforced %v, want %v", tt.schema, provider, got, want)
			}
		}
	}
}
