package mcp

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"agentc.dev/agentc/runtime/filestore"
	"agentc.dev/agentc/runtime/redact"
)

// FuzzResult: whatever result an MCP server sends for a call, as the SDK
// decodes it, is rendered as text whose cut never shows part of a secret,
// and its files are put in the store, never a panic.
func FuzzResult(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"done"}]}`,
		`{"content":[{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"},{"type":"audio","data":"AAAA","mimeType":"audio/wav"}]}`,
		`{"content":[{"type":"resource_link","uri":"file:///x","name":"x","size":3}]}`,
		`{"content":[{"type":"resource","resource":{"uri":"file:///a","mimeType":"application/pdf","blob":"JVBERi0xLjQK"}}]}`,
		`{"content":[{"type":"resource","resource":{"uri":"file:///a","text":"tok-SECRET-1"}}]}`,
		`{"content":[],"structuredContent":{"a":[1,2,{"b":null}]}}`,
		`{"content":[null]}`, `{"content":[{"type":"other"}]}`, `{"content":null}`, `{}`, `null`,
		`{"content":[{"type":"text","text":"` + strings.Repeat("tok-SECRET-1 ", 50) + `"}],"isError":true}`,
	} {
		f.Add([]byte(s), 64)
	}
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		var res mcp.CallToolResult
		if json.Unmarshal(data, &res) != nil {
			return
		}
		if max < 16 || max > 1<<16 {
			max = 64
		}
		// render replaces secrets only where it cuts (the run redacts the
		// whole result after): a cut never leaves part of one.
		secret := "tok-SECRET-1"
		set := redact.Of(secret)
		text := render(&res, max, set)
		if strings.Contains(text, "[result cut: ") && strings.Count(string(data), "tok-SE") == strings.Count(string(data), secret) &&
			strings.Contains(set.String(text), "tok-SE") {
			t.Errorf("a cut shows part of the secret: %q", text)
		}
		if !utf8.ValidString(text) && utf8.Valid(data) {
			t.Errorf("not UTF-8: %q", text)
		}
		store, err := filestore.Open(filepath.Join(t.TempDir(), "files"))
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range attach(&res, store, "tool") {
			if _, err := store.Stat(file.Digest); err != nil || file.Size <= 0 {
				t.Errorf("file %+v: %v", file, err)
			}
		}
	})
}
