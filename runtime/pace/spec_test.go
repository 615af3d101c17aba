package pace

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestParseEntry: what an entry says, and where a bad one goes wrong.
func TestParseEntry(t *testing.T) {
	for _, tc := range []struct {
		in, key string
		want    Limit
		err     string
	}{
		{in: "openai:gpt-4o=500rpm,30000tpm", key: "openai:gpt-4o", want: Limit{RPM: 500, TPM: 30000}},
		{in: "openai=500rpm", key: "openai", want: Limit{RPM: 500}},
		{in: " anthropic = 40000tpm , 50rpm ", key: "anthropic", want: Limit{RPM: 50, TPM: 40000}},
		{in: "bedrock:anthropic.claude-3-5-sonnet-20240620-v1:0=10rpm", key: "bedrock:anthropic.claude-3-5-sonnet-20240620-v1:0", want: Limit{RPM: 10}},
		{in: "openai:gpt-4o=none", key: "openai:gpt-4o"},
		{in: "openai", err: `column 1: "openai" has no '='`},
		{in: "=5rpm", err: "column 1: no provider before '='"},
		{in: "OpenAI=5rpm", err: `column 1: "OpenAI" is not a provider's name`},
		{in: "openai:=5rpm", err: "column 8: no model after ':'"},
		{in: "openai:gpt 4o=5rpm", err: `column 11: the model "gpt 4o" holds ' '`},
		{in: "openai=", err: "column 8: no limit after '='"},
		{in: "openai=5rpm,", err: "column 13: an empty limit between commas"},
		{in: "openai=5rpm,,6tpm", err: "column 13: an empty limit between commas"},
		{in: "openai=5rpm,none", err: "column 13: none stands alone"},
		{in: "openai=5 rpm", err: `column 8: "5 rpm" is not a limit`},
		{in: "openai=5rps", err: `column 8: "5rps" is not a limit`},
		{in: "openai=-5rpm", err: `column 8: "-5rpm" is not a limit`},
		{in: "openai=0rpm", err: "column 8: 0rpm lets nothing through"},
		{in: "openai=1000000001rpm", err: "column 8: 1000000001rpm is more than 1000000000 a minute"},
		{in: "openai=99999999999999999999tpm", err: "column 8: 99999999999999999999tpm is more than"},
		{in: "openai=5rpm, 6rpm", err: "column 14: rpm is given twice"},
	} {
		key, l, err := ParseEntry(tc.in)
		if tc.err != "" {
			var se *SyntaxError
			if err == nil || !errors.As(err, &se) || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("ParseEntry(%q): error %v, want a *SyntaxError starting %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || key != tc.key || l != tc.want {
			t.Errorf("ParseEntry(%q) = %q, %+v, %v; want %q, %+v", tc.in, key, l, err, tc.key, tc.want)
		}
	}
}

// TestParseList: the environment's form, entries separated by ';', with
// columns counted from the start of the whole value.
func TestParseList(t *testing.T) {
	ls, err := ParseList("openai=500rpm; ;anthropic:claude-sonnet-4-5=40000tpm;", ';', "$X")
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 2 || ls["openai"] != (Limit{RPM: 500, From: "$X"}) || ls["anthropic:claude-sonnet-4-5"] != (Limit{TPM: 40000, From: "$X"}) {
		t.Errorf("got %+v", ls)
	}
	for in, want := range map[string]string{
		"openai=5rpm;anthropic=5x":   `column 23: "5x" is not a limit`,
		"openai=5rpm; openai=6rpm":   "column 14: openai is given twice",
		"openai=5rpm;google:=6rpm":   "column 20: no model after ':'",
		"openai=5rpm;;;;;;bedrock=0": `column 26: "0" is not a limit`,
	} {
		if _, err := ParseList(in, ';', ""); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("ParseList(%q): %v, want %q", in, err, want)
		}
	}
}

// TestLookup: a model's own entry before its provider's; the first
// source that names either decides, even to lift a limit (none).
func TestLookup(t *testing.T) {
	flag := Limits{"openai:gpt-4o-mini": {}}
	env := Limits{"openai": {RPM: 100}}
	file := Limits{"openai:gpt-4o": {RPM: 5}, "anthropic": {RPM: 7}}
	s := NewSet(flag, env, file)
	for _, tc := range []struct {
		provider, model string
		want            Limit
		limited         bool
	}{
		{"openai", "gpt-4o", Limit{RPM: 100}, true}, // the environment names its provider before the file names it
		{"openai", "gpt-4o-mini", Limit{}, false},
		{"anthropic", "claude", Limit{RPM: 7}, true},
		{"google", "gemini", Limit{}, false},
	} {
		if l, ok := s.Limit(tc.provider, tc.model); l != tc.want || ok != tc.limited {
			t.Errorf("Limit(%s, %s) = %+v, %v; want %+v, %v", tc.provider, tc.model, l, ok, tc.want, tc.limited)
		}
	}
}

// FuzzParseList: the parser never panics, its errors point inside the
// text read, and what it accepts it reads the same when written back.
func FuzzParseList(f *testing.F) {
	for _, s := range []string{
		"openai:gpt-4o=500rpm,30000tpm", "openai=500rpm;anthropic=none", " a = 1rpm ; b:c:d=2tpm",
		"openai=5rpm,,", "=", ";;", "x:=1rpm", "openai=99999999999999999999999rpm", "é=1rpm", "openai=1rpm,1rpm",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ls, err := ParseList(s, ';', "")
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("%q: error %T, want a *SyntaxError", s, err)
			}
			if se.Column < 1 || se.Column > len(s)+1 {
				t.Fatalf("%q: column %d is outside the text (%d bytes)", s, se.Column, len(s))
			}
			return
		}
		var parts []string
		for key, l := range ls {
			if l.RPM < 0 || l.TPM < 0 || l.RPM > MaxRate || l.TPM > MaxRate {
				t.Fatalf("%q: %s reads as %+v", s, key, l)
			}
			v := "none"
			switch {
			case l.RPM > 0 && l.TPM > 0:
				v = fmt.Sprintf("%drpm,%dtpm", l.RPM, l.TPM)
			case l.RPM > 0:
				v = fmt.Sprintf("%drpm", l.RPM)
			case l.TPM > 0:
				v = fmt.Sprintf("%dtpm", l.TPM)
			}
			parts = append(parts, key+"="+v)
		}
		again, err := ParseList(strings.Join(parts, ";"), ';', "")
		if err != nil || len(again) != len(ls) {
			t.Fatalf("%q read as %v, written back as %q, which reads as %v, %v", s, ls, strings.Join(parts, ";"), again, err)
		}
		for k, l := range ls {
			if again[k] != l {
				t.Fatalf("%q: %s reads as %+v, written back as %+v", s, k, l, again[k])
			}
		}
	})
}
