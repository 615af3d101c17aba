package runcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/pflag"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/pace"
	"agentc.dev/agentc/runtime/redact"
	"agentc.dev/agentc/runtime/tool"
	"agentc.dev/agentc/serve"
)

// ServeFlags are agentc serve's flags.
type ServeFlags struct {
	model, approve, lock string
	requireLock          bool
	rules                RulesFunc
	retarget             RetargetFunc
}

// Register defines the flags on fs.
func (f *ServeFlags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&f.model, "model", "", `answer every call with another provider, or "test", the offline test model`)
	fs.StringVar(&f.approve, "approve", approveNo, "tool calls that need approval: no (deny them all; the model reads the denial) or yes (approve them all); no client is asked yet")
	fs.StringVar(&f.lock, "lock", "", "check the agents against this lock file (default: the nearest agentc.sum at or above each agent's directory)")
	fs.BoolVar(&f.requireLock, "require-lock", false, "refuse to serve an agent the lock file does not hold, or without a lock file")
}

// SetApproveRules sets what decides calls by approve_if before --approve.
func (f *ServeFlags) SetApproveRules(r RulesFunc) { f.rules = r }

// SetRetarget sets what makes a plan for the model --model names.
func (f *ServeFlags) SetRetarget(r RetargetFunc) { f.retarget = r }

// Serve serves the agents at paths (manifests, compiled on the fly, or
// plans) as tools of one MCP server on the process's standard input and
// output, until the client closes it or a stop signal comes. Each agent
// is loaded and checked against the lock file, its tools started and its
// model made, before anything is served; one that cannot be is an error,
// and nothing is served. What the runs say goes to standard error.
// version names the server in its handshake.
func Serve(ctx context.Context, e Env, compile LoadFunc, version string, paths []string, f ServeFlags) error {
	if f.approve != approveNo && f.approve != approveYes {
		return UsageError("--approve %q: want no or yes (there is no terminal to ask on: standard input is the client's)", f.approve)
	}
	secrets := &redact.Set{}
	for _, v := range ProviderSecrets() {
		secrets.Add(v)
	}
	hosts, err := keyHosts(os.Getenv(KeyHostsVar))
	if err != nil {
		return err
	}
	ctx, sigs := onStopSignal(ctx, e)
	defer sigs.stop()
	rf := Flags{approve: f.approve, rules: f.rules, lock: f.lock, requireLock: f.requireLock, retarget: f.retarget, model: f.model}
	approve, err := approver(e, rf)
	if err != nil {
		return err
	}
	events := eventPrinter(secrets.Writer(e.Stderr), nil, secrets)
	limits := pace.NewSet()
	var agents []serve.Agent
	for _, path := range paths {
		p, dir, err := load(e, compile, path)
		if err != nil {
			return err
		}
		lock, err := openLock(e, rf, dir)
		if err != nil {
			return err
		}
		matched, err := lock.check(p, path)
		if err != nil {
			return err
		}
		if !matched {
			if err := lock.checkCallees(p, dir); err != nil {
				return err
			}
		}
		af := rf
		if p, af, err = retarget(e, p, af); err != nil {
			return err
		}
		modelFor := newModelFor(providerFlags{model: af.model, keyHosts: hosts, extra: e.Providers, pace: limits}, os.Getenv, events)
		model, err := modelFor(p)
		if err != nil {
			return &ExitError{Code: ExitFindings, Err: err}
		}
		tools, closeTools, err := tool.Build(ctx, p, tool.Env{BaseDir: dir, ModelFor: modelFor, Events: events,
			HTTPTransport: e.HTTPTransport, Provider: af.model, Secrets: secrets})
		if err != nil {
			return toolsError(err, sigs, "the agent's tools changed")
		}
		defer closing(e, closeTools)
		r, err := agentrt.New(p, agentrt.Options{Model: model, FallbackModel: modelFor, Tools: tools, Events: events,
			Provider: af.model, Secrets: secrets, Approver: approve})
		if err != nil {
			return &ExitError{Code: ExitFindings, Err: err}
		}
		agents = append(agents, serve.Agent{Plan: p, Runner: r})
	}
	s, err := serve.MCP(version, agents)
	if err != nil {
		return &ExitError{Code: ExitFindings, Err: err}
	}
	names := make([]string, len(agents))
	for i, a := range agents {
		names[i] = a.Plan.Agent.Name
	}
	fmt.Fprintf(e.Stderr, "agentc: serving %d agents over MCP on standard input and output: %v\n", len(agents), names)
	err = s.Run(ctx, &mcp.IOTransport{Reader: readCloser{e.Stdin}, Writer: writeCloser{e.Stdout}})
	if c := sigs.code(); c != 0 {
		return &ExitError{Code: c}
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return &ExitError{Code: ExitFindings, Err: err}
	}
	return nil
}

// readCloser and writeCloser give the transport the process's standard
// input and output without closing them.
type readCloser struct{ io.Reader }

func (readCloser) Close() error { return nil }

type writeCloser struct{ io.Writer }

func (writeCloser) Close() error { return nil }
