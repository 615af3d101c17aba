package digest

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The test vectors of RFC 8785's author; testdata/rfc8785/README.md says
// where they come from.
const rfc8785Dir = "testdata/rfc8785"

// TestRFC8785Files canonicalises each upstream input and compares the result
// with the upstream output byte for byte, as upstream's
// go/test/verify-canonicalization.go does: the output files end without a
// newline, and nothing is trimmed. Like upstream, it also canonicalises the
// output again, which must change nothing. outhex holds the same outputs in
// hexadecimal, which guards the output files against a checkout that
// rewrites line endings.
func TestRFC8785Files(t *testing.T) {
	want := []string{"arrays.json", "french.json", "structures.json", "unicode.json", "values.json", "weird.json"}
	entries, err := os.ReadDir(filepath.Join(rfc8785Dir, "input"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, want) {
		t.Errorf("input files %q, want %q", names, want)
	}
	for _, name := range want {
		t.Run(name, func(t *testing.T) {
			in := readFile(t, "input", name)
			out := readFile(t, "output", name)
			hexText := readFile(t, "outhex", strings.TrimSuffix(name, ".json")+".txt")
			fromHex, err := hex.DecodeString(strings.Join(strings.Fields(string(hexText)), ""))
			if err != nil {
				t.Fatalf("outhex: %v", err)
			}
			if !bytes.Equal(out, fromHex) {
				t.Fatalf("output/%s differs from outhex: the test data is damaged", name)
			}
			got, err := Canonical(in)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, out) {
				t.Errorf("got\n%q\nwant\n%q", got, out)
			}
			again, err := Canonical(got)
			if err != nil || !bytes.Equal(again, got) {
				t.Errorf("canonicalising the output again: %q, %v", again, err)
			}
			if !IsCanonical(out) {
				t.Errorf("IsCanonical(output) = false")
			}
			if IsCanonical(in) {
				t.Errorf("IsCanonical(input) = true")
			}
		})
	}
}

func readFile(t *testing.T, dir, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(rfc8785Dir, dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestES6NumberDiscrete: the values upstream's go/test/verify-numbers.go
// checks by name.
func TestES6NumberDiscrete(t *testing.T) {
	tests := []struct{ bits, want string }{
		{"4340000000000001", "9007199254740994"},
		{"4340000000000002", "9007199254740996"},
		{"444b1ae4d6e2ef50", "1e+21"},
		{"3eb0c6f7a0b5ed8d", "0.000001"},
		{"3eb0c6f7a0b5ed8c", "9.999999999999997e-7"},
		{"8000000000000000", "0"},
	}
	for _, tt := range tests {
		u, err := strconv.ParseUint(tt.bits, 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		if got := formatES(math.Float64frombits(u)); got != tt.want {
			t.Errorf("formatES(%s) = %s, want %s", tt.bits, got, tt.want)
		}
	}
}

// TestES6Numbers checks formatES against ECMAScript itself: upstream's
// es6numbers.md gives the SHA-256 of the first lines of a file of
// "bits,Number.prototype.toString(double)" lines that node (numgen.js)
// printed for a deterministic sequence of doubles, which numgen.go.txt
// generates too. This test generates the sequence, writes each double with
// formatES, and compares the hashes; it also reads each written number back
// with CanonicalNumber, which must keep it as it is.
func TestES6Numbers(t *testing.T) {
	sums := es6Checksums(t)
	lines := 100000
	if !testing.Short() {
		lines = 1000000
	}
	next := es6Generator(t)
	h := sha256.New()
	w := bufio.NewWriter(h)
	var line []byte
	checked := 0
	for n := 1; n <= lines; n++ {
		f := next()
		s := formatES(f)
		line = strconv.AppendUint(line[:0], math.Float64bits(f), 16)
		line = append(line, ',')
		line = append(line, s...)
		line = append(line, '\n')
		w.Write(line)
		if n <= 100000 {
			if canon, exact, err := CanonicalNumber(s); canon != s || !exact || err != nil {
				t.Fatalf("CanonicalNumber(%s) = %s, %v, %v", s, canon, exact, err)
			}
			if g, err := strconv.ParseFloat(s, 64); err != nil || g != f && !(f == 0 && g == 0) {
				t.Fatalf("%s reads back as %v, %v; want %v", s, g, err, f)
			}
		}
		if want, ok := sums[n]; ok {
			w.Flush()
			if got := hex.EncodeToString(h.Sum(nil)); got != want {
				t.Fatalf("first %d lines: sha256 %s, want %s", n, got, want)
			}
			checked++
		}
	}
	if checked < 3 {
		t.Fatalf("checked %d checksums, want at least 3", checked)
	}
}

// es6Checksums reads the table of upstream's es6numbers.md: line count to
// SHA-256.
func es6Checksums(t *testing.T) map[int]string {
	t.Helper()
	data := readFile(t, ".", "es6numbers.md")
	sums := map[int]string{}
	for _, m := range regexp.MustCompile(`(?m)^\| ([0-9a-f]{64}) \| (\d+) +\|`).FindAllSubmatch(data, -1) {
		n, _ := strconv.Atoi(string(m[2]))
		sums[n] = string(m[1])
	}
	if len(sums) != 6 {
		t.Fatalf("es6numbers.md: found %d checksums, want 6", len(sums))
	}
	return sums
}

// es6Generator returns the sequence of numgen.go.txt: its static values,
// 2000 subnormals and normals from 0x0010000000000000 up, then doubles from
// chained SHA-256 blocks, skipping 0, NaN and infinities.
func es6Generator(t *testing.T) func() float64 {
	t.Helper()
	src := string(readFile(t, ".", "numgen.go.txt"))
	_, rest, ok := strings.Cut(src, "static := [...]uint64{")
	block, _, ok2 := strings.Cut(rest, "}")
	if !ok || !ok2 {
		t.Fatal("numgen.go.txt: no static table")
	}
	var static []uint64
	for _, m := range regexp.MustCompile(`0x[0-9a-f]{16}`).FindAllString(block, -1) {
		u, err := strconv.ParseUint(m[2:], 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		static = append(static, u)
	}
	if len(static) != 168 {
		t.Fatalf("numgen.go.txt: %d static values, want 168", len(static))
	}
	const numSerial = 2000
	idx := 0
	var data []byte
	var sum [sha256.Size]byte
	return func() float64 {
		var f float64
		switch {
		case idx < len(static):
			f = math.Float64frombits(static[idx])
		case idx < len(static)+numSerial:
			f = math.Float64frombits(0x0010000000000000 + uint64(idx-len(static)))
		default:
			for f == 0 || math.IsNaN(f) || math.IsInf(f, 0) {
				if len(data) == 0 {
					sum = sha256.Sum256(sum[:])
					data = sum[:]
				}
				f = math.Float64frombits(binary.LittleEndian.Uint64(data))
				data = data[8:]
			}
		}
		idx++
		return f
	}
}
