package journal

import (
	"bytes"
	"encoding/hex"
	"sync"
	"testing"

	"github.com/zeebo/blake3"

	"agentc.dev/agentc/digest"
)

// TestSumReused: a digest from a hasher handed out again (after inputs
// longer and shorter than its buffer, from several goroutines) is the one
// a hasher made for it gives: reset keeps the derive-key context and
// drops every byte written before.
func TestSumReused(t *testing.T) {
	fresh := func(context string, data []byte) string {
		h := blake3.NewDeriveKey(context)
		h.Write(data)
		return digest.Prefix + hex.EncodeToString(h.Sum(nil))
	}
	var inputs [][]byte
	for _, n := range []int{0, 1, 63, 64, 65, 1023, 1024, 1025, 8191, 8192, 8193, 20000, 3} {
		inputs = append(inputs, bytes.Repeat([]byte{byte('a' + n%26)}, n))
	}
	contexts := map[*hashes]string{
		fingerprintHash: "agentc.dev 2026-11-30 effect fingerprint v1",
		valueHash:       "agentc.dev 2026-11-30 journal value v1",
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 20 {
				for hs, context := range contexts {
					for _, in := range inputs {
						if got, want := sum(hs, in), fresh(context, in); got != want {
							t.Errorf("%s of %d bytes: %s, want %s", context, len(in), got, want)
							return
						}
					}
				}
			}
		})
	}
	wg.Wait()
	// The two contexts give different digests of the same bytes.
	if sum(fingerprintHash, []byte("{}")) == sum(valueHash, []byte("{}")) {
		t.Error("the contexts give the same digest")
	}
}
