package runcmd

import (
	"bytes"
	"errors"
	"testing"

	"agentc.dev/agentc/runtime/pace"
)

// TestReadLimits: the flag's, the environment's and the file's limits,
// and where a bad one is said to be; each a usage error.
func TestReadLimits(t *testing.T) {
	known := KnownProviders(nil)
	file := []ConfigLimit{
		{Key: "openai:gpt-4o", Value: "5rpm", File: "agentc.yaml", Line: 2, Column: 18, KeyColumn: 3},
		{Key: "anthropic", Value: "100tpm", File: "agentc.yaml", Line: 3, Column: 14, KeyColumn: 3},
	}
	ls, err := ReadLimits([]string{"openai=600rpm", "openai=700rpm", "anthropic:claude-sonnet-4-5=none"}, "openai:gpt-4o=50rpm;google=6rpm", file, known)
	if err != nil {
		t.Fatal(err)
	}
	s := ls.Set(nil)
	for _, tc := range []struct {
		provider, model string
		want            pace.Limit
	}{
		{"openai", "gpt-4o", pace.Limit{RPM: 700, From: "--rate-limit"}}, // the last flag, over the environment and the file
		{"google", "gemini-2.5-flash", pace.Limit{RPM: 6, From: "$AGENTC_RATE_LIMITS"}},
		{"anthropic", "claude-sonnet-4-5", pace.Limit{From: "--rate-limit"}}, // none, over the file
		{"anthropic", "claude-opus-4-1", pace.Limit{TPM: 100, From: "agentc.yaml:3"}},
	} {
		if got, _ := s.Limit(tc.provider, tc.model); got != tc.want {
			t.Errorf("%s:%s: %+v, want %+v", tc.provider, tc.model, got, tc.want)
		}
	}
	for _, tc := range []struct {
		flags []string
		env   string
		file  []ConfigLimit
		want  string
	}{
		{flags: []string{"openai=5rpm", "openai:gpt-4o=5rpn"}, want: `--rate-limit "openai:gpt-4o=5rpn": column 15: "5rpn" is not a limit: want a whole number and rpm (requests a minute) or tpm (tokens a minute), as 500rpm`},
		{flags: []string{"  nope:x=5rpm"}, want: `--rate-limit "  nope:x=5rpm": column 3: "nope" is not a provider agentc calls`},
		{env: "openai=5rpm; anthropic:=5rpm", want: `$AGENTC_RATE_LIMITS: column 24: no model after ':' (a provider alone covers all its models: write it without the ':')`},
		{env: "openai=5rpm;test=5rpm", want: `$AGENTC_RATE_LIMITS: column 13: "test" is not a provider agentc calls`},
		{file: []ConfigLimit{{Key: "openai", Value: "5rpm,0tpm", File: "agentc.yaml", Line: 4, Column: 11, KeyColumn: 3}}, want: "agentc.yaml:4:16: rate_limits.openai: 0tpm lets nothing through: give a positive number, or none for no limit"},
		{file: []ConfigLimit{{Key: "Open AI", Value: "5rpm", File: "agentc.yaml", Line: 4, Column: 14, KeyColumn: 3}}, want: `agentc.yaml:4:3: rate_limits: "Open AI": "Open AI" is not a provider's name (lower-case letters, digits and '-')`},
	} {
		_, err := ReadLimits(tc.flags, tc.env, tc.file, known)
		var xe *ExitError
		if !errors.As(err, &xe) || xe.Code != ExitUsage || xe.Err.Error() != tc.want {
			t.Errorf("ReadLimits(%q, %q, %v):\n got  %v\n want %s (a usage error)", tc.flags, tc.env, tc.file, err, tc.want)
		}
	}
}

// TestFileLimitSaid: a limit from the project's file is said when it
// first applies; one the person set is not.
func TestFileLimitSaid(t *testing.T) {
	ls, err := ReadLimits([]string{"openai:gpt-4o=5rpm"}, "", []ConfigLimit{{Key: "openai", Value: "6rpm", File: "agentc.yaml", Line: 2, Column: 11, KeyColumn: 3}}, KnownProviders(nil))
	if err != nil {
		t.Fatal(err)
	}
	var w bytes.Buffer
	s := ls.Set(&w)
	s.For("openai", "gpt-4o")
	if w.Len() != 0 {
		t.Errorf("the flag's limit was said: %q", w.String())
	}
	s.For("openai", "gpt-4o-mini")
	s.For("openai", "gpt-4o-mini")
	want := "agentc: warning: agentc.yaml:2: calls to openai:gpt-4o-mini are paced to 6 requests a minute by the project's rate_limits; --rate-limit or $AGENTC_RATE_LIMITS overrides it\n"
	if w.String() != want {
		t.Errorf("said %q, want %q", w.String(), want)
	}
}
