package replytest

import (
	"runtime/metrics"
	"time"
)

// WatchHeap samples the heap every millisecond until the function it
// returns is called, which returns the largest heap seen (live objects
// and garbage not yet swept): what a provider's benchmarks report as a
// call's peak.
func WatchHeap() func() uint64 {
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
