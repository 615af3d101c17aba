// Package telemetry turns the events of runs into OpenTelemetry spans and
// metrics, named by the semantic conventions for generative AI: a span per
// run (invoke_agent), per round, per model call (chat, its retries as span
// events) and per tool call (execute_tool), a called agent's run nested
// under the call that ran it. It reads only the event stream, so the run
// loop knows nothing of it, and a run without a recorder pays nothing.
// The tracer and meter come from providers the host passes in; package
// telemetry/otlp makes them from the standard OTEL_* variables.
package telemetry

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/semconv/v1.40.0/genaiconv"
	"go.opentelemetry.io/otel/trace"

	"agentc.dev/agentc/internal/leaf/textcut"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/redact"
)

// ScopeName is the instrumentation scope of agentc's spans and metrics.
const ScopeName = "agentc.dev/agentc/telemetry"

// CaptureVar is the conventions' switch for recording content: prompts,
// answers, tool arguments and results. Off unless it is "true".
const CaptureVar = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

// agentc's own attributes, beside the conventions'.
const (
	attrOutcome       = attribute.Key("agentc.outcome")
	attrBound         = attribute.Key("agentc.bound")
	attrCostEstimated = attribute.Key("agentc.cost.estimated")
	attrRound         = attribute.Key("agentc.round")
	attrPath          = attribute.Key("agentc.agent.path")
	attrMessage       = attribute.Key("agentc.message")
)

// The bucket boundaries the GenAI conventions advise for their two
// histograms, given as the instruments' advice so that any SDK uses them
// unless a view says otherwise: durations from 10 ms to 82 s, and token
// counts from 1 to 67,108,864, each bucket four times the one before.
var (
	durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
	tokenBuckets    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
)

// Options configure a Telemetry.
type Options struct {
	// Content records prompts, answers, tool arguments and results in
	// span attributes (gen_ai.input.messages, gen_ai.output.messages,
	// gen_ai.system_instructions, gen_ai.tool.call.arguments and
	// .result). The runs must set runtime.Options.Content for events to
	// carry them.
	Content bool
	// Secrets are replaced by redact.Marker in every text recorded.
	Secrets *redact.Set
	// ValueLimit, when positive, is the most bytes of a text recorded
	// where the tracer provider's attribute value limit does not reach: a
	// span's error status and its events' messages (a failed tool's
	// output, a run's error). Give the provider's limit
	// (sdktrace.SpanLimits.AttributeValueLengthLimit).
	ValueLimit int
}

// Telemetry holds the tracer and the instruments runs are recorded with;
// it is safe for concurrent use, each run tree with its own Recorder.
type Telemetry struct {
	tracer   trace.Tracer
	opts     Options
	tokens   genaiconv.ClientTokenUsage
	duration genaiconv.ClientOperationDuration
	calls    metric.Int64Counter
	retries  metric.Int64Counter
	tools    metric.Int64Counter
	runs     metric.Int64Counter
	bounds   metric.Int64Counter
	cost     metric.Float64Counter
}

// New makes a Telemetry from a tracer provider and a meter provider.
func New(tp trace.TracerProvider, mp metric.MeterProvider, opts Options) (*Telemetry, error) {
	t := &Telemetry{tracer: tp.Tracer(ScopeName), opts: opts}
	m := mp.Meter(ScopeName)
	var err error
	if t.tokens, err = genaiconv.NewClientTokenUsage(m, metric.WithExplicitBucketBoundaries(tokenBuckets...)); err != nil {
		return nil, err
	}
	if t.duration, err = genaiconv.NewClientOperationDuration(m, metric.WithExplicitBucketBoundaries(durationBuckets...)); err != nil {
		return nil, err
	}
	for _, c := range []struct {
		dst              *metric.Int64Counter
		name, desc, unit string
	}{
		{&t.calls, "agentc.model.calls", "Model calls that completed.", "{call}"},
		{&t.retries, "agentc.model.retries", "Failed attempts of model calls that were retried.", "{attempt}"},
		{&t.tools, "agentc.tool.calls", "Tool calls made.", "{call}"},
		{&t.runs, "agentc.runs", "Runs ended, by outcome.", "{run}"},
		{&t.bounds, "agentc.bounds", "Runs ended by a bound, by bound.", "{run}"},
	} {
		if *c.dst, err = m.Int64Counter(c.name, metric.WithDescription(c.desc), metric.WithUnit(c.unit)); err != nil {
			return nil, err
		}
	}
	if t.cost, err = m.Float64Counter("agentc.cost", metric.WithUnit("USD"),
		metric.WithDescription("What model calls cost by the price table, each counted once, by the agent that made it; agentc.cost.estimated marks a model without a price or usage counted locally.")); err != nil {
		return nil, err
	}
	return t, nil
}

// Content reports whether content is recorded: the runs recorded must
// then set runtime.Options.Content.
func (t *Telemetry) Content() bool { return t.opts.Content }

// Recorder turns the events of one run, and of the runs nested in it,
// into spans under ctx's span, if any.
func (t *Telemetry) Recorder(ctx context.Context) *Recorder {
	return &Recorder{t: t, ctx: ctx, runs: map[string]*runSpans{}}
}

// WorkflowRecorder records the run tree of a Temporal workflow, whose
// events are emitted again each time a worker replays its history. It is
// Recorder with two differences: spans take IDs drawn in order from
// seed (the workflow's IDs), so that a replay opens the same spans a
// first run opened, and a span is not ended, so never exported, while
// replaying says the workflow replays (the worker that first ran that
// part ended it), nor counted in a metric. The IDs are drawn by the
// tracer provider's ID generator, from what IDSequenceFrom finds in the
// context (package telemetry/otlp's generator does).
//
// A valid parent (the span of the client that started the run, which
// the workflow's input carries) is the run's span's parent, and its trace
// the run's; without one the trace's ID is drawn from seed too.
func (t *Telemetry) WorkflowRecorder(seed string, parent trace.SpanContext, replaying func() bool) *Recorder {
	s := &IDSequence{seed: sha256.Sum256([]byte(seed))}
	h := sha256.Sum256(append(s.seed[:], "trace"...))
	s.trace = trace.TraceID(h[:16])
	ctx := context.Background()
	if parent.IsValid() {
		s.trace = parent.TraceID()
		ctx = trace.ContextWithRemoteSpanContext(ctx, parent)
	}
	ctx = context.WithValue(ctx, idSeqKey{}, s)
	return &Recorder{t: t, ctx: ctx, runs: map[string]*runSpans{}, replaying: replaying}
}

// IDSequence draws trace and span IDs in order from a seed.
type IDSequence struct {
	seed  [32]byte
	trace trace.TraceID
	n     atomic.Uint64
}

type idSeqKey struct{}

// IDSequenceFrom returns the sequence a WorkflowRecorder's spans draw
// their IDs from, if ctx is one of theirs.
func IDSequenceFrom(ctx context.Context) (*IDSequence, bool) {
	s, ok := ctx.Value(idSeqKey{}).(*IDSequence)
	return s, ok
}

// TraceID is the trace every span of the sequence belongs to.
func (s *IDSequence) TraceID() trace.TraceID { return s.trace }

// NextSpanID is the next span's ID.
func (s *IDSequence) NextSpanID() trace.SpanID {
	var b [40]byte
	copy(b[:], s.seed[:])
	binary.BigEndian.PutUint64(b[32:], s.n.Add(1))
	h := sha256.Sum256(b[:])
	return trace.SpanID(h[:8])
}

// RemoteRun opens the span of a run a client submits to run elsewhere
// (agentc run --temporal): the parent of the run's own spans, which the
// workers record. end closes it, failed when err is not nil or the run's
// outcome is not ok.
func (t *Telemetry) RemoteRun(ctx context.Context, agent string) (context.Context, func(rep *agentrt.Report, err error)) {
	ctx, span := t.tracer.Start(ctx, "agentc.run "+agent, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(semconv.GenAIAgentName(agent)))
	return ctx, func(rep *agentrt.Report, err error) {
		// An error's text may quote the request (a provider's error) or a
		// tool's output: recorded only where content is, as a run's own.
		text := func(s string) string {
			if !t.opts.Content {
				return ""
			}
			return t.content(s)
		}
		switch {
		case err != nil:
			span.SetStatus(codes.Error, text(err.Error()))
		case rep != nil:
			span.SetAttributes(attrOutcome.String(rep.Outcome), attrBound.String(rep.Bound))
			if rep.Outcome != agentrt.OutcomeOK {
				span.SetStatus(codes.Error, text(rep.Error))
			}
		}
		span.End()
	}
}

// Recorder records one run tree; Event is its runtime.Options.Events.
type Recorder struct {
	t    *Telemetry
	ctx  context.Context
	mu   sync.Mutex
	runs map[string]*runSpans // by Event.Agent
	chat *runSpans            // the run whose model call is in flight
	// replaying, when set, says the events come again from a replayed
	// history (see WorkflowRecorder).
	replaying func() bool
}

// live says the events are new: not a replay's.
func (r *Recorder) live() bool { return r.replaying == nil || !r.replaying() }

// endSpan ends a span, but one that ends in a replay: that one was
// ended, and exported, by the worker that first ran that part.
func (r *Recorder) endSpan(span trace.Span, at time.Time) {
	if r.live() {
		span.End(trace.WithTimestamp(at))
	}
}

// runSpans are the open spans of one run.
type runSpans struct {
	ctx            context.Context
	span           trace.Span
	attrs          []attribute.KeyValue // agent, provider, model: on every metric
	name, provider string
	model          string // the run's, which its tool calls count under
	round          int
	roundCtx       context.Context
	roundSpan      trace.Span
	chat           trace.Span
	chatModel      string
	chatStart      time.Time
	tools          []openTool
}

type openTool struct {
	name, id string
	ctx      context.Context
	span     trace.Span
}

// OtherTool names, in spans and metrics, a tool the model called that the
// agent does not have: the name the model wrote is its text, not one of
// the agent's.
const OtherTool = "_OTHER"

// maxName bounds a name the model or the provider chose (a tool call's
// id, the model that answered) as recorded.
const maxName = 128

// name is a name the model or the provider chose, secrets replaced, cut
// at maxName bytes.
func (t *Telemetry) name(s string) string {
	return textcut.Prefix(t.opts.Secrets.String(s), maxName)
}

// content is a text recorded with content, secrets replaced, cut at
// ValueLimit (after the replacement, so that no part of a secret is
// left at the cut).
func (t *Telemetry) content(s string) string {
	s = t.opts.Secrets.String(s)
	if t.opts.ValueLimit > 0 {
		s = textcut.Marked(s, t.opts.ValueLimit)
	}
	return s
}

// Event records one event.
func (r *Recorder) Event(ev agentrt.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	// An event's message is free text that may quote content: a
	// provider's error quoting the request, a tool's error naming the
	// model's arguments, an invalid answer's value. It is recorded only
	// where content is.
	msg := ""
	if r.t.opts.Content {
		msg = r.t.content(ev.Message)
	}
	// The names the model and the provider chose are recorded whatever
	// the switch, on spans and as metric labels: a tool the model made
	// up is named OtherTool, and each name has its secrets replaced and
	// is cut, so neither a secret nor a made-up name's text reaches the
	// collector, nor can made-up names grow the metrics' series.
	if ev.Undeclared {
		ev.Tool = OtherTool
	}
	ev.Tool = r.t.name(ev.Tool)
	ev.CallID = r.t.name(ev.CallID)
	ev.ResponseModel = r.t.name(ev.ResponseModel)
	withMessage := func() []attribute.KeyValue {
		if msg == "" {
			return nil
		}
		return []attribute.KeyValue{attrMessage.String(msg)}
	}
	if ev.Type == agentrt.EventRunStart {
		r.start(ev)
		return
	}
	x := r.runs[ev.Agent]
	switch ev.Type {
	case agentrt.EventModelRetry, agentrt.EventModelError, agentrt.EventModelCancelled:
		// A provider's attempts arrive without the run's path: they
		// belong to the call in flight.
		if x = r.chat; x == nil || x.chat == nil {
			return
		}
		x.chat.AddEvent(ev.Type, trace.WithTimestamp(ev.Time), trace.WithAttributes(withMessage()...))
		if ev.Type == agentrt.EventModelRetry {
			if r.live() {
				r.t.retries.Add(r.ctx, 1, metric.WithAttributes(append(x.metricAttrs(), semconv.GenAIRequestModel(x.chatModel))...))
			}
			return
		}
		x.chat.SetStatus(codes.Error, msg)
		x.chat.SetAttributes(semconv.ErrorTypeKey.String(ev.Type))
		return
	}
	if x == nil {
		return // an event of a run that started before the recorder
	}
	switch ev.Type {
	case agentrt.EventModelFallback:
		// The call failed; the next goes to the fallback, whose provider
		// names the calls from here on.
		if x.chat != nil {
			x.chat.AddEvent(ev.Type, trace.WithTimestamp(ev.Time), trace.WithAttributes(withMessage()...))
			r.endChat(x, ev.Time, agentrt.EventModelFallback)
		}
		if ev.Provider != "" {
			x.provider = ev.Provider
		}
	case agentrt.EventModelCall:
		r.enterRound(x, ev)
		model := ev.Model
		attrs := []attribute.KeyValue{semconv.GenAIOperationNameChat, semconv.GenAIProviderNameKey.String(x.provider), semconv.GenAIRequestModel(model)}
		if r.t.opts.Content && len(ev.Messages) > 0 {
			sys, in := r.conversation(ev.Messages)
			if sys != "" {
				attrs = append(attrs, semconv.GenAISystemInstructionsKey.String(sys))
			}
			attrs = append(attrs, semconv.GenAIInputMessagesKey.String(in))
		}
		_, x.chat = r.t.tracer.Start(x.roundCtx, "chat "+model, trace.WithTimestamp(ev.Time), trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
		x.chatModel, x.chatStart = model, ev.Time
		r.chat = x
	case agentrt.EventModelResponse:
		if x.chat == nil {
			return
		}
		if u := ev.Usage; u != nil {
			x.chat.SetAttributes(semconv.GenAIUsageInputTokens(u.Input), semconv.GenAIUsageOutputTokens(u.Output), semconv.GenAIUsageCacheReadInputTokens(u.Cached), semconv.GenAIUsageCacheCreationInputTokens(u.CacheWrite))
		}
		if u := ev.Usage; u != nil && r.live() {
			prov := genaiconv.ProviderNameAttr(x.provider)
			attrs := append(x.metricAttrs(), semconv.GenAIRequestModel(x.chatModel))
			r.t.tokens.Record(r.ctx, int64(u.Input), genaiconv.OperationNameChat, prov, genaiconv.TokenTypeInput, attrs...)
			r.t.tokens.Record(r.ctx, int64(u.Output), genaiconv.OperationNameChat, prov, genaiconv.TokenTypeOutput, attrs...)
			if c := ev.Cost; c != nil {
				r.t.cost.Add(r.ctx, c.USD, metric.WithAttributes(append(attrs, attrCostEstimated.Bool(c.Estimated))...))
			}
		}
		if ev.ResponseModel != "" {
			x.chat.SetAttributes(semconv.GenAIResponseModel(ev.ResponseModel))
		}
		if r.t.opts.Content && len(ev.Messages) > 0 {
			x.chat.SetAttributes(semconv.GenAIOutputMessagesKey.String(r.output(ev.Messages)))
		}
		if msg != "" {
			x.chat.AddEvent("note", trace.WithTimestamp(ev.Time), trace.WithAttributes(attrMessage.String(msg)))
		}
		r.endChat(x, ev.Time, "")
	case agentrt.EventToolCall:
		r.enterRound(x, ev)
		attrs := []attribute.KeyValue{semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(ev.Tool), semconv.GenAIToolCallID(ev.CallID)}
		if r.t.opts.Content && len(ev.Arguments) > 0 {
			attrs = append(attrs, semconv.GenAIToolCallArgumentsKey.String(r.t.opts.Secrets.String(string(ev.Arguments))))
		}
		ctx, span := r.t.tracer.Start(x.roundCtx, "execute_tool "+ev.Tool, trace.WithTimestamp(ev.Time), trace.WithAttributes(attrs...))
		x.tools = append(x.tools, openTool{name: ev.Tool, id: ev.CallID, ctx: ctx, span: span})
	case agentrt.EventToolResult:
		for i := len(x.tools) - 1; i >= 0; i-- {
			c := x.tools[i]
			if c.id != ev.CallID || c.name != ev.Tool {
				continue
			}
			if ev.IsError {
				c.span.SetStatus(codes.Error, msg)
				c.span.SetAttributes(semconv.ErrorTypeKey.String("tool_error"))
			} else if r.t.opts.Content {
				c.span.SetAttributes(semconv.GenAIToolCallResultKey.String(msg))
			}
			r.endSpan(c.span, ev.Time)
			x.tools = append(x.tools[:i], x.tools[i+1:]...)
			if r.live() {
				r.t.tools.Add(r.ctx, 1, metric.WithAttributes(append(x.metricAttrs(), semconv.GenAIRequestModel(x.model), semconv.GenAIToolName(ev.Tool))...))
			}
			break
		}
	case agentrt.EventRunEnd:
		r.end(ev, x, msg)
	default:
		// Decisions, invalid answers, the answer reserve: what the run
		// did between calls, on its round.
		span := x.span
		if ev.Round > 0 {
			r.enterRound(x, ev)
			span = x.roundSpan
		}
		attrs := []attribute.KeyValue{}
		if msg != "" {
			attrs = append(attrs, attrMessage.String(msg))
		}
		span.AddEvent(ev.Type, trace.WithTimestamp(ev.Time), trace.WithAttributes(attrs...))
	}
}

// start opens a run's span: under the open call of the agent tool that
// ran it, for a nested run.
func (r *Recorder) start(ev agentrt.Event) {
	parent := r.ctx
	if i := strings.LastIndexByte(ev.Agent, '/'); ev.Agent != "" {
		caller, tool := "", ev.Agent
		if i >= 0 {
			caller, tool = ev.Agent[:i], ev.Agent[i+1:]
		}
		if c := r.runs[caller]; c != nil {
			for j := len(c.tools) - 1; j >= 0; j-- {
				if c.tools[j].name == tool {
					parent = c.tools[j].ctx
					break
				}
			}
		}
	}
	x := &runSpans{name: ev.Name, provider: ev.Provider, model: ev.Model}
	x.attrs = []attribute.KeyValue{semconv.GenAIAgentName(ev.Name), semconv.GenAIProviderNameKey.String(ev.Provider)}
	attrs := append([]attribute.KeyValue{semconv.GenAIOperationNameInvokeAgent, semconv.GenAIRequestModel(ev.Model)}, x.attrs...)
	if ev.Agent != "" {
		attrs = append(attrs, attrPath.String(ev.Agent))
	}
	x.ctx, x.span = r.t.tracer.Start(parent, "invoke_agent "+ev.Name, trace.WithTimestamp(ev.Time), trace.WithAttributes(attrs...))
	x.roundCtx = x.ctx
	r.runs[ev.Agent] = x
}

func (x *runSpans) metricAttrs() []attribute.KeyValue {
	return append([]attribute.KeyValue(nil), x.attrs...)
}

// enterRound opens the round of ev, ending the one before.
func (r *Recorder) enterRound(x *runSpans, ev agentrt.Event) {
	if ev.Round == x.round || ev.Round == 0 {
		return
	}
	if x.roundSpan != nil {
		r.endSpan(x.roundSpan, ev.Time)
	}
	x.round = ev.Round
	x.roundCtx, x.roundSpan = r.t.tracer.Start(x.ctx, "round "+strconv.Itoa(ev.Round), trace.WithTimestamp(ev.Time), trace.WithAttributes(attrRound.Int(ev.Round)))
}

// endChat ends the model call in flight, failed with errType unless it
// is empty, and counts it.
func (r *Recorder) endChat(x *runSpans, at time.Time, errType string) {
	attrs := append(x.metricAttrs(), semconv.GenAIRequestModel(x.chatModel))
	if errType != "" {
		x.chat.SetStatus(codes.Error, errType)
		x.chat.SetAttributes(semconv.ErrorTypeKey.String(errType))
		attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
	} else if r.live() {
		r.t.calls.Add(r.ctx, 1, metric.WithAttributes(attrs...))
	}
	if r.live() {
		r.t.duration.Record(r.ctx, at.Sub(x.chatStart).Seconds(), genaiconv.OperationNameChat, genaiconv.ProviderNameAttr(x.provider), attrs...)
	}
	r.endSpan(x.chat, at)
	x.chat = nil
	if r.chat == x {
		r.chat = nil
	}
}

// end closes what a run left open and its own span, with its outcome,
// bound and usage.
func (r *Recorder) end(ev agentrt.Event, x *runSpans, msg string) {
	failed := ev.Outcome != agentrt.OutcomeOK
	errType := "run_failed"
	if ev.Bound != "" && ev.Bound != agentrt.BoundNone {
		errType = ev.Bound
	}
	if x.chat != nil {
		r.endChat(x, ev.Time, errType)
	}
	for _, c := range x.tools {
		c.span.SetStatus(codes.Error, "the run ended during the call")
		r.endSpan(c.span, ev.Time)
	}
	x.tools = nil
	if x.roundSpan != nil {
		r.endSpan(x.roundSpan, ev.Time)
	}
	attrs := []attribute.KeyValue{attrOutcome.String(ev.Outcome), attrBound.String(ev.Bound)}
	if u := ev.Usage; u != nil {
		attrs = append(attrs, semconv.GenAIUsageInputTokens(u.Input), semconv.GenAIUsageOutputTokens(u.Output))
	}
	if failed || ev.Bound != agentrt.BoundNone {
		attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
	}
	x.span.SetAttributes(attrs...)
	if failed {
		x.span.SetStatus(codes.Error, msg)
	}
	r.endSpan(x.span, ev.Time)
	delete(r.runs, ev.Agent)
	if !r.live() {
		return
	}
	m := x.metricAttrs()
	r.t.runs.Add(r.ctx, 1, metric.WithAttributes(append(m, attrOutcome.String(ev.Outcome))...))
	if ev.Bound != "" && ev.Bound != agentrt.BoundNone {
		r.t.bounds.Add(r.ctx, 1, metric.WithAttributes(append(m, attrBound.String(ev.Bound))...))
	}
}

// part is one part of a message, in the conventions' JSON shape.
type part struct {
	Type      string          `json:"type"`
	Content   string          `json:"content,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Response  string          `json:"response,omitempty"`
}

type chatMessage struct {
	Role         string `json:"role"`
	Parts        []part `json:"parts"`
	FinishReason string `json:"finish_reason,omitempty"`
}

func parts(m agentrt.Message) []part {
	var ps []part
	switch {
	case m.Role == agentrt.ToolRole:
		ps = append(ps, part{Type: "tool_call_response", ID: m.ToolCallID, Response: m.Content})
	case m.Content != "":
		ps = append(ps, part{Type: "text", Content: m.Content})
	}
	for _, c := range m.ToolCalls {
		args := c.Arguments
		if !json.Valid(args) {
			// A model may write arguments that are not JSON: kept as text.
			args, _ = json.Marshal(string(args))
		}
		ps = append(ps, part{Type: "tool_call", ID: c.ID, Name: c.Name, Arguments: args})
	}
	return ps
}

// conversation renders the messages sent as the conventions' system
// instructions and input messages, JSON, secrets redacted.
func (r *Recorder) conversation(msgs []agentrt.Message) (system, input string) {
	var sys []part
	in := make([]chatMessage, 0, len(msgs))
	for _, m := range msgs {
		if m.Role == agentrt.System {
			sys = append(sys, parts(m)...)
			continue
		}
		in = append(in, chatMessage{Role: string(m.Role), Parts: parts(m)})
	}
	if len(sys) > 0 {
		system = r.encode(sys)
	}
	return system, r.encode(in)
}

// output renders a reply as the conventions' output messages.
func (r *Recorder) output(msgs []agentrt.Message) string {
	out := make([]chatMessage, 0, len(msgs))
	for _, m := range msgs {
		finish := "stop"
		if len(m.ToolCalls) > 0 {
			finish = "tool_call"
		}
		out = append(out, chatMessage{Role: string(agentrt.Assistant), Parts: parts(m), FinishReason: finish})
	}
	return r.encode(out)
}

func (r *Recorder) encode(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return r.t.opts.Secrets.String(string(b))
}
