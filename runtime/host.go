package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"agentc.dev/agentc/internal/leaf/textcut"
	"agentc.dev/agentc/runtime/redact"
)

// Clock tells a run the time. Without one a run reads the process's
// clock and bounds its effects with a context deadline. A host that
// replays its runs' code (a durable workflow engine) gives its own clock,
// and then owns the deadline: the run sets no timer, checks the deadline
// against this clock between effects, and hands each effect the time it
// must end by (Effect.Deadline).
type Clock interface {
	Now() time.Time
}

// Effector makes a run's effects on the host's behalf: somewhere else
// than in the run's process, as a durable engine's activities, say. The
// run passes every model and tool call it would make live through Make;
// calls a journal serves are not passed. What Make returns is what the
// run goes on with, and what a journal records: Perform, called with the
// same Effect wherever the host makes it, returns exactly that.
//
// An error from Make is the effect's failure: one that wraps
// context.DeadlineExceeded ends the run on its deadline; one that wraps
// context.Canceled, with the run's context cancelled, is an interrupt;
// any other ends the run as a failed model call, or, for a tool, is the
// tool's failure.
type Effector interface {
	Make(ctx context.Context, e *Effect) (json.RawMessage, error)
}

// Effect is one model or tool call a run hands its Effector. It carries
// the call itself (Model, or Tool and Arguments), the form a journal
// records it in (Key, Kind, Fingerprint, Request), and where it belongs.
type Effect struct {
	// Key is the effect's journal key ("ROUND.ORDINAL", nested runs'
	// under their call's key): unique in a run and stable across replays
	// of its code.
	Key string `json:"key"`
	// Kind is journal.KindModel or journal.KindTool.
	Kind string `json:"kind"`
	// Agent names the agent tools that led to the run ("" for the top
	// run, "triage/labeller" for one called by a called agent).
	Agent string `json:"agent,omitempty"`
	// Fingerprint and Request are the journal's: the request's
	// fingerprint and the request as a journal stores it, with the
	// secrets replaced.
	Fingerprint string          `json:"fingerprint"`
	Request     json.RawMessage `json:"request"`
	// Model is a model call's request, as the provider is sent it, and
	// Fallback the place, in the plan's model chain, of the model it goes
	// to: 0 for the plan's own, i for its i-th fallback (plan.Fallbacks).
	Model    *Request `json:"model,omitempty"`
	Fallback int      `json:"fallback,omitempty"`
	// Tool and Arguments are a tool call's.
	Tool      string          `json:"tool,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// InputFiles are a tool call's: the run's file inputs, by name, that
	// an exec tool may give its program by path ({{file "NAME"}}), read
	// from the host's own store. They go by digest, never by bytes.
	InputFiles map[string]File `json:"input_files,omitempty"`
	// Deadline is when the run's deadline, or its caller's, passes; zero
	// for none. The host ends the effect by then, with an error that
	// wraps context.DeadlineExceeded.
	Deadline time.Time `json:"deadline,omitzero"`
}

// Perform makes an effect as a run makes it in its own process: the model
// call with model, or the call of the tool the effect names with tools,
// the secrets replaced in what comes back. It is what a host's Effector
// runs where it makes effects; its result is what Make returns.
func Perform(ctx context.Context, e *Effect, model Model, tools map[string]Tool, secrets *redact.Set) (json.RawMessage, error) {
	switch {
	case e.Model != nil:
		if model == nil {
			return nil, fmt.Errorf("effect %s: no model to call", e.Key)
		}
		raw, _, err := performModel(ctx, model, e.Model, secrets)
		return raw, err
	case e.Tool != "":
		t, ok := tools[e.Tool]
		if !ok {
			return nil, fmt.Errorf("effect %s: there is no tool %q here", e.Key, e.Tool)
		}
		if len(e.InputFiles) > 0 {
			ctx = context.WithValue(ctx, inputFilesKey{}, e.InputFiles)
		}
		return performTool(ctx, t, ToolCall{Name: e.Tool, Arguments: e.Arguments}, secrets)
	}
	return nil, fmt.Errorf("effect %s: neither a model call nor a tool call", e.Key)
}

// performModel calls the model: the arguments of the tool calls it makes
// are made canonical and the secrets replaced in what it says (a secret
// the model wrote with escapes is found only once they are gone), and in
// its error. It returns the response as a journal stores it, and as the
// run reads it.
func performModel(ctx context.Context, model Model, req *Request, secrets *redact.Set) (json.RawMessage, *Response, error) {
	resp, err := model.Complete(ctx, req)
	if err != nil {
		return nil, nil, secrets.Error(err)
	}
	if resp == nil {
		return nil, nil, fmt.Errorf("the model returned no response")
	}
	canonicalCalls(resp)
	resp.Message = redactMessage(secrets, resp.Message)
	// The name the provider gives the model that answered reaches events
	// and telemetry: the provider's text, held like the rest of it.
	resp.Model = textcut.Prefix(secrets.String(resp.Model), MaxResponseModel)
	raw, err := json.Marshal(storedResponse{identifyMessage(resp.Message), resp.Usage, resp.MaxOutputTokens, resp.Retried})
	return raw, resp, err
}

// MaxResponseModel bounds the bytes kept of the name a provider gives the
// model that answered: a dated snapshot's name is tens of bytes.
const MaxResponseModel = 256

// performTool calls a tool. A call cut off by an interrupt or the
// deadline is the context's error, not the tool's result: the first is
// made again on resume, the second ends the run (and a replay) there.
func performTool(ctx context.Context, t Tool, c ToolCall, secrets *redact.Set) (json.RawMessage, error) {
	res, _ := invoke(ctx, t, c, secrets)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

// scope is what the runs a tool call starts (an agent called as a tool)
// take from the run that called: the journal and the key they nest
// under, the host's clock and effector, and the caller's deadline.
type scope struct {
	j        *Journal
	path     string
	clock    Clock
	effector Effector
	deadline time.Time // on clock; zero for none
	approver Approver
}

type scopeKey struct{}

func withScope(ctx context.Context, s scope) context.Context {
	return context.WithValue(ctx, scopeKey{}, s)
}

func scopeFrom(ctx context.Context) (scope, bool) {
	s, ok := ctx.Value(scopeKey{}).(scope)
	return s, ok
}
