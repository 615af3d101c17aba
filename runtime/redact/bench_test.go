package redact

import (
	"strings"
	"testing"
)

// benchText is a tool result of about 1 MiB: lines of log text, with one
// secret near the end.
func benchText(secret string) string {
	var b strings.Builder
	for i := 0; b.Len() < 1<<20; i++ {
		b.WriteString("2026-01-02T03:04:05Z INFO request served in 12ms, status 200, path /v1/items?page=7\n")
	}
	b.WriteString("token " + secret + "\n")
	return b.String()
}

func BenchmarkString(b *testing.B) {
	s := Of("sk-live-0123456789abcdefghij", "tok-planted-exec-Hn4r6Ty2", "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz012345")
	for _, tt := range []struct {
		name, text string
	}{
		{"clean-1MiB", benchText("no secret here")},
		{"secret-1MiB", benchText("sk-live-0123456789abcdefghij")},
		{"clean-4KiB", benchText("")[:4096]},
		// JSON as Python writes it by default: every non-ASCII
		// character a \u escape, which is matched a second time with
		// the escapes read (decoding).
		{"escaped-1MiB", strings.ReplaceAll(benchText("sk-live-0123456789abcdefghij"), "served", `serv\u00e9d`)},
	} {
		b.Run(tt.name, func(b *testing.B) {
			b.SetBytes(int64(len(tt.text)))
			for b.Loop() {
				_ = s.String(tt.text)
			}
		})
	}
}
