package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
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
			if _, err := store.Stat(file.Digest, 1<<30); err != nil || file.Size <= 0 {
				t.Errorf("file %+v: %v", file, err)
			}
		}
	})
}

// FuzzBodyBound: whatever a server sends, in reads of any size, a body
// read whole is passed on up to the bound and fails past it, and an event
// stream is passed on exactly up to the first byte that takes one event
// past the bound, as a plain reading of the format finds it.
func FuzzBodyBound(f *testing.F) {
	for _, s := range []string{
		"data: 1234\n\ndata: 5678\n\n", "data: 1234\r\n\r\ndata: 5678\r\n\r\n", "data: 1234\r\rdata: 5678\r\r",
		"a\r\nb\r\nc\r\n\r\n", "\n\r\n\r" + strings.Repeat("x", 20), "data: 12\ndata: 34\r\ndata: 56\rdata: 78\n\n",
		"\r", "\r\n", "\n\n\n", "x\r\r\n\n\r\r\r\n",
	} {
		f.Add([]byte(s), uint8(12), uint8(0), true)
		f.Add([]byte(s), uint8(5), uint8(1), true)
		f.Add([]byte(s), uint8(10), uint8(3), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, limit, chunk uint8, events bool) {
		if limit == 0 {
			limit = 1
		}
		src := &chunked{data: data, size: int(chunk)}
		r := &bodyReader{body: io.NopCloser(src), limit: int64(limit), events: events, lineStart: true}
		got, err := io.ReadAll(r)
		want := -1 // how much is passed on before the error; -1: all, no error
		if events {
			want = firstPast(data, int(limit))
		} else if len(data) > int(limit) {
			want = int(limit)
		}
		if want < 0 {
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("%q bounded to %d: read %q, %v; want it all", data, limit, got, err)
			}
			return
		}
		var e *tooLargeError
		if !errors.As(err, &e) || e.event != events || !bytes.Equal(got, data[:want]) {
			t.Fatalf("%q bounded to %d: read %q, %v; want %q and the bound's error", data, limit, got, err, data[:want])
		}
		if !events && src.pos > int(limit)+1 {
			t.Errorf("read %d bytes of a body bounded to %d", src.pos, limit)
		}
	})
}

// chunked returns at most size bytes a read (any number when size is 0).
type chunked struct {
	data      []byte
	size, pos int
}

func (c *chunked) Read(p []byte) (int, error) {
	if c.pos == len(c.data) {
		return 0, io.EOF
	}
	if c.size > 0 && len(p) > c.size {
		p = p[:c.size]
	}
	n := copy(p, c.data[c.pos:])
	c.pos += n
	return n, nil
}

// firstPast is the index of the first byte of an event stream that takes
// an event past limit bytes, or -1. Lines end with CR LF, LF or CR; a
// blank line ends an event, which holds every byte from the end of the
// blank line before it through its own.
func firstPast(data []byte, limit int) int {
	start, lineStart := 0, true
	for i := 0; i < len(data); {
		end := i + 1
		switch data[i] {
		case '\r':
			if i+1 < len(data) && data[i+1] == '\n' {
				end = i + 2
			}
		case '\n':
		default:
			lineStart = false
			if end-start > limit {
				return start + limit
			}
			i = end
			continue
		}
		if end-start > limit {
			return start + limit
		}
		if lineStart {
			start = end
		}
		lineStart = true
		i = end
	}
	return -1
}
