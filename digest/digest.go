package digest

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/zeebo/blake3"
)

// Kind is one kind of digest. Each kind hashes with its own derive-key
// context, so a contract digest can never equal a plan digest of the same
// bytes, and a new format version gets new contexts.
type Kind struct {
	Name    string // "contract", "plan"
	context string
}

// The digest kinds. Their context strings are a public contract: changing
// one changes every digest of that kind, and is a format version bump.
var (
	Contract = Kind{Name: "contract", context: "agentc.dev 2026-11-30 contract digest v1"}
	Plan     = Kind{Name: "plan", context: "agentc.dev 2026-11-30 plan digest v1"}
	// OutputTool draws the output tool's name suffix (plan format 3).
	OutputTool = Kind{Name: "output tool", context: "agentc.dev 2026-12-01 output tool suffix v1"}
)

// Prefix starts every printed digest.
const Prefix = "blake3:"

// Digest is a printed digest: "blake3:" and 64 lower-case hex digits.
type Digest string

// Of returns the digest of the canonical form of a JSON text.
func (k Kind) Of(data []byte) (Digest, error) {
	c, err := Canonical(data)
	if err != nil {
		return "", err
	}
	return k.OfCanonical(c), nil
}

// OfValue returns the digest of the canonical JSON form of v.
func (k Kind) OfValue(v any) (Digest, error) {
	c, err := CanonicalValue(v)
	if err != nil {
		return "", err
	}
	return k.OfCanonical(c), nil
}

// OfCanonical hashes bytes already in canonical form.
func (k Kind) OfCanonical(canonical []byte) Digest {
	h := blake3.NewDeriveKey(k.context)
	h.Write(canonical)
	return Digest(Prefix + hex.EncodeToString(h.Sum(nil)))
}

// Parse checks that s is a well-formed digest.
func Parse(s string) (Digest, error) {
	hexPart, ok := strings.CutPrefix(s, Prefix)
	if !ok || len(hexPart) != 64 {
		return "", fmt.Errorf("%q is not a digest: want %s followed by 64 hex digits", s, Prefix)
	}
	for _, c := range hexPart {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return "", fmt.Errorf("%q is not a digest: want lower-case hex digits", s)
		}
	}
	return Digest(s), nil
}

// Short returns the first 12 hex digits, for messages.
func (d Digest) Short() string {
	s := strings.TrimPrefix(string(d), Prefix)
	if len(s) > 12 {
		s = s[:12]
	}
	return Prefix + s
}
