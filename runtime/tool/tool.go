// Package tool builds the tools a plan declares, by kind, for the runtime.
package tool

import (
	"fmt"
	nethttp "net/http"
	"sort"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/tool/exec"
	"agentc.dev/agentc/runtime/tool/fs"
	"agentc.dev/agentc/runtime/tool/http"
)

// Env is what building tools needs from the host.
type Env struct {
	// BaseDir is what relative paths in tools (an fs root, a called
	// agent's path) resolve against.
	BaseDir string
	// ModelFor returns the model a called agent runs against.
	ModelFor func(p *plan.Plan) (agentrt.Model, error)
	// Resolve returns the plan of a called agent, by path, and the
	// directory its own relative paths resolve against. Plans compiled from
	// manifests need the compiler, which the runtime does not link: the
	// host provides it.
	Resolve func(path string) (*plan.Plan, string, error)
	// Pool and Events are shared with called agents' runs.
	Pool   *agentrt.Pool
	Events func(agentrt.Event)
	// HTTPTransport, when set, carries the requests of http tools, after
	// their allowlist checks: a host routes them through a proxy, or a
	// test answers them on the spot.
	HTTPTransport nethttp.RoundTripper

	path  string          // the agent tools that led here, for events
	stack []digest.Digest // plan digests of the callers, to refuse cycles
}

// kinds maps each tool kind this runtime provides to its constructor.
var kinds = map[string]func(name string, t plan.Tool, p *plan.Plan, env Env) (agentrt.Tool, error){
	"fs": func(name string, t plan.Tool, _ *plan.Plan, env Env) (agentrt.Tool, error) {
		return fs.New(name, t, env.BaseDir)
	},
	"exec": func(name string, t plan.Tool, _ *plan.Plan, env Env) (agentrt.Tool, error) {
		return exec.New(name, t, env.BaseDir)
	},
	"http": func(name string, t plan.Tool, _ *plan.Plan, env Env) (agentrt.Tool, error) {
		if env.HTTPTransport != nil {
			return http.New(name, t, http.WithTransport(env.HTTPTransport))
		}
		return http.New(name, t)
	},
}

// constructor returns the constructor of a kind. The agent kind is not in
// the table because building an agent's tools calls Build, which reads it.
func constructor(kind string) (func(string, plan.Tool, *plan.Plan, Env) (agentrt.Tool, error), bool) {
	if kind == "agent" {
		return newAgent, true
	}
	mk, ok := kinds[kind]
	return mk, ok
}

// Build makes every tool of a plan. A kind this runtime does not provide
// is an error naming the tool, so a run fails before it sends anything.
func Build(p *plan.Plan, env Env) (map[string]agentrt.Tool, error) {
	names := make([]string, 0, len(p.Agent.Capabilities.Tools))
	for name := range p.Agent.Capabilities.Tools {
		names = append(names, name)
	}
	sort.Strings(names)
	out := map[string]agentrt.Tool{}
	for _, name := range names {
		t := p.Agent.Capabilities.Tools[name]
		mk, ok := constructor(t.Kind)
		if !ok {
			return nil, fmt.Errorf("tool %q: this runtime does not provide tools of kind %q (it provides: %s)", name, t.Kind, provided())
		}
		tool, err := mk(name, t, p, env)
		if err != nil {
			return nil, fmt.Errorf("tool %q: %w", name, err)
		}
		out[name] = tool
	}
	return out, nil
}

func provided() string {
	ks := []string{"agent"}
	for k := range kinds {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return fmt.Sprint(ks)
}
