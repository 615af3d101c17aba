package google

import (
	"testing"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/internal/replytest"
)

// BenchmarkDenseReply measures the heap a dense reply costs (8 MiB of {}
// under maxOutputTokens 65,536, whole and as one event of a stream): the
// largest heap seen while the call ran, in MB, as peak-MB.
//
//	go test ./runtime/provider/google -run '^$' -bench DenseReply -benchtime 3x
func BenchmarkDenseReply(b *testing.B) {
	parts := denseParts(8 << 20 / 3)
	for _, stream := range []bool{false, true} {
		name := "whole"
		if stream {
			name = "streamed"
		}
		b.Run(name, func(b *testing.B) {
			var peak uint64
			for range b.N {
				path, reply := "/v1beta/models/gemini-test:generateContent", candidate(parts, "STOP", "")
				if stream {
					path, reply = streamPath, sse(`{"candidates":[{"content":{"parts":`+parts+`,"role":"model"},"finishReason":"STOP","index":0}]}`)
				}
				f := newFakeAt(b, path, reply)
				req := toolRequest()
				req.MaxOutputTokens = 65536
				if stream {
					req.Stream = func(agentrt.Delta) {}
				}
				stop := replytest.WatchHeap()
				// Refused (replylimit.ValueBound); the reply's 8 MiB of
				// arguments are within what 65,536 tokens make, so it was
				// taken before.
				newModel(b, f, nil).Complete(b.Context(), req)
				peak = max(peak, stop())
				f.srv.Close()
			}
			b.ReportMetric(float64(peak)/1e6, "peak-MB")
		})
	}
}
