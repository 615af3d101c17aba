package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"agentc.dev/agentc/runtime/tokencount"
)

// EstimateUsage is a local estimate of a turn's tokens: a quarter of the
// bytes of the JSON sent (messages and tools) and received (the
// message), at least 1 each. It is what the test model reports, and what
// a run counts when a provider reports usage that cannot be right.
func EstimateUsage(req *Request, msg Message) Usage { return estimateUsage(req, msg, &convSizes{}) }

// estimateUsage is EstimateUsage with the sizes of the conversation's
// messages kept in c, which a run's conversation, only ever appended to,
// extends: a round measures its new messages alone.
func estimateUsage(req *Request, msg Message, c *convSizes) Usage {
	bytes, files := c.of(req.Messages)
	in := bytes + len(c.toolsJSON(req.Tools))
	for _, t := range req.Tools {
		if len(t.Contract) > 0 {
			// Beside the schema sent, not sent itself.
			in -= len(`,"contract":`) + jsonSize(t.Contract)
		}
	}
	if req.Answer != nil {
		in += len(req.Answer.Schema)
	}
	msg.State = nil // not journaled (see of)
	return Usage{Input: tokens(in) + files, Output: tokens(jsonSize(msg))}
}

// jsonSize is the length of v's JSON.
func jsonSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0 // nothing in a Request fails to encode but a raw schema already checked
	}
	return len(b)
}

// convSizes are the JSON sizes and the files' tokens of the first
// messages of a conversation, and the JSON of the tool sets its requests
// offered.
type convSizes struct {
	sizes, files []int
	bytes, toks  int // their sums
	bound        int // the sum of the messages' messageBound
	tools        []toolsJSON
}

// toolsJSON is the JSON of a tool set, by the slice that holds it: a
// runner's tool sets are made once and never changed, so a run's rounds
// encode each once. The slice is held while it is kept, so its address
// names it alone.
type toolsJSON struct {
	first *ToolSpec
	n     int
	json  []byte
}

// maxToolSets bounds the tool sets a run keeps the JSON of: with and
// without the output tool, for each model of its chain.
const maxToolSets = 8

// toolsJSON returns the JSON of tools (null for none, as encoding/json
// writes a nil slice).
func (c *convSizes) toolsJSON(tools []ToolSpec) []byte {
	if len(tools) == 0 {
		if tools == nil {
			return []byte("null")
		}
		return []byte("[]")
	}
	first := &tools[0]
	for _, t := range c.tools {
		if t.first == first && t.n == len(tools) {
			return t.json
		}
	}
	b, err := json.Marshal(tools)
	if err != nil {
		return nil // nothing in a tool set fails to encode but a raw schema already checked
	}
	if len(c.tools) == maxToolSets {
		c.tools = c.tools[1:]
	}
	c.tools = append(c.tools, toolsJSON{first: first, n: len(tools), json: b})
	return b
}

// of returns the JSON size of msgs, as one array, and the tokens of the
// files they carry; msgs must begin with the messages c has measured.
func (c *convSizes) of(msgs []Message) (bytes, files int) {
	if msgs == nil {
		return len("null"), 0
	}
	if len(msgs) < len(c.sizes) {
		*c = convSizes{}
	}
	for _, m := range msgs[len(c.sizes):] {
		// The provider's state is not counted: a journal does not keep
		// it, and a replay must count as the run did.
		m.State = nil
		n, f := jsonSize(m), 0
		for _, p := range m.Parts {
			if p.File != nil {
				f += fileTokens(p.File)
			}
		}
		c.sizes, c.files = append(c.sizes, n), append(c.files, f)
		c.bytes, c.toks = c.bytes+n, c.toks+f
		c.bound += messageBound(&m)
	}
	// "[", the messages with a comma between each two, "]".
	return 2 + c.bytes + max(len(msgs)-1, 0), c.toks
}

func tokens(bytes int) int { return max(1, (bytes+3)/4) }

// maxPlausible is more tokens than any one call has used: a count past it
// is an overflow or garbage (where an int has 32 bits, every count is
// below it).
const maxPlausible = min(1<<32, math.MaxInt)

// plausibleShare is how far below the local estimate a count may fall:
// tokenisers vary, but not by a factor of eight.
const plausibleShare = 8

// exactShare is how far below the model's own tokeniser's count (where
// agentc has it: exactUsage) a count may fall. That count is never below
// the one OpenAI's cookbook makes and at most half above it (35-45% above
// with tools, where the schema is counted as the JSON sent, and as exact
// without: TestInputTokensCookbook), so a provider's true count is at
// least two thirds of it; half leaves a margin below that. The local
// estimate's eighth cannot stand in for it: on token-dense text (base64,
// 0.69 tokens a byte) an eighth of a quarter of the bytes is a twentieth
// of the real count.
const exactShare = 2

// counted is the usage a run is charged for a turn: what the provider
// reported where it is plausible, and else the local estimate, so that a
// provider reporting nothing (or zero, a negative number, an overflow)
// cannot keep a token budget from ever running out; and never more than
// the call could have used (its input's bound, InputBound, and its
// max_output_tokens), so that a provider over-reporting cannot drain a
// budget or a shared pool past what was reserved. why says what was
// replaced or cut, empty when nothing was.
func counted(req *Request, resp *Response) (u Usage, why string) {
	return countedWith(req, resp, EstimateUsage(req, resp.Message), Usage{}, InputBound(req))
}

// CountedUsage is what a run charges for a turn by the local estimate
// alone (a run holds it to the model's tokeniser's count too where it has
// one): the usage the provider reported where it is plausible, else the
// estimate, within the call's bounds, and the attempts it answered and
// lost (Response.Retried). For a failed call (resp nil) it is what the
// failure says the call spent (SpentOf, RetriedOf), counted alike; zero
// when it says nothing. It is for a host that settles a call's tokens
// elsewhere (package pace).
func CountedUsage(req *Request, resp *Response, err error) Usage {
	var r Retried
	switch {
	case resp != nil && err == nil:
		r = resp.Retried
	case SpentOf(err) != (Usage{}):
		resp, r = &Response{Usage: SpentOf(err)}, RetriedOf(err)
	default:
		return RetriedUsage(req, RetriedOf(err))
	}
	u, _ := counted(req, resp)
	return u.Add(RetriedUsage(req, r))
}

// countedWith is counted with the turn's local estimate, the least the
// model's own tokeniser counts of it (exactUsage; zero where there is
// none) and its input's bound given. A count below half the tokeniser's
// is as implausible as one below an eighth of the estimate, and the turn
// is then counted at the larger of the two.
func countedWith(req *Request, resp *Response, est, exact Usage, bound int) (u Usage, why string) {
	u = resp.Usage
	var odd []string
	estimated, cut, tokeniser := false, false, false
	check := func(name string, got *int, want, least, most int) {
		switch {
		case *got < 0 || *got > maxPlausible || *got < want/plausibleShare:
			odd = append(odd, fmt.Sprintf("%s %d", name, *got))
			*got, estimated, tokeniser = min(max(want, least), most), true, tokeniser || least > want
		case *got < least/exactShare:
			odd = append(odd, fmt.Sprintf("%s %d, under half the %d the model's tokeniser counts", name, *got, least))
			*got, estimated, tokeniser = min(max(want, least), most), true, tokeniser || least > want
		case *got > most:
			odd = append(odd, fmt.Sprintf("%s %d, more than the call could use (%d)", name, *got, most))
			*got, cut = most, true
		}
	}
	outMost := maxPlausible
	if req.MaxOutputTokens > 0 {
		outMost = req.MaxOutputTokens
	} else if resp.MaxOutputTokens > 0 {
		// The provider's own default (Bedrock's, Anthropic's).
		outMost = resp.MaxOutputTokens
	}
	check("input", &u.Input, est.Input, exact.Input, bound)
	check("output", &u.Output, est.Output, exact.Output, outMost)
	if u.Cached < 0 || u.Cached > u.Input {
		u.Cached = 0
	}
	if u.CacheWrite < 0 || u.CacheWrite > u.Input-u.Cached {
		u.CacheWrite = 0
	}
	if len(odd) == 0 {
		return u, ""
	}
	return u, implausible(resp.Usage == (Usage{}), odd, estimated, cut, tokeniser, u)
}

// exactUsage is the least a turn's request and reply hold by the model's
// own tokeniser, where agentc has it (tokencount.Counter.Exact): the
// request's count (inputTokens) but for its files and its texts counted a
// token a byte (convTokens.over), and the reply's text and its calls'
// names and arguments (output tokens include reasoning besides). Zero
// where the tokeniser is not the model's, and in a run that counts as
// runs did before (WithUsageByBytes).
//
// Zero too in a run that does not count its requests with the model's
// tokeniser anyway, to reserve them in a pool (countsTokens): loading
// the tokeniser's vocabulary for this alone doubled the time of a
// one-call run (gpt-4o, 31 to 57 ms), and took 14 MiB more.
func (x *run) exactUsage(req *Request, msg Message) Usage {
	if x.provider == "test" || !x.countsTokens() || x.runCtx.Value(usageByBytesKey{}) != nil {
		return Usage{}
	}
	c := tokencount.For(x.provider, req.Model)
	if !c.Exact() {
		return Usage{}
	}
	in := x.inputTokens(req) - x.counts.over
	out := leastText(c, msg.Content)
	for _, p := range msg.Parts {
		out += leastText(c, p.Text)
	}
	for _, tc := range msg.ToolCalls {
		out += leastText(c, tc.Name) + leastText(c, string(tc.Arguments))
	}
	return Usage{Input: max(in, 0), Output: out}
}

// ExactUsage says whether a run made with o, without a journal, holds a
// provider's usage reports to the model's tokeniser's count (it does when
// it reserves its calls in a pool): what the header of a journal a host
// creates for the run says (journal.Header.ExactUsage). A host that
// writes the header before it makes its runner asks o.
func (o *Options) ExactUsage() bool { return o.Pool != nil }

// ExactUsage is Options.ExactUsage of r's options.
func (r *Runner) ExactUsage() bool { return r.opts.ExactUsage() }

// countsTokens says whether a run counts its requests with the model's
// tokeniser in any case: to reserve them in a pool. A run with a journal
// does as the journal's header says (exact_usage), so that its replay,
// with a pool or without, charges as the run did.
func (x *run) countsTokens() bool {
	switch j := x.journal; {
	case j != nil && j.Recorded != nil:
		return j.Recorded.Header.ExactUsage
	case j != nil && j.Writer != nil:
		return j.Writer.Header().ExactUsage
	}
	return x.Runner.ExactUsage()
}

type usageByBytesKey struct{}

// WithUsageByBytes returns a context in which a run holds a provider's
// usage report to the local estimate alone (an eighth of a quarter of the
// bytes), not to the model's own tokeniser's count: for a Temporal run
// started before the count was used, and a journal recorded before, whose
// outcome must replay as it was made.
func WithUsageByBytes(ctx context.Context) context.Context {
	return context.WithValue(ctx, usageByBytesKey{}, true)
}

// Held is u with each count held within what a turn could count: none
// below zero, which would give a budget back, nor past maxPlausible
// (2^32), and cached tokens and cache writes no more than the input
// holds. A tool's result claims the usage of the agent it ran (a nested
// agent's, counted by its own run), but a recorded result, or one made
// elsewhere (a Temporal activity that a client completed by its ID),
// claims what it likes; so does a journal's model call, which a reader
// shows (agentc view).
func (u Usage) Held() Usage {
	count := func(n int) int { return min(max(n, 0), maxPlausible) }
	h := Usage{Input: count(u.Input), Output: count(u.Output), Cached: count(u.Cached), CacheWrite: count(u.CacheWrite)}
	if h.Cached > h.Input {
		h.Cached = 0
	}
	if h.CacheWrite > h.Input-h.Cached {
		h.CacheWrite = 0
	}
	return h
}

// held is c with a price that is not a number of dollars at or above
// zero counted as nothing (see Usage.Held).
func (c Cost) held() Cost {
	if math.IsNaN(c.USD) || math.IsInf(c.USD, 0) || c.USD < 0 {
		c.USD = 0
	}
	return c
}

// implausible says why a turn's usage is not the provider's.
func implausible(none bool, odd []string, estimated, cut, tokeniser bool, u Usage) string {
	why := "the provider reported implausible usage ("
	if none {
		why = "the provider reported no usage ("
	}
	for i, s := range odd {
		if i > 0 {
			why += ", "
		}
		why += s
	}
	how := "counted from the request and response size"
	if tokeniser {
		how = "counted from the request and response by the model's tokeniser"
	}
	switch {
	case estimated && cut:
		how += " and cut to the call's bound"
	case cut:
		how = "counted at the call's bound"
	}
	return why + fmt.Sprintf("); %s: %d in, %d out", how, u.Input, u.Output)
}

// capped cuts a turn's usage to the tokens its pool reservation held, n,
// output first, and says so; a call that reserved everything a pool had
// left may use no more than that. why is empty when nothing was cut.
func capped(u Usage, n int64) (Usage, string) {
	if n <= 0 || int64(u.Total()) <= n {
		return u, ""
	}
	was := u
	over := int64(u.Total()) - n
	cutOut := min(over, int64(u.Output))
	u.Output -= int(cutOut)
	u.Input -= int(over - cutOut)
	u.Cached = min(u.Cached, u.Input)
	u.CacheWrite = min(u.CacheWrite, u.Input-u.Cached)
	return u, fmt.Sprintf("the provider reported %d tokens, more than the %d the call held in the shared pool; counted at the pool's reservation: %d in, %d out", was.Total(), n, u.Input, u.Output)
}

// SpentError is a model call's failure that came after a whole reply the
// provider bills for (its output cut at the token limit, a content
// filter's stop, a refusal): Usage is what the provider reported of it.
// A run charges it to the round, as it charges a reply.
type SpentError struct {
	Err   error
	Usage Usage
}

func (e *SpentError) Error() string { return e.Err.Error() }
func (e *SpentError) Unwrap() error { return e.Err }

// Spent returns the usage the provider reported of the failed call.
func (e *SpentError) Spent() Usage { return e.Usage }

// Spent wraps err, a failure after a reply the provider billed, with the
// usage it reported of that reply; with none reported, err as it is.
func Spent(err error, u Usage) error {
	if err == nil || u == (Usage{}) {
		return err
	}
	return &SpentError{Err: err, Usage: u}
}

// SpentOf returns what a failed model call spent: the usage of the first
// error in err's chain with a method Spent() Usage (a provider's
// SpentError, or the failure a journal or a Temporal activity recorded),
// zero when none says.
func SpentOf(err error) Usage {
	var s interface{ Spent() Usage }
	if errors.As(err, &s) {
		return s.Spent()
	}
	return Usage{}
}

// Retried counts a model call's attempts that the provider answered (a
// 2xx status: it took the request) and that then failed, a stream cut
// after its reply had come or a body that did not read: made again, or
// ending the call, they report no usage, yet the provider bills them.
type Retried struct {
	Attempts int `json:"attempts"`
	// Bytes is the reply they read: a whole body's bytes, a stream's
	// pieces of text and tool calls.
	Bytes int64 `json:"bytes"`
}

// RetriedError is a model call's failure after attempts the provider
// answered and billed (Retried).
type RetriedError struct {
	Err     error
	Retried Retried
}

func (e *RetriedError) Error() string { return e.Err.Error() }
func (e *RetriedError) Unwrap() error { return e.Err }

// RetriedAttempts returns the failed call's answered attempts.
func (e *RetriedError) RetriedAttempts() Retried { return e.Retried }

// WithRetried wraps err, a model call's failure, with the attempts the
// provider answered before it ended; with none, err as it is.
func WithRetried(err error, r Retried) error {
	if err == nil || r.Attempts <= 0 {
		return err
	}
	return &RetriedError{Err: err, Retried: r}
}

// RetriedOf returns the answered attempts a failed model call made: those
// of the first error in err's chain with a method RetriedAttempts()
// Retried (a provider's RetriedError, or the failure a journal or a
// Temporal activity recorded), zero when none says.
func RetriedOf(err error) Retried {
	var r interface{ RetriedAttempts() Retried }
	if errors.As(err, &r) {
		return r.RetriedAttempts()
	}
	return Retried{}
}

// retriedUsage is what a call's answered attempts that failed (Retried)
// are charged, as estimated: each the request's input as counted (the
// local estimate, or the model's tokeniser's count where the run has one,
// within the input's bound), and the reply they read as the estimate
// counts a reply's bytes, within the output the attempts could make. A
// journal's figures are as untrusted as the rest of it: past any count a
// call can reach, they are held there.
func (x *run) retriedUsage(req *Request, r Retried) Usage {
	if r.Attempts <= 0 {
		return Usage{}
	}
	est := estimateUsage(req, Message{}, &x.sizes)
	return retriedCharge(req, r, min(max(est.Input, x.exactUsage(req, Message{}).Input), inputBound(req, &x.sizes)))
}

// RetriedUsage is what r, a model call's answered attempts that failed,
// is charged by the local estimate alone (a run holds it to the model's
// tokeniser's count too where it has one): for a host that settles a
// call's reservation in a pool of its own.
func RetriedUsage(req *Request, r Retried) Usage {
	if r.Attempts <= 0 {
		return Usage{}
	}
	return retriedCharge(req, r, min(EstimateUsage(req, Message{}).Input, InputBound(req)))
}

// retriedCharge is what r is charged, each attempt in input tokens.
func retriedCharge(req *Request, r Retried, in int) Usage {
	n := min(r.Attempts, maxPlausible)
	outMost := maxPlausible
	if req.MaxOutputTokens > 0 {
		outMost = req.MaxOutputTokens
	}
	out := 0
	if r.Bytes > 0 {
		out = tokens(int(min(r.Bytes, int64(maxPlausible)*4)))
	}
	return Usage{Input: times(in, n), Output: min(out, times(outMost, n))}.Held()
}

// times is a×n for counts at least 0, held at maxPlausible.
func times(a, n int) int {
	if a > 0 && n > maxPlausible/a {
		return maxPlausible
	}
	return a * n
}

// retriedNote says what a call's answered attempts that failed were
// charged.
func retriedNote(r Retried, u Usage) string {
	if r.Attempts == 1 {
		return fmt.Sprintf("an attempt the provider answered and that failed was charged as estimated: %d in, %d out", u.Input, u.Output)
	}
	return fmt.Sprintf("%d attempts the provider answered and that failed were charged as estimated: %d in, %d out", min(r.Attempts, maxPlausible), u.Input, u.Output)
}

// joined is two notes as one, either of them empty.
func joined(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

type failedUnspentKey struct{}

// WithFailedUnspent returns a context in which a run charges nothing for
// a model call that failed, whatever it spent, as runs did before failed
// calls were charged: for a Temporal run started before, whose history
// must replay as it was made.
func WithFailedUnspent(ctx context.Context) context.Context {
	return context.WithValue(ctx, failedUnspentKey{}, true)
}

// chargeFailed charges the round what a failed model call spent, as
// countedWith counts a reply's usage (held to the call's bounds and the
// pool's reservation, the model's tokeniser's count of its request), and
// settles its reservation with it. A call that reported nothing is
// charged nothing.
func (x *run) chargeFailed(req *Request, res *Reservation, rr *RoundReport, err error, replayed bool) {
	spent, retried := SpentOf(err), RetriedOf(err)
	if spent == (Usage{}) && retried.Attempts <= 0 || x.runCtx.Value(failedUnspentKey{}) != nil {
		x.settle(res, Usage{})
		return
	}
	var usage Usage
	var note, odd string
	if spent != (Usage{}) {
		resp := &Response{Usage: spent}
		est := estimateUsage(req, Message{}, &x.sizes)
		usage, odd = countedWith(req, resp, est, x.exactUsage(req, Message{}), inputBound(req, &x.sizes))
		note = fmt.Sprintf("the failed call was charged what the provider reported of its reply: %d in, %d out", usage.Input, usage.Output)
	}
	largest := usage.Input // of one call: each lost attempt is a call
	if retried.Attempts > 0 {
		lost := x.retriedUsage(req, retried)
		usage = usage.Add(lost)
		largest = max(largest, attemptInput(lost, retried))
		odd = joined(odd, retriedNote(retried, lost))
	}
	if res != nil {
		var over string
		usage, over = capped(usage, res.Tokens())
		odd = joined(odd, over)
	}
	x.settle(res, usage)
	x.charge(usage, replayed)
	switch {
	case note == "":
		note = odd
	case odd != "":
		note += " (" + odd + ")"
	}
	if odd != "" {
		rr.UsageEstimated, x.rep.UsageEstimated = true, true
	}
	rr.Usage = rr.Usage.Add(usage)
	rr.UsageNote = joined(rr.UsageNote, note)
	x.roundCost = x.roundCost.Add(priceCalls(x.prices(), x.provider, x.model, usage, largest, odd != ""))
}

// attemptInput is the input each of a call's lost attempts was charged
// (retriedCharge charges every one the same).
func attemptInput(lost Usage, r Retried) int {
	if n := min(r.Attempts, maxPlausible); n > 0 {
		return lost.Input / n
	}
	return 0
}
