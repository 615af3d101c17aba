// Package batch runs one agent over many inputs: JSON lines in, one result
// per input out, in input order. A bounded number of runs go at once, and
// a bounded number of results wait for a slower earlier one, so memory
// stays flat however many inputs there are. Each item may keep a journal
// of its own (Journals), so a batch that was interrupted or killed is run
// again paying for nothing twice, and replayed offline.
package batch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/internal/leaf/jsonshape"
	"agentc.dev/agentc/internal/leaf/userfile"
	agentrt "agentc.dev/agentc/runtime"
)

// DefaultParallel is how many runs go at once unless Options says: enough
// to hide a provider's latency, few enough to stay under the rate limits
// of an ordinary account.
const DefaultParallel = 4

// MaxParallel bounds how many runs go at once: past it, runs only wait on
// each other and on the provider's rate limits. A batch on Temporal holds
// its runs to it too: the server refuses a workflow more than 2,000
// children going.
const MaxParallel = 1024

// DefaultMaxLine is the longest input line, in bytes: a single run's
// largest input.
const DefaultMaxLine = 8 << 20

// MaxReading bounds the inputs a batch reads at once, by their weight
// (jsonshape.Weight): reading an input (its files put in the store, its
// JSON decoded and checked against the input schema) holds many times its
// bytes, an 8 MiB line of zeros about 670 MB, and Parallel runs reading
// such lines together held Parallel times that. A run holds its share
// until it has read its input; an input heavier than the bound is read
// alone.
const MaxReading = 32 << 20

// Options configure a Batch.
type Options struct {
	// Parallel is how many runs go at once; 0 means DefaultParallel.
	Parallel int
	// Journals, when set, keeps one journal per item.
	Journals *Journals
	// Events, when set, receives every event of every item's run, with
	// the item's index, from the goroutine running it.
	Events func(index int, e agentrt.Event)
	// Notes, when set, receives what the batch says about its journals
	// (an input changed since its journal was recorded), one line each.
	Notes func(string)
	// MaxLine bounds an input line, in bytes; 0 means DefaultMaxLine.
	MaxLine int
	// Prepare, when set, makes an item's input of its line (puts the
	// files it names in the run's file store); an error is the item's,
	// a bad input.
	Prepare func(line []byte) ([]byte, error)
	// Items, when set, reads each line as an item rather than as an
	// input: {"input": …, "model": "PROVIDER:MODEL", "id": "…"}, model
	// and id optional. Each result then names the model that ran
	// (Result.Model) and repeats the id.
	Items bool
	// RunnerFor returns the runner of an item line that names a model
	// (Options.Items): the plan made for that model, sharing the batch
	// runner's tools. Its error is the item's, a bad input. It is called
	// from several goroutines at once. Nil refuses every item naming a
	// model.
	RunnerFor func(model string) (*agentrt.Runner, error)
}

// Result is the outcome of one item: a line of the batch's output.
type Result struct {
	// Index is the item's place among the batch's items, from 0; Line is
	// its line in the input, from 1 (blank lines are not items).
	Index int `json:"index"`
	Line  int `json:"line"`
	// ID is the item line's id (Options.Items), repeated.
	ID string `json:"id,omitempty"`
	// Model is the model an item line ran against (Options.Items), as
	// PROVIDER:MODEL, or test; empty for a line that did not run.
	Model   string          `json:"model,omitempty"`
	Outcome string          `json:"outcome"`
	Bound   string          `json:"bound"`
	Answer  json.RawMessage `json:"answer,omitempty"`
	Error   string          `json:"error,omitempty"`
	Usage   agentrt.Usage   `json:"usage"`
	// Report is the item's run report; for an input line that was not
	// run (not JSON, failing the input schema) it holds only the outcome
	// and the error.
	Report *agentrt.Report `json:"-"`
	bad    bool            // the line is not an input
}

// Progress is a batch's counts so far.
type Progress struct {
	Read     int // items read from the input
	InFlight int // items running
	Done     int // items with a result, failed ones included
	Failed   int // items whose outcome is error, or that tripped a bound
	// Tokens is the usage of the items done; Paid the part
	// sent to a provider by this batch (the rest was served from
	// journals).
	Tokens, Paid int64
}

// Summary is what a batch did, once it is over.
type Summary struct {
	Progress
	// BadLines counts the items whose line was not an input (not JSON,
	// failing the input schema, too long).
	BadLines int
	// Interrupted says the context ended the batch before every item ran.
	Interrupted bool
	Duration    time.Duration
	// Cost is what the items' runs cost, in input order's sum.
	Cost agentrt.Cost
}

// Batch runs a runner over inputs.
type Batch struct {
	r    *agentrt.Runner
	fn   RunFunc // instead of r
	opts Options

	read, inflight, done, failed atomic.Int64
	tokens, paid                 atomic.Int64
	reading                      *semaphore.Weighted // MaxReading
}

// New returns a batch of the runner's plan. The runner's own events and
// journal are replaced by the batch's, per item.
func New(r *agentrt.Runner, opts Options) *Batch {
	if opts.Parallel <= 0 {
		opts.Parallel = DefaultParallel
	}
	if opts.MaxLine <= 0 {
		opts.MaxLine = DefaultMaxLine
	}
	return &Batch{r: r, opts: opts, reading: semaphore.NewWeighted(MaxReading)}
}

// RunFunc runs one item's input somewhere other than this process (a
// Temporal worker) and returns its report. index and line name the item.
// An error is the item's: an *agentrt.InputError counts the item among
// the bad input lines.
type RunFunc func(ctx context.Context, index, line int, input json.RawMessage) (*agentrt.Report, error)

// NewFunc returns a batch that runs each item with run. It keeps no
// journals (Options.Journals is ignored) and has no events of its own:
// where run runs, they are kept.
func NewFunc(run RunFunc, opts Options) *Batch {
	b := New(nil, opts)
	b.fn, b.opts.Journals, b.opts.Events = run, nil, nil
	return b
}

// Progress returns the counts so far; it may be called at any time, from
// any goroutine.
func (b *Batch) Progress() Progress {
	return Progress{Read: int(b.read.Load()), InFlight: int(b.inflight.Load()), Done: int(b.done.Load()),
		Failed: int(b.failed.Load()), Tokens: b.tokens.Load(), Paid: b.paid.Load()}
}

// item is one input of the batch.
type item struct {
	index, line int
	input       []byte
	err         string // why the line is not an input
	model, id   string // an item line's (Options.Items)
	itemLine    bool   // the line is an item (Options.Items)
}

// what names what a journal of the item is recorded for.
func (it item) what() string {
	if it.itemLine {
		return "input or model"
	}
	return "input"
}

// Run reads JSON lines from in, one input a line, runs the runner on each,
// Parallel at once, and passes each result to out in input order, from the
// goroutine that called Run. A blank line is not an item. A line that is
// not an input is that item's error, never the batch's. At most four times
// Parallel items are read ahead of the first whose result is not out yet.
// When ctx ends, no more items start; those running end interrupted, and
// out has the results of every item that started. Run then returns
// without waiting for a read of in that is blocked (a pipe its writer
// holds open): that read's goroutine ends when the read returns, reading
// no further. The error is the input's (unreadable), a journal
// directory's, or out's.
func (b *Batch) Run(ctx context.Context, in io.Reader, out func(Result) error) (Summary, error) {
	started := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if j := b.opts.Journals; j != nil && j.byIndex == nil {
		if err := j.Open(); err != nil {
			return Summary{}, err
		}
		defer j.Close()
	}
	window := make(chan struct{}, 4*b.opts.Parallel)
	work := make(chan item)
	results := make(chan Result)
	readDone := make(chan error, 1) // sent before work is closed
	go func() {
		defer close(work)
		readDone <- b.readItems(ctx, in, window, work)
	}()
	var wg sync.WaitGroup
	for range b.opts.Parallel {
		wg.Go(func() {
			for {
				var it item
				select {
				case next, ok := <-work:
					if !ok {
						return
					}
					it = next
				case <-ctx.Done():
					// Not waiting for the reader: a read that ctx
					// cannot interrupt (a pipe held open, written no
					// more) must not hold a stopped batch.
					return
				}
				read, err := b.startReading(ctx, it)
				if err != nil {
					results <- Result{Index: it.index, Line: it.line, Report: nil} // not started
					continue
				}
				results <- b.runItem(ctx, it, read)
			}
		})
	}
	go func() {
		wg.Wait()
		close(results)
	}()
	var sum Summary
	var outErr error
	pending := map[int]Result{}
	next := 0
	for res := range results {
		pending[res.Index] = res
		for {
			r, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			<-window
			if r.Report == nil || outErr != nil {
				continue // not started, or out failed
			}
			sum.count(r)
			if err := out(r); err != nil {
				outErr = err
				cancel()
			}
		}
	}
	var readErr error
	select {
	case readErr = <-readDone:
	default: // still in a read, ctx ended: it reads no more once it returns
	}
	sum.Progress = b.Progress()
	sum.Interrupted = ctx.Err() != nil && outErr == nil
	sum.Duration = time.Since(started)
	switch {
	case outErr != nil:
		return sum, outErr
	case readErr != nil:
		return sum, readErr
	}
	return sum, nil
}

func (s *Summary) count(r Result) {
	s.Cost = s.Cost.Add(r.Report.Cost)
	if r.bad {
		s.BadLines++
	}
}

// readItems reads the input's lines into items, each after taking a place
// in the window, until the input ends or ctx does.
func (b *Batch) readItems(ctx context.Context, in io.Reader, window chan struct{}, work chan<- item) error {
	err := Scan(in, b.opts.MaxLine, func(it Item) error {
		select {
		case window <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		next := item{index: it.Index, line: it.Line, input: it.Input, err: it.Err}
		next.itemLine = b.opts.Items
		if b.opts.Items && next.err == "" {
			var err error
			if next.input, next.model, next.id, err = parseItem(it.Input); err != nil {
				next.input, next.err = nil, fmt.Sprintf("line %d: %v", it.Line, err)
			}
		}
		// Counted before it is handed on: a worker may take it and end
		// its run before this goroutine runs again, and an item that
		// ended was read.
		b.read.Add(1)
		select {
		case work <- next:
			return nil
		case <-ctx.Done():
			b.read.Add(-1)
			return ctx.Err()
		}
	})
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	return err
}

// Item is one item of a batch's input, as Scan reads it.
type Item struct {
	// Index is the item's place among the batch's items, from 0; Line its
	// line in the input, from 1.
	Index, Line int
	// Input is the line, without its end; nil for a line too long.
	Input []byte
	// Err says why the line is not an input: too long, or not one JSON
	// value (with its column).
	Err string
}

// Scan reads a batch's input as Run does, calling fn with each item in
// order: blank lines are not items, and a line longer than maxLine (0:
// DefaultMaxLine) is an item without input. fn's error ends the scan and
// is returned; so is a read error.
func Scan(in io.Reader, maxLine int, fn func(Item) error) error {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	br := bufio.NewReaderSize(in, 64<<10)
	index := 0
	for line := 1; ; line++ {
		text, long, err := readLine(br, maxLine)
		if len(bytes.TrimSpace(text)) > 0 || long {
			it := Item{Index: index, Line: line, Input: text}
			switch {
			case long:
				it.Input, it.Err = nil, fmt.Sprintf("line %d: the input is longer than the %d bytes a line may hold", line, maxLine)
			default:
				if cerr := checkJSON(text); cerr != nil {
					it.Err = fmt.Sprintf("line %d, %v", line, cerr)
				}
			}
			if ferr := fn(it); ferr != nil {
				return ferr
			}
			index++
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the batch's input at line %d: %w", line, err)
		}
	}
}

// Count returns how many items Scan would find in in, reading no further
// than Scan would (a line with no end within MaxSkip past maxLine ends
// the count, as it ends the scan, and counts) and keeping none of it. A
// host counts a file's items before running them, to show progress: a
// file of endless bytes (a sparse file of terabytes) was counted to its
// end before the batch started.
func Count(in io.Reader, maxLine int) int64 {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	br := bufio.NewReaderSize(in, 64<<10)
	var n int64
	read, blank, last := 0, true, byte(0)
	for {
		frag, err := br.ReadSlice('\n')
		if read += len(frag); read > maxLine+MaxSkip {
			return n + 1
		}
		blank = blank && len(bytes.TrimSpace(frag)) == 0
		if errors.Is(err, bufio.ErrBufferFull) {
			last = frag[len(frag)-1]
			continue
		}
		// The line's length without its end (\n or \r\n), as Scan keeps it.
		length := read
		if k := len(frag); k > 0 && frag[k-1] == '\n' {
			length--
			if k > 1 && frag[k-2] == '\r' || k == 1 && last == '\r' {
				length--
			}
		}
		if !blank || length > maxLine {
			n++
		}
		if err != nil {
			return n
		}
		read, blank, last = 0, true, 0
	}
}

// MaxSkip is how far past the longest line kept a line is read for its
// end: a line with none within it (a device's endless bytes, a stream gone
// wrong) ends the batch, since the lines after it cannot be found.
const MaxSkip = 256 << 20

// readLine reads a line without its end (\n or \r\n); a line longer than
// max is read to its end but not kept, and long says so, unless its end is
// more than MaxSkip bytes on: that is an error.
func readLine(br *bufio.Reader, max int) (text []byte, long bool, err error) {
	read := 0
	for {
		frag, err := br.ReadSlice('\n')
		if read += len(frag); read > max+MaxSkip {
			return nil, true, fmt.Errorf("a line runs on past %s with no line end", userfile.Size(int64(max+MaxSkip)))
		}
		if !long {
			if len(text)+len(frag) > max+2 { // room for the line's end
				long, text = true, nil
			} else {
				text = append(text, frag...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		text = bytes.TrimSuffix(bytes.TrimSuffix(text, []byte("\n")), []byte("\r"))
		if !long && len(text) > max {
			long, text = true, nil
		}
		return text, long, err
	}
}

// startReading takes the item's share of the inputs read at once
// (MaxReading), waiting its turn, and returns what gives it back; the
// error is ctx's, which ended while it waited.
func (b *Batch) startReading(ctx context.Context, it item) (read func(), err error) {
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	w := min(jsonshape.Weight(it.input), MaxReading)
	if err := b.reading.Acquire(ctx, w); err != nil {
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { b.reading.Release(w) }) }, nil
}

// runItem runs one item and makes its result; read gives back its share
// of the inputs read at once, once its input is read.
func (b *Batch) runItem(ctx context.Context, it item, read func()) Result {
	b.inflight.Add(1)
	defer b.inflight.Add(-1)
	defer read()
	res := Result{Index: it.index, Line: it.line, ID: it.id}
	rep, r, bad := b.run(ctx, it, read)
	res.Report, res.bad = rep, bad
	if b.opts.Items && r != nil {
		res.Model = modelLabel(r, rep)
	}
	res.Outcome, res.Bound, res.Answer, res.Error, res.Usage = rep.Outcome, rep.Bound, rep.Answer, rep.Error, rep.Usage
	if res.Bound == "" {
		res.Bound = agentrt.BoundNone
	}
	b.done.Add(1)
	if res.Outcome != agentrt.OutcomeOK || res.Bound != agentrt.BoundNone {
		b.failed.Add(1)
	}
	return res
}

// lineKey is the key of an item's line in its run's context (LineOf).
type lineKey struct{}

// LineOf returns the line of the batch's input whose item ctx's run is (a
// run's approver is given it): 0 for a run of no batch. A person asked to
// approve a call of one of the items running at once is told which.
func LineOf(ctx context.Context) int {
	n, _ := ctx.Value(lineKey{}).(int)
	return n
}

// run runs an item, through its journal if the batch keeps them, and
// returns its report and the runner that ran it (nil when none did); an
// input that cannot run is a report of that error, and bad says so. read
// is called once the item's input is read here.
func (b *Batch) run(ctx context.Context, it item, read func()) (rep *agentrt.Report, r *agentrt.Runner, bad bool) {
	failed := func(msg string) *agentrt.Report {
		return &agentrt.Report{Outcome: agentrt.OutcomeError, Bound: agentrt.BoundNone, Error: msg}
	}
	if it.err != "" {
		return failed(it.err), nil, true
	}
	r = b.r
	if it.model != "" {
		var err error
		switch {
		case b.fn != nil || b.opts.RunnerFor == nil:
			err = fmt.Errorf("model %q: this batch runs every item against the agent's own model", it.model)
		default:
			r, err = b.opts.RunnerFor(it.model)
		}
		if err != nil {
			return failed(fmt.Sprintf("line %d: %v", it.line, err)), nil, true
		}
	}
	if b.opts.Prepare != nil {
		in, err := b.opts.Prepare(it.input)
		if err != nil {
			return failed(fmt.Sprintf("line %d: %v", it.line, err)), nil, true
		}
		it.input = in
	}
	if b.fn != nil {
		read() // the run reads its input where it runs
		rep, err := b.fn(ctx, it.index, it.line, it.input)
		if err != nil {
			var ie *agentrt.InputError
			return failed(fmt.Sprintf("line %d: %v", it.line, err)), nil, errors.As(err, &ie)
		}
		b.tokens.Add(int64(rep.Usage.Total()))
		b.paid.Add(int64(rep.UsagePaid.Total()))
		return rep, nil, false
	}
	ran := r
	r = r.WithInputRead(read)
	if b.opts.Events != nil {
		r = r.WithEvents(func(e agentrt.Event) { b.opts.Events(it.index, e) })
	} else {
		r = r.WithEvents(nil)
	}
	var ij *itemJournal
	missing := ""
	if j := b.opts.Journals; j != nil {
		var err error
		if ij, missing, err = j.item(it, ran.Plan(), b.opts.Notes); err != nil {
			return failed(fmt.Sprintf("line %d: %v", it.line, err)), nil, false
		}
	}
	rep, err := r.WithJournal(ij.runtime()).Run(context.WithValue(ctx, lineKey{}, it.line), it.input)
	ij.close(err != nil, b.opts.Notes)
	if err != nil {
		return failed(fmt.Sprintf("line %d: %v", it.line, err)), nil, true
	}
	if d := rep.Divergence; d != nil && missing != "" {
		d.Reason, d.Changes = missing, nil
		rep.Error = d.Error()
	}
	b.tokens.Add(int64(rep.Usage.Total()))
	b.paid.Add(int64(rep.UsagePaid.Total()))
	return rep, ran, false
}

// checkJSON reports a line that is not one JSON value, with the column
// where it stops being one, or that is not I-JSON (RFC 7493): duplicate
// member names, lone surrogates, a number no double holds exactly. A
// journal records and digests an input exactly and cannot hold such a
// one, so it is refused whether or not the batch records: recording never
// changes what an item does.
func checkJSON(line []byte) error {
	if json.Valid(line) {
		if _, err := digest.CanonicalExact(line); err != nil {
			return fmt.Errorf("not I-JSON (RFC 7493), which every input must be: %v", strings.TrimPrefix(err.Error(), "canonical JSON: "))
		}
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	var v json.RawMessage
	err := dec.Decode(&v)
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("column %d: not JSON: %v", column(line, se.Offset), se)
	case err != nil:
		return fmt.Errorf("column %d: not JSON: %v", column(line, int64(len(line))), err)
	}
	return fmt.Errorf("column %d: data after the JSON value", column(line, dec.InputOffset()+1))
}

// column is the column, from 1, of the byte at offset off (from 1) in line,
// counted in characters.
func column(line []byte, off int64) int {
	off = min(max(off, 1), int64(len(line))+1)
	return len(bytes.Runes(line[:off-1])) + 1
}
