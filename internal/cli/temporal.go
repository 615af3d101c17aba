package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/internal/leaf/atomicfile"
	"agentc.dev/agentc/internal/runcmd"
	"agentc.dev/agentc/internal/termtext"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/batch"
	"agentc.dev/agentc/runtime/filestore"
	"agentc.dev/agentc/runtime/journal"
	"agentc.dev/agentc/runtime/redact"
	"agentc.dev/agentc/serve"
	"agentc.dev/agentc/telemetry"
	"agentc.dev/agentc/temporal"
)

// temporalFlags say which Temporal server, namespace and task queue a
// command talks to.
type temporalFlags struct {
	hostPort, namespace, taskQueue string
}

func (t *temporalFlags) register(fs *pflag.FlagSet, required bool) {
	what := "run on the Temporal server at HOST:PORT, on a worker (agentc worker), instead of here"
	if required {
		what = "the Temporal server, HOST:PORT (default: TEMPORAL_ADDRESS, or the temporal configuration profile's)"
	}
	fs.StringVar(&t.hostPort, "temporal", "", what)
	fs.StringVar(&t.namespace, "namespace", "", "the Temporal namespace (default: TEMPORAL_NAMESPACE, or the temporal configuration profile's, else default)")
	fs.StringVar(&t.taskQueue, "task-queue", temporal.DefaultTaskQueue, "the task queue agentc's workers poll")
}

// chosen reports whether the command runs on Temporal: --temporal given.
// Given empty (a variable unset in a script), it is a usage error, not
// a run here: the run would reach this machine's tools and keys, not the
// workers'.
func (t *temporalFlags) chosen(cmd *cobra.Command) (bool, error) {
	if cmd.Flags().Changed("temporal") && strings.TrimSpace(t.hostPort) == "" {
		return false, UsageError("--temporal is empty: give the Temporal server's HOST:PORT, or leave the flag out to run here")
	}
	return t.hostPort != "", nil
}

// resolve fills in the server and namespace the flags leave to Temporal's
// client configuration (its environment variables and profile), which
// also holds the connection's TLS and API key settings.
func (t *temporalFlags) resolve() error {
	hostPort, namespace, err := temporal.Resolve(t.hostPort, t.namespace)
	if err != nil {
		return UsageError("%v", err)
	}
	t.hostPort, t.namespace = hostPort, namespace
	return nil
}

// remote is the run verb's Remote on Temporal: it submits the run and
// waits for its report.
func (t *temporalFlags) remote(e Env, workflowID *string) runcmd.Remote {
	return func(ctx context.Context, p *plan.Plan, input json.RawMessage, r runcmd.RemoteRun) (*agentrt.Report, error) {
		c, err := temporal.Dial(ctx, t.hostPort, t.namespace, e.Stderr)
		if err != nil {
			return nil, err
		}
		defer c.Close()
		data, err := p.Encode()
		if err != nil {
			return nil, err
		}
		in := runInput(r)
		in.Input = input
		id := *workflowID
		if r.ID != "" {
			id = r.ID
		}
		run, err := temporal.Start(ctx, c, data, in, temporal.SubmitOptions{TaskQueue: t.taskQueue, WorkflowID: id})
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(e.Stderr, "agentc: run %s submitted to %s (namespace %s, task queue %s)\n", run.GetID(), t.hostPort, t.namespace, t.taskQueue)
		wctx, stop := context.WithCancel(ctx)
		defer stop()
		temporal.WatchWorkers(wctx, c, t.hostPort, t.taskQueue, string(p.Digests.Plan), e.Stderr)
		return temporal.Follow(ctx, c, run, r.Events)
	}
}

// served is agentc serve's Remote on Temporal: one client, dialled when
// the server starts, for every run it starts; each plan's runs are
// watched for a worker once, for as long as the server serves (ctx).
// done closes the client.
func (t *temporalFlags) served(ctx context.Context, e Env) (r runcmd.Remote, done func(), err error) {
	c, err := temporal.Dial(ctx, t.hostPort, t.namespace, e.Stderr)
	if err != nil {
		return nil, nil, err
	}
	var watched sync.Map
	r = func(rctx context.Context, p *plan.Plan, input json.RawMessage, rr runcmd.RemoteRun) (*agentrt.Report, error) {
		data, err := p.Encode()
		if err != nil {
			return nil, err
		}
		in := runInput(rr)
		in.Input = input
		// Started whatever comes meanwhile, so that the run is known to
		// have started or not: a start cut short may have started it.
		run, err := temporal.Start(context.WithoutCancel(rctx), c, data, in, temporal.SubmitOptions{TaskQueue: t.taskQueue, WorkflowID: rr.ID})
		if err != nil {
			return nil, err
		}
		if _, seen := watched.LoadOrStore(p.Digests.Plan, true); !seen {
			temporal.WatchWorkers(ctx, c, t.hostPort, t.taskQueue, string(p.Digests.Plan), e.Stderr)
		}
		// The run's client going away cancels the run, as it does a run
		// made here; the server's stop only stops the wait, and the run
		// goes on on the workers.
		wctx, cancel := context.WithCancelCause(context.WithoutCancel(rctx))
		defer cancel(nil)
		defer context.AfterFunc(rctx, func() {
			cause := context.Cause(rctx)
			if errors.Is(cause, serve.ErrStopped) {
				cause = temporal.ErrStopWaiting
			}
			cancel(cause)
		})()
		rep, err := temporal.Follow(wctx, c, run, rr.Events)
		if err != nil && !temporal.Refused(err) {
			// Started, and not refused by its worker: the run was made.
			return nil, &serve.RemoteEnded{Err: err}
		}
		return rep, err
	}
	return r, c.Close, nil
}

// remoteBatch is the run verb's RemoteBatch on Temporal: the batch is a
// workflow that runs each item as a run of its own, named from the
// batch's ID (--workflow-id, else a new one, printed), so that the same
// command run again collects the runs it started instead of starting them
// again.
func (t *temporalFlags) remoteBatch(e Env, workflowID *string) runcmd.RemoteBatch {
	return func(ctx context.Context, p *plan.Plan, r runcmd.RemoteRun, w io.Writer, items func() (io.ReadCloser, error)) (batch.RunFunc, func(), error) {
		c, err := temporal.Dial(ctx, t.hostPort, t.namespace, e.Stderr)
		if err != nil {
			return nil, nil, err
		}
		data, err := p.Encode()
		if err != nil {
			c.Close()
			return nil, nil, err
		}
		id := *workflowID
		if id == "" {
			id = temporal.NewBatchID(p.Agent.Name)
		}
		b, err := temporal.SubmitBatch(ctx, c, data, temporal.BatchSpec{ID: id, Run: runInput(r), Parallel: r.Parallel,
			PoolTokens: r.PoolTokens, Items: items, MaxLine: runcmd.MaxInput, Prepare: r.Prepare,
			Handed: func(n int) {
				fmt.Fprintf(w, "agentc: batch %s: all %d inputs handed over; the batch goes on if this command stops\n", id, n)
			},
			Note: func(msg string) { fmt.Fprintf(w, "agentc: %s\n", msg) }}, temporal.SubmitOptions{TaskQueue: t.taskQueue})
		if err != nil {
			c.Close()
			return nil, nil, err
		}
		fmt.Fprintf(w, "agentc: batch %s submitted to %s (namespace %s, task queue %s): each input is a run, workflow ID %s/INDEX-DIGEST; the batch goes on without this command once every input is handed over; to collect it, run the same command with --workflow-id %s\n",
			id, t.hostPort, t.namespace, t.taskQueue, id, id)
		wctx, stop := context.WithCancel(ctx)
		temporal.WatchWorkers(wctx, c, t.hostPort, t.taskQueue, string(p.Digests.Plan), w)
		done := func() {
			stop()
			defer c.Close()
			st, err := b.Close(ctx)
			switch {
			case err != nil:
				fmt.Fprintf(w, "agentc: %v\n", err)
			case st != nil && (st.Spent < 0 || st.Held < 0):
				// Books no pool of agentc's keeps: another client's updates.
				fmt.Fprintf(w, "agentc: pool: %d tokens: its books say %d spent and %d held, which no batch's calls make: another Temporal client changed them; the batch's spend is not known\n", st.Tokens, st.Spent, st.Held)
			case st != nil:
				fmt.Fprintf(w, "agentc: pool: %d tokens: %d spent, %d left\n", st.Tokens, st.Spent, st.Tokens-st.Spent)
			}
		}
		return b.RunFunc(), done, nil
	}
}

// runInput is a run's input on Temporal, but for the plan and the input.
func runInput(r runcmd.RemoteRun) temporal.RunInput {
	in := temporal.RunInput{Provider: r.Provider, Seed: r.Seed,
		Budgets: temporal.Budgets{Tools: r.Budgets.Tools, Tokens: r.Budgets.Tokens, Rounds: r.Budgets.Rounds}}
	if d := r.Budgets.Deadline; d != nil {
		in.Budgets.Deadline = d.String()
	}
	return in
}

func newWorkerCmd(e Env) *cobra.Command {
	var t temporalFlags
	var dir, baseURL string
	var stall time.Duration
	var rateLimits []string
	var allow []string
	var anyPlan bool
	var filesDir string
	cmd := &cobra.Command{
		Use:   "worker --temporal HOST:PORT --allow PLAN_DIGEST|PLAN_FILE|LOCK_FILE...",
		Short: "Serve runs submitted to a Temporal server (agentc run --temporal)",
		Long: `Worker serves agentc runs on a Temporal server: it polls the task queue for
runs (workflows) and their model and tool calls (activities), and makes them.
Any number of workers may serve one queue, on any number of machines; a run
goes on on another worker when its worker stops or dies, and no model or tool
call that completed is made again.

A run's plan comes from whoever started it, and names the programs the worker
runs, as the worker's user: a worker runs only the plans its operator allows
with --allow, given once or more, each a plan digest (blake3:...), a plan file
(agentc compile) or a lock file (agentc.sum: every agent it holds). A caller's
digest covers the agents it calls. A run of any other plan fails at once,
before any model or tool call, naming its digest. A worker with no --allow
does not start; --insecure-allow-any-plan runs any plan anyone who can start a
workflow on its task queue sends, for development on a server no one else
reaches.

Every run a worker executes shares its pacing: --rate-limit (over
$AGENTC_RATE_LIMITS) paces the calls to a provider, or one of its models,
within requests and tokens a minute, and a 429 any of them meets holds
every call to that model until its Retry-After has passed.

A worker reads the provider keys from its own environment (OPENAI_API_KEY,
ANTHROPIC_API_KEY), and never passes them to a tool: a plan whose tool's env
names one of agentc's keys (or a variable holding one) is refused, allowed or
not. Its tools' relative paths resolve against --dir (default: the working
directory). Runs' files (documents and images an agent is given) are read from
--files (default: $AGENTC_FILES), a directory every worker reads and clients
write: a workflow names a file by digest, never carries its bytes. It stops on
SIGINT or SIGTERM.

A run that does not succeed (any exit code but 0 had it run here) ends its
workflow as failed, with the bound or outcome as the error's type and the
report as its details; the client still prints the report and exits as a
local run. Runs set the search attributes AgentcAgent, AgentcPlan,
AgentcContract, AgentcOutcome and AgentcBound (Keywords) where the namespace
has them registered: the worker checks at start, and says which are missing
and the command that registers them.`,
		Example: `  agentc digest --write examples/issue-triage.cue
  agentc worker --temporal localhost:7233 --allow agentc.sum
  agentc run examples/issue-triage.cue --temporal localhost:7233 --input @issue.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := t.resolve(); err != nil {
				return err
			}
			if err := runcmd.CheckBaseURL("--base-url", baseURL); err != nil {
				return err
			}
			if dir == "" {
				dir = e.Dir
			}
			ctx := cmd.Context()
			secrets := runcmd.ProviderSecrets()
			events := runcmd.EventPrinter(e.Stderr, secrets)
			var tel *telemetry.Telemetry
			if e.Telemetry != nil {
				set := &redact.Set{}
				for _, v := range secrets {
					set.Add(v)
				}
				t, flush, err := e.Telemetry(ctx, e.Stderr, set)
				if err != nil {
					return UsageError("%v", set.Error(err))
				}
				// Flushed once the worker has stopped.
				defer flush()
				tel = t
			}
			models, err := runcmd.WorkerModels(baseURL, stall, rateLimits, e.Providers, events, e.Stderr)
			if err != nil {
				return err
			}
			var allowed []digest.Digest
			switch {
			case anyPlan && len(allow) > 0:
				return UsageError("--allow and --insecure-allow-any-plan do not go together: give one")
			case !anyPlan && len(allow) == 0:
				return UsageError("agentc worker needs --allow: a worker runs only the plans its operator allows (a plan digest, a plan file, or a lock file such as agentc.sum; agentc digest --write makes one), or --insecure-allow-any-plan, which runs any plan anyone who can start a workflow on the task queue sends")
			}
			for _, a := range allow {
				ds, err := temporal.ReadAllowed(a)
				if err != nil {
					return UsageError("--allow %s: %v", a, err)
				}
				allowed = append(allowed, ds...)
			}
			c, err := temporal.Dial(ctx, t.hostPort, t.namespace, e.Stderr)
			if err != nil {
				return &ExitError{Code: ExitFindings, Err: err}
			}
			defer c.Close()
			if filesDir == "" {
				filesDir = os.Getenv(runcmd.FilesVar)
			}
			var files *filestore.Store
			if filesDir != "" {
				if files, err = filestore.Open(filesDir); err != nil {
					return UsageError("--files %s: %v", filesDir, err)
				}
			}
			w, err := temporal.NewWorker(c, temporal.WorkerOptions{ModelFor: func(m temporal.ModelCall) (agentrt.Model, error) {
				return models(m.Plan, m.Run, m.Provider, m.Seed, m.Secrets)
			}, Dir: dir, Secrets: secrets, Events: events, HTTPTransport: e.HTTPTransport, Rules: rules(), Telemetry: tel,
				Allowed: allowed, AllowAnyPlan: anyPlan, Files: files})
			if err != nil {
				return err
			}
			defer w.Close()
			// Runs set agentc's search attributes only where the namespace
			// has them: a worker says which it lacks, and goes on without.
			switch missing, err := w.CheckSearchAttributes(ctx, t.namespace); {
			case err != nil:
				fmt.Fprintf(e.Stderr, "agentc: WARNING: runs will set no search attribute (AgentcAgent, ...): %v\n", err)
			case len(missing) > 0:
				fmt.Fprintf(e.Stderr, "agentc: WARNING: namespace %s lacks the search attributes %s: runs will not set them until they are registered, by an operator of the cluster, and the worker started again: %s\n",
					t.namespace, joinMissing(missing), temporal.RegisterCommand(t.namespace, missing))
			}
			tw := worker.New(c, t.taskQueue, temporal.Options())
			w.Register(tw)
			if err := tw.Start(); err != nil {
				return &ExitError{Code: ExitFindings, Err: fmt.Errorf("temporal: starting the worker: %w", err)}
			}
			if anyPlan {
				fmt.Fprintf(e.Stderr, "agentc: WARNING: --insecure-allow-any-plan: this worker runs any plan, and so any program, as this user, for anyone who can start a workflow on task queue %s\n", t.taskQueue)
			}
			fmt.Fprintf(e.Stderr, "agentc: worker serving task queue %s on %s (namespace %s)%s\n", t.taskQueue, t.hostPort, t.namespace, allowedNote(allowed))
			stop := stopSignals(ctx)
			<-stop.Done()
			fmt.Fprintln(e.Stderr, "agentc: worker stopping")
			tw.Stop()
			return nil
		},
	}
	t.register(cmd.Flags(), true)
	cmd.Flags().StringVar(&dir, "dir", "", "resolve the agents' relative paths against this directory (default: the working directory)")
	cmd.Flags().StringVar(&baseURL, "base-url", "", "the provider's base URL (default: OPENAI_BASE_URL or ANTHROPIC_BASE_URL, else the manifest's model.base_url)")
	runcmd.RegisterStall(cmd.Flags(), &stall)
	runcmd.RegisterRateLimit(cmd.Flags(), &rateLimits)
	cmd.Flags().StringArrayVar(&allow, "allow", nil, "run the plans of this plan digest, plan file or lock file (agentc.sum), and no other (repeatable)")
	cmd.Flags().StringVar(&filesDir, "files", "", "read runs' files from this directory, which clients write too (default: $"+runcmd.FilesVar+")")
	cmd.Flags().BoolVar(&anyPlan, "insecure-allow-any-plan", false, "run any plan a client sends: any program, as this user (development only)")
	return cmd
}

// joinMissing lists search attributes a namespace lacks.
func joinMissing(missing []temporal.MissingSearchAttribute) string {
	names := make([]string, len(missing))
	for i, m := range missing {
		names[i] = m.String()
	}
	return strings.Join(names, ", ")
}

// allowedNote is what a worker's start line says of the plans it runs.
func allowedNote(ds []digest.Digest) string {
	if len(ds) == 0 {
		return ""
	}
	seen := map[digest.Digest]bool{}
	for _, d := range ds {
		seen[d] = true
	}
	if len(seen) == 1 {
		return ", running plan " + string(ds[0])
	}
	return fmt.Sprintf(", running %d plans", len(seen))
}

func newJournalCmd(e Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "journal",
		Short: "Work with run journals",
	}
	var t temporalFlags
	var out, runID string
	export := &cobra.Command{
		Use:   "export --temporal HOST:PORT WORKFLOW_ID",
		Short: "Write a run's journal from its Temporal workflow history",
		Long: `Export reads the history of a run made on Temporal (agentc run --temporal)
and writes it as a journal: one entry for each model and tool call the run
made, as a local run's --record writes them. agentc run --replay then replays
it offline, and reports, as for a local run, where the agent changed since.`,
		Example: `  agentc journal export --temporal localhost:7233 agentc-triage-3f2a9c0d1e4b > run.jsonl
  agentc run examples/issue-triage.cue --replay run.jsonl`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := t.resolve(); err != nil {
				return err
			}
			ctx := cmd.Context()
			c, err := temporal.Dial(ctx, t.hostPort, t.namespace, e.Stderr)
			if err != nil {
				return &ExitError{Code: ExitFindings, Err: err}
			}
			defer c.Close()
			h, entries, err := temporal.Export(ctx, c, args[0], runID, func(note string) { fmt.Fprintf(e.Stderr, "agentc: %s\n", note) })
			if err != nil {
				return &ExitError{Code: ExitFindings, Err: err}
			}
			return writeJournal(e, out, h, entries)
		},
	}
	t.register(export.Flags(), true)
	export.Flags().StringVarP(&out, "output", "o", "-", "write the journal to this file (- for standard output)")
	export.Flags().StringVar(&runID, "run-id", "", "the workflow's run ID (default: its latest run)")
	cmd.AddCommand(export)
	return cmd
}

// writeJournal writes a journal to the file out, or to standard output:
// through a file of its own beside it (or in the temporary directory),
// which the journal writer syncs, renamed into place once complete; an
// out written in place (a descriptor such as /dev/stdout, a device, a
// FIFO: atomicfile.OpenInPlace) gets the complete file's bytes.
func writeJournal(e Env, out string, h journal.Header, entries []journal.Entry) error {
	dir := os.TempDir()
	var inPlace *os.File
	if out != "-" {
		if !filepath.IsAbs(out) {
			out = filepath.Join(e.Dir, out)
		}
		var err error
		if inPlace, err = atomicfile.OpenInPlace(out); err != nil {
			return &ExitError{Code: ExitFindings, Err: err}
		}
		if inPlace != nil {
			defer inPlace.Close()
		} else {
			dir = filepath.Dir(out)
		}
	}
	tmp, err := os.MkdirTemp(dir, ".agentc-export-")
	if err != nil {
		return &ExitError{Code: ExitFindings, Err: err}
	}
	defer os.RemoveAll(tmp)
	file := filepath.Join(tmp, "journal.jsonl")
	w, err := journal.Create(file, h)
	if err != nil {
		return &ExitError{Code: ExitFindings, Err: err}
	}
	for _, en := range entries {
		if err := w.Append(en); err != nil {
			w.Close()
			return &ExitError{Code: ExitFindings, Err: err}
		}
	}
	if err := w.Close(); err != nil {
		return &ExitError{Code: ExitFindings, Err: err}
	}
	if out != "-" && inPlace == nil {
		if err := os.Rename(file, out); err != nil {
			return &ExitError{Code: ExitFindings, Err: err}
		}
		fmt.Fprintf(e.Stderr, "agentc: wrote %s: %d effects of run %s\n", out, len(entries), h.Run)
		return nil
	}
	f, err := os.Open(file)
	if err != nil {
		return &ExitError{Code: ExitFindings, Err: err}
	}
	defer f.Close()
	if inPlace != nil {
		if _, err := io.Copy(inPlace, f); err != nil {
			return &ExitError{Code: ExitFindings, Err: fmt.Errorf("writing %s: %w", out, err)}
		}
		fmt.Fprintf(e.Stderr, "agentc: wrote %s: %d effects of run %s\n", out, len(entries), h.Run)
		return nil
	}
	_, err = io.Copy(e.Stdout, f)
	return err
}

// stopSignals returns a context that ends at SIGINT or SIGTERM, or when
// ctx does.
func stopSignals(ctx context.Context) context.Context {
	ctx, _ = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	return ctx
}

// newApproveCmd is agentc approve: it lists the calls a run on Temporal
// waits to have approved, and decides one.
func newApproveCmd(e Env) *cobra.Command {
	var t temporalFlags
	var reason string
	var asJSON bool
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "approve WORKFLOW_ID [CALL_KEY yes|no|always]",
		Short: "List the calls a run on Temporal waits to have approved, or decide one",
		Long: `Approve decides a call of a run on Temporal (agentc run --temporal) that waits
for approval: the run's workflow waits for this signal, across worker restarts,
until the run's deadline. CALL_KEY is the call's effect key (e.g. 2.1). A
decision goes to the run going under WORKFLOW_ID, named by its run ID: a later
run under the same ID, or one a reset makes, ignores it. A call the run does not
wait on is refused, nothing sent; with no worker running to answer, the decision
is sent all the same and kept for the call. "always" approves the call
and every later call of its tool in the run, but for a tool whose approve is
"always". --reason says why, for a denial: the model reads it.

With WORKFLOW_ID alone it lists the calls the run waits on: key, tool, why it
asks, the arguments (secrets redacted), since when and until when (the run's
deadline); --json prints them as JSON. --wait D waits up to D for a call to
wait (and for the run to start), for a script that decides calls as they
come. A worker must be running to answer.

Exit codes: 0 the decision was sent, or the list printed (empty or not); 1 the
server could not be reached or the run is not there; 2 usage error.`,
		Example: `  agentc approve --temporal localhost:7233 triage-1
  agentc approve --temporal localhost:7233 triage-1 2.1 yes
  agentc approve --temporal localhost:7233 triage-1 3.1 no --reason "not on main"`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 && len(args) != 3 {
				return UsageError("want WORKFLOW_ID to list the calls waiting, or WORKFLOW_ID CALL_KEY yes|no|always to decide one")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := t.resolve(); err != nil {
				return err
			}
			var s temporal.Approval
			if len(args) == 3 {
				if _, err := journal.ParseKey(args[1]); err != nil {
					return UsageError("CALL_KEY: %v", err)
				}
				s = temporal.Approval{Key: args[1], Reason: reason}
				switch args[2] {
				case "yes", "y":
					s.Approved = true
				case "always", "a":
					s.Approved, s.ForRun = true, true
				case "no", "n":
				default:
					return UsageError("the decision %q: want yes, no or always", args[2])
				}
			} else if reason != "" {
				return UsageError("--reason goes with a decision")
			}
			if len(args) == 3 && (asJSON || wait != 0) {
				return UsageError("--json and --wait go with a list (WORKFLOW_ID alone)")
			}
			if wait < 0 {
				return UsageError("--wait must not be negative")
			}
			ctx := cmd.Context()
			c, err := temporal.Dial(ctx, t.hostPort, t.namespace, e.Stderr)
			if err != nil {
				return &ExitError{Code: ExitFindings, Err: err}
			}
			defer c.Close()
			if len(args) == 1 {
				return listApprovals(ctx, e, c, args[0], asJSON, wait)
			}
			// The decision names the run going under the ID, and goes to it
			// alone: a later run under the same ID, or the run a reset
			// makes, ignores it.
			d, err := c.DescribeWorkflowExecution(ctx, args[0], "")
			if err != nil {
				return &ExitError{Code: ExitFindings, Err: fmt.Errorf("temporal: run %s: %w", args[0], err)}
			}
			info := d.GetWorkflowExecutionInfo()
			s.Run = info.GetExecution().GetRunId()
			if info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
				return &ExitError{Code: ExitFindings, Err: fmt.Errorf("run %s (run ID %s) has ended: no call of it waits for approval; nothing was sent", args[0], s.Run)}
			}
			if waiting, ok := waitsOn(ctx, c, args[0], s.Run, args[1]); ok && !waiting {
				return &ExitError{Code: ExitFindings, Err: fmt.Errorf("run %s (run ID %s) does not wait on call %s: nothing was sent; agentc approve %s lists the calls it waits on", args[0], s.Run, args[1], args[0])}
			}
			if err := c.SignalWorkflow(ctx, args[0], s.Run, temporal.SignalApprove, s); err != nil {
				return &ExitError{Code: ExitFindings, Err: fmt.Errorf("temporal: signalling run %s: %w", args[0], err)}
			}
			fmt.Fprintf(e.Stderr, "agentc: call %s of run %s (run ID %s): %s sent\n", args[1], args[0], s.Run, args[2])
			return nil
		},
	}
	t.register(cmd.Flags(), true)
	cmd.Flags().StringVar(&reason, "reason", "", "why: the model reads it with a denial")
	cmd.Flags().BoolVar(&asJSON, "json", false, "list the calls waiting as JSON")
	cmd.Flags().DurationVar(&wait, "wait", 0, "list: wait up to this long for a call to wait")
	return cmd
}

// waitsOn says whether run runID of workflow id waits on call key, and
// whether a worker answered within a few seconds: with none running, a
// decision is sent unchecked, kept for the call.
func waitsOn(ctx context.Context, c client.Client, id, runID, key string) (waiting, answered bool) {
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	v, err := c.QueryWorkflow(qctx, id, runID, temporal.QueryApprovals)
	var pending []temporal.Pending
	if err != nil || v.Get(&pending) != nil {
		return false, false
	}
	for _, p := range pending {
		if p.Key == key {
			return true, true
		}
	}
	return false, true
}

// listApprovals prints the calls a run waits to have approved, once some
// wait or wait has passed.
func listApprovals(ctx context.Context, e Env, c client.Client, id string, asJSON bool, wait time.Duration) error {
	until := time.Now().Add(wait)
	var pending []temporal.Pending
	ended := false
	for {
		v, err := c.QueryWorkflow(ctx, id, "", temporal.QueryApprovals)
		var notFound *serviceerror.NotFound
		var notReady *serviceerror.WorkflowNotReady
		switch {
		case (errors.As(err, &notFound) || errors.As(err, &notReady)) && time.Now().Before(until):
			// A run about to start, or not yet begun by a worker: wait
			// for it too.
		case err != nil:
			return &ExitError{Code: ExitFindings, Err: fmt.Errorf("temporal: asking run %s for the calls it waits on: %w", id, err)}
		default:
			if err := v.Get(&pending); err != nil {
				return &ExitError{Code: ExitFindings, Err: fmt.Errorf("temporal: run %s: the calls it waits on: %w", id, err)}
			}
		}
		if len(pending) > 0 || !time.Now().Before(until) {
			break
		}
		if err == nil {
			// Nothing waits: an ended run never will.
			d, err := c.DescribeWorkflowExecution(ctx, id, "")
			if err == nil && d.WorkflowExecutionInfo.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
				ended = true
				break
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(min(500*time.Millisecond, time.Until(until))):
		}
	}
	if asJSON {
		// The same JSON, with what a terminal would act on or hide in the
		// model's arguments (a bidi override, a C1 control) as escapes.
		enc := json.NewEncoder(termtext.Writer(e.Stdout))
		enc.SetIndent("", "  ")
		return enc.Encode(pending)
	}
	if len(pending) == 0 {
		if ended {
			fmt.Fprintf(e.Stderr, "agentc: run %s has ended: no call of it waits for approval\n", id)
			return nil
		}
		fmt.Fprintf(e.Stderr, "agentc: no call of run %s waits for approval\n", id)
		return nil
	}
	for _, p := range pending {
		who := p.Tool
		if p.Agent != "" {
			who = p.Agent + ": " + p.Tool
		}
		fmt.Fprintf(e.Stdout, "%s  %s  (%s)\n", termtext.Escape(p.Key), termtext.Escape(who), termtext.Escape(p.Why))
		fmt.Fprintf(e.Stdout, "  arguments: %s\n", runcmd.ShownArguments(p.Arguments, p.ArgumentsText))
		fmt.Fprintf(e.Stdout, "  asked %s", p.Asked.UTC().Format(time.RFC3339))
		if !p.Until.IsZero() {
			fmt.Fprintf(e.Stdout, ", until %s", p.Until.UTC().Format(time.RFC3339))
		}
		fmt.Fprintln(e.Stdout)
	}
	return nil
}
