package pattern

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

// TestDialect pins how patterns read: ECMA-262 where it differs from Go's
// regexp (goWant is Go's answer, "" where Go cannot read the pattern), and
// the places where regexp2 departs from ECMA-262 itself, so that an
// upgrade that changes either shows here.
func TestDialect(t *testing.T) {
	cases := []struct {
		why, pattern, value string
		want                bool
		goWant              string
	}{
		{"lookahead", `^(?=.*\d)[a-z\d]+$`, "abc1", true, ""},
		{"lookahead", `^(?=.*\d)[a-z\d]+$`, "abcd", false, ""},
		{"negative lookahead", `^(?!admin$)[a-z]+$`, "admin", false, ""},
		{"negative lookahead", `^(?!admin$)[a-z]+$`, "alice", true, ""},
		{"lookbehind", `(?<=\$)\d+`, "cost $12", true, ""},
		{"negative lookbehind", `^\w+(?<!_)$`, "name_", false, ""},
		{"backreference", `^(['"]).*\1$`, `"quoted"`, true, ""},
		{"backreference", `^(['"]).*\1$`, `"mixed'`, false, ""},
		{"named group", `^(?<y>\d{2})-\k<y>$`, "12-12", true, ""},
		{"control escape", `^\cC$`, "\x03", true, ""},
		{"\\d is ASCII", `^\d$`, "٣", false, "false"},
		{"\\w is ASCII", `^\w$`, "é", false, "false"},
		{"\\s is Unicode white space", `^\s$`, "\u00a0", true, "false"},
		{"\\s is Unicode white space", `^\s$`, "\ufeff", true, "false"},
		{". stops at a carriage return", `^.$`, "\r", false, "true"},
		{". stops at a line feed", `^.$`, "\n", false, "false"},
		{". is one code point", `^.$`, "😀", true, "true"},
		{"$ only at the end", `^abc$`, "abc\n", false, "false"},
		{"unanchored", `b`, "abc", true, "true"},
		// regexp2 answered these wrongly before v2.13: an alternative
		// after one starting with $ and a class holding \D beside a digit
		// (v2.5.1; v1 was right), "." at U+2028, a line terminator, and
		// \b beside a letter outside ASCII, not a word character (v1 and
		// v2.5.1).
		{"an alternative after $", `00|$0|00|0|00`, "0", true, "true"},
		{"a class with \\D and a digit", `^[\D0.]$`, "0", true, "true"},
		{". stops at U+2028", `^.$`, "\u2028", false, "true"},
		{". stops at U+2029", `^.$`, "\u2029", false, "true"},
		{"\\b: é is not a word character", `x\bé`, "xé", true, "true"},
		// Read by Go's regexp: regexp2 knows no long property names.
		{"Unicode property by long name", `^\p{Letter}cole$`, "école", true, "true"},
		{"Python-style group", `^(?P<n>a)$`, "a", true, "true"},
	}
	for _, c := range cases {
		re, err := Compile(c.pattern)
		if err != nil {
			t.Errorf("%s: %q does not compile: %v", c.why, c.pattern, err)
			continue
		}
		got, err := re.Match(c.value)
		if err != nil || got != c.want || re.MatchString(c.value) != c.want {
			t.Errorf("%s: %q against %q: %v, %v; want %v", c.why, c.pattern, c.value, got, err, c.want)
		}
		g, gerr := regexp.Compile(c.pattern)
		switch {
		case c.goWant == "" && gerr == nil:
			t.Errorf("%s: Go's regexp now reads %q", c.why, c.pattern)
		case c.goWant != "" && (gerr != nil || g.MatchString(c.value) != (c.goWant == "true")):
			t.Errorf("%s: Go's regexp on %q against %q: want %s", c.why, c.pattern, c.value, c.goWant)
		}
	}
}

func TestCompileRefuses(t *testing.T) {
	for _, p := range []string{`^([a-z]{2}$`, `a++`, `(?<n>a)(?<n>b`, `[z-a]`} {
		if _, err := Compile(p); err == nil {
			t.Errorf("%q compiled", p)
		}
	}
}

// TestTimeout matches a pattern that backtracks catastrophically: the
// match is undecided, no match, counted and remembered.
func TestTimeout(t *testing.T) {
	re, err := Compile(`^(a+)+$`)
	if err != nil {
		t.Fatal(err)
	}
	value := strings.Repeat("a", 40) + "!"
	before := Undecided()
	if _, err := re.Match(value); !errors.Is(err, ErrTimeout) {
		t.Fatalf("Match: %v, want ErrTimeout", err)
	}
	if re.MatchString(value) {
		t.Fatal("an undecided match matched")
	}
	if Undecided() == before {
		t.Error("the undecided match was not counted")
	}
	if p, ok := UndecidedOn(value); !ok || p != `^(a+)+$` {
		t.Errorf("UndecidedOn: %q, %v", p, ok)
	}
	if _, ok := UndecidedOn(value + "x"); ok {
		t.Error("another value is remembered as undecided")
	}
}

// TestRecentBounded fills the record past its size: the oldest value is
// forgotten, the newest kept.
func TestRecentBounded(t *testing.T) {
	r := &recent{}
	for i := range Recent + 1 {
		r.add("p", strings.Repeat("x", i))
	}
	undecided, r = r, undecided
	defer func() { undecided = r }()
	if _, ok := UndecidedOn(""); ok {
		t.Error("the oldest value is still remembered")
	}
	if _, ok := UndecidedOn(strings.Repeat("x", Recent)); !ok {
		t.Error("the newest value is forgotten")
	}
	if Undecided() != Recent+1 {
		t.Errorf("count %d", Undecided())
	}
}

// FuzzMatch compiles any pattern and matches any string: no panic, every
// match decided or undecided within the bound, and a pattern quoting a
// string literally matches it.
func FuzzMatch(f *testing.F) {
	for _, seed := range [][2]string{
		{`^(?=.*\d)[a-z\d]+$`, "abc1"}, {`^(a+)+$`, "aaaaaaaaaaaaaaaaaaaaaaaaa!"}, {`(?<y>\d)\k<y>`, "11"},
		{`(?<=\$)\d+`, "$12"}, {`^\p{Letter}+$`, "école"}, {`[`, ""}, {`\cC`, "\x03"}, {`\u{1F600}`, "😀"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, p, s string) {
		if len(p) > 256 || len(s) > 256 {
			return
		}
		if re, err := Compile(p); err == nil {
			if _, err := re.Match(s); err != nil && !errors.Is(err, ErrTimeout) {
				t.Logf("%q against %q: %v", p, s, err) // a regexp2 panic, turned into no match
			}
		}
		lit, err := Compile(regexp.QuoteMeta(s))
		if err != nil {
			return // not UTF-8, or a character ECMA-262 cannot escape
		}
		if ok, err := lit.Match(s); err == nil && !ok {
			t.Errorf("%q does not match itself quoted", s)
		}
	})
}

// TestBudget: once as many matches as a budget allows have run out of
// time, the patterns compiled with it are undecided at once, never tried
// again (the budget, counted down by each that ran out, stays at 0); a
// pattern Go's regexp reads is not under it, and one compiled without a
// budget is tried every time.
func TestBudget(t *testing.T) {
	b := NewBudget(2)
	re, err := CompileIn(`^(a+)+$`, b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		s := strings.Repeat("a", 40+i) + "!"
		if _, err := re.Match(s); err != ErrTimeout {
			t.Fatalf("match %d: %v, want ErrTimeout", i, err)
		}
	}
	if left := b.left.Load(); left != 0 {
		t.Errorf("the budget is at %d after five undecided matches: want 0, the last three never tried", left)
	}
	if ok, err := re.Match("aaa"); ok || err != ErrTimeout {
		t.Errorf("a string that matches, past the budget: %v %v, want undecided", ok, err)
	}
	re2, err := CompileIn(`(?P<n>a)b`, b)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := re2.Match("ab"); !ok || err != nil || re2.ECMA() {
		t.Errorf("a pattern Go's regexp reads, past the budget: %v %v", ok, err)
	}
}
