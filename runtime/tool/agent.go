package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
)

// agentTool is another agent called as a tool: its input schema is the
// tool's arguments, its validated answer the result. The child run shares
// the caller's deadline (through the context), its pool and its events
// (agentrt.CallerEvents), and its token usage is charged to the caller's
// budget.
type agentTool struct {
	spec   agentrt.ToolSpec
	runner *agentrt.Runner
	input  bool // whether the callee takes input
	// callee and opts made runner: a run of it offline is made from them
	// with the test model (agentrt.OfflineModel).
	callee *plan.Plan
	opts   agentrt.Options
}

// openObject is the argument schema of a callee without input: no
// arguments.
var openObject = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)

func newAgent(ctx context.Context, name string, t plan.Tool, p *plan.Plan, env Env) (agentrt.Tool, error) {
	if env.ModelFor == nil {
		return nil, errors.New("this host does not run agents as tools")
	}
	// The plan carries the callee, checked when it was sealed.
	c, ok := p.Callees[name]
	if !ok || c.Plan == nil {
		return nil, fmt.Errorf("the called agent %q is not compiled into the plan; compile the agent again", t.Path)
	}
	// Plans read from files are bounded; one built in memory may not be.
	if env.depth >= plan.MaxCalleeDepth {
		return nil, fmt.Errorf("agents call agents more than %d deep", plan.MaxCalleeDepth)
	}
	callee := c.Plan
	child := env
	_, child.BaseDir = c.Within(env.BaseDir)
	child.depth = env.depth + 1
	child.path = strings.TrimPrefix(env.path+"/"+name, "/")
	tools, err := build(ctx, callee, child)
	if err != nil {
		return nil, fmt.Errorf("the called agent %q: %w", t.Path, err)
	}
	model, err := env.ModelFor(callee)
	if err != nil {
		return nil, fmt.Errorf("the called agent %q: %w", t.Path, err)
	}
	opts := agentrt.Options{Model: model, FallbackModel: env.ModelFor, Tools: tools, Pool: env.Pool, Prices: env.Prices, Events: env.Events, Agent: child.path, Provider: env.Provider, Secrets: env.Secrets, Content: env.Content}
	r, err := agentrt.New(callee, opts)
	if err != nil {
		return nil, fmt.Errorf("the called agent %q: %w", t.Path, err)
	}
	at := &agentTool{runner: r, input: callee.Agent.Input != nil, callee: callee, opts: opts}
	at.spec = agentrt.ToolSpec{Name: name, Description: t.Description, Schema: openObject}
	if at.input {
		at.spec.Schema = callee.Agent.Input.Schema
	}
	return at, nil
}

func (a *agentTool) Spec() agentrt.ToolSpec { return a.spec }

// Nested: the child run journals its own model and tool calls, under the
// key of this call, so a replay runs it again from the journal.
func (a *agentTool) Nested() bool { return true }

func (a *agentTool) Call(ctx context.Context, args json.RawMessage) (agentrt.ToolResult, error) {
	var in json.RawMessage
	if a.input {
		in = args
	}
	runner := a.runner
	if m, ok := agentrt.OfflineModel(ctx); ok && a.opts.Provider != "test" {
		// The caller runs offline where the tools were built for its
		// provider (a batch item naming the test model): so does this.
		o := a.opts
		o.Model, o.Provider, o.FallbackModel = m, "test", nil
		var err error
		if runner, err = agentrt.New(a.callee, o); err != nil {
			return agentrt.ToolResult{}, err
		}
	}
	if events, ok := agentrt.CallerEvents(ctx); ok {
		// The calling run's sink, which says whose run this is (a batch's
		// item, a served request's stream), not the one the tools were
		// built with, which all its runs share.
		runner = runner.WithEvents(events)
	}
	if left, ok := agentrt.TokensLeft(ctx); ok {
		// The callee runs within what the caller's budget has left.
		if left <= 0 {
			return agentrt.ToolResult{IsError: true, Content: "not called: the calling agent's token budget is spent"}, nil
		}
		var err error
		if runner, err = runner.WithBudgets(agentrt.Overrides{Tokens: &left}); err != nil {
			return agentrt.ToolResult{}, err
		}
	}
	rep, err := runner.Run(ctx, in)
	if err != nil {
		return agentrt.ToolResult{}, err
	}
	if rep.Divergence != nil {
		// The called agent changed under the journal: the whole run stops.
		return agentrt.ToolResult{Usage: rep.Usage, Cost: rep.Cost}, rep.Divergence
	}
	if rep.Outcome != agentrt.OutcomeOK {
		return agentrt.ToolResult{Usage: rep.Usage, Cost: rep.Cost, IsError: true,
			Content: fmt.Sprintf("the called agent %s failed (bound %s): %s", rep.Agent, rep.Bound, rep.Error)}, nil
	}
	return agentrt.ToolResult{Usage: rep.Usage, Cost: rep.Cost, Content: string(rep.Answer)}, nil
}
