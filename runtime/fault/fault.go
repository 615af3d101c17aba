// Package fault is the fault layer of agentc test --faults: it plays a
// recorded run back to the runtime with one fault injected. Model calls
// reach a loopback HTTP server that answers in the provider's own wire
// format (OpenAI Chat Completions, Anthropic Messages) with the journal's
// responses, so the real provider client, with its retries, meets the
// fault; tool calls are answered from the journal by a wrapper around the
// run's tools, which fails or holds the first of them.
package fault

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/journal"
)

// The faults, by name: names are part of the docs, the manifest and the
// output.
const (
	RateLimit     = "rate_limit"
	ServerError   = "server_error"
	Dropped       = "dropped"
	Timeout       = "timeout"
	Truncated     = "truncated"
	InvalidAnswer = "invalid_answer"
	Prose         = "prose"
	ToolError     = "tool_error"
	ToolHang      = "tool_hang"
	Outage        = "outage"
)

// Where a fault is injected.
const (
	onFirstCall = iota // the first model call
	onAnswer           // the model call the journal answered with the answer
	onTool             // the first tool call
	onModel            // every call of the agent's own model
)

// Kind is a fault: its name, and where it is injected.
type Kind struct {
	Name  string
	where int
}

// Kinds are the faults, in the order the matrix shows them. What each
// does on the wire is in Server.ServeHTTP and Tools, and in
// docs/testing.md.
var Kinds = []Kind{
	{RateLimit, onFirstCall},   // 429 with Retry-After: 1
	{ServerError, onFirstCall}, // 500
	{Dropped, onFirstCall},     // half the response, then the connection is reset
	{Timeout, onFirstCall},     // no answer
	{Truncated, onFirstCall},   // 200 with half the JSON body
	{InvalidAnswer, onAnswer},  // an answer the contract rejects
	{Prose, onAnswer},          // an answer in prose
	{ToolError, onTool},        // the tool fails
	{ToolHang, onTool},         // the tool hangs until its timeout
	{Outage, onModel},          // 503 for every call of the agent's model: a fallback must serve
}

// Lookup returns the fault named name.
func Lookup(name string) (Kind, bool) {
	i := slices.IndexFunc(Kinds, func(k Kind) bool { return k.Name == name })
	if i < 0 {
		return Kind{}, false
	}
	return Kinds[i], true
}

// Expectations of a fault run, besides the bound names of a report.
const (
	// Recovered: the run answers, within every bound, the answer it gives
	// without the fault.
	Recovered = "recovered"
	// Failed: the run ends with outcome error and no bound.
	Failed = "error"
)

// HangDeadline is the deadline a timeout or tool_hang run is given when
// its own is longer or it has none: the hang would only be waited for.
const HangDeadline = time.Second

// Script is what a journal recorded of a run's own effects (not those of
// agents it called): its model responses and tool results, in order.
type Script struct {
	Models []agentrt.Response
	Tools  []ToolResult
	// Servers is the journal header's tools: mcp servers' tool sets.
	Servers json.RawMessage
}

// ToolResult is a tool call a journal recorded.
type ToolResult struct {
	Tool      string
	Arguments json.RawMessage
	Result    agentrt.ToolResult
}

// Load reads the script of the run a journal recorded.
func Load(path string) (*Script, error) {
	j, err := journal.Open(path)
	if err != nil {
		return nil, err
	}
	s := &Script{Servers: j.Header.Tools}
	// The script keeps every tool call's arguments: bounded as a whole,
	// since a journal's value references could name far more than its
	// file holds. A run's journal stores each call's arguments once.
	budget := &journal.Budget{Max: journal.MaxFile, What: "the tool calls' arguments"}
	for i := range j.Entries {
		e := &j.Entries[i]
		if e.Key.Path != "" {
			continue
		}
		if last, _ := j.Lookup(e.Key); last != e {
			continue // a call that failed, made again by a resume: the later one stands
		}
		if e.Error != "" || e.Response == nil {
			return nil, fmt.Errorf("%s: effect %s failed when it was recorded (%s): the fault layer plays back only runs whose calls succeeded", path, e.Key, e.Error)
		}
		switch e.Kind {
		case journal.KindModel:
			var r agentrt.Response
			if err := json.Unmarshal(e.Response, &r); err != nil {
				return nil, fmt.Errorf("%s: effect %s: %w", path, e.Key, err)
			}
			s.Models = append(s.Models, r)
		case journal.KindTool:
			var req struct {
				Tool      string          `json:"tool"`
				Arguments json.RawMessage `json:"arguments"`
			}
			var res agentrt.ToolResult
			r, err := e.ExpandRequest(budget, "tool", "arguments")
			if err != nil {
				return nil, err
			}
			if err := json.Unmarshal(r, &req); err != nil {
				return nil, fmt.Errorf("%s: effect %s: %w", path, e.Key, err)
			}
			if err := json.Unmarshal(e.Response, &res); err != nil {
				return nil, fmt.Errorf("%s: effect %s: %w", path, e.Key, err)
			}
			s.Tools = append(s.Tools, ToolResult{Tool: req.Tool, Arguments: req.Arguments, Result: res})
		}
	}
	if len(s.Models) == 0 {
		return nil, fmt.Errorf("%s: the journal recorded no model call", path)
	}
	return s, nil
}

// Applies reports whether a fault can be injected into the run a script
// recorded, and if not, why: a tool fault needs a tool call, an answer
// fault an output contract.
func Applies(k Kind, p *plan.Plan, s *Script) (bool, string) {
	switch {
	case k.where == onTool && len(s.Tools) == 0:
		return false, "the run calls no tool"
	case k.where == onAnswer && p.Agent.Output == nil:
		return false, "the agent has no output contract"
	case k.where == onAnswer && answerAt(p, s) < 0:
		// A case that ends on a bound or an error: the fault would
		// replace a response that is no answer.
		return false, "the recorded run gives no answer"
	case k.where == onModel && len(p.Fallbacks) == 0:
		return false, "the agent declares no fallback model (model.fallback)"
	}
	return true, ""
}

// outputTool is the output tool's name, "" where the answer is the
// reply's text (native, prompted).
func outputTool(p *plan.Plan) string {
	if p.Output != nil && p.Output.Mode == plan.ModeTool {
		return p.Output.Tool
	}
	return ""
}

// answerAt is the place in the script of the model response that gave
// the run's answer: the last that calls the output tool, or, where the
// answer is the text, the last that calls no tool; -1 for none.
func answerAt(p *plan.Plan, s *Script) int {
	tool := outputTool(p)
	for i := len(s.Models) - 1; i >= 0; i-- {
		calls := s.Models[i].Message.ToolCalls
		if tool != "" && slices.ContainsFunc(calls, func(c agentrt.ToolCall) bool { return c.Name == tool }) || tool == "" && len(calls) == 0 {
			return i
		}
	}
	return -1
}

// Default is what a run with the fault k is expected to end with when its
// case does not say: see docs/testing.md for why each holds.
func Default(k Kind, p *plan.Plan) string {
	switch k.Name {
	case Timeout:
		// The clients set no per-attempt timeout: a call never answered
		// waits for the run's deadline.
		return string(agentrt.BoundDeadline)
	case InvalidAnswer:
		// The answer is sent back with what is wrong, retries times.
		if p.Agent.Output != nil && p.Agent.Output.Retries == 0 {
			return Failed
		}
	case Prose:
		// An answer in the text (native, prompted) that is prose is an
		// invalid answer; in tool mode the strategy has the model answer
		// through the output tool again.
		if p.Agent.Output != nil && p.Agent.Output.Retries == 0 && p.Output != nil && p.Output.Mode != plan.ModeTool {
			return Failed
		}
	}
	return Recovered
}
