package digest

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Digests for lock lines: "blake3:" and 64 times one hex digit.
var (
	dA = Digest(Prefix + strings.Repeat("a", 64))
	dB = Digest(Prefix + strings.Repeat("b", 64))
	dC = Digest(Prefix + strings.Repeat("c", 64))
	d0 = Digest(Prefix + strings.Repeat("0", 64))
)

func TestParseLock(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Entry
	}{
		{"empty", "", nil},
		{"header only", lockHeader, nil},
		{"one", "triage " + string(dA) + " " + string(dB) + "\n", []Entry{{"triage", dA, dB}}},
		{"no final newline", "triage " + string(dA) + " " + string(dB), []Entry{{"triage", dA, dB}}},
		{"header, blank lines and comments",
			lockHeader + "\n  # indented comment\nb " + string(dC) + " " + string(d0) + "\n\n\na " + string(dA) + " " + string(dB) + "\n",
			[]Entry{{"a", dA, dB}, {"b", dC, d0}}},
		{"spaces, tabs and CRLF", "\t x \t" + string(dA) + "   " + string(dB) + " \r\ny " + string(dB) + " " + string(dA) + "\r\n",
			[]Entry{{"x", dA, dB}, {"y", dB, dA}}},
		{"one digest for both", "same " + string(dC) + " " + string(dC), []Entry{{"same", dC, dC}}},
		{"odd names", "a/b.c-d_é " + string(dA) + " " + string(dB), []Entry{{"a/b.c-d_é", dA, dB}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := ParseLock("agentc.sum", []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]Entry{}
			for _, e := range tt.want {
				want[e.Name] = e
			}
			if !maps.Equal(l.Entries, want) {
				t.Errorf("entries\n%v\nwant\n%v", l.Entries, want)
			}
		})
	}
}

func TestParseLockErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"two fields", "# header\n\n" + "x " + string(dA) + "\n",
			"locks/agentc.sum:3: want NAME CONTRACT-DIGEST PLAN-DIGEST, found 2 fields"},
		{"one field", line3("a", dA, dB) + "x\n",
			"locks/agentc.sum:2: want NAME CONTRACT-DIGEST PLAN-DIGEST, found 1 fields"},
		{"four fields", "x " + string(dA) + " " + string(dB) + " extra\n",
			"locks/agentc.sum:1: want NAME CONTRACT-DIGEST PLAN-DIGEST, found 4 fields"},
		{"contract digest short", "x blake3:abc " + string(dB) + "\n",
			`locks/agentc.sum:1: contract digest: "blake3:abc" is not a digest: want blake3: followed by 64 hex digits`},
		{"contract digest other hash", "\n\nx sha256:" + strings.Repeat("a", 64) + " " + string(dB) + "\n",
			`locks/agentc.sum:3: contract digest: "sha256:` + strings.Repeat("a", 64) + `" is not a digest: want blake3: followed by 64 hex digits`},
		{"plan digest upper case", line3("a", dA, dB) + "x " + string(dA) + " " + strings.ToUpper(string(dB)) + "\n",
			`locks/agentc.sum:2: plan digest: "BLAKE3:` + strings.Repeat("B", 64) + `" is not a digest: want blake3: followed by 64 hex digits`},
		{"plan digest not hex", "x " + string(dA) + " blake3:" + strings.Repeat("g", 64) + "\n",
			`locks/agentc.sum:1: plan digest: "blake3:` + strings.Repeat("g", 64) + `" is not a digest: want lower-case hex digits`},
		{"contract before plan", "x blake3:1 blake3:2\n",
			`locks/agentc.sum:1: contract digest: "blake3:1" is not a digest: want blake3: followed by 64 hex digits`},
		{"duplicate", line3("x", dA, dB) + "# between\n" + line3("y", dA, dB) + line3("x", dC, dC),
			`locks/agentc.sum:4: agent "x" is listed twice`},
		{"duplicate, same digests", line3("x", dA, dB) + line3("x", dA, dB),
			`locks/agentc.sum:2: agent "x" is listed twice`},
		{"line too long", strings.Repeat("x", maxLockLine+1) + "\n",
			"locks/agentc.sum: bufio.Scanner: token too long"},
		{"contract edited", line3("x", dA, dB) + string(cD) + ` {"provides":"y.z"}` + "\n",
			"locks/agentc.sum:2: contract " + string(cD) + ": the JSON does not match its digest (it is " + string(mustContract(`{"provides":"y.z"}`)) + "): the line was edited; delete it, and agentc digest --write records the contracts of the agents as they are"},
		{"contract not canonical", string(cD) + ` {"provides": "x.y"}` + "\n",
			"locks/agentc.sum:1: contract " + string(cD) + ": the JSON is not in canonical form (RFC 8785), as agentc digest --write writes it"},
		{"contract not JSON", string(cD) + ` {"provides":` + "\n",
			"locks/agentc.sum:1: contract " + string(cD) + ": canonical JSON: unexpected end of input"},
		{"contract without JSON", string(cD) + "\n",
			"locks/agentc.sum:1: contract " + string(cD) + ": want CONTRACT-DIGEST CANONICAL-JSON, found no JSON"},
		{"contract digest bad", "blake3:12 {}\n",
			`locks/agentc.sum:1: contract: "blake3:12" is not a digest: want blake3: followed by 64 hex digits`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := ParseLock("locks/agentc.sum", []byte(tt.in))
			if err == nil {
				t.Fatalf("no error; entries %v", l.Entries)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error\n%s\nwant\n%s", got, tt.want)
			}
			if l != nil {
				t.Errorf("a lock as well as an error: %v", l.Entries)
			}
		})
	}
}

// TestLockFormat: the header, then one line an entry in name order; what
// Format writes, ParseLock reads back.
func TestLockFormat(t *testing.T) {
	l := &Lock{Entries: map[string]Entry{
		"b":  {"b", dC, d0},
		"a":  {"a", dA, dB},
		"ab": {"ab", dB, dA},
	}}
	want := lockHeader + line3("a", dA, dB) + line3("ab", dB, dA) + line3("b", dC, d0)
	if got := string(l.Format()); got != want {
		t.Errorf("Format:\n%s\nwant\n%s", got, want)
	}
	again, err := ParseLock(LockFile, l.Format())
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(again.Entries, l.Entries) {
		t.Errorf("read back %v, want %v", again.Entries, l.Entries)
	}
	if got := string((&Lock{}).Format()); got != lockHeader {
		t.Errorf("empty lock: %q, want the header alone", got)
	}
}

// cJSON is a contract's canonical JSON, and cD its digest.
const cJSON = `{"output":{"description":"The label.","keeps_tools":false,"name":"answer","schema":{"enum":["bug","feature"]}},"provides":"x.y"}`

var cD = mustContract(cJSON)

func mustContract(js string) Digest {
	d, err := Contract.Of([]byte(js))
	if err != nil {
		panic(err)
	}
	return d
}

// TestLockContracts: contracts follow the agent lines, sorted by digest,
// and read back verified; a lock without them reads as before.
func TestLockContracts(t *testing.T) {
	l := &Lock{Entries: map[string]Entry{"a": {"a", cD, dB}}}
	if d := l.AddContract([]byte(cJSON)); d != cD {
		t.Fatalf("AddContract = %s, want %s", d, cD)
	}
	other := `{"provides":"q.r"}`
	dO := l.AddContract([]byte(other))
	first, second := cD, dO
	firstJ, secondJ := cJSON, other
	if second < first {
		first, second, firstJ, secondJ = second, first, secondJ, firstJ
	}
	want := lockHeader + line3("a", cD, dB) + "\n" + contractsHeader + string(first) + " " + firstJ + "\n" + string(second) + " " + secondJ + "\n"
	if got := string(l.Format()); got != want {
		t.Errorf("Format:\n%s\nwant\n%s", got, want)
	}
	again, err := ParseLock(LockFile, l.Format())
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(again.Entries, l.Entries) {
		t.Errorf("entries read back %v, want %v", again.Entries, l.Entries)
	}
	if c, ok := again.Contract(cD); !ok || string(c) != cJSON {
		t.Errorf("Contract(%s) = %s, %v; want %s", cD, c, ok, cJSON)
	}
	if _, ok := again.Contract(dA); ok {
		t.Errorf("Contract(%s): found one the lock does not hold", dA)
	}
	// The same contract twice (two merged branches that each added it).
	twice, err := ParseLock(LockFile, []byte(string(cD)+" "+cJSON+"\n"+string(cD)+" "+cJSON+"\n"))
	if err != nil || len(twice.Contracts) != 1 {
		t.Errorf("a contract listed twice: %v, %d contracts", err, len(twice.Contracts))
	}
}

func line3(name string, c, p Digest) string { return name + " " + string(c) + " " + string(p) + "\n" }

// TestLockCompare: which digests moved, contract first, with the locked
// and the actual value; an agent the lock lacks is told apart from one
// that did not move.
func TestLockCompare(t *testing.T) {
	l := &Lock{Entries: map[string]Entry{"x": {"x", dA, dB}}}
	tests := []struct {
		name  string
		e     Entry
		want  Moves
		found bool
	}{
		{"same", Entry{"x", dA, dB}, nil, true},
		{"plan", Entry{"x", dA, dC}, Moves{{"plan", dB, dC}}, true},
		{"contract", Entry{"x", dC, dB}, Moves{{"contract", dA, dC}}, true},
		{"both", Entry{"x", dB, dA}, Moves{{"contract", dA, dB}, {"plan", dB, dA}}, true},
		{"not in the lock", Entry{"y", dA, dB}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			moved, found := l.Compare(tt.e)
			if found != tt.found || !slices.Equal(moved, tt.want) {
				t.Errorf("Compare = %v, %v; want %v, %v", moved, found, tt.want, tt.found)
			}
		})
	}
	ms := Moves{{"contract", dA, dB}, {"plan", dB, dC}}
	want := "contract digest moved (lock " + string(dA) + ", now " + string(dB) + "); plan digest moved (lock " + string(dB) + ", now " + string(dC) + ")"
	if got := ms.String(); got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}

// TestFindLock: the lock file of the first directory given that holds
// one; a directory of the lock file's name is not one, and a directory
// not given is not searched.
func TestFindLock(t *testing.T) {
	root := t.TempDir()
	b := filepath.Join(root, "a", "b")
	deep := filepath.Join(b, "c")
	if err := os.MkdirAll(filepath.Join(deep, LockFile), 0o755); err != nil {
		t.Fatal(err)
	}
	dirs := []string{deep, b, filepath.Join(root, "a")}
	if got := FindLock(dirs...); got != "" {
		t.Errorf("no lock in the directories: found %s", got)
	}
	if err := os.WriteFile(filepath.Join(root, LockFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := FindLock(dirs...); got != "" {
		t.Errorf("a lock above the directories given: found %s", got)
	}
	if got, want := FindLock(append(dirs, root)...), filepath.Join(root, LockFile); got != want {
		t.Errorf("FindLock = %q, want %q", got, want)
	}
	if err := os.WriteFile(filepath.Join(b, LockFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := FindLock(append(dirs, root)...), filepath.Join(b, LockFile); got != want {
		t.Errorf("FindLock = %q, want %q", got, want)
	}
}
