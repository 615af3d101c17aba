package failure_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/provider/retry"
)

// replies are a whole reply in each provider's wire format.
var replies = map[string]string{
	"openai":    `{"id":"c1","object":"chat.completion","created":0,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hello there"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`,
	"anthropic": `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"hello there"}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":2}}`,
	"google":    `{"candidates":[{"content":{"role":"model","parts":[{"text":"hello there"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":2,"totalTokenCount":7}}`,
	"bedrock":   `{"output":{"message":{"role":"assistant","content":[{"text":"hello there"}]}},"stopReason":"end_turn","usage":{"inputTokens":5,"outputTokens":2,"totalTokens":7},"metrics":{"latencyMs":1}}`,
}

// cut is how many bytes of a reply a cut attempt sends.
const cut = 40

// TestRetriedAttemptsTallied: for every provider, an attempt the server
// answered (200) and cut short, made again, is in the call's Retried with
// the bytes it read, whether the call then succeeds or fails; an attempt
// refused with a status (503) is not, as the provider took nothing.
func TestRetriedAttemptsTallied(t *testing.T) {
	cases := []struct {
		name    string
		script  []string // each attempt: "cut", "503" or "ok"
		want    agentrt.Retried
		succeed bool
	}{
		{"cut then ok", []string{"cut", "ok"}, agentrt.Retried{Attempts: 1, Bytes: cut}, true},
		{"503 then ok", []string{"503", "ok"}, agentrt.Retried{}, true},
		{"cut, 503, ok", []string{"cut", "503", "ok"}, agentrt.Retried{Attempts: 1, Bytes: cut}, true},
		{"every attempt cut", []string{"cut", "cut", "cut"}, agentrt.Retried{Attempts: 3, Bytes: 3 * cut}, false},
		{"ok at once", []string{"ok"}, agentrt.Retried{}, true},
	}
	for name, model := range models(retry.Policy{Attempts: 3, Base: time.Millisecond, Max: 2 * time.Millisecond}, 0) {
		for _, c := range cases {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				var n atomic.Int32
				body := replies[name]
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					i := int(n.Add(1)) - 1
					if i >= len(c.script) {
						t.Errorf("attempt %d, past the script", i+1)
						http.Error(w, "no", http.StatusBadRequest)
						return
					}
					w.Header().Set("Content-Type", "application/json")
					switch c.script[i] {
					case "503":
						w.WriteHeader(http.StatusServiceUnavailable)
						w.Write([]byte(`{"error":{"message":"overloaded"}}`))
					case "cut":
						// The length said is the whole reply's; the server
						// closes the connection after the first bytes.
						w.Header().Set("Content-Length", strconv.Itoa(len(body)))
						w.WriteHeader(http.StatusOK)
						w.Write([]byte(body[:cut]))
					default:
						w.Write([]byte(body))
					}
				}))
				defer srv.Close()
				m, err := model(srv.URL)
				if err != nil {
					t.Fatal(err)
				}
				resp, err := m.Complete(context.Background(), hi)
				var got agentrt.Retried
				if c.succeed {
					if err != nil {
						t.Fatal(err)
					}
					got = resp.Retried
				} else {
					if err == nil {
						t.Fatal("a call whose every attempt was cut succeeded")
					}
					got = agentrt.RetriedOf(err)
				}
				if got != c.want {
					t.Errorf("retried %+v, want %+v", got, c.want)
				}
				if int(n.Load()) != len(c.script) {
					t.Errorf("%d attempts, want %d", n.Load(), len(c.script))
				}
			})
		}
	}
}

// streams are the first events of a streamed reply in each provider's
// wire format, which carry "hello " and stop short of the reply's end,
// and a whole streamed reply.
var streams = map[string][2]string{
	"openai": {
		"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"hello \"}}]}\n\n",
		"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"hello there\"},\"finish_reason\":\"stop\"}]}\n\n" +
			"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2,\"total_tokens\":7}}\n\ndata: [DONE]\n\n",
	},
	"anthropic": {
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n" +
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hello \"}}\n\n",
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n" +
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hello there\"}}\n\n" +
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n" +
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
	},
	"google": {
		"data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"hello \"}]}}]}\n\n",
		"data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"hello there\"}]},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":5,\"candidatesTokenCount\":2,\"totalTokenCount\":7}}\n\n",
	},
}

// TestRetriedStreamsTallied: for the providers that stream server-sent
// events, a stream the server cut after a piece of its reply, made again,
// is in the call's Retried with the pieces it read, not the stream's bytes.
func TestRetriedStreamsTallied(t *testing.T) {
	all := models(retry.Policy{Attempts: 3, Base: time.Millisecond, Max: 2 * time.Millisecond}, 0)
	for name, events := range streams {
		t.Run(name, func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				if n.Add(1) == 1 {
					w.Write([]byte(events[0]))
					return // the stream ends before the reply did
				}
				w.Write([]byte(events[1]))
			}))
			defer srv.Close()
			m, err := all[name](srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			req := *hi
			req.Stream = func(agentrt.Delta) {}
			resp, err := m.Complete(context.Background(), &req)
			if err != nil {
				t.Fatal(err)
			}
			if n.Load() != 2 {
				t.Fatalf("%d attempts, want 2", n.Load())
			}
			if r := resp.Retried; r.Attempts != 1 || r.Bytes < int64(len("hello ")) || r.Bytes >= int64(len(events[0])) {
				t.Errorf("retried %+v, want 1 attempt of at least %d bytes and fewer than the stream's %d", r, len("hello "), len(events[0]))
			}
			if resp.Message.Content != "hello there" {
				t.Errorf("the reply is %q", resp.Message.Content)
			}
		})
	}
}
