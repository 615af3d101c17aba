package runcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	goruntime "runtime"
	"time"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/batch"
	"agentc.dev/agentc/runtime/redact"
)

// Remote runs a plan somewhere other than this process (agentc's Temporal
// client) and returns its report. The run verb hands it the plan, the
// input and the overrides it read and checked as for a local run, and
// prints the report as it prints a local one.
type Remote func(ctx context.Context, p *plan.Plan, input json.RawMessage, r RemoteRun) (*agentrt.Report, error)

// RemoteRun is what a remote run takes from the command line besides the
// plan and the input.
type RemoteRun struct {
	// ID, when set, is the run's ID there (a served run's): the workflow ID
	// on Temporal.
	ID       string
	Budgets  agentrt.Overrides
	Provider string // --model: the provider that answers in place of the plan's
	Seed     int64
	// PoolTokens, for a batch, is --pool-tokens: a pool its runs share;
	// Parallel is --parallel.
	PoolTokens int64
	Parallel   int
	// Prepare, for a batch, makes an item's input of its line: the files
	// it names put in the store the workers read, named by digest.
	Prepare func(line []byte) ([]byte, error)
	// Events, when set, hears the run's events as it makes them (a
	// served run's client's event stream).
	Events func(agentrt.Event)
}

// RemoteBatch submits a batch of the plan to run somewhere other than
// this process, handing it the items it reads from what items opens (the
// batch's input, which it may read while the batch's runner reads it
// too). It returns the function that waits for each item's run, and what
// to call when the batch is over; it names the batch on w.
type RemoteBatch func(ctx context.Context, p *plan.Plan, r RemoteRun, w io.Writer, items func() (io.ReadCloser, error)) (batch.RunFunc, func(), error)

// SetRemote makes the run verb run its plan with r, and a batch's items
// with b. The flags that only mean something in this process (--record,
// --replay, --events, --dir, --base-url, --prices, --pool-tokens) are refused with
// them.
func (f *Flags) SetRemote(r Remote, b RemoteBatch) { f.remote, f.remoteBatch = r, b }

// runRemoteBatch runs a batch whose items run elsewhere: read, ordered,
// counted and printed here as a local batch is.
func runRemoteBatch(ctx context.Context, e Env, p *plan.Plan, f Flags, r RemoteRun, files *fileInputs) error {
	var in io.Reader
	var total int64
	var items func() (io.ReadCloser, error)
	if f.batch == "-" {
		// Read twice: once to hand the items over, once to wait for them.
		spool, size, err := spoolInput(e.Stdin)
		if err != nil {
			return &ExitError{Code: ExitFindings, Err: fmt.Errorf("--batch -: %w", err)}
		}
		defer func() {
			spool.Close()
			os.Remove(spool.Name()) // where it could not go at once
		}()
		// Each reading at its own offset.
		in, total = io.NewSectionReader(spool, 0, size), batch.Count(io.NewSectionReader(spool, 0, size), MaxInput)
		items = func() (io.ReadCloser, error) { return io.NopCloser(io.NewSectionReader(spool, 0, size)), nil }
	} else {
		var closeIn func()
		var err error
		if in, total, closeIn, err = batchInput(e, f.batch); err != nil {
			return err
		}
		defer closeIn()
		items = func() (io.ReadCloser, error) { return os.Open(f.batch) }
	}
	ctx, sigs := onStopSignal(ctx, e)
	defer sigs.stop()
	r.Parallel = f.parallel
	// Items are prepared alike whether they are handed over or collected.
	r.Prepare = files.lines(f)
	run, done, err := f.remoteBatch(ctx, p, r, e.Stderr, items)
	if err != nil {
		return &ExitError{Code: ExitFindings, Err: err}
	}
	defer done()
	b := batch.NewFunc(run, batch.Options{Parallel: f.parallel, MaxLine: MaxInput, Prepare: r.Prepare})
	return driveBatch(ctx, e, f, b, in, total, sigs, nil,
		"the runs it started go on; run the same command again, with the same --workflow-id, to collect them and go on", false)
}

// spoolInput copies standard input to a temporary file and returns it,
// with its size. The file leaves its directory as soon as it is made
// where the system lets an open file go (not Windows): the person's items
// are copied before the batch handles stop signals, and a Ctrl-C then, a
// second signal or a kill leaves no copy of them behind.
func spoolInput(in io.Reader) (*os.File, int64, error) {
	f, err := os.CreateTemp("", "agentc-batch-*.jsonl")
	if err != nil {
		return nil, 0, err
	}
	if goruntime.GOOS != "windows" {
		os.Remove(f.Name())
	}
	n, err := io.Copy(f, in)
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, 0, err
	}
	return f, n, nil
}

// WorkerModels returns the function a worker picks each agent's model
// with, as the run verb does: the provider named in place of the plan's
// ("test" for the test model) or the plan's own, configured from the
// environment, with baseURL in place of the providers' base URL variables
// when set, stall as --stall-timeout, and rateLimits as --rate-limit
// (over RateLimitsVar): every run the worker executes shares one limiter
// for each provider's model, and the 429s any of them meets. Events
// receives the providers' retries and waits; warn, the worker's notes.
// Each model adds the credentials it sends to the secret set it is made
// with (ModelRequest.Secrets).
func WorkerModels(baseURL string, stall time.Duration, rateLimits []string, extra map[string]ProviderFunc, events func(agentrt.Event), warn io.Writer) (func(p, run *plan.Plan, provider string, seed int64, secrets *redact.Set) (agentrt.Model, error), error) {
	if err := checkStall(stall); err != nil {
		return nil, err
	}
	hosts, err := keyHosts(os.Getenv(KeyHostsVar))
	if err != nil {
		return nil, err
	}
	limits, err := ReadLimits(rateLimits, os.Getenv(RateLimitsVar), nil, KnownProviders(extra))
	if err != nil {
		return nil, err
	}
	set := limits.Set(warn)
	return func(p, run *plan.Plan, provider string, seed int64, secrets *redact.Set) (agentrt.Model, error) {
		// --base-url is the server of the run's own provider, not of its
		// fallbacks' or called agents' others.
		return newModelFor(providerFlags{model: provider, seed: seed, baseURL: baseURL, baseFor: run.Agent.Model.Provider, keyHosts: hosts, stall: stall, extra: extra, pace: set, log: warn, secrets: secrets}, os.Getenv, events)(p)
	}, nil
}

// ProviderSecrets returns the values of agentc's own keys set in the
// environment (plan.KeyVars: the provider keys, the Temporal client's API
// key): the secrets every run redacts.
func ProviderSecrets() []string {
	var out []string
	for _, name := range plan.KeyVars() {
		if v := os.Getenv(name); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// EventPrinter writes events as the run verb's progress lines on w, with
// the secrets redacted.
func EventPrinter(w io.Writer, secrets []string) func(agentrt.Event) {
	s := &redact.Set{}
	for _, v := range secrets {
		s.Add(v)
	}
	return eventPrinter(s.Writer(w), nil, s)
}
