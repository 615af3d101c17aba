// Package tool builds the tools a plan declares, by kind, for the runtime.
package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	nethttp "net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"agentc.dev/agentc/cost"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/redact"
	"agentc.dev/agentc/runtime/tool/exec"
	"agentc.dev/agentc/runtime/tool/fs"
	"agentc.dev/agentc/runtime/tool/http"
	"agentc.dev/agentc/runtime/tool/mcp"
)

// Env is what building tools needs from the host.
type Env struct {
	// BaseDir is what relative paths in tools (an fs root, say) resolve
	// against; a called agent's resolve against its own directory
	// (plan.Callee.Dir) below it.
	BaseDir string
	// ModelFor returns the model a called agent runs against; without it,
	// agent tools are not built.
	ModelFor func(p *plan.Plan) (agentrt.Model, error)
	// Pool, Prices and Events are shared with called agents' runs.
	Pool   *agentrt.Pool
	Prices *cost.Table
	Events func(agentrt.Event)
	// HTTPTransport, when set, carries the requests of http tools, after
	// their allowlist checks: a host routes them through a proxy, or a
	// test answers them on the spot.
	HTTPTransport nethttp.RoundTripper

	// MCPHTTPClient, when set, is the client of mcp servers reached over
	// streamable HTTP.
	MCPHTTPClient *nethttp.Client

	// Servers are mcp servers' tool sets as a journal recorded them, by
	// server path (the agent tools that led to it, and its name, joined
	// by "/"). Offline, tools come from here and no server is started; a
	// server that is started must offer the tools recorded for it.
	Servers map[string]ServerRecord
	// Offline, every tool call is served (from a journal, a fault script,
	// or a Temporal worker's activity) and none is made: no mcp server is
	// started, and exec tools are built without asking what this system
	// can confine (exec.Offline).
	Offline bool
	// OnServer, when set, is told the tool set of each mcp server started.
	OnServer func(path string, rec ServerRecord)
	// Provider, when set, is the provider called agents run against
	// instead of their plans' (runtime.Options.Provider).
	Provider string
	// Secrets, when set, gains the value of every variable a tool passes
	// on from agentc's environment (an exec or mcp tool's env), and is
	// shared with called agents' runs (runtime.Options.Secrets).
	Secrets *redact.Set
	// Content is shared with called agents' runs
	// (runtime.Options.Content).
	Content bool

	path    string          // the agent tools that led here, for events
	depth   int             // how many agent tools led here
	closers *[]func() error // what Build's closer closes, shared with callees
	starts  *serverStarts   // this plan's mcp servers, being started
}

// ServerRecord is what an mcp server offered: its allowed tools and their
// fingerprint.
type ServerRecord struct {
	Fingerprint string             `json:"fingerprint"`
	Tools       []agentrt.ToolSpec `json:"tools"`
}

// ServerChangedError reports an mcp server whose tools are not the ones a
// journal recorded for it.
type ServerChangedError struct {
	Server        string
	Recorded, Now string
}

func (e *ServerChangedError) Error() string {
	return fmt.Sprintf("mcp server %s offers other tools than the journal recorded: fingerprint %s then, %s now", e.Server, e.Recorded, e.Now)
}

// offlineTool stands in for a server tool in a replay: the model sees its
// recorded spec, and a call, which the journal serves, never reaches it.
type offlineTool struct{ spec agentrt.ToolSpec }

func (t offlineTool) Spec() agentrt.ToolSpec { return t.spec }

func (t offlineTool) Call(context.Context, json.RawMessage) (agentrt.ToolResult, error) {
	return agentrt.ToolResult{}, fmt.Errorf("tool %s is offline in a replay", t.spec.Name)
}

// constructorFunc makes the tools of one declared tool: one, or for an mcp
// server, one per allowed server tool.
type constructorFunc func(ctx context.Context, name string, t plan.Tool, p *plan.Plan, env Env) ([]agentrt.Tool, error)

func one(t agentrt.Tool, err error) ([]agentrt.Tool, error) {
	if err != nil {
		return nil, err
	}
	return []agentrt.Tool{t}, nil
}

// kinds maps each tool kind this runtime provides to its constructor.
var kinds = map[string]constructorFunc{
	"fs": func(_ context.Context, name string, t plan.Tool, _ *plan.Plan, env Env) ([]agentrt.Tool, error) {
		f, err := fs.New(name, t, env.BaseDir)
		if err != nil {
			return nil, err
		}
		*env.closers = append(*env.closers, f.Close)
		return []agentrt.Tool{f}, nil
	},
	"exec": func(_ context.Context, name string, t plan.Tool, _ *plan.Plan, env Env) ([]agentrt.Tool, error) {
		opts := []exec.Option{exec.WithSecrets(env.Secrets)}
		if env.Offline {
			opts = append(opts, exec.Offline())
		}
		x, err := exec.New(name, t, env.BaseDir, opts...)
		if err != nil {
			return nil, err
		}
		*env.closers = append(*env.closers, x.Close)
		return []agentrt.Tool{x}, nil
	},
	"http": func(_ context.Context, name string, t plan.Tool, _ *plan.Plan, env Env) ([]agentrt.Tool, error) {
		opts := []http.Option{http.WithSecrets(env.Secrets)}
		if env.HTTPTransport != nil {
			opts = append(opts, http.WithTransport(env.HTTPTransport))
		}
		h, err := http.New(name, t, opts...)
		if err != nil {
			return nil, err
		}
		*env.closers = append(*env.closers, h.Close)
		return []agentrt.Tool{h}, nil
	},
	"mcp": func(ctx context.Context, name string, t plan.Tool, p *plan.Plan, env Env) ([]agentrt.Tool, error) {
		path := strings.TrimPrefix(env.path+"/"+name, "/")
		rec, recorded := env.Servers[path]
		if env.Offline {
			if !recorded {
				return nil, fmt.Errorf("the journal recorded no tools of mcp server %s", path)
			}
			// The manifest's allow list still decides what the model sees.
			byName := map[string]agentrt.ToolSpec{}
			for _, spec := range rec.Tools {
				byName[spec.Name] = spec
			}
			var out []agentrt.Tool
			for _, name := range t.Allow {
				spec, ok := byName[name]
				if !ok {
					return nil, fmt.Errorf("mcp server %s: the journal recorded no tool %q, which the manifest allows", path, name)
				}
				out = append(out, offlineTool{spec})
			}
			return out, nil
		}
		s, err := env.starts.take(name)
		if err != nil {
			return nil, err
		}
		*env.closers = append(*env.closers, s.Close)
		if recorded && rec.Fingerprint != s.Fingerprint() {
			return nil, &ServerChangedError{Server: path, Recorded: rec.Fingerprint, Now: s.Fingerprint()}
		}
		// What a server says of its tools goes to the model and the
		// journal: the secrets it was given are redacted from it too.
		tools := make([]agentrt.Tool, len(s.Tools()))
		for i, tool := range s.Tools() {
			tools[i] = env.redactSpec(tool)
		}
		if env.OnServer != nil {
			r := ServerRecord{Fingerprint: s.Fingerprint()}
			for _, tool := range tools {
				r.Tools = append(r.Tools, tool.Spec())
			}
			env.OnServer(path, r)
		}
		if env.Events != nil {
			// The fingerprint of what the server offers: a server whose
			// tools changed shows a different one.
			env.Events(agentrt.Event{Time: time.Now(), Type: agentrt.EventToolServer, Agent: env.path, Tool: name,
				Message: fmt.Sprintf("%d tools allowed, fingerprint %s", len(tools), s.Fingerprint())})
		}
		return tools, nil
	},
}

// constructor returns the constructor of a kind. The agent kind is not in
// the table because building an agent's tools calls Build, which reads it.
func constructor(kind string) (constructorFunc, bool) {
	if kind == "agent" {
		return func(ctx context.Context, name string, t plan.Tool, p *plan.Plan, env Env) ([]agentrt.Tool, error) {
			return one(newAgent(ctx, name, t, p, env))
		}, true
	}
	mk, ok := kinds[kind]
	return mk, ok
}

// Build makes every tool of a plan, connecting to the mcp servers it
// declares (ctx bounds that). A kind this runtime does not provide is an
// error naming the tool, so a run fails before it sends anything. The
// caller calls the returned close function when its runs are over; on an
// error, Build has closed what it opened.
func Build(ctx context.Context, p *plan.Plan, env Env) (map[string]agentrt.Tool, func() error, error) {
	var closers []func() error
	if env.closers == nil {
		env.closers = &closers
	}
	closeAll := func() error {
		var errs []error
		for i := len(*env.closers) - 1; i >= 0; i-- {
			errs = append(errs, (*env.closers)[i]())
		}
		*env.closers = nil
		return errors.Join(errs...)
	}
	tools, err := build(ctx, p, env)
	if err != nil {
		if env.closers == &closers {
			closeAll()
		}
		return nil, nil, err
	}
	return tools, closeAll, nil
}

func build(ctx context.Context, p *plan.Plan, env Env) (_ map[string]agentrt.Tool, err error) {
	names := make([]string, 0, len(p.Agent.Capabilities.Tools))
	for name := range p.Agent.Capabilities.Tools {
		names = append(names, name)
	}
	sort.Strings(names)
	// Every secret of the plan's tools first, so that what the first tool
	// built says is redacted of the secrets of the last.
	for _, name := range names {
		env.secretEnv(p.Agent.Capabilities.Tools[name].Env)
	}
	// The mcp servers start at once, while the other tools are built in
	// turn: several take the slowest one's start, not the sum of them.
	ctx, env.starts = env.startServers(ctx, p, names)
	defer func() { env.starts.end(err) }()
	out := map[string]agentrt.Tool{}
	for _, name := range names {
		t := p.Agent.Capabilities.Tools[name]
		mk, ok := constructor(t.Kind)
		if !ok {
			return nil, fmt.Errorf("tool %q: this runtime does not provide tools of kind %q (it provides: %s)", name, t.Kind, provided())
		}
		tools, err := mk(ctx, name, t, p, env)
		if err != nil {
			if failed, ferr := env.starts.failure(); failed != "" && errors.Is(err, errOtherFailed) {
				// This tool's start was ended by a server's failing to
				// start: that failure is the one to tell.
				return nil, fmt.Errorf("tool %q: %w", failed, ferr)
			}
			return nil, fmt.Errorf("tool %q: %w", name, err)
		}
		for _, tool := range tools {
			n := tool.Spec().Name
			if _, dup := out[n]; dup {
				return nil, fmt.Errorf("tool %q: the name %q is taken twice", name, n)
			}
			out[n] = tool
		}
	}
	return out, nil
}

// serverStarts is the start of a plan's mcp servers, each on a goroutine
// of its own (startServers).
type serverStarts struct {
	cancel context.CancelCauseFunc
	byName map[string]*serverStart
	wg     sync.WaitGroup

	mu     sync.Mutex
	failed string // the first server whose start failed of itself
	err    error  // why it failed
}

// serverStart is one server's start: done is closed once it has ended.
type serverStart struct {
	done   chan struct{}
	server *mcp.Server
	err    error
	taken  bool // build has it: its closer closes it
}

// errOtherFailed is the cause that ends every server's start once one of
// them has failed, or another tool could not be built; a start it ended
// fails with it, and so does an agent tool whose servers' starts it ended.
var errOtherFailed = errors.New("another tool failed to start")

// startServers starts the mcp servers among names, each on a goroutine
// of its own, under a context it returns, which a failure to start one
// of them ends. Offline, or where the plan declares none, it starts
// nothing: a Temporal workflow builds its tools offline and may start no
// goroutine.
func (env Env) startServers(ctx context.Context, p *plan.Plan, names []string) (context.Context, *serverStarts) {
	st := &serverStarts{byName: map[string]*serverStart{}}
	if env.Offline {
		return ctx, st
	}
	var mcps []string
	for _, name := range names {
		if p.Agent.Capabilities.Tools[name].Kind == "mcp" {
			mcps = append(mcps, name)
		}
	}
	if len(mcps) == 0 {
		return ctx, st
	}
	opts := []mcp.Option{mcp.WithSecrets(env.Secrets)}
	if d, err := p.Agent.Budgets.DeadlineLimit(); err == nil && d > 0 && d < mcp.DefaultStartTimeout {
		// A server that cannot start within the run's deadline could
		// not serve the run: its start is held to the deadline too.
		opts = append(opts, mcp.WithStartTimeout(d))
	}
	if env.MCPHTTPClient != nil {
		opts = append(opts, mcp.WithHTTPClient(env.MCPHTTPClient))
	}
	ctx, st.cancel = context.WithCancelCause(ctx)
	for _, name := range mcps {
		one := &serverStart{done: make(chan struct{})}
		st.byName[name] = one
		st.wg.Add(1)
		go func() {
			defer st.wg.Done()
			defer close(one.done)
			one.server, one.err = mcp.Connect(ctx, name, p.Agent.Capabilities.Tools[name], env.BaseDir, opts...)
			if one.err == nil {
				return
			}
			st.mu.Lock()
			defer st.mu.Unlock()
			switch {
			case context.Cause(ctx) == errOtherFailed:
				one.err = errOtherFailed
			case st.failed == "":
				st.failed, st.err = name, one.err
				st.cancel(errOtherFailed)
			}
		}()
	}
	return ctx, st
}

// take waits for the start of the server named name and hands it over:
// its closer is then the caller's.
func (st *serverStarts) take(name string) (*mcp.Server, error) {
	one := st.byName[name]
	if one == nil {
		return nil, fmt.Errorf("mcp server %q was not started", name)
	}
	<-one.done
	if one.err != nil {
		return nil, one.err
	}
	one.taken = true
	return one.server, nil
}

// failure returns the first server whose start failed of itself (not
// ended by another's failure), and why; "" while none has.
func (st *serverStarts) failure() (string, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.failed, st.err
}

// end is called once build is done, with its error: on an error, the
// starts still under way are ended, and the servers build did not take
// are closed.
func (st *serverStarts) end(err error) {
	if st.cancel == nil {
		return
	}
	if err != nil {
		st.cancel(errOtherFailed)
	}
	st.wg.Wait()
	st.cancel(nil)
	for _, one := range st.byName {
		if one.server != nil && !one.taken {
			one.server.Close()
		}
	}
}

// secretEnv adds to the run's secrets the values of the variables a tool
// is given: whatever the tool prints of them is redacted. The variables
// that name the system's places and settings (NotSecret) are not secrets.
func (env Env) secretEnv(names []string) {
	if env.Secrets == nil {
		return
	}
	for _, name := range names {
		if v, ok := os.LookupEnv(name); ok && !NotSecret(name) {
			env.Secrets.Add(v)
		}
	}
}

// NotSecret tells whether a tool's variable is one that names a place or
// a setting of the system (PATH, HOME, the locale, the terminal, the
// temporary directory, the XDG directories) rather than a credential. Its
// value is not redacted: a home directory of 8 bytes or more would
// otherwise be replaced in every path a tool prints.
func NotSecret(name string) bool {
	switch name {
	case "PATH", "HOME", "USER", "LOGNAME", "SHELL", "PWD", "TMPDIR", "TMP", "TEMP",
		"LANG", "LANGUAGE", "TERM", "TZ", "COLORTERM", "NO_COLOR":
		return true
	}
	return strings.HasPrefix(name, "LC_") || strings.HasPrefix(name, "XDG_")
}

// redactSpec returns t, with the secrets redacted from its description and
// schema if they hold any.
func (env Env) redactSpec(t agentrt.Tool) agentrt.Tool {
	spec := t.Spec()
	desc, schema := env.Secrets.String(spec.Description), env.Secrets.JSON(spec.Schema)
	if desc == spec.Description && bytes.Equal(schema, spec.Schema) {
		return t
	}
	spec.Description, spec.Schema = desc, schema
	return specTool{t, spec}
}

// specTool is a tool shown to the model with another spec.
type specTool struct {
	agentrt.Tool
	spec agentrt.ToolSpec
}

func (t specTool) Spec() agentrt.ToolSpec { return t.spec }

func provided() string {
	ks := []string{"agent"}
	for k := range kinds {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return fmt.Sprint(ks)
}
