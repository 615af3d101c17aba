// Package serve offers agents to other programs: each agent, with its
// typed input and its output contract, as a tool of an MCP server (the
// official MCP Go SDK), whose input schema is the agent's input contract
// and whose output schema its output contract, answering with the
// validated answer as structured content.
package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/internal/termtext"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/filestore"
	"agentc.dev/agentc/runtime/redact"
)

// Agent is an agent a server offers: its plan, and the runner that runs
// it, which may run many calls at once.
type Agent struct {
	Plan   *plan.Plan
	Runner *agentrt.Runner
	// Events, when set, hears the events of the runs the HTTP API
	// streams, which go to their client too (the runner's own go
	// nowhere else); Secrets are replaced in what a client is sent.
	Events  func(agentrt.Event)
	Secrets *redact.Set
	// Remote, when set, runs the agent elsewhere (agentc serve
	// --temporal): it starts the run under id there, with the bounds b,
	// and waits for its report, handing events (when not nil) the run's
	// events as it makes them; Runner is then nil. A run elsewhere has its
	// approvals decided there. ctx ends when the run's client goes away
	// (or cancels it), which ends the run; or with the server's stop, its
	// cause (context.Cause) then ErrStopped, on which Remote only stops
	// waiting: the run goes on where it runs.
	Remote func(ctx context.Context, id string, input json.RawMessage, b agentrt.Overrides, events func(agentrt.Event)) (*agentrt.Report, error)
	// An error of Remote's once the run has started there is a
	// *RemoteEnded: the run was made, and is kept.
	// Files, for an agent that takes files, is the store a run's files
	// are put in, checked, before it starts (runtime.StoreInputFiles):
	// the runner's own, or for a Remote agent the store its workers read.
	// The run is given, and its record keeps, an input that names them
	// by digest, never their bytes.
	Files *filestore.Store
	// JournalTools, when set, goes in each run's journal header as the
	// tools it saw when it started (journal.Header.Tools): the tool sets
	// its mcp servers offered, which a replay reads instead of starting
	// them.
	JournalTools json.RawMessage
}

// RemoteEnded is Agent.Remote's error for a run it started that then
// ended without a report (its workflow terminated, say) or could not be
// waited on: the run was made, and is kept as one that failed, where an
// error before it started leaves nothing.
type RemoteEnded struct{ Err error }

func (e *RemoteEnded) Error() string { return e.Err.Error() }
func (e *RemoteEnded) Unwrap() error { return e.Err }

// Meta keys of a tool and of a call's result.
const (
	MetaContract = "agentc/contract" // the tool's contract digest
	MetaPlan     = "agentc/plan"     // the tool's plan digest
	MetaRun      = "agentc/run"      // a call's run's id
	MetaOutcome  = "agentc/outcome"  // a call's run's outcome
	MetaBound    = "agentc/bound"    // the bound that ended it, "none" for none
	MetaUsage    = "agentc/usage"    // the tokens it used
)

// noInput is the input schema of an agent that takes none.
var noInput = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)

// Tool is the MCP tool an agent is: named as the agent, its input schema
// the agent's input contract (which must be an object, as MCP's
// arguments are), its output schema the output contract where that is
// an object (MCP's structured content is one), and the contract and plan
// digests in its _meta.
func Tool(p *plan.Plan) (*mcp.Tool, error) {
	a := &p.Agent
	desc := a.Description
	if desc == "" {
		desc, _, _ = strings.Cut(strings.TrimSpace(a.Instructions), "\n")
	}
	t := &mcp.Tool{Name: a.Name, Description: desc, InputSchema: noInput,
		Meta: mcp.Meta{MetaContract: string(p.Digests.Contract), MetaPlan: string(p.Digests.Plan)}}
	if in := a.Input; in != nil {
		if _, err := plan.FileFields(in.Schema); err != nil {
			return nil, fmt.Errorf("agent %s: input schema: %w", a.Name, err)
		}
		if !objectSchema(in.Schema) {
			return nil, fmt.Errorf("agent %s: its input schema is not of type object, and an MCP tool's arguments are an object", a.Name)
		}
		t.InputSchema = in.Schema
	}
	if o := a.Output; o != nil && objectSchema(o.Schema) {
		t.OutputSchema = o.Schema
	}
	return t, nil
}

// objectSchema reports whether a schema says its value is an object.
func objectSchema(s json.RawMessage) bool {
	var v struct {
		Type any `json:"type"`
	}
	return json.Unmarshal(s, &v) == nil && v.Type == "object"
}

// MCP returns a server offering each agent as a tool. version names the
// server in its handshake. Two agents of one name are an error, as is an
// agent no MCP tool can stand for (see Tool).
func MCP(version string, agents []Agent, runs *Runs) (*mcp.Server, error) {
	s := mcp.NewServer(&mcp.Implementation{Name: "agentc", Version: version}, nil)
	seen := map[string]bool{}
	waiting := &retries{calls: map[string]*mcpCall{}}
	for _, ag := range agents {
		t, err := Tool(ag.Plan)
		if err != nil {
			return nil, err
		}
		if seen[t.Name] {
			return nil, fmt.Errorf("two agents are named %s: an MCP server's tools have names of their own", t.Name)
		}
		seen[t.Name] = true
		s.AddTool(t, handler(ag, runs, waiting, t.OutputSchema != nil))
	}
	return s, nil
}

// handler runs the agent with a call's arguments as its input. An input
// that fails the input contract, and a run that ends without a valid
// answer or on a bound, are the call's error (isError), saying why; a
// valid answer is the result, as structured content where the contract
// is an object, and as its JSON text for clients that read text alone.
func handler(ag Agent, runs *Runs, waiting *retries, structured bool) mcp.ToolHandler {
	result := func(rec *Record, err error) (*mcp.CallToolResult, error) {
		if err != nil {
			err = runs.Public(err)
			var in *InternalError
			if errors.As(err, &in) {
				return nil, err
			}
			return failed(err.Error(), nil), nil
		}
		rep := rec.Result
		meta := mcp.Meta{MetaRun: rec.ID, MetaOutcome: rep.Outcome, MetaBound: rep.Bound, MetaUsage: rep.Usage}
		if rep.Outcome != agentrt.OutcomeOK || rep.Bound != agentrt.BoundNone {
			msg := rep.Error
			if msg == "" {
				msg = fmt.Sprintf("the run ended with outcome %s, bound %s", rep.Outcome, rep.Bound)
			}
			return failed(msg, meta), nil
		}
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(rep.Answer)}}}
		res.Meta = meta
		if structured {
			res.StructuredContent = rep.Answer
		}
		return res, nil
	}
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		// The share of the bound on reading the call's request was read
		// under (over HTTP), for its run to check the input under; given
		// back here where the call makes no run.
		sh := runs.lent(req.Extra)
		defer sh.Release()
		ctx = WithShare(ctx, sh)
		if state := req.Params.RequestState; state != "" {
			sh.Release() // not while the client's retry waits on its run
			// The client's retry, with the answer to what the run asked.
			return waiting.resume(ctx, state, req.Params.InputResponses)
		}
		var input json.RawMessage
		if ag.Plan.Agent.Input != nil {
			input = req.Params.Arguments
			if len(input) == 0 {
				input = json.RawMessage("{}")
			}
		}
		budgets, err := BudgetsOfMeta(req.Params.Meta)
		if err != nil {
			return failed(err.Error(), nil), nil
		}
		c := call{runner: ag.Runner, input: input, budgets: budgets}
		if !canElicit(req.ClientCapabilities()) {
			return result(runs.run(ctx, ag, c))
		}
		if req.ProtocolVersion() < multiRoundTrip {
			// An older client is asked in the middle of the call.
			c.elicit = elicitDuring(req.Session)
			return result(runs.run(ctx, ag, c))
		}
		// A client of the newer protocol is asked by the call's result
		// (input required), and answers by calling again: the run goes on
		// in the server across the calls.
		mc := &mcpCall{asks: make(chan *ask), done: make(chan callEnd, 1)}
		runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		mc.cancel = cancel
		c.elicit = mc.elicit
		go func() {
			defer cancel()
			res, err := result(runs.run(runCtx, ag, c))
			waiting.forget(mc)
			mc.done <- callEnd{res, err}
		}()
		return waiting.next(ctx, mc)
	}
}

// multiRoundTrip is the first MCP revision whose servers ask a client
// for input by a call's result, not by a request in its middle.
const multiRoundTrip = "2026-07-28"

// canElicit reports whether a client can be asked to fill in a form.
func canElicit(caps *mcp.ClientCapabilities) bool {
	if caps == nil || caps.Elicitation == nil {
		return false
	}
	// An empty elicitation capability is the form mode of older clients.
	return caps.Elicitation.Form != nil || caps.Elicitation.URL == nil
}

// approvalSchema is the form a client shows its user to decide a call.
var approvalSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"approve":{"type":"boolean","title":"Approve the call","description":"yes runs the call; no denies it, and the model reads the reason"},` +
	`"reason":{"type":"string","title":"Reason","description":"why not, for a denial: the model reads it"}},"required":["approve"]}`)

// maxShownArguments bounds the arguments an approval's message shows, in
// bytes: a form has room for more than a terminal's screen.
const maxShownArguments = 4000

// approvalForm is the form that asks the person at a client to decide a
// call. The arguments are shown as the terminal's prompt shows them
// (termtext.Shown): escaped, and, past the bound, with their start and
// their end, saying how much is left out, so that a model cannot put the
// argument that decides (a path) where the person never sees it.
func approvalForm(req *agentrt.ApprovalRequest) *mcp.ElicitParams {
	data := []byte(req.Arguments)
	if req.ArgumentsText != nil {
		data = []byte(*req.ArgumentsText)
	}
	args, ok := termtext.ShownWithin(data, maxShownArguments)
	if !ok {
		args += " (not JSON)"
	}
	who := ""
	if req.Agent != "" {
		who = " (agent " + termtext.Escape(req.Agent) + ")"
	}
	msg := fmt.Sprintf("The call %s of tool %s%s needs approval: %s.\nArguments: %s",
		termtext.Escape(req.Key), termtext.Escape(req.Tool), who, termtext.Escape(req.Why), args)
	return &mcp.ElicitParams{Mode: "form", Message: msg, RequestedSchema: approvalSchema}
}

// answerNotIJSON says why a client's answer to approvalForm, data, is not
// I-JSON (RFC 7493), nil where it is. A member named twice
// ({"approve":false,"approve":true}) is read by its last value here, and
// by its first, or not at all, by another reader of the same answer (the
// client's log of what its user chose, a proxy): the person's decision
// must read one way.
func answerNotIJSON(data []byte) error {
	if err := notIJSON(data); err != nil {
		return fmt.Errorf("the answer to the approval is not I-JSON (RFC 7493), which it must be to decide a call: %w", err)
	}
	return nil
}

// notIJSON says why data is not I-JSON (RFC 7493), nil where it is.
func notIJSON(data []byte) error {
	if _, err := digest.Canonical(data); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "canonical JSON: "))
	}
	return nil
}

// callAnswersNotIJSON is answerNotIJSON of a tools/call's params, raw,
// where they answer a form (inputResponses): nil for a call that answers
// none, or whose params the SDK will refuse itself.
func callAnswersNotIJSON(params json.RawMessage) error {
	var p struct {
		InputResponses json.RawMessage `json:"inputResponses"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.InputResponses) == 0 {
		return nil
	}
	if err := answerNotIJSON(params); err != nil {
		return fmt.Errorf("%w; nothing was decided: call again under the same request state with an answer that names each member once", err)
	}
	return nil
}

// decisionOf reads the client's answer to approvalForm.
func decisionOf(req *agentrt.ApprovalRequest, res *mcp.ElicitResult) (agentrt.ApprovalDecision, error) {
	if res == nil {
		return agentrt.ApprovalDecision{}, &agentrt.ApprovalRefused{Tool: req.Tool, Key: req.Key, Msg: req.Why + "; the client's answer is missing"}
	}
	switch res.Action {
	case "accept":
		approve, ok := res.Content["approve"].(bool)
		if !ok {
			return agentrt.ApprovalDecision{}, &agentrt.ApprovalRefused{Tool: req.Tool, Key: req.Key, Msg: req.Why + "; the client accepted the form without a yes or no"}
		}
		if approve {
			return agentrt.ApprovalDecision{Approved: true, By: agentrt.ByPerson}, nil
		}
		reason, _ := res.Content["reason"].(string)
		if reason == "" {
			reason = "the person at the client said no"
		}
		return agentrt.ApprovalDecision{By: agentrt.ByPerson, Reason: reason}, nil
	case "decline":
		return agentrt.ApprovalDecision{By: agentrt.ByPerson, Reason: "the person at the client declined the call"}, nil
	default:
		return agentrt.ApprovalDecision{By: agentrt.ByPerson, Reason: "the person at the client dismissed the question without an answer"}, nil
	}
}

// elicitDuring asks the person at an older client (before
// multiRoundTrip) to decide a call, by a request in the middle of the
// call. A client that never answers leaves the run waiting until its
// deadline, and at most answerWait: then the call is refused, saying so.
func elicitDuring(s *mcp.ServerSession) elicitFunc {
	return func(ctx context.Context, req *agentrt.ApprovalRequest) (agentrt.ApprovalDecision, bool, error) {
		wait := answerWait()
		askCtx, cancel := context.WithTimeout(ctx, wait)
		defer cancel()
		res, err := s.Elicit(askCtx, approvalForm(req))
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return agentrt.ApprovalDecision{}, true, ctx.Err()
			case askCtx.Err() != nil:
				return agentrt.ApprovalDecision{}, true, &agentrt.ApprovalRefused{Tool: req.Tool, Key: req.Key,
					Msg: fmt.Sprintf("%s; the client was asked, and did not answer within %s", req.Why, wait)}
			}
			return agentrt.ApprovalDecision{}, true, &agentrt.ApprovalRefused{Tool: req.Tool, Key: req.Key, Msg: req.Why + "; asking the client failed: " + err.Error()}
		}
		d, err := decisionOf(req, res)
		return d, true, err
	}
}

// mcpCall is a call whose run goes on across the client's calls: each
// approval it needs is the result of one call (input required), and the
// client's next call, with the answer, takes it on.
type mcpCall struct {
	asks   chan *ask
	done   chan callEnd
	cancel context.CancelFunc
	// Under retries' lock: the state the client was given, and what it
	// answers.
	state   string
	pending *ask
}

// ask is an approval a run waits on, sent to the client.
type ask struct {
	req    *agentrt.ApprovalRequest
	answer chan agentrt.ApprovalDecision
	failed chan error
}

type callEnd struct {
	res *mcp.CallToolResult
	err error
}

// elicit is the approver's way to the client: it hands the request to
// the call in flight, and waits for the answer of the client's next call.
func (mc *mcpCall) elicit(ctx context.Context, req *agentrt.ApprovalRequest) (agentrt.ApprovalDecision, bool, error) {
	a := &ask{req: req, answer: make(chan agentrt.ApprovalDecision, 1), failed: make(chan error, 1)}
	select {
	case mc.asks <- a:
	case <-ctx.Done():
		return agentrt.ApprovalDecision{}, true, ctx.Err()
	}
	// A client that never calls again leaves the run waiting until its
	// deadline, and at most answerWait.
	wait := answerWait()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case d := <-a.answer:
		return d, true, nil
	case err := <-a.failed:
		return agentrt.ApprovalDecision{}, true, err
	case <-timer.C:
		return agentrt.ApprovalDecision{}, true, &agentrt.ApprovalRefused{Tool: req.Tool, Key: req.Key,
			Msg: fmt.Sprintf("%s; the client was asked, and did not call again with an answer within %s", req.Why, wait)}
	case <-ctx.Done():
		return agentrt.ApprovalDecision{}, true, ctx.Err()
	}
}

// defaultAnswerWait bounds how long a run waits for a client's answer
// to an approval it was asked: in the middle of the call (an older
// client, elicitDuring), or by calling again (mcpCall.elicit).
const defaultAnswerWait = 15 * time.Minute

// answerWaitNanos, when above zero, replaces defaultAnswerWait (tests
// shorten it).
var answerWaitNanos atomic.Int64

// answerWait is how long a run waits for a client's answer.
func answerWait() time.Duration {
	if d := answerWaitNanos.Load(); d > 0 {
		return time.Duration(d)
	}
	return defaultAnswerWait
}

// retries holds the calls waiting for a client's next call, by the
// request state they gave it: 128 random bits, which only the client
// that was given them (the server's token holder) has.
type retries struct {
	mu    sync.Mutex
	calls map[string]*mcpCall
}

// answerKey names the one input a call asks for at a time.
const answerKey = "approval"

// next waits for what the call's run does next: ask (the result says
// input is required, with the state to call again with), or end (its
// result). A client that goes away cancels the run.
func (w *retries) next(ctx context.Context, mc *mcpCall) (*mcp.CallToolResult, error) {
	select {
	case a := <-mc.asks:
		state := newID()
		w.mu.Lock()
		mc.state, mc.pending = state, a
		w.calls[state] = mc
		w.mu.Unlock()
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{answerKey: approvalForm(a.req)}, RequestState: state}, nil
	case e := <-mc.done:
		return e.res, e.err
	case <-ctx.Done():
		mc.cancel()
		return nil, ctx.Err()
	}
}

// resume takes the call a client calls again for, gives its run the
// answer, and waits for what it does next.
func (w *retries) resume(ctx context.Context, state string, answers mcp.InputResponseMap) (*mcp.CallToolResult, error) {
	w.mu.Lock()
	mc := w.calls[state]
	var a *ask
	if mc != nil {
		delete(w.calls, state)
		a, mc.state, mc.pending = mc.pending, "", nil
	}
	w.mu.Unlock()
	if mc == nil {
		return failed("no call waits under this request state: it ended (its run's deadline passed), or the server restarted", nil), nil
	}
	res, _ := answers[answerKey].(*mcp.ElicitResult)
	if d, err := decisionOf(a.req, res); err != nil {
		a.failed <- err
	} else {
		a.answer <- d
	}
	return w.next(ctx, mc)
}

// forget drops a call whose run ended while the client had yet to call
// again.
func (w *retries) forget(mc *mcpCall) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if mc.state != "" {
		delete(w.calls, mc.state)
		mc.state = ""
	}
}

func failed(msg string, meta mcp.Meta) *mcp.CallToolResult {
	res := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
	res.Meta = meta
	return res
}
