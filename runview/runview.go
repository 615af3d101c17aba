// Package runview turns the journal of a run (and, when there is one, its
// report) into one self-contained HTML page: a timeline of the run's
// rounds, model calls, tool calls and the decisions about calls that
// needed approval, with the runs of called agents nested under the calls
// that ran them, their durations, tokens and cost, the messages and
// arguments, the answer and its validation, and where the run departed
// from its journal.
//
// A journal is untrusted input: the page is written with html/template,
// which escapes every value for where it appears, and its content
// security policy lets only the page's own script run. The files a run
// was given are shown as cards; a picture whose bytes the store beside
// the journal holds, checked against its digest, is embedded as a data:
// URL, the only images the policy allows.
package runview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"agentc.dev/agentc/cost"
	canon "agentc.dev/agentc/digest"
	"agentc.dev/agentc/internal/leaf/userfile"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/filestore"
	"agentc.dev/agentc/runtime/journal"
)

// MaxShown bounds what a page shows of a journal's requests, their value
// references replaced: a journal of a few megabytes could name gigabytes
// (one large value referenced a thousand times). A run's journal stores
// each message once, so the page of a real run shows about what its file
// holds, and a file holds at most journal.MaxFile.
var MaxShown int64 = 256 << 20

// A page shows at most ShownPerByte times its journal's bytes of requests
// (or MinShown, for a small journal), within MaxShown: a journal that
// refers to one large value from every effect, which no run writes,
// made a page of 250 MB from a file of 1 MB. A real run's page shows
// less than its file holds (a half, in the runs measured).
var (
	ShownPerByte int64 = 4
	MinShown     int64 = 8 << 20
)

// MaxEffects bounds the effects of a journal a page shows: each is a row
// and the structures behind it, about 6 KB however small its entry, so a
// journal of a million one-line entries, which the reader's bound admits,
// took 8 GB and wrote a page of a gigabyte. A real run's journal holds
// far fewer (a run of 1,000 rounds, 2,000).
var MaxEffects = 50_000

// MaxCalls bounds the tool calls of one reply the page shows: a reply is
// one effect however many calls it asks for, and each call was a row and
// a listing in the reply, so one reply of 300,000 calls (10.8 MB) made a
// page of 190 MB. Calls past it are counted, not shown.
var MaxCalls = 1_000

// MaxRows bounds the rows of the timeline: past it, rows are counted, not
// shown.
var MaxRows = 100_000

// roundMiB rounds n up to whole mebibytes, as a bound is said.
func roundMiB(n int64) int64 { return (n + 1<<20 - 1) &^ (1<<20 - 1) }

// Page is what the page shows of a run.
type Page struct {
	Agent, Run, Plan string
	Started          time.Time
	// Truncated says the journal's last line was cut short (a crash
	// during a write) and is left out.
	Truncated bool
	Effects   int
	// CallsLeftOut counts the tool calls past the first MaxCalls of their
	// reply, which have no row; RowsLeftOut the rows past MaxRows.
	CallsLeftOut, RowsLeftOut int
	// SpanMS is the time from the run's start to the end of its last
	// effect.
	SpanMS float64
	// Usage is the tokens of every model call, the called agents' too.
	// UsageHeld says some call's counts were held (agentrt.Usage.Held):
	// the journal gave counts no call has, below zero or past 2^32.
	Usage     agentrt.Usage
	UsageHeld bool
	// Cost is what those tokens cost by the page's price table: the
	// model calls' costs summed.
	Cost agentrt.Cost
	// Prices says which price table: its origin and date, and the files
	// that extended it with theirs.
	Prices string
	// Priced are the table's entries that priced the page's model calls,
	// in the order they first did (for cost.Stale).
	Priced []cost.Price
	// Approved and Denied count the decisions about calls.
	Approved, Denied int
	// Rows are the timeline, in the order the run made its effects: a
	// row for each round, then its model call and tool calls, a called
	// agent's rounds after the call that ran it, one level deeper.
	Rows []*Row
	// Answer is the run's answer, nil when the journal holds none.
	Answer *Answer
	// Attempts are the answers the model gave before it, which the run
	// sent back as invalid: the first MaxCalls; AttemptsLeftOut counts
	// the rest.
	Attempts        []Attempt
	AttemptsLeftOut int
	// Report is what the run's report adds, nil without one.
	Report *ReportSummary
}

// Row is one line of the timeline: a round, a model call, a tool call, a
// call of an agent, or the decision about a call that needed approval,
// just before the call.
type Row struct {
	Kind  string // "round", "model", "tool", "agent" or "approval"
	Key   string // the effect's key; for a round, the key of its model call
	Depth int    // how deeply the run it belongs to is nested
	Round int
	Name  string // the model, or the tool (an approval's: the call's)
	// StandsIn is, where the offline test model answered (Name "test"),
	// the model the request named, which it answered in place of.
	StandsIn string
	// StartMS is when the row began, after the run's start; DurationMS
	// how long it took.
	StartMS, DurationMS float64
	// Usage is the tokens the row spent; nil where none is known.
	// UsageHeld says counts of it were held, as Page's.
	Usage     *agentrt.Usage
	UsageHeld bool
	// Cost is what Usage cost: a model call's, a round's (its model call
	// and the agents its tools called), an agent call's (its run's model
	// calls); nil where no usage is known.
	Cost *agentrt.Cost
	// Price says how a model call was priced.
	Price string
	// Approval is the decision an approval row shows, and the call it
	// decided says; nil for a call that needed none. Denied marks a
	// call that was not made: the model read the denial instead.
	Approval *Decision
	Denied   bool
	// Error is the effect's error, or the tool's failure as the model
	// was told it.
	Error string
	// Lost counts attempts at the effect whose worker was lost.
	Lost int
	// Messages are, for a model call, the messages sent that no earlier
	// call of its run sent; Reply is what the model answered.
	Messages []Message
	Reply    *Message
	// Arguments and Result are a tool call's.
	Arguments string
	Result    string
	// Diverged marks the effect at which a replay departed from the
	// journal; Changes lists its fields that changed.
	Diverged bool
	Changes  []string
	// Raw is the entry's request and response as JSON, shown where the
	// page does not know their shape.
	Raw string
}

// Left and Width place the row's bar on the timeline, in percent of the
// run's span: a bar is never so thin it cannot be seen, nor runs past the
// timeline's end.
func (r *Row) Left(span float64) float64 {
	return round2(min(100*r.StartMS/span, 100-r.Width(span)))
}

func (r *Row) Width(span float64) float64 { return round2(min(max(100*r.DurationMS/span, 1), 100)) }

func round2(f float64) float64 { return math.Round(f*100) / 100 }

// Decision is what was decided about a call that needed approval.
type Decision struct {
	// Key is the approval's effect key, Call the key of the call.
	Key, Call string
	Approved  bool
	// ForRun says the person approved every later call of the tool in
	// the run (they answered "always").
	ForRun bool
	// By says who decided: a person, a rule, a policy, the host, or the
	// run (an earlier "always").
	By     string
	Reason string
	// Why says why the call needed approval: the tool's approve mode,
	// and whether the manifest declared it.
	Why string
	end float64 // when it was decided, after the run's start
}

// Message is one message of a conversation.
type Message struct {
	Role    string
	Content string
	// Parts are, where the message has them (the first user message of
	// an agent given files), its content in order: texts and files.
	Parts []Part
	// Calls are the tool calls an assistant message asks for, the first
	// MaxCalls; CallsLeftOut counts the rest.
	Calls        []Call
	CallsLeftOut int
	// CallID and Name say which call a tool message answers.
	CallID, Name string
	IsError      bool
}

// Part is one part of a message: a text, or a file.
type Part struct {
	Text string
	File *File
}

// File is a file a message carries, as the journal names it, and what
// the store beside the journal holds of it.
type File struct {
	// Name is the input it was given as, FileName its base name as it
	// was handed in; MediaType and Size are as the journal records them.
	Name, FileName, MediaType string
	Size                      int64
	Digest                    string
	// Thumbnail is the image itself as a data: URL, for the page to show
	// scaled: set only for an image the store holds, whose bytes are the
	// digest's, of at most MaxImage bytes.
	Thumbnail template.URL
	// Note says why an image is not shown, or what else the page found
	// of the file in the store.
	Note string
}

// Call is a tool call a model asked for.
type Call struct {
	ID, Name  string
	Arguments string // indented JSON, or the text the model wrote
}

// Answer is a run's answer and whether it holds to the contract.
type Answer struct {
	JSON string // indented
	// Key is the model call that gave it.
	Key string
	// Contract is whether the answer is valid against the contract
	// schema the call recorded: "valid", "invalid" or "" when the call
	// recorded none.
	Contract string
	Errors   []string
}

// Attempt is an answer the run sent back to the model as invalid.
type Attempt struct {
	Key       string
	Arguments string
	Reason    string // what the run told the model
}

// ReportSummary is what a run's report adds to its journal.
type ReportSummary struct {
	Outcome, Bound, Error string
	Interrupted           bool
	InvalidAnswers        int
	Replayed              int
	// PlanChanged says the report is of another plan than the journal
	// recorded: a replay of a changed agent.
	PlanChanged bool
	Divergence  *agentrt.Divergence
	// Cost is the run's cost as the report priced it. CostDiffers says
	// the page's own sum is another (priced by other prices).
	Cost        agentrt.Cost
	CostDiffers bool
}

// Build reads a run from its journal and, when rep is not nil, its report:
// the report's answer, outcome and divergence win over what the journal
// alone shows. Model calls are priced by prices; nil is the embedded
// table, as for a run.
//
// The files the messages carry are looked up in files, the store beside
// the journal (see StoreBeside); nil is none, and every file is then shown
// as not in it.
func Build(j *journal.Journal, rep *agentrt.Report, prices *cost.Table, files *filestore.Store) (*Page, error) {
	if n := len(j.Entries); n > MaxEffects {
		return nil, fmt.Errorf("the journal holds %d effects, more than the %d a page shows", n, MaxEffects)
	}
	if prices == nil {
		prices = cost.Embedded()
	}
	p := &Page{Agent: j.Header.Agent, Run: j.Header.Run, Plan: j.Header.Plan, Started: j.Header.Started,
		Truncated: j.Truncated, Effects: len(j.Entries), Prices: prices.Describe()}
	t0 := j.Header.Started
	for _, e := range j.Entries {
		if e.Started.Before(t0) {
			t0 = e.Started
		}
	}
	b := builder{page: p, t0: t0, entries: j.Entries, prices: prices, results: map[pathRound][]*Message{},
		approvals: map[string]journal.Entry{}, shown: map[string]bool{}, models: map[*journal.Entry]modelRequest{},
		budget: &journal.Budget{Max: min(MaxShown, max(MinShown, roundMiB(ShownPerByte*(j.ValidBytes+j.CutBytes)))),
			What: fmt.Sprintf("the requests the page shows (at most %d times the journal's size, or %s)", ShownPerByte, userfile.Size(MinShown))},
		files: files, images: map[string]stored{}}
	b.collect()
	b.run("", 0)
	if b.final != nil {
		b.settle(b.final)
	}
	if b.err != nil {
		return nil, b.err
	}
	if rep != nil {
		b.report(rep)
	}
	for _, r := range p.Rows {
		p.SpanMS = max(p.SpanMS, r.StartMS+r.DurationMS)
	}
	if p.SpanMS == 0 {
		p.SpanMS = 1
	}
	return p, nil
}

type builder struct {
	page    *Page
	t0      time.Time
	entries []journal.Entry
	// results are the tool messages of every run's conversations, by
	// the run's path and the round whose calls they answer, in order:
	// what each call returned, as the model was told. A model may give
	// calls of two rounds one id, so a call's result is found among its
	// own round's (see resultsOf), never by its id alone.
	results map[pathRound][]*Message
	prices  *cost.Table
	// approvals are the decisions about calls, by the call's key; shown
	// those that have their row.
	approvals map[string]journal.Entry
	shown     map[string]bool
	// The entries indexed once, so that a journal of n entries costs the
	// page time in n, not in n times its rounds: the effects of each run
	// by its path (decisions apart), in the journal's order; the calls of
	// fallback models, by the key of the round they stand in for; the
	// decisions, by the run path and round of the call each decides; and
	// every path some run's effects are under (see nested).
	byPath    map[string][]*journal.Entry
	fallbacks map[string][]*journal.Entry
	decisions map[pathRound][]*journal.Entry
	under     map[string]bool
	// models are the model calls' requests, as far as the page reads
	// them, each expanded once.
	models map[*journal.Entry]modelRequest
	budget *journal.Budget
	err    error // the first request that did not expand
	// files is the store beside the journal; images what the page found
	// of each file in it, by digest; embedded the bytes of the images
	// the page holds so far.
	files    *filestore.Store
	images   map[string]stored
	embedded int64
	// final is the last answer the top run's model gave that the run
	// did not send back: the page's answer, checked once the rows are
	// built.
	final *answered
}

// answered is an answer a model call gave.
type answered struct {
	e   *journal.Entry
	req modelRequest
	c   wireCall
}

// modelMembers are the members of a model call's request the page reads;
// the rest (tools, schemas) it never expands.
var modelMembers = []string{"provider", "model", "output_tool", "messages"}

// request returns the named members of an entry's request (all, when none
// is named), expanded within the page's budget; nil once a request did not
// expand, which is then the page's error.
func (b *builder) request(e *journal.Entry, members ...string) json.RawMessage {
	if b.err != nil {
		return nil
	}
	r, err := e.ExpandRequest(b.budget, members...)
	if err != nil {
		b.err = err
		return nil
	}
	return r
}

// modelRequest is what a model call's request holds that the page shows.
type modelRequest struct {
	Provider   string          `json:"provider"`
	Model      string          `json:"model"`
	OutputTool string          `json:"output_tool"`
	Messages   json.RawMessage `json:"messages"`
	ok         bool            // the request read as one
}

type modelResponse struct {
	Message *wireMessage   `json:"message"`
	Usage   *agentrt.Usage `json:"usage"`
}

type wireMessage struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []wireCall `json:"tool_calls"`
	ToolCallID string     `json:"tool_call_id"`
	Name       string     `json:"name"`
	IsError    bool       `json:"is_error"`
	Parts      []struct {
		Text string        `json:"text"`
		File *agentrt.File `json:"file"`
	} `json:"parts"`
}

type wireCall struct {
	ID            string          `json:"id"`
	Name          string          `json:"name"`
	Arguments     json.RawMessage `json:"arguments"`
	ArgumentsText *string         `json:"arguments_text"`
}

func (c wireCall) args() string {
	if c.ArgumentsText != nil {
		return *c.ArgumentsText
	}
	return indent(c.Arguments)
}

// newMessages reads the messages a model call stored: those after the
// ones earlier calls stored ({"after":N,"new":[…]}), or all of them.
func newMessages(raw json.RawMessage) []wireMessage {
	var stored struct {
		New []wireMessage `json:"new"`
	}
	if json.Unmarshal(raw, &stored) == nil && stored.New != nil {
		return stored.New
	}
	var all []wireMessage
	_ = json.Unmarshal(raw, &all)
	return all
}

// pathRound names a round of the run at a path.
type pathRound struct {
	path  string
	round int
}

// collect finds every tool message of every conversation, and every
// decision about a call, and indexes the entries (see builder).
func (b *builder) collect() {
	b.byPath, b.fallbacks = map[string][]*journal.Entry{}, map[string][]*journal.Entry{}
	b.decisions, b.under = map[pathRound][]*journal.Entry{}, map[string]bool{}
	for i := range b.entries {
		e := &b.entries[i]
		if e.Kind == journal.KindApproval {
			b.approvals[e.Key.Path] = *e
			if k, err := journal.ParseKey(e.Key.Path); err == nil {
				at := pathRound{k.Path, k.Round}
				b.decisions[at] = append(b.decisions[at], e)
			}
			// A decision is under the key of the call it decides,
			// which is no run; the paths above that key are.
			if i := strings.LastIndexByte(e.Key.Path, '/'); i >= 0 {
				b.markUnder(e.Key.Path[:i])
			}
		} else {
			b.byPath[e.Key.Path] = append(b.byPath[e.Key.Path], e)
			b.markUnder(e.Key.Path)
		}
		if e.Kind == journal.KindModel && e.Key.Round == 0 {
			b.fallbacks[e.Key.Path] = append(b.fallbacks[e.Key.Path], e)
		}
		if e.Kind != journal.KindModel {
			continue
		}
		var req modelRequest
		req.ok = json.Unmarshal(b.request(e, modelMembers...), &req) == nil
		b.models[e] = req
		if !req.ok {
			continue
		}
		// The tool messages after the last reply a request sends answer
		// that reply's calls: the round before the request's (a fallback's
		// call is under its round's key).
		at := pathRound{e.Key.Path, e.Key.Round}
		if e.Key.Round == 0 {
			k, err := journal.ParseKey(e.Key.Path)
			if err != nil {
				continue
			}
			at = pathRound{k.Path, k.Round}
		}
		at.round--
		if _, ok := b.results[at]; ok || at.round < 1 {
			continue // a fallback's request sends what the first call's did
		}
		var answers []*Message
		for _, m := range newMessages(req.Messages) {
			switch {
			case m.Role == "assistant":
				answers = answers[:0]
			case m.Role == "tool" && m.ToolCallID != "":
				answers = append(answers, message(m))
			}
		}
		b.results[at] = answers
	}
}

// resultsOf returns the results of the calls a reply of the round at
// path asked for, by the calls' order: the tool messages that answer the
// round, each matched to the first call with its id not matched before.
func (b *builder) resultsOf(path string, round int, calls []wireCall) []*Message {
	byID := map[string][]*Message{}
	for _, m := range b.results[pathRound{path, round}] {
		byID[m.CallID] = append(byID[m.CallID], m)
	}
	out := make([]*Message, len(calls))
	for i, c := range calls {
		if q := byID[c.ID]; c.ID != "" && len(q) > 0 {
			out[i], byID[c.ID] = q[0], q[1:]
		}
	}
	return out
}

func message(m wireMessage) *Message {
	out := &Message{Role: m.Role, Content: m.Content, CallID: m.ToolCallID, Name: m.Name, IsError: m.IsError}
	for i, c := range m.ToolCalls {
		if i == MaxCalls {
			out.CallsLeftOut = len(m.ToolCalls) - i
			break
		}
		out.Calls = append(out.Calls, Call{ID: c.ID, Name: c.Name, Arguments: c.args()})
	}
	return out
}

// message is a message as the page shows it: with its parts, each file
// looked up in the store.
func (b *builder) message(m wireMessage) *Message {
	out := message(m)
	for _, p := range m.Parts {
		part := Part{Text: p.Text}
		if p.File != nil {
			f := b.file(*p.File)
			part.File = &f
		}
		out.Parts = append(out.Parts, part)
	}
	return out
}

// run adds the rows of the run at path, nested depth deep: its rounds, in
// order, each with its model call and tool calls, and under each call of
// an agent that agent's run.
func (b *builder) run(path string, depth int) {
	var rounds []int
	byRound := map[int][]*journal.Entry{}
	for _, e := range b.byPath[path] {
		if _, ok := byRound[e.Key.Round]; !ok {
			rounds = append(rounds, e.Key.Round)
		}
		byRound[e.Key.Round] = append(byRound[e.Key.Round], e)
	}
	slices.Sort(rounds)
	for _, n := range rounds {
		b.round(path, depth, n, byRound[n])
	}
}

func (b *builder) round(path string, depth, n int, entries []*journal.Entry) {
	round := &Row{Kind: "round", Key: journal.Key{Path: path, Round: n}.String(), Depth: depth, Round: n}
	b.add(round)
	first := len(b.page.Rows)
	var calls []wireCall   // the model's tool calls, by ordinal-1
	var results []*Message // what the run told the model of each
	var output string
	var modelEnd float64
	// The round's model call, and the calls fallback models made after
	// it failed, journaled under its key, in the chain's order.
	var models []*journal.Entry
	for _, e := range entries {
		if e.Kind == journal.KindModel {
			models = append(models, e)
		}
	}
	fallbacks := slices.Clone(b.fallbacks[journal.Key{Path: path, Round: n}.String()])
	slices.SortFunc(fallbacks, func(x, y *journal.Entry) int { return x.Key.Ordinal - y.Key.Ordinal })
	for _, e := range append(models, fallbacks...) {
		row, resp, req := b.model(e, depth)
		round.Name, round.StandsIn = row.Name, row.StandsIn
		modelEnd = row.StartMS + row.DurationMS
		var res []*Message
		if resp.Message != nil {
			calls = resp.Message.ToolCalls
			res = b.resultsOf(path, n, calls)
			results = res
		}
		output = req.OutputTool
		if path == "" {
			b.answer(e, req, resp, res)
		}
	}
	// Tool calls: an effect each, but a call of an agent, which is not an
	// effect: its run's effects are journaled under its key. Each
	// decision about a call comes just before it.
	done := map[int]bool{}
	for _, e := range entries {
		if e.Kind == journal.KindTool && b.nested(e.Key.Child()) && e.Key.Ordinal >= 1 && e.Key.Ordinal <= len(results) && results[e.Key.Ordinal-1] == nil {
			// A call of an agent the deadline cut off, which the run
			// ended on: its row is the agent's, its run under it.
			results[e.Key.Ordinal-1] = &Message{Content: "the call was cut off: " + e.Error, IsError: true}
			continue
		}
		if e.Kind == journal.KindTool {
			d := b.approval(e.Key, depth)
			b.tool(e, depth, calls).Approval = d
			done[e.Key.Ordinal] = true
		}
	}
	for i, c := range calls {
		k := journal.Key{Path: path, Round: n, Ordinal: i + 1}
		switch {
		case done[k.Ordinal] || c.Name == output:
		case i >= MaxCalls:
			b.page.CallsLeftOut++
		case b.nested(k.Child()):
			b.agent(k, depth, c, results[i], b.approval(k, depth))
		default:
			b.refused(k, depth, c, results[i], modelEnd, b.approval(k, depth))
		}
	}
	// Decisions about calls the page does not know (the model call that
	// asked for them does not read) still have their rows.
	for _, e := range b.decisions[pathRound{path, n}] {
		if !b.shown[e.Key.Path] {
			k, _ := journal.ParseKey(e.Key.Path) // collect parsed it
			b.approval(k, depth)
		}
	}
	// A round spans its rows.
	if rows := b.page.Rows[first:]; len(rows) > 0 {
		start, end := math.Inf(1), 0.0
		for _, r := range rows {
			start = min(start, r.StartMS)
			end = max(end, r.StartMS+r.DurationMS)
		}
		round.StartMS, round.DurationMS = start, end-start
	}
	// A round costs its model call and the runs of the agents its tools
	// called.
	for _, r := range b.page.Rows[first:] {
		if r.Kind == "model" && r.Depth == depth {
			round.Usage, round.UsageHeld = r.Usage, r.UsageHeld
		}
		if (r.Kind == "model" || r.Kind == "agent") && r.Depth == depth {
			round.Cost = addCost(round.Cost, r.Cost)
		}
	}
}

func addCost(sum, c *agentrt.Cost) *agentrt.Cost {
	switch {
	case c == nil:
		return sum
	case sum == nil:
		s := *c
		return &s
	}
	s := sum.Add(*c)
	return &s
}

// nested tells whether the journal holds effects of a run under path.
// The decision about a call is under its key too, but is no run.
func (b *builder) nested(path string) bool { return b.under[path] }

// markUnder notes that a run's effects are under path, and so under every
// path above it.
func (b *builder) markUnder(path string) {
	for !b.under[path] {
		b.under[path] = true
		i := strings.LastIndexByte(path, '/')
		if i < 0 {
			return
		}
		path = path[:i]
	}
}

func (b *builder) row(e *journal.Entry, kind string, depth int) *Row {
	r := &Row{Kind: kind, Key: e.Key.String(), Depth: depth, Round: e.Key.Round,
		StartMS: ms(e.Started.Sub(b.t0)), DurationMS: float64(e.DurationMS), Error: e.Error, Lost: len(e.Lost)}
	b.add(r)
	return r
}

// add adds a row to the timeline, or past MaxRows counts it.
func (b *builder) add(r *Row) {
	if len(b.page.Rows) >= MaxRows {
		b.page.RowsLeftOut++
		return
	}
	b.page.Rows = append(b.page.Rows, r)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (b *builder) model(e *journal.Entry, depth int) (*Row, modelResponse, modelRequest) {
	r := b.row(e, "model", depth)
	req := b.models[e]
	var resp modelResponse
	errResp := json.Unmarshal(orNull(e.Response), &resp)
	if !req.ok || errResp != nil {
		r.Raw = b.raw(e)
		return r, modelResponse{}, modelRequest{}
	}
	r.Name = req.Model
	if req.Provider == "test" && req.Model != "test" {
		// The request keeps the plan's model, which the test model
		// answered in place of: the page names who answered.
		r.Name, r.StandsIn = "test", req.Model
	}
	for _, m := range newMessages(req.Messages) {
		r.Messages = append(r.Messages, *b.message(m))
	}
	if resp.Message != nil {
		r.Reply = b.message(*resp.Message)
	}
	if resp.Usage != nil {
		// Counts the journal gives past what a call can count are held,
		// as a run holds them, and marked.
		u := resp.Usage.Held()
		r.Usage, r.UsageHeld = &u, u != *resp.Usage
		b.page.Usage = b.page.Usage.Add(u)
		b.page.UsageHeld = b.page.UsageHeld || r.UsageHeld
		c, price := b.price(req.Provider, req.Model, u)
		r.Cost, r.Price = &c, price
		b.page.Cost = b.page.Cost.Add(c)
	}
	return r, resp, req
}

// price is what a model call's usage costs by the page's prices, as the
// runtime prices it, and how it was priced.
func (b *builder) price(provider, model string, u agentrt.Usage) (agentrt.Cost, string) {
	c := agentrt.PriceUsage(b.prices, provider, model, u)
	p, ok := b.prices.Lookup(provider, model)
	if !ok {
		return c, fmt.Sprintf("The price table has no price for %s/%s.", provider, model)
	}
	if !slices.ContainsFunc(b.page.Priced, func(q cost.Price) bool { return q.Key == p.Key && q.From == p.From }) {
		b.page.Priced = append(b.page.Priced, p)
	}
	if provider == "test" && p.AsOf == "" { // no entry: the test model is free
		return agentrt.Cost{}, "The test model runs offline and costs nothing."
	}
	from := "the built-in table"
	if p.From != "" {
		from = p.From
	}
	per := func(f float64) string { return "$" + strconv.FormatFloat(f, 'f', -1, 64) }
	writes := "" // a cache write at input's price needs no words
	if p.CacheWrite != p.Input {
		writes = " " + per(p.CacheWrite) + " cache writes,"
	}
	return c, fmt.Sprintf("Priced as %s/%s (%s, as of %s): %s input, %s cached input,%s %s output per million tokens.",
		provider, p.Key, from, p.AsOf, per(p.Input), per(p.CachedInput), writes, per(p.Output))
}

func (b *builder) tool(e *journal.Entry, depth int, calls []wireCall) *Row {
	r := b.row(e, "tool", depth)
	var req struct {
		Tool string `json:"tool"`
		wireCall
	}
	var resp struct {
		Content *string `json:"content"`
		IsError bool    `json:"is_error"`
	}
	if json.Unmarshal(b.request(e, "tool", "arguments", "arguments_text"), &req) != nil || json.Unmarshal(orNull(e.Response), &resp) != nil {
		r.Raw = b.raw(e)
		return r
	}
	r.Name, r.Arguments = req.Tool, req.args()
	if resp.Content != nil {
		r.Result = *resp.Content
	}
	if resp.IsError && r.Error == "" {
		r.Error = r.Result
	}
	if r.Name == "" && e.Key.Ordinal >= 1 && e.Key.Ordinal <= len(calls) {
		r.Name = calls[e.Key.Ordinal-1].Name
	}
	return r
}

// approval adds the row of the decision about the call at key k, if the
// journal holds one, and returns the decision, nil when it does not read
// as one (its row then shows the entry as it is).
func (b *builder) approval(k journal.Key, depth int) *Decision {
	e, ok := b.approvals[k.String()]
	if !ok || b.shown[k.String()] {
		return nil
	}
	b.shown[k.String()] = true
	r := b.row(&e, "approval", depth)
	r.Round = k.Round
	var req struct {
		Tool string `json:"tool"`
		Why  string `json:"why"`
		wireCall
	}
	var d agentrt.ApprovalDecision
	dec := json.NewDecoder(bytes.NewReader(orNull(e.Response)))
	dec.DisallowUnknownFields()
	if json.Unmarshal(b.request(&e, "tool", "why", "arguments", "arguments_text"), &req) != nil || e.Error != "" || dec.Decode(&d) != nil || d.By == "" {
		r.Name, r.Raw = req.Tool, b.raw(&e)
		return nil
	}
	r.Name, r.Arguments = req.Tool, req.args()
	r.Approval = &Decision{Key: e.Key.String(), Call: k.String(), Approved: d.Approved, ForRun: d.ForRun, By: d.By,
		Reason: d.Reason, Why: req.Why, end: r.StartMS + r.DurationMS}
	if d.Approved {
		b.page.Approved++
	} else {
		b.page.Denied++
	}
	return r.Approval
}

// agent adds the row of a call of an agent, which spans its run's
// effects, and then that run's rows.
func (b *builder) agent(k journal.Key, depth int, c wireCall, m *Message, d *Decision) {
	r := &Row{Kind: "agent", Key: k.String(), Depth: depth, Round: k.Round, Name: c.Name, Arguments: c.args(), Approval: d}
	b.add(r)
	if m != nil {
		r.Result = m.Content
		if m.IsError {
			r.Error = m.Content
		}
	}
	first := len(b.page.Rows)
	b.run(k.Child(), depth+1)
	start, end := math.Inf(1), 0.0
	var u agentrt.Usage
	for _, c := range b.page.Rows[first:] {
		start = min(start, c.StartMS)
		end = max(end, c.StartMS+c.DurationMS)
		if c.Kind == "model" && c.Usage != nil {
			u = u.Add(*c.Usage)
			r.UsageHeld = r.UsageHeld || c.UsageHeld
			r.Cost = addCost(r.Cost, c.Cost)
		}
	}
	if !math.IsInf(start, 1) {
		r.StartMS, r.DurationMS = start, end-start
	}
	r.Usage = &u
}

// refused adds the row of a tool call that was no effect: the run
// answered it itself (an unknown tool, arguments the tool's schema
// rejects, a spent tool budget, a denial, which d says), as m, the
// tool message after its round's reply, shows.
func (b *builder) refused(k journal.Key, depth int, c wireCall, m *Message, at float64, d *Decision) {
	r := &Row{Kind: "tool", Key: k.String(), Depth: depth, Round: k.Round, Name: c.Name, Arguments: c.args(), StartMS: at,
		Approval: d, Denied: d != nil && !d.Approved}
	if r.Denied {
		r.StartMS = d.end
	}
	if m != nil {
		r.Result = m.Content
		if m.IsError {
			r.Error = m.Content
		}
	}
	// No one could decide: the run ended there.
	if e, ok := b.approvals[k.String()]; ok && e.Error != "" && r.Error == "" {
		r.Error = "the call was not made: " + e.Error
		r.StartMS = ms(e.Started.Sub(b.t0)) + float64(e.DurationMS)
	}
	b.add(r)
}

// answer notes the answers a model call of the top run gave: a call of
// the output tool, or, where the answer is asked for as the message
// itself (native and prompted modes), the reply of the last call.
// results are what the run told the model of each of the reply's calls.
func (b *builder) answer(e *journal.Entry, req modelRequest, resp modelResponse, results []*Message) {
	if resp.Message == nil {
		return
	}
	var given []wireCall
	var told []*Message
	if req.OutputTool != "" {
		for i, c := range resp.Message.ToolCalls {
			if c.Name == req.OutputTool {
				given, told = append(given, c), append(told, results[i])
			}
		}
	} else if len(resp.Message.ToolCalls) == 0 && json.Valid([]byte(resp.Message.Content)) {
		given, told = append(given, wireCall{Arguments: json.RawMessage(resp.Message.Content)}), append(told, nil)
	}
	for i, c := range given {
		if m := told[i]; m != nil && m.IsError {
			if len(b.page.Attempts) == MaxCalls {
				b.page.AttemptsLeftOut++
				continue
			}
			b.page.Attempts = append(b.page.Attempts, Attempt{Key: e.Key.String(), Arguments: c.args(), Reason: m.Content})
			continue
		}
		b.final = &answered{e: e, req: req, c: c}
	}
}

// settle makes g the page's answer, taken as the run took it, and checks
// it against the contract its call recorded.
func (b *builder) settle(g *answered) {
	e, req, c := g.e, g.req, g.c
	var recorded struct {
		Contract json.RawMessage `json:"contract"`
		Wrap     string          `json:"output_wrap"`
		Nullable []string        `json:"output_nullable"`
		Tools    []struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
		} `json:"tools"`
		Answer *struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"answer"`
	}
	_ = json.Unmarshal(b.request(e, "contract", "output_wrap", "output_nullable", "tools", "answer"), &recorded)
	if c.ArgumentsText == nil {
		// The answer as the run took it: nulls that stand for absent
		// properties removed, out of the member that holds it.
		low := plan.Lowering{Wrap: recorded.Wrap, Nullable: recorded.Nullable}
		if recorded.Answer != nil && req.OutputTool == "" {
			low.Schema = recorded.Answer.Schema
		}
		for _, t := range recorded.Tools {
			if t.Name == req.OutputTool && req.OutputTool != "" {
				low.Schema = t.Schema
			}
		}
		if len(low.Nullable) > 0 && len(low.Schema) > 0 {
			c.Arguments = plan.Raise(low.Schema, low.Nullable, c.Arguments)
		}
		if v, ok := low.Unwrap(c.Arguments); ok {
			c.Arguments = v
		}
	}
	b.page.Answer = &Answer{JSON: c.args(), Key: e.Key.String()}
	b.validate(c, recorded.Contract)
}

// patternTimeouts is how many matches of the answer against the
// contract's patterns may run out of time before the rest are undecided
// at once (see plan.NewPatternBudget), as vet bounds its checks.
const patternTimeouts = 4

// validate checks the answer against the contract schema its call
// recorded, as the run did, its patterns under a budget of timeouts.
func (b *builder) validate(c wireCall, contract json.RawMessage) {
	a := b.page.Answer
	if len(contract) == 0 || string(contract) == "null" {
		return
	}
	doc, err := plan.UnmarshalJSONValue(contract)
	if err != nil {
		a.Contract, a.Errors = "invalid", []string{"the recorded contract does not compile: schema is not JSON: " + err.Error()}
		return
	}
	s, err := plan.CompileSchemaIn(doc, plan.NewPatternBudget(patternTimeouts))
	if err != nil {
		a.Contract, a.Errors = "invalid", []string{"the recorded contract does not compile: " + err.Error()}
		return
	}
	if c.ArgumentsText != nil || len(c.Arguments) == 0 {
		a.Contract, a.Errors = "invalid", []string{"the answer is not JSON"}
		return
	}
	v, err := plan.UnmarshalJSONValue(c.Arguments)
	if err == nil {
		err = plan.Validate(s, v)
	}
	if err != nil {
		a.Contract, a.Errors = "invalid", strings.Split(agentrt.ValidationText(err), "; ")
		return
	}
	a.Contract = "valid"
}

func (b *builder) report(rep *agentrt.Report) {
	p := b.page
	p.Report = &ReportSummary{Outcome: rep.Outcome, Bound: rep.Bound, Error: rep.Error, Interrupted: rep.Interrupted,
		InvalidAnswers: rep.InvalidAnswers, Replayed: rep.Replayed, Divergence: rep.Divergence,
		PlanChanged: rep.Digests.Plan != "" && string(rep.Digests.Plan) != p.Plan, Cost: rep.Cost,
		CostDiffers: costsDiffer(rep.Cost, p.Cost)}
	if len(rep.Answer) > 0 && (p.Answer == nil || !sameJSON(p.Answer.JSON, rep.Answer)) {
		p.Answer = &Answer{JSON: indent(rep.Answer)}
	}
	if d := rep.Divergence; d != nil && d.Effect != "" {
		for _, r := range p.Rows {
			if r.Key == d.Effect && r.Kind != "round" {
				r.Diverged, r.Changes = true, d.Changes
			}
		}
	}
}

// costsDiffer says whether two costs differ as shown, by more than the
// order of their sums can make them (the report adds by round, a called
// agent's run within its call; the page by call).
func costsDiffer(a, b agentrt.Cost) bool {
	return math.Abs(a.USD-b.USD) > 1e-9 && formatCost(a) != formatCost(b) ||
		!slices.Equal(slices.Sorted(slices.Values(a.Unpriced)), slices.Sorted(slices.Values(b.Unpriced)))
}

// sameJSON says whether a and b are the same JSON value: the same
// canonical form (RFC 8785), and where that would round a number, the
// same compact text too, so that ids 2^53 and 2^53+1 are two answers.
func sameJSON(a string, b json.RawMessage) bool {
	x, errX := canon.CanonicalExact([]byte(a))
	y, errY := canon.CanonicalExact(b)
	if errX == nil && errY == nil {
		return bytes.Equal(x, y)
	}
	x, errX = canon.Canonical([]byte(a))
	y, errY = canon.Canonical(b)
	if errX != nil || errY != nil || !bytes.Equal(x, y) {
		return false
	}
	var cx, cy bytes.Buffer
	return json.Compact(&cx, []byte(a)) == nil && json.Compact(&cy, b) == nil && bytes.Equal(cx.Bytes(), cy.Bytes())
}

func orNull(v json.RawMessage) json.RawMessage {
	if len(v) == 0 {
		return json.RawMessage("null")
	}
	return v
}

// indent returns JSON indented for reading, where that makes it at most
// maxIndent times as long as its compact form (and a few bytes), else
// compact; what is not JSON, as it is. Indented, JSON nested n deep holds
// n² spaces: 20 KB of it were 100 MB of page, and each line a model's
// arguments or a tool's result holds once may be shown a few times.
func indent(v json.RawMessage) string {
	var c bytes.Buffer
	if err := json.Compact(&c, v); err != nil {
		return string(v)
	}
	if !indentedWithin(c.Bytes(), maxIndent*int64(c.Len())+64) {
		return c.String()
	}
	var out bytes.Buffer
	out.Grow(2 * c.Len())
	_ = json.Indent(&out, c.Bytes(), "", "  ") // c is JSON
	return out.String()
}

// maxIndent bounds how many times longer than its compact form indented
// JSON may be: an object of short members a few levels deep is about
// twice as long.
const maxIndent = 4

// indentedWithin says whether the compact JSON c, indented as indent
// does it (two spaces a level), is at most limit bytes long, counting
// as json.Indent writes: a line break and the indentation before each
// member and element and each closing bracket of a value not empty, and
// a space after each colon.
func indentedWithin(c []byte, limit int64) bool {
	n, depth := int64(len(c)), int64(0)
	inString := false
	for i := 0; i < len(c) && n <= limit; i++ {
		ch := c[i]
		if inString {
			switch ch {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch ch {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if i+1 < len(c) && (c[i+1] == '}' || c[i+1] == ']') {
				continue // empty: written as it is
			}
			n += 1 + 2*depth
		case '}', ']':
			depth--
			if i > 0 && (c[i-1] == '{' || c[i-1] == '[') {
				continue
			}
			n += 1 + 2*depth
		case ',':
			n += 1 + 2*depth
		case ':':
			n++
		}
	}
	return n <= limit
}

func (b *builder) raw(e *journal.Entry) string {
	s := "request: " + indent(b.request(e))
	if len(e.Response) > 0 {
		s += "\nresponse: " + indent(e.Response)
	}
	return s
}
