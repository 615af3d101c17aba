package google

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"agentc.dev/agentc/runtime/internal/replytest"
	"agentc.dev/agentc/runtime/provider/retry"
)

// FuzzResponse: whatever a server sends, whole or streamed, Complete
// returns a response or an error, never panics, and keeps the key out of
// its error and of every streamed piece. The SDK parses
// the body (through untyped maps); this package reads what it made of it.
func FuzzResponse(f *testing.F) {
	for _, s := range []string{
		`{"candidates":[{"content":{"parts":[{"text":"Paris."}],"role":"model"},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":1}}`,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"a":[1,{"b":null}]}}}]}}],"responseId":"r"}`,
		`{"candidates":{"0":1}}`,
		`{"candidates":[{"content":{"parts":"x"}}]}`,
		`{"promptFeedback":{"blockReason":"SAFETY"}}`,
		`{"error":{"code":429,"message":"AIzaTest-SECRET-key","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1s"}]}}`,
		`[]`, `null`, ``, `{"candidates":[null]}`,
	} {
		f.Add(200, false, []byte(s))
		f.Add(200, true, []byte("data: "+s+"\r\n\r\n"))
	}
	f.Add(429, false, []byte(`{"error":{"code":429,"details":[{"@type":7}]}}`))
	f.Add(200, true, []byte("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Pa\"}]}}]}\n\ndata: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"ris.\"}]},\"finishReason\":\"STOP\"}]}\n\n"))
	// A model may write the header's name or "Bearer": only the key must not show.
	f.Add(200, true, []byte("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Use a Bearer token in x-goog-api-key.\"}]},\"finishReason\":\"STOP\"}]}\n\n"))
	f.Fuzz(func(t *testing.T, status int, stream bool, data []byte) {
		reply := replytest.Reply{Status: replytest.Status(status), ContentType: replytest.ContentType(stream), Body: data}
		m, err := New(Config{APIKey: testKey, HTTPClient: reply.Client(), Retry: retry.Policy{Attempts: 1}})
		if err != nil {
			t.Fatal(err)
		}
		// The server's own message, which an error repeats, may say them.
		resp := replytest.Complete(t, m, toolRequest(), stream, testKey, replytest.NotIn(data, "x-goog-api-key", "Bearer")...)
		if resp == nil {
			return
		}
		for _, c := range resp.Message.ToolCalls {
			if c.ID == "" || len(c.Arguments) == 0 || c.Arguments[0] != '{' {
				t.Errorf("call %+v", c)
			}
		}
	})
}

// FuzzUncommented: the stream the SDK reads is the server's without its
// comment lines, each line ended by \n and each event by one blank line,
// however the server ends its lines (CR, LF or CR LF) and however its
// bytes are split between reads: held to a line-by-line reading of the
// whole stream.
func FuzzUncommented(f *testing.F) {
	f.Add([]byte(": keep-alive\r\n\r\n:\n\ndata: {}\r\n: x\r\n\r\n\n\ndata: {\"a\":1}\n\n"), uint8(1))
	f.Add([]byte("data: a\rdata: b\r\r:c\r\rdata: d"), uint8(3))
	f.Add([]byte("\r\n\r\n:\r\n\r\ndata: :x\r\n"), uint8(0))
	f.Fuzz(func(t *testing.T, in []byte, step uint8) {
		want := uncommentedLines(in)
		u := &uncommented{rc: io.NopCloser(&chunked{b: in, step: uint(step)}), start: true}
		got, err := io.ReadAll(u)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%q read as %q, want %q", in, got, want)
		}
	})
}

// uncommentedLines is what uncommented makes of in, line by line.
func uncommentedLines(in []byte) string {
	var out strings.Builder
	inEvent := false
	for len(in) > 0 {
		end := bytes.IndexAny(in, "\r\n")
		line, ended := in, false
		if end >= 0 {
			line, ended = in[:end], true
			if in[end] == '\r' && end+1 < len(in) && in[end+1] == '\n' {
				end++
			}
			in = in[end+1:]
		} else {
			in = nil
		}
		switch {
		case len(line) > 0 && line[0] == ':':
		case len(line) == 0:
			if inEvent {
				out.WriteByte('\n')
				inEvent = false
			}
		default:
			out.Write(line)
			if ended {
				out.WriteByte('\n')
			}
			inEvent = true
		}
	}
	return out.String()
}

// chunked reads b a few bytes at a time: 1 to 8, as step says.
type chunked struct {
	b    []byte
	step uint
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(c.b), 1+int(c.step%8))
	c.step = c.step*31 + 7
	copy(p, c.b[:n])
	c.b = c.b[n:]
	return n, nil
}
