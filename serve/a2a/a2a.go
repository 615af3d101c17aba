// Package a2a serves agents over the A2A protocol with the A2A project's
// Go SDK (github.com/a2aproject/a2a-go): an agent card per agent, and its
// JSON-RPC binding, whose message/send runs the agent. It is apart from
// package serve because the SDK links gRPC, which only the agentc program
// carries.
package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/serve"
)

// Prefix is where the agents are served: agent NAME's card at
// Prefix+NAME+a2asrv.WellKnownAgentCardPath, its JSON-RPC endpoint at
// Prefix+NAME.
const Prefix = "/a2a/"

// ProtocolVersion is the A2A protocol the SDK speaks (its release 0.3
// implements the protocol's 0.3.0).
const ProtocolVersion = "0.3.0"

// Card is the agent card of an agent served at base (its endpoint's URL):
// one skill, the agent, its input and output modes JSON where its
// contracts are (text otherwise), the bearer scheme every call needs, and
// the contract and plan digests among the skill's tags.
func Card(ag serve.Agent, base string) *a2a.AgentCard {
	a := &ag.Plan.Agent
	desc := a.Description
	if desc == "" {
		desc, _, _ = strings.Cut(strings.TrimSpace(a.Instructions), "\n")
	}
	in, out := []string{"text/plain"}, []string{"text/plain"}
	if a.Input != nil {
		in = []string{"application/json"}
	}
	if a.Output != nil {
		out = []string{"application/json"}
	}
	return &a2a.AgentCard{
		Name: a.Name, Description: desc, URL: base, Version: string(ag.Plan.Digests.Plan),
		ProtocolVersion: ProtocolVersion, PreferredTransport: a2a.TransportProtocolJSONRPC,
		DefaultInputModes: in, DefaultOutputModes: out,
		Skills: []a2a.AgentSkill{{ID: a.Name, Name: a.Name, Description: desc, InputModes: in, OutputModes: out,
			Tags: []string{"contract:" + string(ag.Plan.Digests.Contract), "plan:" + string(ag.Plan.Digests.Plan)}}},
		SecuritySchemes: a2a.NamedSecuritySchemes{"bearer": a2a.HTTPAuthSecurityScheme{Scheme: "bearer"}},
		Security:        []a2a.SecurityRequirements{{"bearer": a2a.SecuritySchemeScopes{}}},
	}
}

// Handler serves each agent's card and JSON-RPC endpoint under Prefix,
// to clients that send one of the bearer tokens (serve.MCPHandler's
// rule); base is the server's URL (http://HOST:PORT), from which the cards
// name their endpoints. A client reaches only the agents its token admits
// to: another's card and endpoint are not found (404), as for an agent
// not served.
func Handler(agents []serve.Agent, runs *serve.Runs, base string, tokens *serve.Tokens) http.Handler {
	mux := http.NewServeMux()
	for _, ag := range agents {
		name := ag.Plan.Agent.Name
		path := Prefix + name
		mux.Handle(path+a2asrv.WellKnownAgentCardPath, admitted(name, a2asrv.NewStaticAgentCardHandler(Card(ag, strings.TrimSuffix(base, "/")+path))))
		mux.Handle(path, admitted(name, a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(&executor{ag: ag, runs: runs}))))
	}
	return serve.Authorized(mux, tokens)
}

// admitted serves h to the requests whose token admits to agent name, and
// answers the rest as the mux answers a path it does not serve.
func admitted(name string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !serve.AccessOf(r.Context()).Allows(name) {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// executor runs the agent with a message's input: the first data part's
// object, or the first text part's text read as JSON; an agent without an
// input takes none. The answer is the reply: a data part where it is an
// object, and its JSON as a text part.
type executor struct {
	ag   serve.Agent
	runs *serve.Runs
}

func (x *executor) Execute(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	reply := func(parts ...a2a.Part) error {
		return q.Write(ctx, a2a.NewMessageForTask(a2a.MessageRoleAgent, rc, parts...))
	}
	var input json.RawMessage
	if x.ag.Plan.Agent.Input != nil {
		var err error
		if input, err = inputOf(rc.Message); err != nil {
			return reply(a2a.TextPart{Text: "error: " + err.Error()})
		}
	}
	rec, err := x.runs.Run(ctx, x.ag, input, serve.Budgets{})
	if err != nil {
		var ie *agentrt.InputError
		if errors.As(err, &ie) {
			return reply(a2a.TextPart{Text: "error: " + err.Error()})
		}
		return err
	}
	rep := rec.Result
	if rep.Outcome != agentrt.OutcomeOK || rep.Bound != "" && rep.Bound != agentrt.BoundNone {
		msg := rep.Error
		if msg == "" {
			msg = fmt.Sprintf("the run ended with outcome %s, bound %s", rep.Outcome, rep.Bound)
		}
		return reply(a2a.TextPart{Text: "error: " + msg, Metadata: map[string]any{"outcome": rep.Outcome, "bound": rep.Bound, "run": rec.ID}})
	}
	meta := map[string]any{"outcome": rep.Outcome, "bound": agentrt.BoundNone, "run": rec.ID}
	var obj map[string]any
	if json.Unmarshal(rep.Answer, &obj) == nil && obj != nil {
		return reply(a2a.DataPart{Data: obj, Metadata: meta}, a2a.TextPart{Text: string(rep.Answer)})
	}
	return reply(a2a.TextPart{Text: string(rep.Answer), Metadata: meta})
}

func (x *executor) Cancel(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	return nil // a run in flight ends with its request's context
}

// inputOf reads a message's input: its first data part, else its first
// text part as JSON.
func inputOf(m *a2a.Message) (json.RawMessage, error) {
	if m == nil {
		return nil, errors.New("the request holds no message")
	}
	for _, p := range m.Parts {
		if d, ok := p.(a2a.DataPart); ok {
			return json.Marshal(d.Data)
		}
	}
	for _, p := range m.Parts {
		if t, ok := p.(a2a.TextPart); ok {
			if !json.Valid([]byte(t.Text)) {
				return nil, errors.New("the message's text is not JSON: the agent's input is a JSON value, as a data part or a text part")
			}
			return json.RawMessage(t.Text), nil
		}
	}
	return nil, errors.New("the message holds no data part and no text part: the agent's input goes in one")
}
