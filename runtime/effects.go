package runtime

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"github.com/zeebo/blake3"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/runtime/internal/replylimit"
	"agentc.dev/agentc/runtime/journal"
)

// Journal connects runs to a journal of effects. An effect the journal
// holds is served from it, after its fingerprint is compared with the
// request's; one it lacks is made live and appended, or, in a replay, is
// a divergence. One Journal serves a run and the runs nested in it (agents
// called as tools), whose effects go under the key of the call that ran
// them. It is safe for concurrent use.
type Journal struct {
	// Recorded is the journal read back; nil when recording afresh.
	Recorded *journal.Journal
	// Writer appends effects made live; nil in a replay.
	Writer *journal.Writer
	// Replay forbids live effects: no network, no tool side effects.
	Replay bool

	mu      sync.Mutex
	reached map[string]bool
	served  int
	bad     bool // a recorded effect was found not to be one
}

// badRecord notes that a recorded effect could not be served for what
// it holds (a response that is not one), and returns err: the run ends
// on that error, which says which effect, and not on the effects it left
// unreached, which would hide it.
func (j *Journal) badRecord(err error) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.bad = true
	return err
}

// Served returns how many effects were served from the journal.
func (j *Journal) Served() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.served
}

// reach marks a recorded effect reached: served, or made again after it
// failed.
func (j *Journal) reach(k journal.Key, served bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.reached == nil {
		j.reached = map[string]bool{}
	}
	j.reached[k.String()] = true
	if served {
		j.served++
	}
}

// remakes reports whether a resume makes the recorded effect at k, e,
// again rather than serve it: an effect that failed where the recorded
// run ended, no effect completing after it. A failure the run went on
// from (journal.WentOn: a call a fallback answered, the end of an agent
// called as a tool, which its caller's next call holds) is served, as in
// a replay: made again it could end otherwise, and the resume, going
// elsewhere, would send again what was answered and diverge from the
// effects recorded after it.
func (j *Journal) remakes(k journal.Key, e *journal.Entry) bool {
	return !j.Replay && e.Error != "" && !j.Recorded.WentOn(k)
}

// unreached lists the recorded effects no run reached, in the order of
// their keys.
func (j *Journal) unreached() []*journal.Entry {
	if j.Recorded == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.bad {
		return nil
	}
	var out []*journal.Entry
	for i := range j.Recorded.Entries {
		e := &j.Recorded.Entries[i]
		// A resume that made a failure the recorded run ended on again
		// (remakes) goes on live from it: the failures recorded after it
		// (a fallback's, tried when the call failed) are that run's
		// attempts, not effects this one left out.
		if !j.reached[e.Key.String()] && (j.Replay || e.Error == "" || j.Recorded.WentOn(e.Key)) {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b *journal.Entry) int { return slices.Compare(keyOrder(a.Key), keyOrder(b.Key)) })
	return out
}

// keyOrder is a key as the numbers it is made of, outermost first: keys
// compared by it are in the order a run reaches them (1.1, 2.1, 10.1,
// where their text sorts 1.1, 10.1, 2.1).
func keyOrder(k journal.Key) []int {
	var out []int
	if k.Path != "" {
		for _, seg := range strings.Split(k.Path, "/") {
			p, _ := journal.ParseKey(seg) // a Path is keys, as the reader checked
			out = append(out, p.Round, p.Ordinal)
		}
	}
	return append(out, k.Round, k.Ordinal)
}

// maxUnreached is how many unreached effects a divergence lists: a
// journal with 100,000 appended made a line of 6.9 MB.
const maxUnreached = 20

// Divergence is a replay that found the run changed under its journal: a
// request whose fingerprint differs from the record, an effect the
// journal lacks, or recorded effects the run never reached.
type Divergence struct {
	// Effect is the key of the effect that diverged; empty for effects
	// never reached.
	Effect string `json:"effect,omitempty"`
	Kind   string `json:"kind,omitempty"`
	// Reason says what diverged, in one line.
	Reason string `json:"reason"`
	// Changes lists, for a changed request, each difference as a JSON
	// pointer into the request and the values before and after.
	Changes []string `json:"changes,omitempty"`
}

func (d *Divergence) Error() string {
	s := "the run diverged from its journal: " + d.Reason
	if len(d.Changes) > 0 {
		s += ": " + strings.Join(d.Changes, "; ")
	}
	return s
}

// NestedTool is implemented by a tool whose work is a nested run with
// effects of its own (an agent called as a tool). Its calls are not
// effects: the nested run's model and tool calls are journaled, under the
// call's key, so a replay runs it again from the journal and sees what
// changed inside it.
type NestedTool interface {
	Tool
	Nested() bool
}

func isNested(t Tool) bool {
	n, ok := t.(NestedTool)
	return ok && n.Nested()
}

// identMessage is a message as it identifies a request, and as a journal
// stores it: tool call arguments as canonical JSON, or as their exact text
// when they are not JSON (see callArgs).
//
// The fields are in their keys' canonical order, as identCall's are, so
// that the encoding a run writes of a message (encodeIdent) is mostly its
// canonical form already, which a fingerprint then takes as it is rather
// than building again (TestIdentCanonical).
type identMessage struct {
	Content    string      `json:"content,omitempty"`
	IsError    bool        `json:"is_error,omitempty"`
	Name       string      `json:"name,omitempty"`
	Parts      []Part      `json:"parts,omitempty"`
	Role       Role        `json:"role"`
	ToolCallID string      `json:"tool_call_id,omitempty"`
	ToolCalls  []identCall `json:"tool_calls,omitempty"`
}

// encodeIdent is v's JSON as encoding/json writes it, but with <, > and &
// left as they are, as canonical JSON leaves them (and, inside a
// json.RawMessage such as a call's arguments, U+2028 and U+2029 too): the
// same value, spelled as canonical JSON more often.
func encodeIdent(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

type identCall struct {
	callArgs        // arguments, arguments_text
	ID       string `json:"id"`
	Name     string `json:"name"`
}

func identifyMessage(m Message) identMessage {
	im := identMessage{Role: m.Role, Content: m.Content, ToolCalls: make([]identCall, len(m.ToolCalls)),
		ToolCallID: m.ToolCallID, Name: m.Name, IsError: m.IsError, Parts: m.Parts}
	for i, c := range m.ToolCalls {
		im.ToolCalls[i] = identCall{ID: c.ID, Name: c.Name, callArgs: argsOf(c.Arguments)}
	}
	return im
}

// message is the message a journal stored.
func (im identMessage) message() Message {
	m := Message{Role: im.Role, Content: im.Content, ToolCallID: im.ToolCallID, Name: im.Name, IsError: im.IsError, Parts: im.Parts}
	for _, c := range im.ToolCalls {
		m.ToolCalls = append(m.ToolCalls, ToolCall{ID: c.ID, Name: c.Name, Arguments: c.raw()})
	}
	return m
}

// callArgs are a tool call's arguments as a request identifies them and a
// journal stores them: canonical JSON (RFC 8785), so that two texts of
// one value — spaces, key order, escapes — are one request; or, when they
// are not JSON, or not JSON that has an exact canonical form no deeper
// than maxArgsDepth, the exact text. A model that writes arguments that
// are not JSON is told so, and the text it wrote is part of what the run
// did: recorded and replayed like any other.
type callArgs struct {
	JSON json.RawMessage `json:"arguments,omitempty"`
	Text *string         `json:"arguments_text,omitempty"`
}

// maxArgsDepth bounds the nesting of arguments kept as JSON, well below
// the limit of the JSON readers, so that a request or a journal line that
// holds them stays within it.
const maxArgsDepth = 1000

func argsOf(raw json.RawMessage) callArgs {
	if c, ok := canonicalArgs(raw); ok {
		return callArgs{JSON: c}
	}
	text := string(raw)
	return callArgs{Text: &text}
}

func (a callArgs) raw() json.RawMessage {
	if a.Text != nil {
		return json.RawMessage(*a.Text)
	}
	return a.JSON
}

// canonicalArgs returns arguments in canonical JSON and true, or, for
// arguments kept as text (see callArgs), them and false.
func canonicalArgs(raw json.RawMessage) (json.RawMessage, bool) {
	c, err := digest.CanonicalExact(raw)
	if err != nil || jsonDepth(c) > maxArgsDepth {
		return raw, false
	}
	return c, true
}

// jsonDepth returns the nesting depth of valid JSON.
func jsonDepth(b []byte) int {
	depth, deepest, str := 0, 0, false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case str && c == '\\':
			i++
		case c == '"':
			str = !str
		case str:
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// canonicalCalls puts the arguments of a model's tool calls in the form a
// journal stores, so that a run acts on the same calls recorded, replayed
// or neither.
func canonicalCalls(resp *Response) {
	if resp == nil {
		return
	}
	for i, c := range resp.Message.ToolCalls {
		resp.Message.ToolCalls[i].Arguments, _ = canonicalArgs(c.Arguments)
	}
}

// storedResponse is how a journal stores a model's response: its message
// as requests identify it.
type storedResponse struct {
	Message identMessage `json:"message"`
	Usage   Usage        `json:"usage"`
	// MaxOutputTokens is Response.MaxOutputTokens.
	MaxOutputTokens int `json:"max_output_tokens,omitempty"`
	// Retried is Response.Retried.
	Retried Retried `json:"retried,omitzero"`
}

// modelRequest is what identifies a model call: everything sent that
// shapes the answer, and the full contract the answer is checked against.
// Keys, headers, timeouts and retries are not part of it.
type modelRequest struct {
	Provider   string         `json:"provider"`
	Model      string         `json:"model"`
	Sampling   sampling       `json:"sampling"`
	Messages   []identMessage `json:"messages"`
	Tools      []ToolSpec     `json:"tools"`
	ToolChoice ToolChoice     `json:"tool_choice"`
	OutputTool string         `json:"output_tool,omitempty"`
	OutputWrap string         `json:"output_wrap,omitempty"`
	// OutputNullable is recorded for readers of the journal (agentc
	// view), and takes no part in the fingerprint: it follows from the
	// lowered schema the tools or the answer format carry.
	OutputNullable []string        `json:"output_nullable,omitempty"`
	Answer         *AnswerFormat   `json:"answer,omitempty"`
	Contract       json.RawMessage `json:"contract,omitempty"`
}

type sampling struct {
	Temperature     *float64 `json:"temperature,omitempty"`
	MaxOutputTokens int      `json:"max_output_tokens,omitempty"`
	Reasoning       string   `json:"reasoning,omitempty"`
}

// toolRequest is what identifies a tool call: the tool as the model saw
// it and as the plan declares it, and the arguments.
type toolRequest struct {
	Tool        string     `json:"tool"`
	Spec        ToolSpec   `json:"spec"`
	Declaration *plan.Tool `json:"declaration,omitempty"`
	callArgs
}

// identify returns a model request's identity: what fingerprints it and
// what a journal stores of it. The messages earlier calls identified are
// kept: the conversation is only ever appended to, and a round costs its
// new messages alone.
func (x *run) identify(req *Request) modelRequest {
	if len(req.Messages) < len(x.idents) {
		x.idents = nil
	}
	for _, m := range req.Messages[len(x.idents):] {
		x.idents = append(x.idents, identifyMessage(m))
	}
	return identifyWith(req, x.provider, x.idents[:len(req.Messages):len(req.Messages)])
}

// identifyWith is a request's identity, its messages already identified.
func identifyWith(req *Request, provider string, msgs []identMessage) modelRequest {
	id := modelRequest{
		Provider: provider, Model: req.Model,
		Sampling: sampling{Temperature: req.Temperature, MaxOutputTokens: req.MaxOutputTokens, Reasoning: req.Reasoning},
		Tools:    req.Tools, ToolChoice: req.ToolChoice, OutputTool: req.OutputTool, OutputWrap: req.OutputWrap, OutputNullable: req.OutputNullable, Answer: req.Answer, Contract: req.Contract,
		Messages: msgs,
	}
	if id.Tools == nil {
		id.Tools = []ToolSpec{}
	}
	return id
}

// describeEffect names an effect for messages: "model call" or "call of
// tool X".
func describeEffect(kind string, request json.RawMessage) string {
	if kind == journal.KindApproval {
		return "approval of a call"
	}
	if kind == journal.KindTool {
		var r struct {
			Tool string `json:"tool"`
		}
		if json.Unmarshal(request, &r) == nil && r.Tool != "" {
			return "call of tool " + r.Tool
		}
		return "tool call"
	}
	return "model call"
}

// describeRecorded names a recorded effect for messages. A tool's name
// too long for one is left out before it is made: a journal's value
// references could name gigabytes.
func describeRecorded(e *journal.Entry) string {
	var tool json.RawMessage
	if e.Kind == journal.KindTool {
		tool, _ = e.ExpandRequest(&journal.Budget{Max: 1 << 10, What: "a tool's name"}, "tool")
	}
	return describeEffect(e.Kind, tool)
}

// ident is how an effect identifies itself to the journal: its full
// request (compared field by field when it diverges), the form written to
// the journal, and its fingerprint.
type ident struct {
	full   any
	stored any    // nil: the full request
	fp     string // "": computed from the full request
	what   string // "model call", "call of tool X"
	// effect is the call as a host's Effector makes it; nil for one the
	// run makes itself whatever the host (a deadline marked in a journal).
	effect *Effect
	// fresh: make the effect live even though the journal holds one at
	// its key (an approval asked again in a resume), recording it anew.
	fresh bool
}

// effect performs one effect: served from the journal when the journal
// holds it (and the request is the one recorded), else made live and
// appended. With no journal it is simply live. A *Divergence error stops
// the run.
func (x *run) effect(k journal.Key, kind string, id ident, live func() (json.RawMessage, error)) (resp json.RawMessage, replayed bool, err error) {
	j := x.journal
	remote := x.effector != nil && id.effect != nil
	if j == nil && !remote {
		resp, err = live()
		return resp, false, err
	}
	if k.Path == "" {
		k.Path = x.jpath // an approval names its own, under its call's
	}
	if id.fp == "" {
		b, err := json.Marshal(id.full)
		if err != nil {
			return nil, false, fmt.Errorf("journal: encoding the request of effect %s: %w", k, err)
		}
		if id.fp, err = journal.Fingerprint(b); err != nil {
			return nil, false, fmt.Errorf("journal: effect %s: %w", k, err)
		}
	}
	if j != nil && j.Recorded != nil {
		// A failed effect is served in a replay, made again in a resume
		// that goes on where the recorded run ended (remakes).
		e, ok := j.Recorded.Lookup(k)
		if ok && !j.Replay && (id.fresh || j.remakes(k, e)) {
			j.reach(k, false)
		} else if ok {
			if e.Kind != kind || e.Fingerprint != id.fp {
				return nil, false, x.divergence(k, kind, id, e)
			}
			j.reach(k, true)
			if e.Error != "" {
				f := &FailedEffect{Msg: e.Error}
				_ = json.Unmarshal(e.Response, f)
				return nil, true, f
			}
			if e.Response == nil {
				return nil, false, fmt.Errorf("journal: effect %s (%s) is recorded without a response", k, id.what)
			}
			return e.Response, true, nil
		}
	}
	if j != nil && j.Replay {
		return nil, false, &Divergence{Effect: k.String(), Kind: kind,
			Reason: fmt.Sprintf("the journal lacks effect %s (%s): the run went where the recorded one did not", k, id.what)}
	}
	stored := id.stored
	if stored == nil {
		stored = id.full
	}
	b, err := json.Marshal(stored)
	if err != nil {
		return nil, false, fmt.Errorf("journal: encoding the request of effect %s: %w", k, err)
	}
	// Every request a journal or a host holds has the secrets replaced;
	// the fingerprint is the request's as it was sent.
	s := x.opts.Secrets
	request := s.JSON(b)
	started := x.now()
	if remote {
		e := *id.effect
		e.Key, e.Kind, e.Agent, e.Fingerprint, e.Request = k.String(), kind, x.opts.Agent, id.fp, request
		e.Deadline = x.effectDeadline()
		resp, err = x.effector.Make(x.runCtx, &e)
	} else {
		resp, err = live()
	}
	if err != nil && x.cancelled() {
		// Interrupted: not an outcome to keep; a resume makes it again.
		return nil, false, &madeError{err: err}
	}
	if j != nil && j.Writer != nil {
		e := journal.Entry{Key: k, Kind: kind, Fingerprint: id.fp, Request: request, Response: s.JSON(resp),
			Started: started, DurationMS: x.now().Sub(started).Milliseconds()}
		if err != nil {
			// A failure is an outcome a replay must reproduce: the run
			// ended on it, or a nested run's failure became a tool error.
			e.Error = s.String(err.Error())
			var f *FailedEffect
			var refused *ApprovalRefused
			fe := FailedEffect{Deadline: x.isDeadline(err), Own: x.pastDeadline(), Early: early(err), Pool: errors.As(err, &f) && f.Pool,
				Unapproved: errors.As(err, &refused) || errors.As(err, &f) && f.Unapproved}
			if b, ok := errors.AsType[*passedBetween](err); ok {
				fe.Said = s.String(b.said)
			}
			if kind == journal.KindModel {
				fe.Class = FailureClassOf(err)
				if u := SpentOf(err); u != (Usage{}) {
					fe.Usage = &u
				}
				if r := RetriedOf(err); r.Attempts > 0 {
					fe.Retried = &r
				}
			}
			e.Response, _ = json.Marshal(fe)
		}
		if werr := j.Writer.Append(e); werr != nil {
			return nil, false, &madeError{err: journalWriteError(werr), unjournaled: true}
		}
	}
	if err != nil {
		return resp, false, &madeError{err: err}
	}
	return resp, false, nil
}

// madeError is an effect's failure that came once the effect was made
// (its live function ran, or an effector was asked to make it): the run
// was interrupted or its deadline passed while it was being made, it
// failed, or, unjournaled, it was made and the journal could not be
// written. It reads and unwraps as err: it only keeps a caller from
// saying that a call which ran, and may have changed something, was not
// made (see effectFailure).
type madeError struct {
	err         error
	unjournaled bool
}

func (e *madeError) Error() string { return e.err.Error() }
func (e *madeError) Unwrap() error { return e.err }

// effectFailure is what a tool call's result says of an error its effect
// ended with: whether the call was made, and why it has no result.
func (x *run) effectFailure(err error) string {
	var made *madeError
	var f *FailedEffect
	switch {
	case errors.As(err, &made) && made.unjournaled:
		return "the call was made, but its result could not be journaled: " + err.Error()
	case made == nil && !errors.As(err, &f):
		return "the call was not made: " + err.Error()
	case made != nil && x.cancelled():
		return "the call was cut off: the run was interrupted"
	case x.isDeadline(err):
		// Made and cut off, by this run or by the one that recorded it.
		return "the call was cut off: " + err.Error()
	}
	return "the call failed: " + err.Error()
}

// FailedEffect is an effect that failed, as a journal recorded it: a
// replay ends the way the recorded run did.
type FailedEffect struct {
	Msg string `json:"-"`
	// Deadline says a deadline ended it; Own, that it was the run's own
	// deadline rather than its caller's.
	Deadline bool `json:"deadline"`
	Own      bool `json:"own,omitempty"`
	// Early says it ended before the deadline, as one it could not meet
	// (see EarlyDeadline): its error says why.
	Early bool `json:"early,omitempty"`
	// Pool says the call was not made: the shared token pool could never
	// hold it.
	Pool bool `json:"pool,omitempty"`
	// Unapproved says no one could approve the call (ApprovalRefused).
	Unapproved bool `json:"unapproved,omitempty"`
	// Said is how the run ended where the effect stands for a deadline
	// that passed before it (markDeadline), or for a call of an agent it
	// cut off (calleeCutOff): a replay ends in the same words, which a
	// calling agent's next request holds.
	Said string `json:"said,omitempty"`
	// Class is a failed model call's class (FailureClassOf), which
	// decides whether a fallback served it.
	Class string `json:"class,omitempty"`
	// Usage is what a failed model call spent (SpentOf), which the run
	// was charged; nil for none.
	Usage *Usage `json:"spent,omitempty"`
	// Retried is the failed model call's attempts that the provider
	// answered (RetriedOf), which the run was charged; nil for none.
	Retried *Retried `json:"retried,omitempty"`
}

func (e *FailedEffect) Error() string { return e.Msg }

// Spent returns what the failed call spent.
func (e *FailedEffect) Spent() Usage {
	if e.Usage == nil {
		return Usage{}
	}
	return *e.Usage
}

// RetriedAttempts returns the failed call's answered attempts.
func (e *FailedEffect) RetriedAttempts() Retried {
	if e.Retried == nil {
		return Retried{}
	}
	return *e.Retried
}

// FailureClass returns the recorded failure's class.
func (e *FailedEffect) FailureClass() string { return e.Class }

// EarlyDeadline is an error that ends an effect before a deadline it
// could not meet: a wait for a rate limit that would outlast it (package
// pace). It is a context.DeadlineExceeded, and the run ends with the
// deadline bound and the error's own words.
type EarlyDeadline interface {
	error
	BeforeDeadline() bool
}

// early reports whether err is an EarlyDeadline, or was recorded as one.
func early(err error) bool {
	var e EarlyDeadline
	var f *FailedEffect
	if errors.As(err, &f) {
		return f.Early
	}
	return errors.As(err, &e) && e.BeforeDeadline()
}

// isDeadline reports whether an effect's error is the run's deadline.
func (x *run) isDeadline(err error) bool {
	var f *FailedEffect
	if errors.As(err, &f) {
		return f.Deadline
	}
	return errors.Is(err, context.DeadlineExceeded) || x.pastDeadline() || x.callerPast()
}

// markDeadline journals a deadline that passed between effects, as the
// model call the round would have made, so that a replay, which runs
// faster, ends where the recorded run did.
func (x *run) markDeadline(round int) {
	k := x.modelKey(round, false)
	if x.journal == nil || x.journal.Replay || x.journal.Writer == nil || !x.live(k) {
		// A resume whose deadline passed where the journal holds the
		// call leaves it there, for a resume given more time.
		return
	}
	_, _, _ = x.complete(k, x.request(), func() (*Response, error) {
		return nil, &passedBetween{said: x.rep.Error, err: fmt.Errorf("the deadline (%s) passed before the call: %w", x.Runner.deadline, context.DeadlineExceeded)}
	})
}

// passedBetween is the failure markDeadline journals: the run ended
// before the call, saying said; and calleeCutOff's, the run ending on the
// call of an agent the deadline cut off.
type passedBetween struct {
	said string
	err  error
}

func (e *passedBetween) Error() string { return e.err.Error() }
func (e *passedBetween) Unwrap() error { return e.err }

// divergence reports a request that is not the one recorded, field by
// field.
func (x *run) divergence(k journal.Key, kind string, id ident, e *journal.Entry) *Divergence {
	d := &Divergence{Effect: k.String(), Kind: kind, Reason: fmt.Sprintf("effect %s (%s) is not the request recorded", k, id.what)}
	if e.Kind != kind {
		d.Reason = fmt.Sprintf("effect %s is a %s now, recorded as %s", k, id.what, describeRecorded(e))
		return d
	}
	now, err := json.Marshal(id.full)
	if err != nil {
		return d
	}
	was, err := recordedRequest(x.journal.Recorded, e)
	if err != nil {
		// Said by its line, not by the journal's path: that is the
		// host's (a server's directory), and a report may go elsewhere.
		var je *journal.Error
		if errors.As(err, &je) && je.File != "" {
			bare := *je
			bare.File = ""
			err = &bare
		}
		d.Changes = append(d.Changes, "(the recorded request cannot be read back: "+err.Error()+")")
		return d
	}
	var files []string
	for _, c := range journal.Diff(was, now) {
		d.Changes = append(d.Changes, c.String())
		if f := changedFile(id.full, c.Path); f != nil {
			name := f.Name
			if f.FileName != "" {
				name += " (" + f.FileName + ")"
			}
			files = append(files, name)
		}
	}
	if len(files) > 0 {
		d.Reason += ": the file given as " + strings.Join(files, ", ") + " is not the one recorded"
	}
	if len(d.Changes) == 0 {
		d.Changes = append(d.Changes, "(no field of the request differs from the one recorded, but the recorded fingerprint is not its: the entry was edited, or written by another version of agentc)")
	}
	return d
}

// changedFile is the file of a model call's request whose digest a
// change's path names, or nil.
func changedFile(full any, path string) *File {
	req, ok := full.(modelRequest)
	if !ok {
		return nil
	}
	var m, p int
	if n, err := fmt.Sscanf(path, "/messages/%d/parts/%d/file/digest", &m, &p); n != 2 || err != nil || !strings.HasSuffix(path, "/file/digest") {
		return nil
	}
	if m < 0 || m >= len(req.Messages) || p < 0 || p >= len(req.Messages[m].Parts) {
		return nil
	}
	return req.Messages[m].Parts[p].File
}

// storedMessages is how a model call's journal entry holds the
// conversation: only the messages no earlier model call of the run
// stored, after the first After of them, so a journal grows with the
// conversation, not with its square.
type storedMessages struct {
	After int            `json:"after"`
	New   []identMessage `json:"new"`
}

// recordedRequest reads back the full request of a recorded effect: for a
// model call, the conversation is put together again from the messages
// each earlier model call of the same run stored. The conversation, like
// any request sent, is at most journal.MaxRequest: each earlier call's
// messages are counted before they are made.
func recordedRequest(j *journal.Journal, e *journal.Entry) (json.RawMessage, error) {
	whole, err := e.ExpandRequest(nil)
	if err != nil || e.Kind != journal.KindModel {
		return whole, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(whole, &m); err != nil {
		return nil, err
	}
	b := &journal.Budget{Max: journal.MaxRequest, What: "the request's conversation put together again"}
	msgs, err := recordedMessages(j, e, b, 0)
	if err != nil {
		return nil, err
	}
	enc, err := json.Marshal(msgs)
	if err != nil {
		return nil, err
	}
	m["messages"] = enc
	return json.Marshal(m)
}

func recordedMessages(j *journal.Journal, e *journal.Entry, b *journal.Budget, depth int) ([]json.RawMessage, error) {
	stored, err := e.ExpandRequest(b, "messages")
	if err != nil {
		return nil, err
	}
	var r struct {
		Messages struct {
			After int               `json:"after"`
			New   []json.RawMessage `json:"new"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(stored, &r); err != nil {
		return nil, err
	}
	if r.Messages.After == 0 {
		return r.Messages.New, nil
	}
	// The run's previous model call stored the messages before these.
	for round := e.Key.Round - 1; round >= 1 && depth < 100000; round-- {
		prev, ok := j.Lookup(journal.Key{Path: e.Key.Path, Round: round})
		if !ok || prev.Kind != journal.KindModel {
			continue
		}
		before, err := recordedMessages(j, prev, b, depth+1)
		if err != nil {
			return nil, err
		}
		if len(before) < r.Messages.After {
			return nil, fmt.Errorf("effect %s stores messages after the first %d, but the calls before it hold %d", e.Key, r.Messages.After, len(before))
		}
		return append(before[:r.Messages.After:r.Messages.After], r.Messages.New...), nil
	}
	return nil, fmt.Errorf("effect %s stores messages after the first %d, but no earlier model call holds them", e.Key, r.Messages.After)
}

// complete asks the model for a turn, through the journal, as the effect
// at k (modelKey); call makes the call live (nil: the run's model).
func (x *run) complete(k journal.Key, req *Request, call func() (*Response, error)) (*Response, bool, error) {
	var remote *Effect
	if call == nil {
		remote = &Effect{Model: req, Fallback: x.lane}
		call = func() (*Response, error) {
			_, resp, err := performModel(x.runCtx, x.opts.Model, req, x.opts.Secrets)
			return resp, err
		}
	}
	if x.journal == nil && x.effector == nil {
		resp, err := call()
		return resp, false, err
	}
	full := x.identify(req)
	fp, err := x.modelFingerprint(full)
	if err != nil {
		return nil, false, fmt.Errorf("journal: model call %s: %w", k, err)
	}
	after := min(x.stored, len(full.Messages))
	if k.Round == 0 {
		// A fallback's call, under the failed call's key: it holds its
		// whole conversation.
		after = 0
	}
	stored := struct {
		modelRequest
		Messages storedMessages `json:"messages"`
	}{full, storedMessages{After: after, New: full.Messages[after:]}}
	id := ident{full: full, stored: stored, fp: fp, what: "model call", effect: remote}
	x.stored = len(full.Messages)
	var out *Response
	raw, replayed, err := x.effect(k, journal.KindModel, id, func() (json.RawMessage, error) {
		resp, err := call()
		if err != nil {
			return nil, err
		}
		canonicalCalls(resp)
		out = resp
		return json.Marshal(storedResponse{identifyMessage(resp.Message), resp.Usage, resp.MaxOutputTokens, resp.Retried})
	})
	if err != nil || out != nil {
		return out, replayed, err
	}
	// Served from the journal, or made by the host's effector. A recorded
	// reply was written by whoever supplied the journal: it is held to
	// what a live reply to the request could be, before it is decoded
	// (decoded, a million tool calls in a 47 MB line took 2 GB) and after.
	if replayed {
		if err := replylimit.CheckRecorded(raw, int64(req.MaxOutputTokens)); err != nil {
			return nil, replayed, x.journal.badRecord(fmt.Errorf("journal: the recorded response of model call %s is not a reply its request could have had: %w", k, err))
		}
	}
	var rec storedResponse
	if err := json.Unmarshal(raw, &rec); err != nil {
		if replayed {
			return nil, replayed, x.journal.badRecord(fmt.Errorf("journal: the recorded response of model call %s is not a response: %w", k, err))
		}
		return nil, replayed, fmt.Errorf("journal: the response the host returned of model call %s is not a response: %w", k, err)
	}
	resp := &Response{Message: rec.Message.message(), Usage: rec.Usage, MaxOutputTokens: rec.MaxOutputTokens, Retried: rec.Retried}
	if replayed {
		if err := checkRecordedReply(int64(req.MaxOutputTokens), &resp.Message); err != nil {
			return nil, replayed, x.journal.badRecord(fmt.Errorf("journal: the recorded response of model call %s is not a reply its request could have had: %w", k, err))
		}
	}
	canonicalCalls(resp)
	return resp, replayed, nil
}

// checkRecordedReply is CheckReply of a reply served from a journal: a
// request that set no output limit is taken to have allowed
// replylimit.MaxTokens, the most any reply holds.
func checkRecordedReply(maxTokens int64, msg *Message) error {
	limit := "the request's limit"
	if maxTokens <= 0 {
		maxTokens, limit = replylimit.MaxTokens, "no output limit: the most any reply holds"
	}
	if n, bound := ReplySize(msg), replylimit.ReplyBound(maxTokens); n > bound {
		return fmt.Errorf("it holds %d bytes of text and tool calls (a call counts %d at least), more than the %d a reply to %d output tokens (%s) can make", n, replylimit.CallBytes, bound, maxTokens, limit)
	}
	return nil
}

// modelFingerprint is a model call's fingerprint: blake3 over the canonical
// request in which the conversation is one digest, a hash chain of its
// messages' value digests, so that a round costs what its new messages
// cost. Messages are only ever appended to a run's conversation.
func (x *run) modelFingerprint(id modelRequest) (string, error) {
	if x.chain == nil {
		x.chain = blake3.New()
	}
	for ; x.chained < len(id.Messages); x.chained++ {
		b, err := encodeIdent(id.Messages[x.chained])
		if err != nil {
			return "", err
		}
		d, err := journal.ValueDigest(b)
		if err != nil {
			return "", err
		}
		x.chain.WriteString(d + "\n")
	}
	if x.chained != len(id.Messages) {
		return "", fmt.Errorf("the conversation shrank from %d messages to %d", x.chained, len(id.Messages))
	}
	// The request with its messages as their hash chain. The tools,
	// contract and answer format, the same round after round, are
	// canonicalised once (canonicalMemo).
	c, err := x.canonical.object([]member{
		{key: "answer", v: id.Answer, memo: true, omit: id.Answer == nil},
		{key: "contract", v: id.Contract, raw: id.Contract, memo: true, omit: len(id.Contract) == 0},
		{key: "message_count", v: len(id.Messages)},
		{key: "messages", v: hex.EncodeToString(x.chain.Sum(nil))}, // Sum leaves the chain as it was
		{key: "model", v: id.Model},
		{key: "output_tool", v: id.OutputTool, omit: id.OutputTool == ""},
		{key: "output_wrap", v: id.OutputWrap, omit: id.OutputWrap == ""},
		{key: "provider", v: id.Provider},
		{key: "sampling", v: id.Sampling},
		{key: "tool_choice", v: id.ToolChoice},
		{key: "tools", v: id.Tools, raw: x.sizes.toolsJSON(id.Tools), memo: true},
	})
	if err != nil {
		return "", err
	}
	return journal.FingerprintCanonical(c), nil
}

// toolFingerprint is a tool call's fingerprint: journal.Fingerprint of
// the request, its spec and declaration, the same call after call,
// canonicalised once (canonicalMemo).
func (x *run) toolFingerprint(req toolRequest) (string, error) {
	enc, err := x.toolEncoding(req)
	if err != nil {
		return "", err
	}
	c, err := x.canonical.object([]member{
		{key: "arguments", v: req.JSON, omit: len(req.JSON) == 0},
		{key: "arguments_text", v: req.Text, omit: req.Text == nil},
		{key: "declaration", v: req.Declaration, raw: enc.decl, memo: true, omit: req.Declaration == nil},
		{key: "spec", v: req.Spec, raw: enc.spec, memo: true},
		{key: "tool", v: req.Tool},
	})
	if err != nil {
		return "", err
	}
	return journal.FingerprintCanonical(c), nil
}

// toolEncoding is a tool's spec and declaration as its calls' fingerprints
// encode them, kept for the run's later calls of the tool.
type toolEncoding struct {
	specOf     ToolSpec
	declOf     *plan.Tool
	spec, decl []byte
}

// toolEncoding returns the encoding of req's spec and declaration: the
// one kept for the tool when they are the ones it was made of (the same
// declaration, from declaration, and a spec equal to it), else a new one.
func (x *run) toolEncoding(req toolRequest) (*toolEncoding, error) {
	if e := x.tools[req.Tool]; e != nil && e.declOf == req.Declaration && sameSpec(e.specOf, req.Spec) {
		return e, nil
	}
	e := &toolEncoding{specOf: req.Spec, declOf: req.Declaration}
	// A copy: a schema changed in place after this call must not match.
	e.specOf.Schema = bytes.Clone(req.Spec.Schema)
	var err error
	if e.spec, err = json.Marshal(req.Spec); err != nil {
		return nil, err
	}
	if req.Declaration != nil {
		if e.decl, err = json.Marshal(req.Declaration); err != nil {
			return nil, err
		}
	}
	if x.tools == nil {
		x.tools = map[string]*toolEncoding{}
	}
	x.tools[req.Tool] = e
	return e, nil
}

func sameSpec(a, b ToolSpec) bool {
	return a.Name == b.Name && a.Description == b.Description && a.Strict == b.Strict && bytes.Equal(a.Schema, b.Schema) && bytes.Equal(a.Contract, b.Contract)
}

// declaration is the plan's declaration of the tool named, nil for none:
// the same pointer for each call of the run, so that toolEncoding knows
// it unchanged.
func (x *run) declaration(name string) *plan.Tool {
	if e := x.tools[name]; e != nil && e.declOf != nil {
		return e.declOf
	}
	decl, ok := x.agent.Capabilities.Tools[name]
	if !ok {
		return nil
	}
	return &decl
}

// member is one member of an object whose canonical JSON is assembled:
// its key, its value, whether its canonical form is kept for later
// requests (memo), and whether it is left out, as encoding/json leaves
// out an empty field marked omitempty.
type member struct {
	key  string
	v    any
	raw  []byte // v's JSON, when the caller has it
	memo bool
	omit bool
}

// object is the canonical JSON (digest.CanonicalExact's) of an object of
// the members, which must be in their keys' canonical order (the keys
// are ASCII: byte order) and need no escaping: each value canonical, the
// members' canonical form the object's.
func (m *canonicalMemo) object(members []member) ([]byte, error) {
	// Each member's canonical form first, then the object in one
	// allocation of its size.
	var kept [maxMembers][]byte
	cs := kept[:0]
	if len(members) > maxMembers {
		cs = make([][]byte, 0, len(members))
	}
	cs = cs[:len(members)]
	size := len("{}")
	for i, mb := range members {
		if mb.omit {
			continue
		}
		raw, err := mb.raw, error(nil)
		if raw == nil {
			if raw, err = json.Marshal(mb.v); err != nil {
				return nil, err
			}
		}
		if mb.memo {
			cs[i], err = m.of(raw)
		} else {
			cs[i], err = digest.CanonicalExact(raw)
		}
		if err != nil {
			return nil, fmt.Errorf("journal: fingerprint: %w", err)
		}
		size += len(`,"":`) + len(mb.key) + len(cs[i])
	}
	b := make([]byte, 0, size)
	b = append(b, '{')
	for i, mb := range members {
		if mb.omit {
			continue
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, mb.key...)
		b = append(b, '"', ':')
		b = append(b, cs[i]...)
	}
	return append(b, '}'), nil
}

// maxMembers is as many members as object keeps on the stack: more than
// a fingerprinted object has.
const maxMembers = 12

// canonicalMemo keeps the canonical JSON of the few values a run's
// requests repeat (its tools, contract and answer format), by their
// encoding: a run's rounds canonicalise each once.
type canonicalMemo struct {
	raw, canon [][]byte
}

// memoSize bounds the values a run keeps: its tools with and without the
// output tool, the contract, the answer format, a fallback's, and each
// tool's spec and declaration.
const memoSize = 32

func (m *canonicalMemo) of(raw []byte) ([]byte, error) {
	for i, r := range m.raw {
		if bytes.Equal(r, raw) {
			return m.canon[i], nil
		}
	}
	c, err := digest.CanonicalExact(raw)
	if err != nil {
		return nil, err
	}
	if len(m.raw) == memoSize {
		m.raw, m.canon = m.raw[1:], m.canon[1:]
	}
	m.raw, m.canon = append(m.raw, raw), append(m.canon, c)
	return c, nil
}

// unreachedDivergence reports recorded effects a finished replay never
// reached, sorted by key.
func (x *run) unreachedDivergence() *Divergence {
	if x.journal == nil || x.jpath != "" {
		return nil
	}
	left := x.journal.unreached()
	if len(left) == 0 {
		return nil
	}
	var listed []string
	for _, e := range left[:min(len(left), maxUnreached)] {
		listed = append(listed, fmt.Sprintf("%s (%s)", e.Key, describeRecorded(e)))
	}
	if more := len(left) - len(listed); more > 0 {
		listed = append(listed, fmt.Sprintf("… and %d more", more))
	}
	return &Divergence{Reason: fmt.Sprintf("the run ended without reaching %d recorded effect(s)", len(left)), Changes: listed}
}

// journalWriteError is the run's failure to write its journal, said by
// what failed and never where: the journal's path is its host's (a
// server's directory), and the run's report, which says it, may go to
// someone else (a served run's client).
func journalWriteError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("journal: writing the run's journal: %w", pe.Err)
	}
	if !strings.HasPrefix(err.Error(), "journal: ") {
		return fmt.Errorf("journal: %w", err) // a host's writer may not say whose error it is
	}
	return err
}
