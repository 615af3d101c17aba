package runcmd

import (
	"io"
	"os"
	"sync"
	"time"

	"github.com/vbauerster/cupwriter"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"agentc.dev/agentc/runtime/batch"
)

// IsTerminal reports whether w is a terminal. mpb's own console writer
// decides so, the same way for the bar as for this.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && cupwriter.New(f, false).IsTerminal()
}

// progress shows a batch's progress on stderr until stop.
type progress struct {
	stop func()
}

// startProgress shows a batch's progress: a bar on a terminal, redrawn as
// it goes; else, or when its runs may ask for approvals there (asks), a
// line every --progress-every; nothing with --quiet. total is the number
// of items, 0 when unknown.
func startProgress(e Env, f Flags, b *batch.Batch, total int64, asks bool) progress {
	switch {
	case f.quiet:
		return progress{stop: func() {}}
	case e.stderrTTY && !asks:
		return progressBar(e.rawStderr, e.aboveBar, b, total)
	case f.progressEvery == 0:
		return progress{stop: func() {}}
	}
	return progressLines(e.Stderr, f.progressEvery, b, total)
}

// progressLine is a batch's progress in words.
func progressLine(p batch.Progress, total int64, elapsed time.Duration) string {
	s := numbers.Sprintf("%d", p.Done)
	if total > 0 {
		s += numbers.Sprintf("/%d", total)
	}
	s += numbers.Sprintf(" done, %d failed, %d in flight, %d tokens", p.Failed, p.InFlight, p.Tokens)
	if secs := elapsed.Seconds(); secs > 0 && p.Done > 0 {
		rate := float64(p.Done) / secs
		s += numbers.Sprintf(", %.1f items/s", rate)
		if left := total - int64(p.Done); total > 0 && left > 0 {
			s += ", ETA " + time.Duration(float64(left)/rate*float64(time.Second)).Round(time.Second).String()
		}
	}
	return s
}

// progressLines prints a progress line every period until stop.
func progressLines(w io.Writer, period time.Duration, b *batch.Batch, total int64) progress {
	start := time.Now()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				io.WriteString(w, "agentc: batch: "+progressLine(b.Progress(), total, time.Since(start))+"\n")
			case <-done:
				return
			}
		}
	})
	return progress{stop: func() { close(done); wg.Wait() }}
}

// progressBar draws a bar on a terminal: items done of the total (a
// spinner when it is not known) and, beside it, the counts, tokens, rate
// and time left. Until stop, what is written to above goes above the bar:
// written to the terminal, it was drawn over at the bar's next redraw.
func progressBar(w io.Writer, above *aboveBar, b *batch.Batch, total int64) progress {
	start := time.Now()
	p := mpb.New(mpb.WithOutput(w), mpb.WithWidth(40), mpb.WithRefreshRate(150*time.Millisecond))
	above.set(p)
	counts := decor.Any(func(decor.Statistics) string {
		return progressLine(b.Progress(), total, time.Since(start))
	})
	var bar *mpb.Bar
	if total > 0 {
		bar = p.AddBar(total, mpb.PrependDecorators(decor.Name("batch ")), mpb.AppendDecorators(counts))
	} else {
		bar = p.AddSpinner(0, mpb.PrependDecorators(decor.Name("batch ")), mpb.AppendDecorators(counts))
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(150 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				bar.SetCurrent(int64(b.Progress().Done))
			case <-done:
				return
			}
		}
	})
	return progress{stop: func() {
		close(done)
		wg.Wait()
		bar.SetCurrent(int64(b.Progress().Done))
		bar.SetTotal(-1, true) // complete, wherever it stands
		p.Wait()
		above.set(nil)
	}}
}

// aboveBar writes to the terminal, or, while a bar is drawn on it, above
// the bar.
type aboveBar struct {
	term io.Writer
	mu   sync.Mutex
	bar  io.Writer
}

func (a *aboveBar) set(bar io.Writer) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.bar = bar
}

func (a *aboveBar) Write(p []byte) (int, error) {
	a.mu.Lock()
	bar := a.bar
	a.mu.Unlock()
	if bar != nil {
		// The bar's Write fails only once it is done: then the terminal.
		if n, err := bar.Write(p); err == nil {
			return n, nil
		}
	}
	return a.term.Write(p)
}
