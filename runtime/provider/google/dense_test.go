package google

import (
	"strings"
	"testing"

	agentrt "agentc.dev/agentc/runtime"
)

// denseParts is a function call whose arguments are n empty objects: 3
// bytes a JSON value, which the SDK decodes into maps at some hundred
// bytes each.
func denseParts(n int) string {
	return `[{"functionCall": {"name": "weather", "args": {"a": [` + strings.Repeat("{},", n-1) + `{}]}}}]`
}

// TestDenseReply: a response, or one event of a stream, whose JSON holds
// more values than a reply to the request's maxOutputTokens is written in
// (replylimit.ValueBound: 4 a token and 64Ki besides) is refused as it is read,
// before the SDK decodes it, and not asked for again; so is an event of
// more bytes than such a reply's body may hold. A reply within both is
// taken.
func TestDenseReply(t *testing.T) {
	const n = 1 << 20 // 3 MiB of {}, within the bytes a reply to 4,096 tokens may take
	for _, tc := range []struct {
		name, want string
		stream     bool
		reply      func() string
	}{
		{"whole", "google: the response's body holds more than 81920 JSON values, the most a reply to 4096 output tokens", false, func() string { return denseParts(n) }},
		{"streamed", "google: an event of the stream holds more than 81920 JSON values", true, func() string { return denseParts(n) }},
		{"streamed, an event past the bytes", "google: an event of the stream passed 3604480 bytes", true, func() string {
			return `[{"text": "` + strings.Repeat(`\u0001`, 700<<10) + `"}]`
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parts := tc.reply()
			path, reply := "/v1beta/models/gemini-test:generateContent", candidate(parts, "STOP", "")
			if tc.stream {
				path, reply = streamPath, sse(`{"candidates":[{"content":{"parts":`+parts+`,"role":"model"},"finishReason":"STOP","index":0}]}`)
			}
			f := newFakeAt(t, path, reply)
			req := toolRequest()
			req.MaxOutputTokens = 4096
			if tc.stream {
				req.Stream = func(agentrt.Delta) {}
			}
			_, err := newModel(t, f, nil).Complete(t.Context(), req)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if f.requests() != 1 {
				t.Errorf("%d requests, want 1", f.requests())
			}
		})
	}
	t.Run("within", func(t *testing.T) {
		f := newFake(t, candidate(denseParts(16384), "STOP", ""))
		req := toolRequest()
		req.MaxOutputTokens = 4096
		if _, err := newModel(t, f, nil).Complete(t.Context(), req); err != nil {
			t.Fatal(err)
		}
	})
}
