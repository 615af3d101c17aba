package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/zeebo/blake3"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"agentc.dev/agentc/cost"
	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/internal/leaf/jsonpointer"
	"agentc.dev/agentc/internal/leaf/textcut"
	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/runtime/filestore"
	"agentc.dev/agentc/runtime/journal"
	"agentc.dev/agentc/runtime/redact"
	"agentc.dev/agentc/runtime/tokencount"
)

// Options configure a Runner.
type Options struct {
	// Model answers every turn. Required.
	Model Model
	// FallbackModel makes the model of one of the plan's fallbacks
	// (plan.Fallbacks), given the plan as if its manifest named that
	// model: the models that answer in place of Model, in order, when a
	// call fails in a way the fallbacks serve (plan.Fallback). A plan with
	// fallbacks needs it, unless Provider is test.
	FallbackModel func(fallback *plan.Plan) (Model, error)
	// Tools holds the agent's tools by name; it must hold every tool the
	// plan declares. The host builds them (package runtime/tool). A runner
	// running concurrently calls them concurrently.
	Tools map[string]Tool
	// Strategy decides at round boundaries; nil means Builtin(plan agent).
	Strategy RoundStrategy
	// Pool, when set, is a token allowance shared with other runs.
	Pool *Pool
	// Prices price the run's usage in its report and events; nil is the
	// table embedded in package cost.
	Prices *cost.Table
	// Budgets override the plan's budgets where set.
	Budgets Overrides
	// Events receives every event of a run, synchronously, from the
	// run's goroutine (concurrent runs call it concurrently); nil drops
	// them.
	Events func(Event)
	// Agent names the run in its events, for runs nested in others
	// (an agent called as a tool); empty for a top-level run.
	Agent string
	// Journal, when set, records the run's effects, serves those it
	// already holds, and in a replay forbids the rest. A nested run (an
	// agent called as a tool) takes its parent's, under the call's key.
	Journal *Journal
	// Provider names the model's provider in effect fingerprints; empty
	// means the plan's.
	Provider string
	// Secrets are the secret values the run read (provider keys, the
	// variables its tools are given): each is replaced by redact.Marker
	// in every message sent to the model, tool result, event, journal
	// entry and in the report. Nil redacts nothing.
	Secrets *redact.Set
	// Clock, when set, is the run's time, and the host owns its deadline
	// (see Clock); nil is the process's clock. Nested runs take their
	// caller's.
	Clock Clock
	// Effector, when set, makes the run's model and tool calls (see
	// Effector); Model and Tools are then only what the run asks of them
	// in its own process: nothing of a model, and each tool's Spec, and
	// Call for agents called as tools, whose runs are nested in this one.
	// Nested runs take their caller's.
	Effector Effector
	// Approver decides the calls that need approval (see Approver); nil
	// asks nothing. Nested runs take their caller's.
	Approver Approver
	// Files is the store of the run's files: those its input names by
	// digest, and those it gives in base64, which the run puts there. An
	// input that holds a file needs one. A nested run (an agent called as
	// a tool) has none: a model's arguments cannot name a file.
	Files *filestore.Store
	// MaxFileBytes bounds the files of one run together; zero is
	// plan.DefaultMaxRunFileBytes.
	MaxFileBytes int64
	// Content puts the conversation in events (Event.Messages and
	// Arguments), for telemetry that records it; off, events carry none
	// and nothing is copied.
	Content bool
	// Stream asks providers for each reply as it is generated, and sends
	// it on as model_delta events, with the secrets replaced. A reply
	// that did not stream (a provider that does not, the test model, a
	// journal's) is one delta when it is whole. Nothing recorded changes.
	Stream bool
}

// Overrides replace budgets of the plan. A nil field keeps the plan's.
type Overrides struct {
	Deadline *time.Duration
	Tools    *int
	Tokens   *int
	Rounds   *int
}

// Runner runs one plan, any number of times, concurrently if need be. Its
// schemas are compiled once, and its output tool's name, the plan's, is
// known when it is made, before any run.
type Runner struct {
	plan        *plan.Plan
	agent       *plan.Agent
	opts        Options
	strategy    RoundStrategy
	outputTool  string
	output      *jsonschema.Schema
	input       *jsonschema.Schema
	files       []plan.FileField // the file inputs
	prompt      *plan.Template
	argSchemas  map[string]*jsonschema.Schema // by tool name
	toolLow     map[string]*plan.Lowering     // tools sent strict, by name (Plan.ToolInputs)
	specs       []ToolSpec                    // gathering tools, sorted by name
	outSpec     ToolSpec
	specsOut    []ToolSpec    // specs, then outSpec
	outOnly     []ToolSpec    // outSpec alone
	low         plan.Lowering // how the answer is asked for
	answerFmt   *AnswerFormat // the answer in text (native, prompted); nil in tool mode
	deadline    time.Duration
	toolBudget  int // -1: none
	tokens      int // 0: none
	rounds      int
	answerTurns int
	// lanes are the model chain, this runner first and then one per
	// fallback model; nil without fallbacks.
	lanes []*Runner
	// inputRead, when set, is called once a run has read its input
	// (WithInputRead).
	inputRead func()
}

// ConfigError reports a plan and options that cannot run together.
type ConfigError struct{ Msg string }

func (e *ConfigError) Error() string { return e.Msg }

// New prepares a plan for running: it checks that every tool is provided,
// compiles the input, output and tool argument schemas, parses the prompt
// template and checks that no tool takes the output tool's name.
func New(p *plan.Plan, opts Options) (*Runner, error) {
	if opts.Model == nil {
		return nil, &ConfigError{"runtime: no model"}
	}
	if err := plan.CheckLimits(p); err != nil {
		return nil, &ConfigError{err.Error()}
	}
	a := &p.Agent
	r := &Runner{plan: p, agent: a, opts: opts, argSchemas: map[string]*jsonschema.Schema{}, toolBudget: -1}
	r.strategy = opts.Strategy
	if r.strategy == nil {
		r.strategy = Builtin(a)
	}
	if err := r.budgets(); err != nil {
		return nil, err
	}
	if a.Input != nil {
		schema := a.Input.Schema
		files, err := plan.FileFields(schema)
		if err != nil {
			return nil, &ConfigError{fmt.Sprintf("input schema: %v", err)}
		}
		if len(files) > 0 {
			if schema, err = schemaWithoutFiles(schema, files); err != nil {
				return nil, &ConfigError{fmt.Sprintf("input schema: %v", err)}
			}
			r.files = files
		}
		s, err := plan.CompileSchemaJSON(schema)
		if err != nil {
			return nil, &ConfigError{fmt.Sprintf("input schema: %v", err)}
		}
		r.input = s
	}
	if a.Prompt != "" {
		t, err := plan.ParseTemplate("prompt", a.Prompt)
		if err != nil {
			return nil, &ConfigError{fmt.Sprintf("prompt: %v", err)}
		}
		r.prompt = t
	}
	names := make([]string, 0, len(opts.Tools))
	for name := range opts.Tools {
		names = append(names, name)
	}
	sort.Strings(names)
	for name, t := range a.Capabilities.Tools {
		if t.Kind == "mcp" {
			continue // an mcp server's tools are named by its allow list
		}
		if _, ok := opts.Tools[name]; !ok {
			return nil, &ConfigError{fmt.Sprintf("tool %q (kind %s) is not provided", name, t.Kind)}
		}
	}
	for _, name := range names {
		spec := opts.Tools[name].Spec()
		if spec.Name != name {
			return nil, &ConfigError{fmt.Sprintf("tool %q calls itself %q", name, spec.Name)}
		}
		s, err := plan.CompileSchemaJSON(spec.Schema)
		if err != nil {
			return nil, &ConfigError{fmt.Sprintf("tool %q: argument schema: %v", name, err)}
		}
		r.argSchemas[name] = s
		if l := p.ToolInputs[name]; l != nil {
			// Sent lowered and strict; validated as written.
			if pr := opts.Provider; pr != "" && pr != "test" && pr != l.Provider {
				return nil, &ConfigError{fmt.Sprintf("tool %q: the plan's argument schema is lowered for %s, not %s: run the agent against %s, or against the test model", name, l.Provider, pr, l.Provider)}
			}
			if _, err := plan.CompileSchemaJSON(l.Schema); err != nil {
				return nil, &ConfigError{fmt.Sprintf("tool %q: the argument schema lowered for %s: %v", name, l.Provider, err)}
			}
			if r.toolLow == nil {
				r.toolLow = map[string]*plan.Lowering{}
			}
			r.toolLow[name] = l
			spec.Contract, spec.Schema, spec.Strict = spec.Schema, l.Schema, true
		}
		r.specs = append(r.specs, spec)
	}
	if o := a.Output; o != nil {
		s, err := plan.CompileSchemaJSON(o.Schema)
		if err != nil {
			return nil, &ConfigError{fmt.Sprintf("output schema: %v", err)}
		}
		r.output = s
		r.low = plan.Lowering{Mode: plan.ModeTool, Schema: o.Schema}
		if p.Output != nil {
			r.low = *p.Output
			// An answer format lowered for one provider's dialect is not
			// sent to another; the test model takes any.
			if pr := opts.Provider; pr != "" && pr != "test" && pr != p.Output.Provider {
				return nil, &ConfigError{fmt.Sprintf("the plan's answer format is lowered for %s, not %s: run the agent against %s, or against the test model", p.Output.Provider, pr, p.Output.Provider)}
			}
		}
		if w := r.low.Wrap; w != "" && w != plan.AnswerMember {
			return nil, &ConfigError{fmt.Sprintf("output: an answer is wrapped in the member %q of the output tool's arguments, not %q", plan.AnswerMember, w)}
		}
		switch r.low.Mode {
		case plan.ModeTool:
			if r.low.Tool == "" {
				// A plan a host built without the compiler: the name the
				// compiler would have written.
				if r.low.Tool, err = plan.OutputToolName(a); err != nil {
					return nil, &ConfigError{fmt.Sprintf("output tool: %v", err)}
				}
			}
			r.outputTool = r.low.Tool
			if _, clash := opts.Tools[r.outputTool]; clash {
				return nil, &ConfigError{fmt.Sprintf("output tool name %q is taken by a tool", r.outputTool)}
			}
		case plan.ModeNative, plan.ModePrompted:
			if r.low.Wrap != "" {
				return nil, &ConfigError{fmt.Sprintf("output mode %s: only the output tool's arguments wrap an answer (wrap %q)", r.low.Mode, r.low.Wrap)}
			}
			r.answerFmt = &AnswerFormat{Mode: r.low.Mode, Name: o.Name, Description: o.Description, Schema: r.low.Schema, Strict: r.low.Strict}
		default:
			return nil, &ConfigError{fmt.Sprintf("output mode %q is not one this runtime knows (tool, native, prompted)", r.low.Mode)}
		}
		r.outSpec = ToolSpec{Name: r.outputTool, Description: o.Description, Schema: r.low.Schema, Strict: r.low.Strict}
		// Made once: a request's tools are never changed, and a run's
		// rounds encode each tool set once (convSizes.toolsJSON).
		r.specsOut = append(append([]ToolSpec(nil), r.specs...), r.outSpec)
		r.outOnly = []ToolSpec{r.outSpec}
	}
	if err := r.makeLanes(p, opts); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Runner) budgets() error {
	b := r.agent.Budgets
	d, err := b.DeadlineLimit()
	if err != nil {
		return &ConfigError{err.Error()}
	}
	r.deadline = d
	if b.Tools != nil {
		r.toolBudget = *b.Tools
	}
	r.tokens = b.Tokens
	r.rounds, r.answerTurns = b.RoundLimit(), b.AnswerTurnLimit()
	o := r.opts.Budgets
	if o.Deadline != nil {
		r.deadline = *o.Deadline
	}
	if o.Tools != nil {
		r.toolBudget = *o.Tools
	}
	if o.Tokens != nil {
		r.tokens = *o.Tokens
	}
	if o.Rounds != nil {
		if *o.Rounds <= 0 {
			return &ConfigError{"the rounds bound must be positive"}
		}
		r.rounds = *o.Rounds
	}
	return nil
}

// OutputTool returns the name of the output tool, or "" when none is
// offered: an agent without an output contract, or one whose answer comes
// in the text (native or prompted mode).
func (r *Runner) OutputTool() string { return r.outputTool }

// InputError reports a run input that does not satisfy the input schema;
// nothing was sent.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return "input: " + e.Msg }

// run is the state of one run.
type run struct {
	*Runner
	ctx      context.Context // the caller's
	runCtx   context.Context // with the deadline
	deadline time.Time
	rep      *Report
	msgs     []Message
	said     int // the bytes of text of msgs (messageText)
	model    string
	reason   string
	shape    bool
	invalid  int
	reminded int
	// unanswered counts the answering turns that ended with no answer.
	unanswered int
	calls      int // tool calls made, the output tool's excluded
	journal    *Journal
	jpath      string         // the key nested runs' effects go under
	clock      Clock          // nil: the process's
	effector   Effector       // nil: effects are made in process
	outer      time.Time      // the caller's deadline, on clock; zero for none
	chain      *blake3.Hasher // the hash chain of msgs, for fingerprints
	chained    int            // the messages in chain
	stored     int            // the messages earlier model calls journaled
	provider   string
	roundCost  Cost            // the current round's, so far
	approver   Approver        // nil: no call is asked about
	forRun     map[string]bool // tools approved for the rest of the run
	// lastInput is the input tokens the last model call was charged, and
	// lastCount its request's InputTokens: they calibrate inputEstimate.
	lastInput, lastCount int
	// models are the run's model chain (Runner.lanes), and lane its
	// place in it: 0 for the plan's model; each fallback moves it on for
	// the rest of the run.
	models []*Runner
	lane   int
	// sizes, idents and counts are what earlier rounds measured,
	// identified and counted of the conversation, which only grows: a
	// round's estimate, fingerprint and token count cost its new
	// messages, not the whole conversation.
	sizes  convSizes
	idents []identMessage
	counts convTokens
	// canonical keeps what model fingerprints canonicalise again and
	// again; tools, what tool calls' fingerprints encode again and again.
	canonical canonicalMemo
	tools     map[string]*toolEncoding
}

// Run runs the plan once with an input (JSON; nil for none) and returns
// its report. The error is for input that fails the input schema
// (*InputError); everything that happens in the run, bounds included, is
// in the report.
func (r *Runner) Run(ctx context.Context, input json.RawMessage) (*Report, error) {
	x := &run{Runner: r, ctx: ctx, runCtx: ctx, model: r.agent.Model.Name, reason: r.agent.Model.Reasoning, models: r.lanes}
	if r.opts.Files != nil {
		// Tools put the files their results carry in the run's store.
		x.runCtx = WithFileStore(x.runCtx, r.opts.Files)
	}
	x.journal, x.provider, x.clock, x.effector, x.approver = r.opts.Journal, r.opts.Provider, r.opts.Clock, r.opts.Effector, r.opts.Approver
	if x.provider == "" {
		x.provider = r.agent.Model.Provider
	}
	if s, ok := scopeFrom(ctx); ok {
		if x.journal == nil {
			x.journal, x.jpath = s.j, s.path
		}
		if x.clock == nil && x.effector == nil {
			x.clock, x.effector, x.outer = s.clock, s.effector, s.deadline
		}
		if x.approver == nil {
			x.approver = s.approver
		}
	}
	if j := x.journal; j != nil && j.Recorded != nil && !j.Recorded.Header.CalleeBudget {
		// Recorded when called agents ran within their own budgets.
		x.runCtx = WithCalleesOwnBudgets(x.runCtx)
	}
	if j := x.journal; j != nil && j.Recorded != nil && !j.Recorded.Header.ExactUsage {
		// Recorded when usage was held to the bytes alone.
		x.runCtx = WithUsageByBytes(x.runCtx)
	}
	started := x.now()
	x.rep = &Report{Agent: r.agent.Name, Digests: r.plan.Digests, OutputTool: r.outputTool, Started: started, Rounds: []RoundReport{}}
	user, err := r.userMessage(ctx, input)
	if r.inputRead != nil {
		r.inputRead()
	}
	if err != nil {
		return nil, err
	}
	x.runCtx = withInputFiles(x.runCtx, user)
	// A replay keeps no clock of its own: where the recorded run's
	// deadline passed, the journal says so (a call it cut, or one the
	// next round would have made), and the replay ends there; anywhere
	// else, time a slower machine spends serving the journal is not the
	// run's, and must not end it where the recorded run went on.
	if r.deadline > 0 && (x.journal == nil || !x.journal.Replay) {
		x.deadline = started.Add(r.deadline)
		if x.clock == nil {
			var cancel context.CancelFunc
			x.runCtx, cancel = context.WithDeadline(x.runCtx, x.deadline)
			defer cancel()
		}
	}
	x.say(Message{Role: System, Content: r.instructions()}, user)
	x.shape = r.output != nil && len(r.specs) == 0
	x.rep.Provider = x.provider
	if x.offline() {
		x.rep.StandsInFor = &ModelRef{Provider: r.agent.Model.Provider, Model: r.agent.Model.Name}
	}
	start := r.answerWay()
	if x.offline() {
		start = fmt.Sprintf("offline: the test model answers in place of %s %s; %s", r.agent.Model.Provider, r.agent.Model.Name, start)
	}
	x.emit(Event{Type: EventRunStart, Model: x.shown(), Message: start, Name: r.agent.Name, Provider: x.provider})
	x.loop()
	if x.journal != nil && x.jpath == "" {
		// A run interrupted, or a resume whose own deadline (counted from
		// its start) passed before the journal's end, left the effects
		// after unreached: that says nothing of the run having changed.
		ownDeadline := !x.journal.Replay && x.rep.Bound == BoundDeadline
		if d := x.unreachedDivergence(); d != nil && x.rep.Divergence == nil && !x.rep.Interrupted && !ownDeadline {
			x.diverged(d)
		}
		x.rep.Replayed = x.journal.Served()
	}
	if x.rep.Cost.USD > 0 || len(x.rep.Cost.Unpriced) > 0 {
		x.rep.Prices = x.prices().Describe()
	}
	x.rep.DurationMS = ms(x.now().Sub(started))
	x.redactReport()
	x.emit(Event{Type: EventRunEnd, Outcome: x.rep.Outcome, Bound: x.rep.Bound, Usage: &x.rep.Usage, Cost: &x.rep.Cost, Message: x.rep.Error})
	return x.rep, nil
}

// answerWay says how the answer comes, for the run_start event.
// offline reports whether the test model answers in place of the
// provider the plan names.
func (x *run) offline() bool {
	return x.provider == "test" && x.agent.Model.Provider != "test"
}

// shown is the model as events and the report name it: the one that
// answers. Requests keep the plan's model, which fingerprints name.
func (x *run) shown() string {
	if x.offline() {
		return "test"
	}
	return x.model
}

func (r *Runner) answerWay() string {
	if r.output == nil {
		return "no output contract: the final text is the result"
	}
	return r.low.Way()
}

// instructions is the system message: the agent's instructions and, for
// an answer in prompted mode, the schema the answer must satisfy.
func (r *Runner) instructions() string {
	f := r.answerFmt
	if f == nil || f.Mode != plan.ModePrompted {
		return r.agent.Instructions
	}
	return fmt.Sprintf("%s\n\nWhen you give your final answer (%s: %s), reply with only a JSON value, with no other text, that satisfies this JSON Schema:\n%s",
		r.agent.Instructions, f.Name, f.Description, f.Schema)
}

// userMessage validates the input and renders the first user message: the
// prompt template over the input, or else the input itself; with the
// input's files in it as parts.
func (r *Runner) userMessage(ctx context.Context, input json.RawMessage) (Message, error) {
	var data any
	if len(bytes.TrimSpace(input)) > 0 {
		// Decoded once, as the schema library decodes a value it checks
		// (jsonschema.UnmarshalJSON): numbers kept as written, so that
		// {{.id}} renders 1234567, not 1.234567e+06; nothing but space
		// after the value.
		dec := json.NewDecoder(bytes.NewReader(input))
		dec.UseNumber()
		if err := dec.Decode(&data); err != nil {
			return Message{}, &InputError{fmt.Sprintf("not JSON: %v", err)}
		}
		if _, err := dec.Token(); err != io.EOF {
			return Message{}, &InputError{"data after the JSON value"}
		}
	} else if r.input != nil {
		return Message{}, &InputError{"the agent declares an input schema, but no input was given"}
	}
	if r.input != nil {
		if err := inputNotIJSON(input); err != nil {
			return Message{}, &InputError{err.Error()}
		}
		if err := plan.Validate(r.input, data); err != nil {
			return Message{}, &InputError{ValidationText(err)}
		}
	}
	files, err := r.inputFiles(data)
	if err != nil {
		return Message{}, err
	}
	if len(files) > 0 {
		parts, err := r.userParts(ctx, data, files)
		if err != nil {
			return Message{}, err
		}
		return Message{Role: User, Parts: parts}, nil
	}
	if r.prompt != nil {
		var b strings.Builder
		if err := r.prompt.WithContext(ctx).Execute(&b, data); err != nil {
			if ctx.Err() != nil {
				// Stopped by the run's end (an interrupt, the caller's
				// deadline), not by the template: the run ends so before
				// its first call, which this message, left empty, never
				// reaches.
				return Message{Role: User}, nil
			}
			return Message{}, &InputError{fmt.Sprintf("rendering the prompt: %v", err)}
		}
		return Message{Role: User, Content: b.String()}, nil
	}
	if data != nil {
		var b bytes.Buffer
		if err := json.Compact(&b, input); err != nil {
			return Message{}, &InputError{err.Error()}
		}
		return Message{Role: User, Content: b.String()}, nil
	}
	return Message{Role: User, Content: "Begin."}, nil
}

func (x *run) emit(e Event) {
	if x.opts.Events == nil {
		return
	}
	e.Message = x.opts.Secrets.String(e.Message)
	e.Time = x.now()
	e.Agent = x.opts.Agent
	x.opts.Events(e)
}

func (x *run) end(outcome, bound, msg string) {
	x.rep.Outcome, x.rep.Bound, x.rep.Error = outcome, bound, msg
}

// cancelled reports whether the caller cancelled the run. A caller's
// context that reached its own deadline (a nested run's, when its caller's
// deadline passed) is a deadline, not an interrupt.
func (x *run) cancelled() bool {
	err := x.ctx.Err()
	return err != nil && !errors.Is(err, context.DeadlineExceeded)
}

// interrupted reports whether the caller cancelled the run, and ends it so.
func (x *run) interrupted() bool {
	if !x.cancelled() {
		return false
	}
	x.rep.Interrupted = true
	x.end(OutcomeError, BoundNone, "interrupted")
	return true
}

// now is the time on the run's clock.
func (x *run) now() time.Time {
	if x.clock != nil {
		return x.clock.Now()
	}
	return time.Now()
}

func (x *run) pastDeadline() bool {
	return !x.deadline.IsZero() && !x.now().Before(x.deadline)
}

// callerPast reports whether the caller's deadline passed: its context's,
// or, on a host's clock, the calling run's.
func (x *run) callerPast() bool {
	return errors.Is(x.ctx.Err(), context.DeadlineExceeded) || !x.outer.IsZero() && !x.now().Before(x.outer)
}

// effectDeadline is when an effect must end: the run's deadline or its
// caller's, whichever comes first; zero for none.
func (x *run) effectDeadline() time.Time {
	d := x.deadline
	if !x.outer.IsZero() && (d.IsZero() || x.outer.Before(d)) {
		d = x.outer
	}
	return d
}

// checks runs the checks every round starts with; it reports whether the
// run may go on.
func (x *run) checks(round int) bool {
	switch {
	case x.interrupted():
		return false
	case x.pastDeadline() || x.callerPast():
		x.end(OutcomeError, BoundDeadline, x.deadlineText("before an answer", x.pastDeadline()))
		return false
	case round > x.rounds:
		x.end(OutcomeError, BoundRounds, fmt.Sprintf("%d rounds passed without an answer (budgets.rounds)", x.rounds))
		return false
	case x.tokens > 0 && x.rep.Usage.Total() >= x.tokens:
		x.end(OutcomeError, BoundTokenBudget, fmt.Sprintf("the token budget (%d) is spent (%d used) without an answer", x.tokens, x.rep.Usage.Total()))
		return false
	case x.opts.Pool != nil && x.live(x.modelKey(round, false)) && x.opts.Pool.dry():
		msg := "the shared token pool is dry"
		if round == 1 {
			msg += "; the run was refused before it sent anything"
		}
		x.end(OutcomeError, BoundTokenBudget, msg)
		return false
	}
	if x.tokens > 0 && x.output != nil && !x.shape {
		if left, why, answer := x.reserveReached(); answer {
			x.shape = true
			x.emit(Event{Type: EventReserve, Round: round, Message: fmt.Sprintf("%d tokens left of %d: asking for the answer%s", left, x.tokens, why)})
		}
	}
	return true
}

// reserveReached reports whether the token budget's remainder, left, has
// fallen to the answer reserve, so that the next turn must ask for the
// answer; why says, for the default reserve, what no longer fits. A
// declared answer_reserve is kept as it is. The default one holds the
// answering turn's whole cost, the conversation it sends and its output,
// and a gathering turn goes only while it and the answering turn after it
// both fit: the conversation only grows, so a run that waited until the
// remainder fell below one answering turn could no longer afford it.
func (x *run) reserveReached() (left int, why string, answer bool) {
	left = x.tokens - x.rep.Usage.Total()
	b := x.agent.Budgets
	out := b.Reserve(x.tokens, x.agent.Model.MaxOutputTokens)
	if b.AnswerReserve > 0 {
		return left, "", left <= out
	}
	gather := x.inputEstimate(x.requestFor(false)) + out
	answerCost := x.inputEstimate(x.requestFor(true)) + out
	if left >= gather+answerCost {
		return left, "", false
	}
	return left, fmt.Sprintf(" (one more turn would take about %d and the answer about %d)", gather, answerCost), true
}

// pastBudget says why the model call at k is not made, or "" to make it:
// with a token budget, a request carrying files is estimated
// (inputEstimate, files counted as docs/tokens.md says) at more input than
// the budget leaves, so the call could only overspend it, by as much as
// its files (a 29 MB text file went out under a budget of 2M tokens). A
// request of text alone is sent as before, and the round that passes the
// budget ends the run, its answer printed (the answer reserve's promise).
// A call served from the journal is served as recorded; one the run
// decides on (decides) is decided from what the journal gives, so a
// replay ends where its run did.
func (x *run) pastBudget(k journal.Key, req *Request) string {
	if x.tokens <= 0 || !x.decides(k) || !x.fileBounds() {
		return ""
	}
	if files, _, _ := filesIn(req.Messages); files == 0 {
		return ""
	}
	left := x.tokens - x.rep.Usage.Total()
	if in := x.inputEstimate(req); in > left {
		return fmt.Sprintf("the next model call was not sent: its input is about %d tokens, more than the %d the token budget (%d) leaves", in, left, x.tokens)
	}
	return ""
}

// inputEstimate is the input tokens a request will likely be charged: its
// count (InputTokens) scaled by what the last model call was charged
// against its own request's count, the provider's tokeniser measured on
// this conversation; before any call, the count where it is the model's
// tokeniser's (or the test model's), and else a quarter of it, a token a
// byte being about four times the real count.
func (x *run) inputEstimate(req *Request) int {
	n := int64(x.inputTokens(req))
	if x.lastCount > 0 && x.lastInput > 0 {
		return int((n*int64(x.lastInput) + int64(x.lastCount) - 1) / int64(x.lastCount))
	}
	if x.provider == "test" || tokencount.For(x.provider, req.Model).Exact() {
		return int(n)
	}
	return int((n + 3) / 4)
}

func (x *run) loop() {
	for round := 1; ; round++ {
		if !x.checks(round) {
			if x.rep.Bound == BoundDeadline {
				x.markDeadline(round)
			}
			return
		}
		rr := RoundReport{Round: round, Model: x.shown(), Shaping: x.shape}
		if x.lane > 0 {
			rr.Provider = x.provider
		}
		x.roundCost = Cost{}
		roundStart := x.now()
		var req *Request
		var res *Reservation
		var resp *Response
		var replayed bool
		var err error
		for fallback := false; ; fallback = true {
			req = x.request()
			k := x.modelKey(round, fallback)
			// A request past the model's context window is not sent: the
			// call fails, journaled as one that did, so that a replay
			// ends, or falls back, where this run did, whatever its price
			// table says of the window.
			var refuse func() (*Response, error)
			if err := x.tooLong(k, req); err != nil {
				refuse = func() (*Response, error) { return nil, err }
				res = nil
			} else if why := x.pastBudget(k, req); why != "" {
				x.end(OutcomeError, BoundTokenBudget, why)
				x.addRound(rr)
				return
			} else {
				var ok bool
				if res, ok = x.reserve(k, round, req); !ok {
					x.addRound(rr)
					return
				}
			}
			call := Event{Type: EventModelCall, Round: round, Model: x.shown()}
			if x.opts.Content {
				call.Messages = req.Messages
			}
			x.emit(call)
			st := x.streamer(round, req)
			resp, replayed, err = x.complete(k, req, refuse)
			st.end(resp)
			req.Stream = nil
			if err == nil {
				break
			}
			x.chargeFailed(req, res, &rr, err, replayed)
			if !x.fallBack(round, &rr, err) {
				x.addRound(rr)
				x.failed(err, "a model call", fmt.Sprintf("model %s: %v", x.shown(), err))
				return
			}
			st.restart()
		}
		est := estimateUsage(req, resp.Message, &x.sizes)
		usage, odd := countedWith(req, resp, est, x.exactUsage(req, resp.Message), inputBound(req, &x.sizes))
		counted := usage
		largest := usage.Input // of one call: each lost attempt is a call
		if r := resp.Retried; r.Attempts > 0 {
			lost := x.retriedUsage(req, r)
			usage = usage.Add(lost)
			largest = max(largest, attemptInput(lost, r))
			odd = joined(odd, retriedNote(r, lost))
		}
		if res != nil {
			var over string
			switch usage, over = capped(usage, res.Tokens()); {
			case over == "":
			case odd == "":
				odd = over
			default:
				odd += "; " + over
			}
		}
		// Added to what failed calls of the round spent (chargeFailed).
		rr.Usage, rr.UsageEstimated = rr.Usage.Add(usage), rr.UsageEstimated || odd != ""
		rr.UsageNote = joined(rr.UsageNote, odd)
		x.rep.UsageEstimated = x.rep.UsageEstimated || odd != ""
		x.charge(usage, replayed)
		if x.tokens > 0 && x.output != nil && !x.shape && x.agent.Budgets.AnswerReserve == 0 {
			// Only reserveReached's estimate reads them.
			x.lastInput, x.lastCount = counted.Input, x.inputTokens(req)
		}
		rr.Replayed = replayed
		x.settle(res, usage)
		c := priceCalls(x.prices(), x.provider, x.model, usage, largest, odd != "")
		x.roundCost = x.roundCost.Add(c)
		msg := resp.Message
		msg.Role = Assistant
		reply := Event{Type: EventModelResponse, Round: round, Model: x.shown(), Usage: &usage, Cost: &c, Message: strings.TrimSpace(replayedNote(replayed) + " " + odd), ResponseModel: resp.Model}
		if x.opts.Content {
			reply.Messages = []Message{redactMessage(x.opts.Secrets, msg)}
		}
		x.emit(reply)
		x.say(msg)
		// An answering turn, one where only the answer may be given, that
		// ends with no attempt at one counts against answer_turns.
		answering := req.Answer != nil && len(req.Tools) == 0 || req.ToolChoice.Mode == ChooseTool && req.ToolChoice.Name == x.outputTool && x.outputTool != ""
		attempted := false
		var d Decision
		var done bool
		switch {
		case len(msg.ToolCalls) > 0:
			attempted = x.callsOutput(msg.ToolCalls)
			done = x.toolTurn(round, &rr, msg.ToolCalls)
			if !done {
				d = x.decide(round, AfterToolResults)
			}
		case req.Answer != nil && (req.Answer.Mode == plan.ModeNative || x.answers(msg.Content)):
			// The turn could answer in its text, and did: a native turn
			// answers in JSON whatever it says; a prompted one holding no
			// JSON at all is prose, for the strategy.
			attempted = true
			done = x.textAnswer(msg.Content)
			if !done {
				d = x.decide(round, AfterTextAnswer)
			}
		default:
			d = x.decide(round, AfterProse)
		}
		if answering && !attempted && !done {
			x.unanswered++
			if x.unanswered >= x.answerTurns {
				rr.DurationMS = ms(x.now().Sub(roundStart))
				x.addRound(rr)
				x.end(OutcomeError, BoundAnswerTurns, fmt.Sprintf("%d answering turns passed with no answer (budgets.answer_turns)", x.unanswered))
				return
			}
		}
		if !done {
			rr.Decision = d.Action.String()
			done = x.apply(d)
		}
		rr.DurationMS = ms(x.now().Sub(roundStart))
		x.addRound(rr)
		if done {
			x.finish()
			return
		}
	}
}

// addRound adds a round to the report, with its cost.
func (x *run) addRound(rr RoundReport) {
	rr.Cost = x.roundCost
	x.rep.Cost = x.rep.Cost.Add(rr.Cost)
	x.rep.Rounds = append(x.rep.Rounds, rr)
}

// prices is the run's price table.
func (x *run) prices() *cost.Table {
	if x.opts.Prices != nil {
		return x.opts.Prices
	}
	return embeddedPrices()
}

var embeddedPrices = sync.OnceValue(cost.Embedded)

// finish sets the bound of a run that ended on its own: a run that
// answered may still have spent its token budget. It cannot have overspent
// the pool, whose calls reserve before they are sent.
func (x *run) finish() {
	if x.rep.Outcome != OutcomeOK || x.rep.Bound != "" && x.rep.Bound != BoundNone {
		return
	}
	switch {
	case x.tokens > 0 && x.rep.Usage.Total() > x.tokens:
		x.rep.Bound = BoundTokenBudget
		x.rep.Error = fmt.Sprintf("answered, but used %d tokens of a budget of %d", x.rep.Usage.Total(), x.tokens)
	}
}

// callsOutput reports whether a turn's calls include the output tool.
func (x *run) callsOutput(calls []ToolCall) bool {
	for _, c := range calls {
		if x.output != nil && c.Name == x.outputTool {
			return true
		}
	}
	return false
}

func (x *run) request() *Request { return x.requestFor(x.shape) }

// requestFor builds the next request as a gathering turn or, with shape,
// an answering turn.
func (x *run) requestFor(shape bool) *Request {
	req := &Request{
		Model:           x.model,
		Reasoning:       x.reason,
		Temperature:     x.agent.Model.Temperature,
		MaxOutputTokens: x.agent.Model.MaxOutputTokens,
		Messages:        x.msgs,
		ToolChoice:      ToolChoice{Mode: ChooseAuto},
		OutputTool:      x.outputTool,
		OutputWrap:      x.low.Wrap,
		OutputNullable:  x.low.Nullable,
	}
	if x.agent.Model.Caches() {
		req.Cache, req.CacheKey = true, x.cacheKey()
	}
	if fs := FileStore(x.runCtx); fs != nil {
		// The run's store, or its caller's for a nested run: the files
		// its tools return are there.
		req.Files = fs
	}
	if x.output != nil {
		req.Contract = x.agent.Output.Schema
	}
	switch {
	case shape && x.answerFmt != nil:
		req.Answer = x.answerFmt
	case shape:
		req.Tools = x.outOnly
		req.ToolChoice = ToolChoice{Mode: ChooseTool, Name: x.outputTool}
	case x.output != nil && x.agent.Output.KeepsTools && x.answerFmt != nil:
		req.Tools = x.specs
		req.Answer = x.answerFmt
	case x.output != nil && x.agent.Output.KeepsTools:
		req.Tools = x.specsOut
	default:
		req.Tools = x.specs
	}
	return req
}

// cacheKey names the requests of the run's plan for a provider's prompt
// cache: the plan digest's hex digits, which fit OpenAI's 64 characters.
// Runs of one plan share their instructions and tools, and no two plans'
// keys meet. It is empty for a plan that was not sealed.
func (x *run) cacheKey() string {
	return strings.TrimPrefix(string(x.plan.Digests.Plan), digest.Prefix)
}

func (x *run) decide(round int, b Boundary) Decision {
	s := &State{
		Boundary: b, Round: round, Messages: x.msgs,
		HasOutput: x.output != nil, KeepsTools: x.output != nil && x.agent.Output.KeepsTools,
		OutputTool: x.outputTool, AnswerMode: x.low.Mode, InvalidAnswers: x.invalid, Reminders: x.reminded, Model: x.model,
	}
	d := x.strategy.Decide(x.runCtx, s)
	x.emit(Event{Type: EventDecision, Round: round, Message: fmt.Sprintf("%s: %s", b, describe(d))})
	return d
}

func describe(d Decision) string {
	s := d.Action.String()
	if d.Shape {
		s += " (shaping turn)"
	}
	if d.Accept {
		s += " (accept the prose)"
	}
	if d.Model != "" {
		s += " with model " + d.Model
	}
	return s
}

// apply carries out a decision; it reports whether the run is over.
func (x *run) apply(d Decision) bool {
	if d.Model != "" {
		x.model = d.Model
	}
	if d.Reasoning != "" {
		x.reason = d.Reasoning
	}
	switch d.Action {
	case Inject:
		x.say(Message{Role: User, Content: d.Message})
		x.reminded++
	case Stop:
		if !d.Accept {
			x.end(OutcomeError, BoundNone, "the strategy stopped the run without an answer")
			return true
		}
		return x.acceptProse()
	default:
		if d.Shape && x.output != nil {
			x.shape = true
			if n := len(x.msgs); n > 0 && x.msgs[n-1].Role == Assistant {
				// After prose the conversation ends with the model's own
				// message: a request must end with the user's turn (two
				// assistant messages in a row are refused by some
				// servers, and Anthropic would read a trailing one as the
				// start of its reply to continue).
				x.say(Message{Role: User, Content: x.answerNow()})
			}
		}
	}
	return false
}

// answerNow asks for the answer in the shaping turn after prose.
func (x *run) answerNow() string {
	if x.low.Mode == plan.ModePrompted || x.low.Mode == plan.ModeNative {
		return "Give your final answer now, as only a JSON value that satisfies the schema in your instructions."
	}
	return fmt.Sprintf("Give your answer now, by calling the tool %q with arguments that match its schema.", x.outputTool)
}

// acceptProse takes the last assistant message as the answer: the text
// itself for an agent without an output contract; else the text read as
// JSON, or as a JSON string, whichever the contract accepts. The last
// message is the model's only after prose: a host's strategy may accept
// after tool results too, where it is a tool's output, never an answer.
func (x *run) acceptProse() bool {
	text := ""
	for i := len(x.msgs) - 1; i >= 0; i-- {
		if x.msgs[i].Role == Assistant {
			text = x.msgs[i].Content
			break
		}
	}
	if x.output == nil {
		b, _ := json.Marshal(text)
		x.rep.Answer = b
		x.end(OutcomeOK, BoundNone, "")
		return true
	}
	var errs []string
	for _, cand := range candidates(text) {
		err := x.validate(cand)
		if err == nil {
			x.rep.Answer = cand
			x.end(OutcomeOK, BoundNone, "")
			return true
		}
		errs = append(errs, err.Error())
	}
	return x.rejectAnswer(errs[0], func(feedback string) {
		x.say(Message{Role: User, Content: feedback})
	})
}

// textAnswer takes the text of a turn that could answer in it (native
// or prompted mode) as the answer: accepted when valid, else sent back
// with the errors. It reports whether the run is over.
func (x *run) textAnswer(text string) bool {
	var cands []json.RawMessage
	if x.answerFmt.Mode == plan.ModePrompted {
		for _, c := range jsonIn(text) {
			cands = append(cands, c.value)
		}
	} else if t := strings.TrimSpace(text); t != "" {
		cands = []json.RawMessage{json.RawMessage(t)}
	}
	why := "the reply holds no JSON value"
	for i, cand := range cands {
		cand, err := x.raised(cand)
		if err == nil {
			x.rep.Answer = cand
			x.end(OutcomeOK, BoundNone, "")
			return true
		}
		if i == 0 {
			why = err.Error()
		}
	}
	return x.rejectAnswer(why, func(feedback string) {
		x.say(Message{Role: User, Content: feedback})
	})
}

// raise turns an answer shaped by the lowered schema back into the
// contract's shape: nulls that stand for absent optional properties
// removed, and an answer that is not an object taken out of the output
// tool's arguments.
func (x *run) raise(answer json.RawMessage) json.RawMessage {
	v, _ := x.low.Unwrap(plan.Raise(x.low.Schema, x.low.Nullable, answer))
	return v
}

// raised is an answer as the model wrote it, raised (see raise) and
// validated, and why it is not valid. Whether it is I-JSON is asked of
// what the model wrote, before raising: raising decodes the answer and
// encodes it again, keeping the last of two members of one name and
// turning a lone surrogate into U+FFFD, so that asked after, it would pass
// an answer that every other reader of the model's text reads otherwise.
func (x *run) raised(answer json.RawMessage) (json.RawMessage, error) {
	if json.Valid(answer) && x.runCtx.Value(looseAnswersKey{}) == nil {
		if err := x.notIJSON(answer); err != nil {
			return answer, err
		}
	}
	v := x.raise(answer)
	return v, x.validate(v)
}

// answers reports whether a prompted reply gives an answer rather than
// prose: its whole text is JSON, or a fenced block is, or it holds a JSON
// object, or a bracketed span that is a valid answer. A bracketed aside
// in prose ("see [1]") is not an answer.
func (x *run) answers(text string) bool {
	for _, c := range jsonIn(text) {
		if c.strong {
			return true
		}
		if _, err := x.raised(c.value); err == nil {
			return true
		}
	}
	return false
}

// jsonCandidate is a JSON value found in a prose reply; strong says the
// reply plainly gives it as a value (the whole text, a fenced block, an
// object) rather than as a bracketed span that may be an aside.
type jsonCandidate struct {
	value  json.RawMessage
	strong bool
}

// jsonIn finds the JSON values a prose reply may hold its answer in: the
// whole text, each fenced code block, and the span from the first brace
// (or bracket) to the last.
func jsonIn(text string) []jsonCandidate {
	var out []jsonCandidate
	seen := map[string]bool{}
	add := func(s string, strong bool) {
		s = strings.TrimSpace(s)
		if s != "" && !seen[s] && json.Valid([]byte(s)) {
			seen[s] = true
			out = append(out, jsonCandidate{json.RawMessage(s), strong || s[0] == '{'})
		}
	}
	add(text, true)
	for rest := text; ; {
		i := strings.Index(rest, "```")
		if i < 0 {
			break
		}
		body := rest[i+3:]
		j := strings.Index(body, "```")
		if j < 0 {
			break
		}
		block := body[:j]
		if nl := strings.IndexByte(block, '\n'); nl >= 0 && !strings.ContainsAny(block[:nl], "{[\"") {
			block = block[nl+1:] // the info string, e.g. "json"
		}
		add(block, true)
		rest = body[j+3:]
	}
	for _, pair := range [][2]string{{"{", "}"}, {"[", "]"}} {
		if i, j := strings.Index(text, pair[0]), strings.LastIndex(text, pair[1]); i >= 0 && j > i {
			add(text[i:j+1], false)
		}
	}
	return out
}

func candidates(text string) []json.RawMessage {
	var out []json.RawMessage
	t := strings.TrimSpace(text)
	if json.Valid([]byte(t)) {
		out = append(out, json.RawMessage(t))
	}
	s, _ := json.Marshal(text)
	return append(out, s)
}

// rejectAnswer counts an invalid answer and either sends the errors back
// through send or, past the retries, ends the run. It reports whether
// the run is over.
func (x *run) rejectAnswer(why string, send func(feedback string)) bool {
	x.invalid++
	x.rep.InvalidAnswers = x.invalid
	x.emit(Event{Type: EventAnswerInvalid, Message: why})
	if x.invalid > x.agent.Output.Retries {
		x.end(OutcomeError, BoundNone, fmt.Sprintf("no valid answer after %d attempts; the last: %s", x.invalid, why))
		return true
	}
	again := fmt.Sprintf("Call %s again with a corrected answer.", x.outputTool)
	if x.answerFmt != nil {
		again = "Reply again with only the corrected JSON value."
	}
	send(fmt.Sprintf("The answer is not valid against its schema: %s. %s", why, again))
	return false
}

func (x *run) validate(answer json.RawMessage) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(answer))
	if err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	if err := x.notIJSON(answer); err != nil {
		return err
	}
	if err := plan.Validate(x.output, v); err != nil {
		return errors.New(ValidationText(err))
	}
	return nil
}

type tokensLeftKey struct{}

type ownBudgetsKey struct{}

// WithCalleesOwnBudgets returns a context in which a run's called agents
// run within their own token budgets alone, not within what the caller's
// has left (TokensLeft): for a Temporal run started before they did,
// whose history must replay as it was made.
func WithCalleesOwnBudgets(ctx context.Context) context.Context {
	return context.WithValue(ctx, ownBudgetsKey{}, true)
}

// TokensLeft is what the token budget of the run calling a nested tool
// (a called agent) has left as it calls it, at most or below zero; ok is
// false when that run has no token budget. A called agent runs within
// it: each of the calls one turn makes would otherwise be bounded by the
// callee's own budget alone, and together pass the caller's many times.
func TokensLeft(ctx context.Context) (left int, ok bool) {
	left, ok = ctx.Value(tokensLeftKey{}).(int)
	return left, ok
}

type callerEventsKey struct{}

type callerEvents struct{ f func(Event) }

// CallerEvents is where the run calling a nested tool sends its events (nil
// for nowhere); ok is false outside a nested tool's call. A called agent's
// run sends its events there: a runner made once for many runs (a batch's
// items, a server's requests) is given each run's own sink (WithEvents),
// and the agents it calls belong to that run.
func CallerEvents(ctx context.Context) (f func(Event), ok bool) {
	e, ok := ctx.Value(callerEventsKey{}).(callerEvents)
	return e.f, ok
}

type offlineModelKey struct{}

// OfflineModel is the model of the run calling a nested tool when the test
// model answers it in place of its plan's provider (Options.Provider
// "test"); ok is false otherwise. The agents it calls run offline too,
// against that model: a run asked to make no provider call makes none
// through them, whatever their plans name.
func OfflineModel(ctx context.Context) (m Model, ok bool) {
	m, ok = ctx.Value(offlineModelKey{}).(Model)
	return m, ok
}

// notIJSON says why data, JSON the model wrote (an answer, a tool call's
// arguments), is not I-JSON (RFC 7493): a member named twice in one
// object, a lone surrogate, a number no IEEE-754 double holds exactly.
// What agentc validates must read one way to every reader after it: a
// schema checks the last of two members of one name, and a reader that
// keeps the first (or refuses the object) would get a value never checked;
// a schema checks a number as written, and a reader of doubles (Python,
// JavaScript, jq) reads 0.99999999999999999 as 1, 9007199254740993 as
// 9007199254740992 and 1e-400 as 0, values the schema may refuse.
func notIJSON(data []byte) error {
	return ijson(data, digest.CanonicalExact)
}

// notIJSON is notIJSON, or, in a run made as before numbers were held to
// doubles (WithLooseAnswers), inputNotIJSON.
func (x *run) notIJSON(data []byte) error {
	if x.runCtx.Value(looseAnswersKey{}) != nil {
		return inputNotIJSON(data)
	}
	return notIJSON(data)
}

type looseAnswersKey struct{}

// WithLooseAnswers returns a context in which a run takes an answer or a
// tool call's arguments holding a number no double holds exactly, and
// asks whether an answer is I-JSON only once it is raised and unwrapped:
// for a Temporal run started before both changed, whose history must
// replay as it was made.
func WithLooseAnswers(ctx context.Context) context.Context {
	return context.WithValue(ctx, looseAnswersKey{}, true)
}

// inputNotIJSON is notIJSON for a run's input, whose numbers may be any
// JSON number: the model reads the input as the text written, and agentc
// keeps and journals it as written, so no reader after the schema rounds
// it.
func inputNotIJSON(data []byte) error {
	return ijson(data, digest.Canonical)
}

func ijson(data []byte, canonical func([]byte) ([]byte, error)) error {
	if _, err := canonical(data); err != nil {
		return fmt.Errorf("not I-JSON (RFC 7493), which it must be: %s", strings.TrimPrefix(err.Error(), "canonical JSON: "))
	}
	return nil
}

// toolTurn executes the tool calls of an assistant message and commits
// their results. It reports whether the run is over: an answer arrived,
// an invalid answer used up the retries, or the tool budget ran out.
func (x *run) toolTurn(round int, rr *RoundReport, calls []ToolCall) bool {
	var others []ToolCall
	var ordinals []int // each call's place in the message, its effect's ordinal
	var answer *ToolCall
	for i := range calls {
		if x.outputTool != "" && calls[i].Name == x.outputTool && answer == nil {
			answer = &calls[i]
			continue
		}
		others = append(others, calls[i])
		ordinals = append(ordinals, i+1)
	}
	gathering := 0
	for _, c := range others {
		if _, ok := x.opts.Tools[c.Name]; ok && !x.shape {
			gathering++
		}
	}
	if x.toolBudget >= 0 && gathering > 0 && x.calls+gathering > x.toolBudget {
		x.end(OutcomeError, BoundToolBudget, fmt.Sprintf("the tool budget (%d calls) is spent: %d made, %d more asked for", x.toolBudget, x.calls, gathering))
		return true
	}
	for i, c := range others {
		res, cr, err := x.callTool(round, ordinals[i], c)
		rr.ToolCalls = append(rr.ToolCalls, cr)
		if err != nil {
			x.rep.ToolCalls = x.calls
			x.failed(err, "a call of tool "+c.Name, err.Error())
			return true
		}
		x.say(Message{Role: ToolRole, ToolCallID: c.ID, Name: c.Name, Content: res.Content, IsError: res.IsError, Parts: fileParts(res.Files)})
	}
	x.rep.ToolCalls = x.calls
	if answer == nil {
		return false
	}
	cr := callReport(*answer)
	args, err := x.raised(answer.Arguments)
	if _, ok := x.low.Unwrap(answer.Arguments); !ok {
		// Arguments that do not hold the answer as asked are refused
		// even where they would pass for one.
		if err == nil {
			err = errors.New("the arguments are not the answer")
		}
		err = fmt.Errorf("the answer goes in the arguments' one member %q, with no other member beside it (%v)", x.low.Wrap, err)
	}
	if err == nil {
		rr.ToolCalls = append(rr.ToolCalls, cr)
		x.rep.Answer = args
		x.say(Message{Role: ToolRole, ToolCallID: answer.ID, Name: answer.Name, Content: "Answer accepted."})
		x.end(OutcomeOK, BoundNone, "")
		return true
	}
	cr.IsError, cr.Error = true, err.Error()
	rr.ToolCalls = append(rr.ToolCalls, cr)
	return x.rejectAnswer(err.Error(), func(feedback string) {
		x.say(Message{Role: ToolRole, ToolCallID: answer.ID, Name: answer.Name, Content: feedback, IsError: true})
	})
}

// callTool runs one tool call, turning every failure of the tool, a
// panic included, into an error result for the model. The call is an
// effect, served from the journal where it holds it; the error result is
// for what ends the run: a divergence, a journal that cannot be written.
func (x *run) callTool(round, ordinal int, c ToolCall) (res ToolResult, cr CallReport, stop error) {
	c.Arguments = x.raiseArgs(c.Name, c.Arguments)
	cr = callReport(c)
	start := x.now()
	replayed := false
	made := false // past the checks and the approval: the tool is called (or its result served)
	_, declared := x.opts.Tools[c.Name]
	undeclared := !declared && (x.outputTool == "" || c.Name != x.outputTool)
	call := Event{Type: EventToolCall, Round: round, Tool: c.Name, CallID: c.ID, Undeclared: undeclared}
	if x.opts.Content {
		call.Arguments = x.opts.Secrets.JSON(c.Arguments)
	}
	x.emit(call)
	defer func() {
		if stop == nil {
			res = x.withinFileBound(res)
		}
		cr.IsError, cr.Refused = res.IsError, !made && res.IsError
		if res.IsError {
			cr.Error = res.Content
		} else {
			cr.Result = textcut.Marked(res.Content, MaxReportedResult)
		}
		cr.DurationMS = ms(x.now().Sub(start))
		msg := cr.Error + cr.Result
		if replayed {
			msg = strings.TrimSpace(replayedNote(true) + " " + msg)
		}
		x.emit(Event{Type: EventToolResult, Round: round, Tool: c.Name, CallID: c.ID, Message: msg, IsError: res.IsError, Undeclared: undeclared})
	}()
	t, ok := x.opts.Tools[c.Name]
	switch {
	case x.outputTool != "" && c.Name == x.outputTool:
		return ToolResult{Content: "Give one answer per turn: only the first call of " + c.Name + " counts.", IsError: true}, cr, nil
	case !ok:
		return ToolResult{Content: fmt.Sprintf("there is no tool %q", c.Name), IsError: true}, cr, nil
	case x.shape && x.answerFmt != nil:
		return ToolResult{Content: "no tool may be called now: give your answer as JSON in your reply", IsError: true}, cr, nil
	case x.shape:
		return ToolResult{Content: fmt.Sprintf("only %s may be called now: give your answer", x.outputTool), IsError: true}, cr, nil
	}
	key := journal.Key{Path: x.jpath, Round: round, Ordinal: ordinal}
	if why := x.pastBound(key); why != "" {
		return ToolResult{Content: why, IsError: true}, cr, nil
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(c.Arguments))
	if err != nil {
		return ToolResult{Content: fmt.Sprintf("arguments are not JSON: %v", err), IsError: true}, cr, nil
	}
	if err := x.notIJSON(c.Arguments); err != nil {
		return ToolResult{Content: "arguments are " + err.Error(), IsError: true}, cr, nil
	}
	if err := plan.Validate(x.argSchemas[c.Name], v); err != nil {
		return ToolResult{Content: "arguments do not match the tool's schema: " + ValidationText(err), IsError: true}, cr, nil
	}
	x.calls++
	if ap, ok := x.agent.ApprovalOf(c.Name); ok && ap.Mode != plan.ApproveNever {
		denied, ok, err := x.approve(round, ordinal, c, ap)
		if !ok {
			return denied, cr, err
		}
	}
	made = true
	if isNested(t) {
		// Not an effect: the nested run journals its own, under this key.
		ctx := x.runCtx
		if x.journal != nil || x.effector != nil || x.clock != nil || x.approver != nil {
			ctx = withScope(ctx, scope{j: x.journal, path: key.Child(), clock: x.clock, effector: x.effector, deadline: x.effectDeadline(), approver: x.approver})
		}
		if x.tokens > 0 && ctx.Value(ownBudgetsKey{}) == nil {
			ctx = context.WithValue(ctx, tokensLeftKey{}, x.tokens-x.rep.Usage.Total())
		}
		ctx = context.WithValue(ctx, callerEventsKey{}, callerEvents{x.opts.Events})
		if x.offline() {
			ctx = context.WithValue(ctx, offlineModelKey{}, x.opts.Model)
		}
		res, stop = invoke(ctx, t, c, x.opts.Secrets)
		x.charge(res.Usage, false)
		x.roundCost = x.roundCost.Add(res.Cost)
		if stop == nil {
			stop = x.calleeCutOff(key, c.Name, &res)
		}
		return res, cr, stop
	}
	if x.journal == nil && x.effector == nil {
		res, _ = invoke(x.runCtx, t, c, x.opts.Secrets)
		res.Usage, res.Cost = res.Usage.Held(), res.Cost.held()
		x.charge(res.Usage, false)
		x.roundCost = x.roundCost.Add(res.Cost)
		return res, cr, x.cutOff(&res)
	}
	req := toolRequest{Tool: c.Name, Spec: t.Spec(), Declaration: x.declaration(c.Name), callArgs: argsOf(c.Arguments)}
	remote := &Effect{Tool: c.Name, Arguments: c.Arguments}
	if files, _ := x.runCtx.Value(inputFilesKey{}).(map[string]File); len(files) > 0 && usesInputFiles(x.agent.Capabilities.Tools[c.Name]) {
		remote.InputFiles = files
	}
	id := ident{full: req, what: "call of tool " + c.Name, effect: remote}
	if x.journal != nil || x.effector != nil {
		fp, err := x.toolFingerprint(req)
		if err != nil {
			return ToolResult{Content: "the call was not made: " + err.Error(), IsError: true}, cr, err
		}
		id.fp = fp
	}
	raw, replayed, err := x.effect(journal.Key{Round: round, Ordinal: ordinal}, journal.KindTool, id, func() (json.RawMessage, error) {
		return performTool(x.runCtx, t, c, x.opts.Secrets)
	})
	if err != nil {
		return ToolResult{Content: x.effectFailure(err), IsError: true}, cr, err
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		err = fmt.Errorf("journal: the recorded result of effect %s is not a tool result: %w", key, err)
		if replayed {
			err = x.journal.badRecord(err)
		}
		return ToolResult{IsError: true, Content: "the recorded result is not a tool result"}, cr, err
	}
	res.Usage, res.Cost = res.Usage.Held(), res.Cost.held()
	x.charge(res.Usage, replayed)
	x.roundCost = x.roundCost.Add(res.Cost)
	return res, cr, nil
}

// cutOff ends the run on a tool call made in process that the run's end,
// an interrupt or the deadline, cut off, as a journaled call's effect does
// (performTool): the calls after it in the reply are not made, and an
// answer beside them is not taken. res becomes the call's result as
// effectFailure says it; nil when the run goes on.
func (x *run) cutOff(res *ToolResult) error {
	err := x.runCtx.Err()
	if err == nil {
		return nil
	}
	err = &madeError{err: err}
	*res = ToolResult{Content: x.effectFailure(err), IsError: true, Usage: res.Usage, Cost: res.Cost}
	return err
}

// calleeCutOff is cutOff for an agent called as a tool, whose run ends
// with a report, not the context's error, when an interrupt or the
// deadline cuts it off: the caller ends there too, journal or not, and
// takes no answer beside the call. A journal keeps a deadline that cut
// the call off as a failed effect at the call's key, above its run's
// effects, where a replay, which keeps no clock, ends as the run did (a
// resume makes the call again, as it does any effect the run ended on);
// an interrupt is no outcome to keep.
func (x *run) calleeCutOff(k journal.Key, name string, res *ToolResult) error {
	if x.journal == nil && x.effector == nil {
		return x.cutOff(res)
	}
	if x.runCtx.Value(calleeCutGoesOnKey{}) != nil {
		return nil
	}
	if x.cancelled() {
		return x.cutOff(res)
	}
	j := x.journal
	served := false
	if j != nil && j.Recorded != nil {
		e, ok := j.Recorded.Lookup(k)
		served = ok && (j.Replay || !j.remakes(k, e))
	}
	if !served && (j != nil && j.Replay || !x.pastDeadline() && !x.callerPast()) {
		return nil
	}
	cause := x.runCtx.Err()
	if cause == nil {
		// On a host's clock the context keeps no deadline.
		cause = context.DeadlineExceeded
	}
	var err error = &madeError{err: cause}
	if j != nil {
		// Kept with the words the run ends in (failed), which a replay
		// ends in too: a calling agent's next request holds them.
		said := &passedBetween{said: x.deadlineText("during a call of tool "+name, x.pastDeadline()), err: cause}
		id := ident{full: calleeCut{Tool: name, CutOff: true}, what: "call of tool " + name}
		_, _, err = x.effect(k, journal.KindTool, id, func() (json.RawMessage, error) { return nil, said })
	}
	*res = ToolResult{Content: x.effectFailure(err), IsError: true, Usage: res.Usage, Cost: res.Cost}
	return err
}

// calleeCut is what a journal holds as the request of the failed effect
// that stands for a call of an agent the deadline cut off (calleeCutOff).
type calleeCut struct {
	Tool   string `json:"tool"`
	CutOff bool   `json:"cut_off"`
}

type calleeCutGoesOnKey struct{}

// WithCalleeCutGoesOn returns a context in which a run that keeps a
// journal or has a host's effector goes on after a call of an agent that
// an interrupt or the deadline cut off, making the reply's next calls and
// taking its answer, as runs did before such a call ended them: for a
// Temporal run started before, whose history must replay as it was made.
func WithCalleeCutGoesOn(ctx context.Context) context.Context {
	return context.WithValue(ctx, calleeCutGoesOnKey{}, true)
}

// raiseArgs turns the arguments of a call of a tool sent strict back into
// the shape of its schema as written: a null standing for an absent
// optional argument is removed (plan.Raise). Everything after sees the
// arguments so raised: the tool, its approval, the journal, the report.
// Arguments that are not JSON are left as they are, for validation to
// refuse.
func (x *run) raiseArgs(name string, args json.RawMessage) json.RawMessage {
	l := x.toolLow[name]
	if l == nil || len(l.Nullable) == 0 {
		return args
	}
	if _, ok := canonicalArgs(args); !ok {
		return args
	}
	raised := plan.Raise(l.Schema, l.Nullable, args)
	if c, ok := canonicalArgs(raised); ok {
		return c
	}
	return args
}

// charge counts tokens spent by the run: paid for now, or served from the
// journal (spent by the run that recorded it). Budgets count both.
func (x *run) charge(u Usage, replayed bool) {
	x.rep.Usage = x.rep.Usage.Add(u)
	if replayed {
		x.rep.UsageReplayed = x.rep.UsageReplayed.Add(u)
	} else {
		x.rep.UsagePaid = x.rep.UsagePaid.Add(u)
	}
}

// MaxReportedResult is the most of a tool's result, in bytes, that the
// report and events carry; the model is sent all of it.
const MaxReportedResult = 4096

func callReport(c ToolCall) CallReport {
	a := argsOf(c.Arguments)
	return CallReport{ID: c.ID, Name: c.Name, Arguments: a.JSON, ArgumentsText: a.Text}
}

// invoke calls a tool, turning an error or a panic into an error result;
// only a nested run's divergence from the journal comes back as an error,
// to stop the run. Every result has the secrets replaced, before a
// journal, the report or the model sees it.
func invoke(ctx context.Context, t Tool, c ToolCall, secrets *redact.Set) (res ToolResult, stop error) {
	defer func() {
		if p := recover(); p != nil {
			res = ToolResult{Content: fmt.Sprintf("tool %s failed: it panicked: %v", c.Name, p), IsError: true}
		}
		res.Content = secrets.String(res.Content)
	}()
	res, err := t.Call(ctx, c.Arguments)
	var d *Divergence
	if errors.As(err, &d) {
		return ToolResult{Content: "the call was not made: " + d.Error(), IsError: true, Usage: res.Usage}, d
	}
	if err != nil {
		return ToolResult{Content: fmt.Sprintf("tool %s failed: %v", c.Name, err), IsError: true, Usage: res.Usage}, nil
	}
	return res, nil
}

// say commits messages to the conversation. It is the one way in: every
// message has the secrets replaced, so none reaches the model.
func (x *run) say(msgs ...Message) {
	for _, m := range msgs {
		x.msgs = append(x.msgs, redactMessage(x.opts.Secrets, m))
		x.said += messageText(&x.msgs[len(x.msgs)-1])
	}
}

// redactMessage returns m with the secrets replaced in its text and its
// tool calls' arguments.
func redactMessage(s *redact.Set, m Message) Message {
	if s.Len() == 0 {
		return m
	}
	m.Content = s.String(m.Content)
	// A server may put a secret anywhere it writes, a tool call's ID
	// too; the ID goes back to the model with every later request, and to
	// a fallback's provider. Redacted here, before anything reads it, the
	// conversation, the journal and the tool's result all hold the same.
	m.ToolCallID = s.String(m.ToolCallID)
	if m.State != nil {
		// The provider's state (reasoning items, signed thinking) goes
		// back with every later request too, to a fallback's endpoint as
		// well. A provider's own never holds the key; one that does was
		// echoed by a server, whose state is then broken, not sent on.
		st := *m.State
		st.Data = s.JSON(st.Data)
		m.State = &st
	}
	if len(m.Parts) > 0 {
		// A file's bytes go to the provider as they were given: only
		// the text around them, and a file's name, are redacted.
		parts := make([]Part, len(m.Parts))
		for i, p := range m.Parts {
			p.Text = s.String(p.Text)
			if p.File != nil {
				f := *p.File
				f.FileName = s.String(f.FileName)
				p.File = &f
			}
			parts[i] = p
		}
		m.Parts = parts
	}
	if len(m.ToolCalls) > 0 {
		calls := make([]ToolCall, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			c.ID, c.Name = s.String(c.ID), s.String(c.Name)
			c.Arguments = s.JSON(c.Arguments)
			calls[i] = c
		}
		m.ToolCalls = calls
	}
	return m
}

// redactReport replaces the secrets in the report's text: errors,
// arguments, the answer, a divergence's changes.
func (x *run) redactReport() {
	s, rep := x.opts.Secrets, x.rep
	if s.Len() == 0 {
		return
	}
	rep.Error = s.String(rep.Error)
	if len(rep.Answer) > 0 {
		rep.Answer = s.JSON(rep.Answer)
	}
	for i := range rep.Rounds {
		for j := range rep.Rounds[i].ToolCalls {
			c := &rep.Rounds[i].ToolCalls[j]
			c.Error = s.String(c.Error)
			if len(c.Arguments) > 0 {
				c.Arguments = s.JSON(c.Arguments)
			}
			if c.ArgumentsText != nil {
				t := s.String(*c.ArgumentsText)
				c.ArgumentsText = &t
			}
		}
	}
	if d := rep.Divergence; d != nil {
		d.Reason = s.String(d.Reason)
		for i := range d.Changes {
			d.Changes[i] = s.String(d.Changes[i])
		}
	}
}

// failed ends the run on an effect that failed: a divergence from the
// journal, an interrupt, the deadline (during what), or else msg.
func (x *run) failed(err error, during, msg string) {
	var d *Divergence
	var f *FailedEffect
	switch {
	case errors.As(err, &d):
		x.diverged(d)
	case errors.As(err, &f) && f.Pool:
		// A host's pool could never hold the call (see Pool).
		x.end(OutcomeError, BoundTokenBudget, f.Msg)
	case x.interrupted():
	case x.isDeadline(err) && early(err):
		x.end(OutcomeError, BoundDeadline, msg)
	case x.isDeadline(err):
		// A replayed failure says whose deadline it was, as recorded: the
		// replay runs faster than the run it replays.
		own := x.pastDeadline()
		text := x.deadlineText("during "+during, own)
		if f, ok := errors.AsType[*FailedEffect](err); ok {
			// This run's deadline need not be the recorded run's (a
			// --deadline then): the figure is not said.
			text = "the caller's deadline passed during " + during
			if f.Own {
				text = "the run's deadline passed during " + during
			}
			if f.Said != "" {
				text = f.Said // it passed before the call
			}
		}
		x.end(OutcomeError, BoundDeadline, text)
	default:
		x.end(OutcomeError, BoundNone, msg)
	}
}

// deadlineText says which deadline passed, and when: the run's own, or
// its caller's (a host's context, or the run that called this agent).
func (x *run) deadlineText(when string, own bool) string {
	if own {
		return fmt.Sprintf("the deadline (%s) passed %s", x.Runner.deadline, when)
	}
	return "the caller's deadline passed " + when
}

// diverged ends the run on a divergence from its journal.
func (x *run) diverged(d *Divergence) {
	x.rep.Divergence = d
	x.end(OutcomeError, BoundNone, d.Error())
}

func replayedNote(replayed bool) string {
	if replayed {
		return "(from the journal)"
	}
	return ""
}

var printer = message.NewPrinter(language.English)

// ValidationText renders a validation error as one line per failed
// keyword: "at /path: message".
func ValidationText(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var parts []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			at := jsonpointer.Join(e.InstanceLocation)
			if at == "" {
				at = "/" // the whole value
			}
			parts = append(parts, fmt.Sprintf("at %s: %s", at, e.ErrorKind.LocalizedString(printer)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return strings.Join(parts, "; ")
}
