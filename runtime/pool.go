package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"agentc.dev/agentc/runtime/journal"
	"agentc.dev/agentc/runtime/tokencount"
)

// Pool is a token allowance shared by many runs, which may run
// concurrently. Before each model call it sends, a run reserves the call's
// worst case, its input's count and its output allowance (see InputTokens
// and Reserve); after the call the reservation
// is settled to the tokens the call used. Calls in flight therefore never
// take the pool below zero: a call that does not fit waits for calls in
// flight to settle, and is refused, ending its run with the token_budget
// bound, once nothing in flight could make room. Calls a journal serves
// cost nothing and draw nothing from the pool. The zero Pool is dry.
type Pool struct {
	mu       sync.Mutex
	limit    int64
	spent    int64 // settled
	held     int64 // reserved by calls in flight
	inflight int
	queue    []*poolWaiter // first come, first served
	waiting  func()        // the tests': called, p.mu held, when a reservation starts to wait
}

// poolWaiter is a reservation waiting its turn.
type poolWaiter struct {
	n    int64 // the worst case; with rest, the least it may be
	rest bool
	done chan struct{} // closed once res or err is set
	res  *Reservation
	err  error
}

// NewPool returns a pool of tokens.
func NewPool(tokens int64) *Pool { return &Pool{limit: tokens} }

// Remaining returns the tokens left once the calls in flight have
// settled, counting none of what they hold; zero or less means the pool
// is dry.
func (p *Pool) Remaining() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.limit - p.spent
}

// Spent returns the tokens the settled calls used.
func (p *Pool) Spent() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.spent
}

// Reserved returns the tokens the calls in flight hold.
func (p *Pool) Reserved() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held
}

// PoolState is a pool's books at one moment.
type PoolState struct {
	Limit    int64 // the pool's tokens
	Spent    int64 // settled
	Held     int64 // reserved by the calls in flight
	InFlight int
}

// State returns the pool's books, read at one moment.
func (p *Pool) State() PoolState {
	p.mu.Lock()
	defer p.mu.Unlock()
	return PoolState{Limit: p.limit, Spent: p.spent, Held: p.held, InFlight: p.inflight}
}

func (p *Pool) dry() bool { return p.Remaining() <= 0 }

// PoolError is a reservation the pool can never grant: what it asks for
// exceeds what is left even if every call in flight used nothing.
type PoolError struct {
	Need int64 // the call's worst case; for a call without max_output_tokens, its input's
	Left int64 // what is left once the calls in flight settle
	Rest bool  // the call has no output bound and reserves all that is left
}

func (e *PoolError) Error() string {
	if e.Rest {
		return fmt.Sprintf("the shared token pool has %d tokens left, fewer than the call's input may take (%d)", e.Left, e.Need)
	}
	return fmt.Sprintf("the shared token pool has %d tokens left, fewer than the call may use (%d: its input's count plus max_output_tokens)", e.Left, e.Need)
}

// Reservation is tokens of a pool held by one call in flight.
type Reservation struct {
	p    *Pool
	n    int64
	once sync.Once
}

// Tokens returns the tokens the reservation holds.
func (r *Reservation) Tokens() int64 { return r.n }

// Reserve holds n tokens, a call's worst case, until Settle. When they
// are not free it waits, first come first served, while calls in flight
// hold what it needs; it fails with a *PoolError at once when n exceeds
// what is left even if they all used nothing, and with ctx's error when
// ctx ends first.
func (p *Pool) Reserve(ctx context.Context, n int64) (*Reservation, error) {
	return p.reserve(ctx, &poolWaiter{n: max(n, 1)})
}

// ReserveRest holds everything left, for a call with no bound on its
// output: it waits until no other call is in flight, so such calls go one
// at a time, and fails with a *PoolError when less than atLeast (the
// call's input count) is left. The pool's guarantee then rests on the
// reply fitting in what was left.
func (p *Pool) ReserveRest(ctx context.Context, atLeast int64) (*Reservation, error) {
	return p.reserve(ctx, &poolWaiter{n: max(atLeast, 1), rest: true})
}

func (p *Pool) reserve(ctx context.Context, w *poolWaiter) (*Reservation, error) {
	w.done = make(chan struct{})
	p.mu.Lock()
	p.queue = append(p.queue, w)
	p.grant()
	if p.waiting != nil && w.res == nil && w.err == nil {
		p.waiting()
	}
	p.mu.Unlock()
	select {
	case <-w.done:
		return w.res, w.err
	case <-ctx.Done():
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-w.done:
		// Granted as ctx ended: the call is not made, so it goes back.
		if w.res != nil {
			p.release(w.res.n, 0)
		}
	default:
		for i, q := range p.queue {
			if q == w {
				p.queue = append(p.queue[:i], p.queue[i+1:]...)
				break
			}
		}
		p.grant() // those behind it may fit
	}
	return nil, ctx.Err()
}

// grant serves the queue from its head as far as what is free allows;
// it refuses a head that can never fit. p.mu is held.
func (p *Pool) grant() {
	for len(p.queue) > 0 {
		w := p.queue[0]
		n, err, wait := PoolRule(p.limit, p.spent, p.held, p.inflight, w.n, w.rest)
		if wait {
			return // it waits for calls in flight to settle
		}
		if err != nil {
			w.err = err
		} else {
			w.res = &Reservation{p: p, n: n}
			p.held += n
			p.inflight++
		}
		p.queue = p.queue[1:]
		close(w.done)
	}
}

// PoolRule is a pool's rule for the reservation at the head of its
// queue: of limit tokens, spent settled, held by inflight calls in
// flight, a call asks for n (with rest, all that is left, n being the
// least it may be). It grants the tokens returned; or refuses, when n
// exceeds what is left even if the calls in flight used nothing; or
// says the call waits, while they hold what it needs (a call asking for
// all that is left waits until none is in flight). A host that keeps a
// pool elsewhere (a durable workflow) keeps it by the same rule.
func PoolRule(limit, spent, held int64, inflight int, n int64, rest bool) (grant int64, refuse *PoolError, wait bool) {
	left := limit - spent
	switch {
	case n > left:
		return 0, &PoolError{Need: n, Left: left, Rest: rest}, false
	case rest && inflight == 0:
		return left, nil, false
	case !rest && n <= left-held:
		return n, nil, false
	}
	return 0, nil, true
}

// release gives back n reserved tokens, used of which were spent. p.mu is
// held.
func (p *Pool) release(n, used int64) {
	p.held -= n
	p.inflight--
	p.spent += used
	p.grant()
}

// Settle ends the reservation: the pool is charged the tokens the call
// used (0 for a call that failed without usage) and the rest is free
// again. A call is charged no more than it held, whatever its provider
// reports, so the pool never goes below zero. Only the first Settle
// counts.
func (r *Reservation) Settle(used int) {
	r.once.Do(func() {
		r.p.mu.Lock()
		defer r.p.mu.Unlock()
		r.p.release(r.n, min(max(int64(used), 0), r.n))
	})
}

// Per-request allowances of InputBound, in tokens: what a provider adds
// to each message, tool call and tool (role markers, separators, the JSON
// keys it may render them with) and to a request (the template its tools
// or answer format are rendered into; Anthropic documents up to 346
// tokens of system prompt for tool use).
const (
	boundPerPart    = 64
	boundPerRequest = 512
)

// InputBound is a ceiling on the input tokens of a request, whatever
// model it goes to: one token per byte of the text it sends (messages,
// tool calls, tool specs and the answer's schema), since every token of
// the byte-level tokenisers providers use covers at least one byte, plus
// generous allowances per message, call and tool and per request. A
// provider reporting more input than this is not believed (see counted).
// It allocates nothing.
func InputBound(req *Request) int {
	n := 0
	for i := range req.Messages {
		n += messageBound(&req.Messages[i])
	}
	return n + requestBound(req)
}

// inputBound is InputBound, the messages' share kept in c, which measures
// only the messages it has not seen (see convSizes.of): a run's rounds
// add what their new messages add.
func inputBound(req *Request, c *convSizes) int {
	n := 0
	if len(req.Messages) > 0 {
		c.of(req.Messages)
		n = c.bound
	}
	return n + requestBound(req)
}

// requestBound is InputBound's share of what a request sends but its
// messages: the allowance per request, its tools and its answer.
func requestBound(req *Request) int {
	n := boundPerRequest
	for _, t := range req.Tools {
		n += boundPerPart + len(t.Name) + len(t.Description) + len(t.Schema)
	}
	if a := req.Answer; a != nil {
		n += boundPerPart + len(a.Name) + len(a.Description) + len(a.Schema)
	}
	return n
}

// messageBound is a message's share of InputBound.
func messageBound(m *Message) int {
	n := boundPerPart + len(m.Role) + len(m.Content) + len(m.ToolCallID) + len(m.Name)
	for _, p := range m.Parts {
		n += boundPerPart + len(p.Text)
		if p.File != nil {
			n += fileBound(p.File)
		}
	}
	for _, c := range m.ToolCalls {
		n += boundPerPart + len(c.ID) + len(c.Name) + len(c.Arguments)
	}
	return n
}

// InputTokens counts the input tokens of a request to a provider's model
// (req.Model), what a call reserves in a pool before its output
// allowance: every text it sends (messages, tool calls, tool specs, the
// answer's name, description and schema), counted by the model's
// tokeniser where one is public and else a token a byte (package
// tokencount), plus what the provider adds per message, call, tool and
// request. Where the tokeniser is the model's the count is the provider's
// but for those allowances, which are upper bounds; elsewhere it is
// several times the real count. For the test model it is what the test
// model charges (EstimateUsage). docs/tokens.md gives the figures.
func InputTokens(provider string, req *Request) int {
	if provider == "test" {
		return EstimateUsage(req, Message{}).Input
	}
	c := tokencount.For(provider, req.Model)
	p := c.Profile()
	n := p.Reply
	for i := range req.Messages {
		n += messageTokens(c, &p, &req.Messages[i])
	}
	return n + toolsTokens(c, &p, req.Tools) + answerTokens(c, &p, req.Answer)
}

// countText is tokencount.Counter.Text, what InputTokens counts every
// text with; a test counts the texts a run counts through it.
var countText = tokencount.Counter.Text

// messageTokens is a message's share of InputTokens.
func messageTokens(c tokencount.Counter, p *tokencount.Profile, m *Message) int {
	n := p.Message + countText(c, string(m.Role)) + countText(c, m.Content) + countText(c, m.ToolCallID) + countText(c, m.Name)
	for _, part := range m.Parts {
		n += countText(c, part.Text)
		if part.File != nil {
			n += fileTokens(part.File)
		}
	}
	for _, tc := range m.ToolCalls {
		n += p.Call + countText(c, tc.ID) + countText(c, tc.Name) + countText(c, string(tc.Arguments))
	}
	return n
}

// messageOver is how far messageTokens may count m above the least its
// texts hold by the model's tokeniser: its files' coarse counts, and the
// texts counted a token a byte for their length (see leastText).
func messageOver(m *Message) int {
	n := textOver(string(m.Role)) + textOver(m.Content) + textOver(m.ToolCallID) + textOver(m.Name)
	for _, part := range m.Parts {
		n += textOver(part.Text)
		if part.File != nil {
			n += fileTokens(part.File)
		}
	}
	for _, tc := range m.ToolCalls {
		n += textOver(tc.ID) + textOver(tc.Name) + textOver(string(tc.Arguments))
	}
	return n
}

// textOver is how far an exact counter's count of s may pass the least s
// holds: a text past tokencount.Whole is counted a token a byte.
func textOver(s string) int {
	if len(s) <= tokencount.Whole {
		return 0
	}
	return len(s) - len(s)/tokencount.MaxTokenBytes
}

// leastText is the fewest tokens s holds by c, an exact counter: its
// count, or for a text counted a token a byte, a token for each
// MaxTokenBytes.
func leastText(c tokencount.Counter, s string) int {
	return countText(c, s) - textOver(s)
}

// toolsTokens is the share of InputTokens of the tools a request offers.
func toolsTokens(c tokencount.Counter, p *tokencount.Profile, tools []ToolSpec) int {
	if len(tools) == 0 {
		return 0
	}
	n := p.Tools
	for _, t := range tools {
		n += p.Tool + countText(c, t.Name) + countText(c, t.Description) + countText(c, string(t.Schema))
	}
	return n
}

// answerTokens is the share of InputTokens of a request's answer format.
func answerTokens(c tokencount.Counter, p *tokencount.Profile, a *AnswerFormat) int {
	if a == nil {
		return 0
	}
	return p.Tool + countText(c, a.Name) + countText(c, a.Description) + countText(c, string(a.Schema))
}

// convTokens keeps InputTokens' count of the first messages of a run's
// conversation, for one counter, and of the tool sets its requests
// offered, as convSizes keeps their sizes: the conversation is only ever
// appended to, so a round counts its new messages alone, however often
// it counts a request (the answer reserve counts two every round).
type convTokens struct {
	counter tokencount.Counter
	n, sum  int // the messages counted, and their tokens
	// over is how far sum may pass the least the messages hold, where
	// the counter is the model's tokeniser: the files, counted coarsely,
	// and the texts past tokencount.Whole, counted a token a byte.
	over  int
	tools []toolsCount
}

// toolsCount is the tokens of a tool set, by the slice that holds it (see
// toolsJSON).
type toolsCount struct {
	first  *ToolSpec
	n      int
	tokens int
}

// inputTokens is InputTokens(x.provider, req), counting only what earlier
// counts of the run's conversation have not.
func (x *run) inputTokens(req *Request) int {
	if x.provider == "test" {
		return estimateUsage(req, Message{}, &x.sizes).Input
	}
	return x.counts.of(tokencount.For(x.provider, req.Model), req)
}

// of returns InputTokens of req counted with c; req's messages must begin
// with those counted before, unless they are fewer or c is another
// counter (a fallback's model), when all are counted again.
func (t *convTokens) of(c tokencount.Counter, req *Request) int {
	if c != t.counter || len(req.Messages) < t.n {
		*t = convTokens{counter: c}
	}
	p := c.Profile()
	for i := t.n; i < len(req.Messages); i++ {
		t.sum += messageTokens(c, &p, &req.Messages[i])
		t.over += messageOver(&req.Messages[i])
	}
	t.n = len(req.Messages)
	return p.Reply + t.sum + t.toolsOf(c, &p, req.Tools) + answerTokens(c, &p, req.Answer)
}

// toolsOf is toolsTokens, each tool set counted once.
func (t *convTokens) toolsOf(c tokencount.Counter, p *tokencount.Profile, tools []ToolSpec) int {
	if len(tools) == 0 {
		return 0
	}
	first := &tools[0]
	for _, k := range t.tools {
		if k.first == first && k.n == len(tools) {
			return k.tokens
		}
	}
	n := toolsTokens(c, p, tools)
	if len(t.tools) == maxToolSets {
		t.tools = t.tools[1:]
	}
	t.tools = append(t.tools, toolsCount{first: first, n: len(tools), tokens: n})
	return n
}

// live reports whether the model call at k will be made rather than
// served from the run's journal: only a live call draws on the pool.
func (x *run) live(k journal.Key) bool {
	j := x.journal
	switch {
	case j == nil:
		return true
	case j.Replay:
		return false
	case j.Recorded == nil:
		return true
	}
	e, ok := j.Recorded.Lookup(k)
	return !ok || j.remakes(k, e) // a failed call the run ended on is made again
}

// reserve reserves a live model call's worst case in the pool, waiting
// for room; it reports whether the call may go, and else has ended the
// run: the pool cannot hold the call, or the wait was interrupted or
// outlived the deadline.
func (x *run) reserve(k journal.Key, round int, req *Request) (*Reservation, bool) {
	p := x.opts.Pool
	if p == nil || !x.live(k) {
		return nil, true
	}
	in := int64(x.inputTokens(req))
	var res *Reservation
	var err error
	if out := req.MaxOutputTokens; out > 0 {
		res, err = p.Reserve(x.runCtx, in+int64(out))
	} else {
		res, err = p.ReserveRest(x.runCtx, in)
	}
	var pe *PoolError
	switch {
	case err == nil:
		return res, true
	case errors.As(err, &pe):
		msg := pe.Error()
		if round == 1 {
			msg += "; the run was refused before it sent anything"
		}
		x.end(OutcomeError, BoundTokenBudget, msg)
	case x.interrupted():
	default:
		x.end(OutcomeError, BoundDeadline, x.deadlineText("while the call waited for the shared token pool", x.pastDeadline()))
		x.markDeadline(round)
	}
	return nil, false
}

// settle ends a model call's reservation at the tokens it used; a call
// made without one (served from the journal, or no pool) changes nothing.
func (x *run) settle(res *Reservation, used Usage) {
	if res != nil {
		res.Settle(used.Total())
	}
}

// Tokens of files, which no tokeniser counts here: a coarse estimate for
// reserving (fileTokens), and a bound past which a provider's count is not
// believed (fileBound). docs/files.md gives the figures.
const (
	imageTokens      = 1600  // the most either provider charges for an image at its default size
	imageTokensBound = 10000 // past any provider's charge for one image
)

func fileTokens(f *File) int {
	switch {
	case strings.HasPrefix(f.MediaType, "image/"):
		return imageTokens
	case f.MediaType == "application/pdf":
		// A page is read as text and as an image: a page's image and a
		// token for every 16 bytes of the file.
		return imageTokens + int(f.Size/16)
	}
	return int(f.Size/2) + 1
}

func fileBound(f *File) int {
	switch {
	case strings.HasPrefix(f.MediaType, "image/"):
		return imageTokensBound
	case f.MediaType == "application/pdf":
		// Compressed text expands, and each page is an image too.
		return imageTokensBound + int(min(f.Size, 1<<40)*4)
	}
	return int(min(f.Size, 1<<40)) + boundPerPart
}
