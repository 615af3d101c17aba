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

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
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
}

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
		files, err := plan.FileFields(in.Schema)
		if err != nil {
			return nil, fmt.Errorf("agent %s: input schema: %w", a.Name, err)
		}
		if len(files) > 0 {
			return nil, fmt.Errorf("agent %s takes files (%s), which an MCP call cannot give it yet", a.Name, files[0].Name)
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
	for _, ag := range agents {
		t, err := Tool(ag.Plan)
		if err != nil {
			return nil, err
		}
		if seen[t.Name] {
			return nil, fmt.Errorf("two agents are named %s: an MCP server's tools have names of their own", t.Name)
		}
		seen[t.Name] = true
		s.AddTool(t, handler(ag, runs, t.OutputSchema != nil))
	}
	return s, nil
}

// handler runs the agent with a call's arguments as its input. An input
// that fails the input contract, and a run that ends without a valid
// answer or on a bound, are the call's error (isError), saying why; a
// valid answer is the result, as structured content where the contract
// is an object, and as its JSON text for clients that read text alone.
func handler(ag Agent, runs *Runs, structured bool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var input json.RawMessage
		if ag.Plan.Agent.Input != nil {
			input = req.Params.Arguments
			if len(input) == 0 {
				input = json.RawMessage("{}")
			}
		}
		rec, err := runs.run(ctx, ag, call{runner: ag.Runner, input: input, elicit: elicitOf(req.Session)})
		if err != nil {
			var ie *agentrt.InputError
			if errors.As(err, &ie) {
				return failed(err.Error(), nil), nil
			}
			return nil, err
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
}

// approvalSchema is the form a client shows its user to decide a call.
var approvalSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"approve":{"type":"boolean","title":"Approve the call","description":"yes runs the call; no denies it, and the model reads the reason"},` +
	`"reason":{"type":"string","title":"Reason","description":"why not, for a denial: the model reads it"}},"required":["approve"]}`)

// maxShownArguments bounds the arguments an approval's message shows.
const maxShownArguments = 4000

// elicitOf asks the person at the MCP client of session s to decide a
// call, where the client said it can be asked (elicitation, form mode).
func elicitOf(s *mcp.ServerSession) elicitFunc {
	if s == nil {
		return nil
	}
	return func(ctx context.Context, req *agentrt.ApprovalRequest) (agentrt.ApprovalDecision, bool, error) {
		ip := s.InitializeParams()
		if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil ||
			ip.Capabilities.Elicitation.Form == nil && ip.Capabilities.Elicitation.URL != nil {
			return agentrt.ApprovalDecision{}, false, nil
		}
		args := string(req.Arguments)
		if req.ArgumentsText != nil {
			b, _ := json.Marshal(*req.ArgumentsText)
			args = string(b) + " (not JSON)"
		}
		if len(args) > maxShownArguments {
			args = strings.ToValidUTF8(args[:maxShownArguments], "") + "…"
		}
		who := ""
		if req.Agent != "" {
			who = " (agent " + req.Agent + ")"
		}
		msg := fmt.Sprintf("The call %s of tool %s%s needs approval: %s.\nArguments: %s", req.Key, req.Tool, who, req.Why, args)
		res, err := s.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: msg, RequestedSchema: approvalSchema})
		if err != nil {
			if ctx.Err() != nil {
				return agentrt.ApprovalDecision{}, true, ctx.Err()
			}
			return agentrt.ApprovalDecision{}, true, &agentrt.ApprovalRefused{Tool: req.Tool, Key: req.Key, Msg: req.Why + "; asking the client failed: " + err.Error()}
		}
		switch res.Action {
		case "accept":
			approve, ok := res.Content["approve"].(bool)
			if !ok {
				return agentrt.ApprovalDecision{}, true, &agentrt.ApprovalRefused{Tool: req.Tool, Key: req.Key, Msg: req.Why + "; the client accepted the form without a yes or no"}
			}
			reason, _ := res.Content["reason"].(string)
			if !approve && reason == "" {
				reason = "the person at the client said no"
			}
			if approve {
				reason = ""
			}
			return agentrt.ApprovalDecision{Approved: approve, By: agentrt.ByPerson, Reason: reason}, true, nil
		case "decline":
			return agentrt.ApprovalDecision{By: agentrt.ByPerson, Reason: "the person at the client declined the call"}, true, nil
		default:
			return agentrt.ApprovalDecision{By: agentrt.ByPerson, Reason: "the person at the client dismissed the question without an answer"}, true, nil
		}
	}
}

func failed(msg string, meta mcp.Meta) *mcp.CallToolResult {
	res := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
	res.Meta = meta
	return res
}
