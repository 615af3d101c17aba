package digest

import (
	"regexp"
	"strings"
	"testing"
)

// TestVectors pins the digest algorithm: the derive-key contexts, the
// canonical form and the printing. These values change only with a format
// version bump, and every consumer's pins change with them. They were
// checked against a second BLAKE3 implementation (lukechampine.com/blake3).
func TestVectors(t *testing.T) {
	tests := []struct {
		kind Kind
		in   string
		want Digest
	}{
		{Contract, `{}`, "blake3:96eb6bec2048392cb2d33b4a8c7ece62bb1dea60965be4d7b4dc5c9f4984db35"},
		{Plan, `{}`, "blake3:8087718b049be9d6c6433f0669e046907be051b2cf1a417284f55d79bd5d18ac"},
		{Contract, `{"output":{"schema":{"type":"string","maxLength":10.0},"name":"answer"}}`, "blake3:55d4ca3320e7bef80fd9bb5b67e17e7fd7cf3d3d55150086a7c2dd81d7f3dfd0"},
		{Contract, ` { "output" : { "name" : "answer", "schema" : { "maxLength" : 1e1, "type" : "string" } } } `, "blake3:55d4ca3320e7bef80fd9bb5b67e17e7fd7cf3d3d55150086a7c2dd81d7f3dfd0"},
		{OutputTool, `{"draw":0,"output":{"description":"The label.","keeps_tools":false,"name":"answer","schema":{"enum":["bug","feature"],"maximum":1.5}}}`, "blake3:806676ea0514a08d92fab6fb45bb59b55bdec72ab87c345b4491357e599f7f57"},
		{OutputTool, `{"draw":1,"output":{"description":"The label.","keeps_tools":false,"name":"answer","schema":{"enum":["bug","feature"],"maximum":1.5}}}`, "blake3:527ae6dd5aa67f24c3d667c6914c45f765ad34c77e0d70882d2fb887f53deec3"},
	}
	for _, tt := range tests {
		got, err := tt.kind.Of([]byte(tt.in))
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("%s digest of %s = %s, want %s", tt.kind.Name, tt.in, got, tt.want)
		}
	}
}

func TestDigestForm(t *testing.T) {
	d, err := Plan.Of([]byte(`[1,"a",null]`))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^blake3:[0-9a-f]{64}$`).MatchString(string(d)) {
		t.Errorf("digest %q is not blake3:<64 hex>", d)
	}
	if _, err := Parse(string(d)); err != nil {
		t.Error(err)
	}
	c, _ := Contract.Of([]byte(`[1,"a",null]`))
	if c == d {
		t.Error("contract and plan digests of the same bytes are equal: the kinds are not separated")
	}
	for _, bad := range []string{"", "blake3:", "sha256:" + strings.Repeat("0", 64), "blake3:" + strings.Repeat("0", 63), "blake3:" + strings.Repeat("A", 64)} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

// FuzzParseLock: reading a lock file never panics, and what it reads
// formats to a file that reads back the same.
func FuzzParseLock(f *testing.F) {
	f.Add([]byte("x blake3:" + strings.Repeat("a", 64) + " blake3:" + strings.Repeat("b", 64) + "\n"))
	// A contract line, whose JSON matches its digest.
	contract := []byte(`{"output":{"schema":{"type":"object"}},"provides":"x"}`)
	f.Add([]byte("x " + string(Contract.OfCanonical(contract)) + " blake3:" + strings.Repeat("b", 64) + "\n\n" +
		string(Contract.OfCanonical(contract)) + " " + string(contract) + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := ParseLock("agentc.sum", data)
		if err != nil {
			return
		}
		again, err := ParseLock("agentc.sum", l.Format())
		if err != nil {
			t.Fatalf("formatted lock does not read: %v\n%s", err, l.Format())
		}
		if len(again.Entries) != len(l.Entries) {
			t.Fatalf("entries %d, then %d", len(l.Entries), len(again.Entries))
		}
		for n, e := range l.Entries {
			if again.Entries[n] != e {
				t.Fatalf("entry %q changed: %v, then %v", n, e, again.Entries[n])
			}
		}
		if len(again.Contracts) != len(l.Contracts) {
			t.Fatalf("contracts %d, then %d", len(l.Contracts), len(again.Contracts))
		}
		for d, c := range l.Contracts {
			if string(again.Contracts[d]) != string(c) {
				t.Fatalf("contract %s changed: %s, then %s", d, c, again.Contracts[d])
			}
		}
	})
}

// TestShort: a digest is shown by its first 12 hex digits; anything
// shorter is shown whole.
func TestShort(t *testing.T) {
	for _, tt := range []struct {
		d    Digest
		want string
	}{
		{Digest(Prefix + "0123456789abcdef" + strings.Repeat("0", 48)), "blake3:0123456789ab"},
		{Digest(Prefix + "0123456789abc"), "blake3:0123456789ab"},
		{Digest(Prefix + "0123456789ab"), "blake3:0123456789ab"},
		{Digest(Prefix + "abc"), "blake3:abc"},
		{"abc", "blake3:abc"},
	} {
		if got := tt.d.Short(); got != tt.want {
			t.Errorf("%q.Short() = %q, want %q", tt.d, got, tt.want)
		}
	}
}
