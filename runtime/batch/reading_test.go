package batch_test

import (
	"context"
	"strings"
	"testing"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/batch"
	"agentc.dev/agentc/runtime/internal/replytest"
	"agentc.dev/agentc/runtime/testmodel"
)

// denseLines is n lines of about size bytes each, every one an input of
// size/2 values: decoding and checking one holds a hundred times its
// bytes.
func denseLines(n, size int) string {
	line := `{"id":1,"pad":[` + strings.Repeat("0,", size/2) + `0]}` + "\n"
	return strings.Repeat(line, n)
}

// TestDenseLinesRead: whoever writes a batch's lines cannot make it hold
// Parallel times what one dense line's reading holds. Eight lines of
// 1 MiB, each half a million values, run eight at once: their inputs are
// read one at a time, so the batch's heap stays near one line's (eight
// times it before).
func TestDenseLinesRead(t *testing.T) {
	r, err := agentrt.New(echoPlan(t), agentrt.Options{Model: &testmodel.Model{}, Provider: "test"})
	if err != nil {
		t.Fatal(err)
	}
	peak := func(n, parallel int) uint64 {
		in := denseLines(n, 1<<20)
		stop := replytest.WatchHeap()
		sum, err := batch.New(r, batch.Options{Parallel: parallel}).Run(context.Background(), strings.NewReader(in), func(batch.Result) error { return nil })
		heap := stop()
		if err != nil || sum.Done != n || sum.Failed != 0 {
			t.Fatalf("err %v, summary %+v", err, sum)
		}
		return heap
	}
	one, eight := peak(1, 8), peak(8, 8)
	t.Logf("heap: one line %d MiB, eight at once %d MiB", one>>20, eight>>20)
	if eight > 4*one {
		t.Errorf("eight dense lines at once held %d MiB, one %d MiB", eight>>20, one>>20)
	}
}
