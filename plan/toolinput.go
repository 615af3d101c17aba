package plan

import (
	"fmt"
	"maps"
	"slices"
)

// StrictToolKinds are the kinds of tool whose argument schema is lowered
// to a provider's dialect and sent strict where the provider can enforce
// it (Plan.ToolInputs): those whose schema the manifest writes. An mcp
// server says its tools' schemas only when the run connects to it, and
// an agent tool takes any object.
var StrictToolKinds = []string{"exec", "http"}

// checkToolInputs checks a plan's tool input lowerings for a provider:
// each names a tool of the agent of a kind that takes one, is lowered for
// that provider, is strict (a schema the provider cannot enforce is sent
// as written, and has no entry), and holds an object schema. Whether that
// compiles is runtime.New's to find, once the plan's schemas are known to
// be within CheckLimits.
func checkToolInputs(a *Agent, provider string, lows map[string]*Lowering) error {
	for _, name := range slices.Sorted(maps.Keys(lows)) {
		l := lows[name]
		t, ok := a.Capabilities.Tools[name]
		switch {
		case !ok:
			return fmt.Errorf("tool_inputs: %q is not one of the agent's tools", name)
		case !slices.Contains(StrictToolKinds, t.Kind) || t.Input == nil:
			return fmt.Errorf("tool_inputs: tool %q (kind %s) declares no input schema to lower", name, t.Kind)
		case l == nil:
			return fmt.Errorf("tool_inputs: tool %q has no lowering", name)
		case l.Provider != provider:
			return fmt.Errorf("tool_inputs: tool %q's input schema is lowered for %q, not %q", name, l.Provider, provider)
		case !l.Strict:
			return fmt.Errorf("tool_inputs: tool %q's lowering is not strict; a schema the provider cannot enforce is sent as written", name)
		case l.Wrap != "":
			return fmt.Errorf("tool_inputs: tool %q's lowering wraps its arguments in %q; a tool takes its arguments as they are", name, l.Wrap)
		}
		if doc, err := UnmarshalJSONValue(l.Schema); err != nil {
			return fmt.Errorf("tool_inputs: tool %q's lowered schema is not JSON: %v", name, err)
		} else if _, ok := doc.(map[string]any); !ok {
			return fmt.Errorf("tool_inputs: tool %q's lowered schema is not an object schema", name)
		}
	}
	return nil
}
