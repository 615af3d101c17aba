package cli

import (
	"net/http"

	"github.com/spf13/cobra"

	"agentc.dev/agentc/internal/leaf/buildinfo"
	"agentc.dev/agentc/internal/runcmd"
	"agentc.dev/agentc/serve"
	"agentc.dev/agentc/serve/a2a"
)

func newServeCmd(e Env, c *Compiler) *cobra.Command {
	var f runcmd.ServeFlags
	var t temporalFlags
	cmd := &cobra.Command{
		Use:   "serve path...",
		Short: "Serve agents to other programs, each an MCP tool whose schemas are its contracts",
		Long: `Serve offers each agent it is given (a manifest, compiled on the fly, or a
plan; a directory, or dir/..., gives every agent it holds) as a tool of one
MCP server on standard input and output, the stdio transport: an editor's
assistant or another agent lists the tools and calls them. A tool is named
as its agent; its input schema is the agent's input contract (an object;
an agent without input takes {}), its output
schema the agent's output contract (where that is an object), and its
_meta holds the contract and plan digests (agentc/contract, agentc/plan).
A call runs the agent with the call's arguments as its input; the answer,
validated against the contract, is the result's structured content and its
text. Arguments the input contract refuses, and a run that ends without a
valid answer or on a bound, are the call's error (isError), saying why;
the result's _meta says the run's outcome, bound and usage.

Each agent is checked against the lock file, as agentc run checks it, and
its tools started, before anything is served; one that cannot be served
(an input that is not an object, two of one name) is an error, exit 1. A
file input is its bytes in base64, or, over the HTTP API, a multipart part
(curl -F document=@invoice.pdf -F 'input={...}'). Keys come from the environment, as for agentc run; --model
test answers every call offline. A tool call that needs approval is denied
(--approve no, the default; the model reads the denial), approved
(--approve yes), or asked (--approve ask) of the person at the MCP client
where it can be asked (elicitation), else over the HTTP API: standard input
is the client's, there is no terminal to ask on. What the runs say goes to
standard error. The server ends when the client closes the connection, or
on SIGINT or SIGTERM.

Each run has an id, in the result's _meta (agentc/run) and the HTTP API's
answer. --journal-dir DIR journals every run into DIR/ID.jsonl and keeps its
record in DIR/ID.json; runs a stop interrupted (past --grace) are resumed
from their journals when a server starts again on DIR. No run starts while
a disk the server keeps runs on (DIR, the file store) has less than
--min-free room (1 GiB; 0 for no bound): the request is refused, 507 over
the HTTP API.

--deadline, --tool-budget, --token-budget and --rounds override the agents'
budgets, as for agentc run; a client may narrow a run's further (the HTTP
API's query: ?deadline=30s&tools=3&tokens=5000&rounds=4; MCP's _meta
agentc/budgets: {"deadline": "30s", "tools": 3}), never widen them.

--temporal HOST:PORT starts each run as a workflow on the Temporal server,
for agentc worker to run (the workflow ID is AGENT-RUNID), and waits for
its report: the server is a stateless front for the workers, which hold
the keys, run the tools, keep the journals and decide approvals (agentc
approve). A server that stops stops waiting; the runs go on.

--http HOST:PORT serves MCP's streamable HTTP transport at /mcp instead,
and an HTTP API of the same agents: POST /v1/agents/NAME/runs (the body is
the input; the answer is the run), GET /v1/agents, and GET /openapi.json,
generated from the contracts, GET /v1/runs/ID (a run's record and report),
GET /v1/approvals and POST /v1/runs/ID/approvals/KEY (decide a waiting
call), and A2A: an agent card per agent at
/a2a/NAME/.well-known/agent-card.json and its JSON-RPC endpoint at
/a2a/NAME. Every request must carry a bearer token (at least 16 bytes):
$AGENTC_SERVE_TOKEN's, for every agent, or one of --token-file's, which
wins when given: a token a line, alone (every agent) or followed by the
agents it admits to (TOKEN labeler,act); blank lines and lines starting
with # are skipped. A client sees only its token's agents: the others are
not found over the API, MCP and A2A, and neither their runs nor their
calls waiting for approval. The server does not start without a token, nor
with a bad token file (said by line, never printing a token). /healthz and
/readyz need none. --ready-file FILE gets
the server's URL once it listens (for --http 127.0.0.1:0). An MCP session
with no request for --mcp-idle (1h) is closed (its client's next request is
404), and the clients of one token hold at most --mcp-sessions (256) at
once (past it, 429). Over HTTP the MCP revisions served are 2025-11-25 and
older; over stdio, 2026-07-28 too.`,
		Example: `  agentc serve examples/issue-triage.cue examples/pr-description.cue
  agentc serve --model test agents/
  AGENTC_SERVE_TOKEN=... agentc serve --http 127.0.0.1:8080 examples/issue-triage.cue`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			version := buildinfo.Version()
			f.SetChanged(cmd.Flags().Changed)
			onTemporal, err := t.chosen(cmd)
			if err != nil {
				return err
			}
			if onTemporal {
				if err := t.resolve(); err != nil {
					return err
				}
				if err := f.CheckRemote(); err != nil {
					return err
				}
				remote, done, err := t.served(cmd.Context(), e)
				if err != nil {
					return err
				}
				defer done()
				f.SetRemote(remote)
			} else {
				for _, name := range []string{"namespace", "task-queue"} {
					if cmd.Flags().Changed(name) {
						return UsageError("--%s goes with --temporal", name)
					}
				}
			}
			if c.Agents != nil {
				var err error
				if args, err = c.Agents(e, args); err != nil {
					return err
				}
			}
			return runcmd.Serve(cmd.Context(), e, c.Load, version, args, f)
		},
	}
	f.Register(cmd.Flags())
	t.register(cmd.Flags(), false)
	f.SetApproveRules(rules())
	f.SetRetarget(c.Retarget)
	f.SetA2A(func(agents []serve.Agent, runs *serve.Runs, base string, tokens *serve.Tokens) http.Handler {
		return a2a.Handler(agents, runs, base, tokens)
	})
	return cmd
}
