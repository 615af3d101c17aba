// Package tool builds the tools a plan declares, by kind, for the runtime.
package tool

import (
	"fmt"
	"sort"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/tool/fs"
)

// kinds maps each tool kind this runtime provides to its constructor.
var kinds = map[string]func(name string, t plan.Tool, baseDir string) (agentrt.Tool, error){
	"fs": func(name string, t plan.Tool, baseDir string) (agentrt.Tool, error) { return fs.New(name, t, baseDir) },
}

// Build makes every tool of a plan. Relative paths in tools (an fs root)
// resolve against baseDir. A kind this runtime does not provide is an
// error naming the tool, so a run fails before it sends anything.
func Build(p *plan.Plan, baseDir string) (map[string]agentrt.Tool, error) {
	names := make([]string, 0, len(p.Agent.Capabilities.Tools))
	for name := range p.Agent.Capabilities.Tools {
		names = append(names, name)
	}
	sort.Strings(names)
	out := map[string]agentrt.Tool{}
	for _, name := range names {
		t := p.Agent.Capabilities.Tools[name]
		mk, ok := kinds[t.Kind]
		if !ok {
			return nil, fmt.Errorf("tool %q: this runtime does not provide tools of kind %q (it provides: %s)", name, t.Kind, provided())
		}
		tool, err := mk(name, t, baseDir)
		if err != nil {
			return nil, fmt.Errorf("tool %q: %w", name, err)
		}
		out[name] = tool
	}
	return out, nil
}

func provided() string {
	var ks []string
	for k := range kinds {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return fmt.Sprint(ks)
}
