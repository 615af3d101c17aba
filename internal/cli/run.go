package cli

import (
	"github.com/spf13/cobra"

	"agentc.dev/agentc/internal/runcmd"
)

func newRunCmd(e Env, c *Compiler) *cobra.Command {
	var f runcmd.Flags
	cmd := &cobra.Command{
		Use:   "run [path]",
		Short: "Run an agent: a compiled plan, or a manifest compiled on the fly",
		Long: `Run executes an agent. The path is a plan written by agentc compile, or a
manifest (compiled on the fly, as agentc compile would); default ".".

Input: --input JSON, --input @file.json, or --input - for standard input.
Without --input, an agent that declares an input schema reads standard input.
The input is validated against the input schema before any model call.

Standard output holds only the validated answer (JSON); with --report it holds
the run report instead, a JSON object whose "answer" is the answer. Progress
goes to standard error; --events writes every event as JSON lines.

--model test runs the agent against the offline test model, which needs no
provider and no key: it calls each tool once with arguments made from its
schema, then answers with a value made from the output schema. Otherwise the
manifest's provider is used: keys come from OPENAI_API_KEY and
ANTHROPIC_API_KEY only; the base URL from --base-url, OPENAI_BASE_URL or
ANTHROPIC_BASE_URL, or the manifest's model.base_url (any OpenAI-compatible
server, which may need no key). A key goes to a manifest's base_url only if
you name its host in AGENTC_KEY_HOSTS (e.g. localhost,gateway.internal:8443).

Keys, and the values of the variables tools' env names, are replaced by
[redacted] in everything the run writes and everything sent to the model.

Relative paths in the agent (an fs tool's root) resolve against the
manifest's directory, or the plan's; --dir names another.

--record FILE journals every model call and tool call, one line each, synced
as it completes. If FILE exists, the run it holds is resumed: what completed
is served from it, and the run goes on live from there. --replay FILE serves
every call from the journal and makes none: no network, no tool side effects.
A request that is not the one recorded (the manifest changed under the
journal) stops the run with exit 6 and the fields that changed.

Before anything is read or sent, the agent, and each agent it calls, is
checked against the lock file agentc digest --write keeps: --lock FILE, else
the nearest agentc.sum in the agent's directory or above it. An agent whose
contract or plan digest differs from its entry is refused (exit 1); one the
lock does not hold runs, with a note. --require-lock refuses to run without
a lock file, or an agent it does not hold.

SIGINT, SIGTERM and SIGHUP stop the run at its next safe point, killing
what its tools started; a second signal ends agentc at once.

Exit codes: 0 answered; 1 failed (no valid answer, bad input, bad agent, an
agent that differs from the lock); 2 usage error; 3 deadline; 4 tool budget;
5 token budget or pool (an answer, if any, is still printed); 6 the run
diverged from its journal; 7 rounds used up; 8 answering turns used up; 130
interrupted, 143 and 129 stopped by SIGTERM and SIGHUP (a journal holds
every call that completed; run again with the same --record to resume).`,
		Example: `  agentc run examples/invoice-extractor.cue --model test --input @invoice.json
  agentc compile agent.cue -o plan.json && agentc run plan.json --input '{"id": 1}'`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := "."
			if len(args) == 1 {
				path = args[0]
			}
			return runcmd.RunAgent(cmd.Context(), e, runcmd.NewLoader(c.Load, nil), path, f, cmd.Flags().Changed)
		},
	}
	f.Register(cmd.Flags())
	cmd.MarkFlagsMutuallyExclusive("record", "replay")
	return cmd
}
