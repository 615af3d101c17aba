package google

import (
	"runtime/metrics"
	"testing"
	"time"

	agentrt "agentc.dev/agentc/runtime"
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
				stop := watchHeap()
				// Refused (limit.ValueBound); the reply's 8 MiB of arguments
				// are within what 65,536 tokens make, so it was taken before.
				newModel(b, f, nil).Complete(b.Context(), req)
				peak = max(peak, stop())
				f.srv.Close()
			}
			b.ReportMetric(float64(peak)/1e6, "peak-MB")
		})
	}
}

// watchHeap samples the heap every millisecond until the function it
// returns is called, which returns the largest heap seen.
func watchHeap() func() uint64 {
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var high uint64
	read := func() {
		metrics.Read(samples)
		high = max(high, samples[0].Value.Uint64())
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				read()
				return
			case <-tick.C:
				read()
			}
		}
	}()
	return func() uint64 {
		close(stop)
		<-done
		return high
	}
}
