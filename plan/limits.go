package plan

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// The bounds on the files agentc reads, each read whole: a file past its
// bound is refused, naming it, having read no more than the bound (a link
// to /dev/zero, a file that grows as it is read). Only regular files are
// read; standard input ("-") is bounded the same way. The others: a run's
// --input, 8 MiB (runcmd.MaxInput); a journal, runtime/journal.MaxFile.
const (
	// MaxManifestBytes bounds a manifest file (.cue, .json, .yaml), and
	// each file of a CUE package named on the command line.
	MaxManifestBytes = 4 << 20
	// MaxLoadBytes bounds what CUE's loader reads for one agent in all:
	// the files named, cue.mod/module.cue, and every file of the
	// packages it imports from the module (each file also within
	// MaxManifestBytes). A file read twice counts twice.
	MaxLoadBytes = 64 << 20
	// MaxPlanBytes bounds a plan file.
	MaxPlanBytes = 16 << 20
	// MaxLockBytes bounds a lock file (agentc.sum).
	MaxLockBytes = 4 << 20
	// MaxConfigBytes bounds a configuration file (agentc.yaml).
	MaxConfigBytes = 1 << 20
	// MaxPriceBytes bounds a price file (--prices, $AGENTC_PRICES).
	MaxPriceBytes = 4 << 20
	// MaxReportBytes bounds a run's report read back (agentc view --report).
	MaxReportBytes = 64 << 20
)

// MaxSchemaValues is the most JSON values (objects, arrays, strings,
// numbers, booleans and nulls, counted at every depth) one schema may
// hold. The validator's compiler takes time that grows faster than the
// schema: a flat object of 10,000 properties (20,000 values) compiles in
// about 2 s, one of 50,000 in minutes. No realistic contract comes close:
// the largest of a sample of 149 SchemaStore schemas holds 2,003 values.
// Both vet and the runtime refuse a schema past the limit before
// compiling it.
const MaxSchemaValues = 20000

// SchemaValues counts the JSON values of a decoded schema document (the
// form CompileSchema takes), stopping once the count passes limit.
func SchemaValues(doc any, limit int) int {
	n := 0
	var walk func(v any)
	walk = func(v any) {
		if n > limit {
			return
		}
		n++
		switch v := v.(type) {
		case map[string]any:
			for _, sub := range v {
				walk(sub)
			}
		case []any:
			for _, sub := range v {
				walk(sub)
			}
		}
	}
	walk(doc)
	return n
}

// MaxSchemaDepth is how deep the objects and arrays of one schema may
// nest, the schema itself counting as one: {"type": "string"} is 1 deep,
// {"properties": {"a": {"type": "string"}}} 3. The validator's compiler
// checks a schema against its meta-schema in time that grows with the cube
// of its depth (a chain of 3,000 nested objects, well under
// MaxSchemaValues, takes minutes and gigabytes), and every other check
// walks it recursively. The deepest of a sample of 149 SchemaStore schemas
// nests 22 deep, of the OpenAI API description's component schemas 18.
const MaxSchemaDepth = 64

// SchemaDepth returns how deep the objects and arrays of a decoded schema
// document nest (0 for a scalar), stopping once the depth passes limit.
func SchemaDepth(doc any, limit int) int {
	var walk func(v any, d int) int
	walk = func(v any, d int) int {
		var subs []any
		switch v := v.(type) {
		case map[string]any:
			subs = slices.Collect(maps.Values(v))
		case []any:
			subs = v
		default:
			return d
		}
		d++
		deepest := d
		for _, sub := range subs {
			if deepest > limit {
				break
			}
			deepest = max(deepest, walk(sub, d))
		}
		return deepest
	}
	return walk(doc, 0)
}

// SchemaTooDeepError reports a schema whose objects and arrays nest more
// than MaxSchemaDepth deep.
type SchemaTooDeepError struct {
	// Where names the schema, e.g. "output schema".
	Where string
}

func (e *SchemaTooDeepError) Error() string {
	return fmt.Sprintf("%s: objects and arrays nest more than %d deep; agentc refuses schemas this deep (share repeated parts through $defs and $ref)", e.Where, MaxSchemaDepth)
}

// SchemaTooLargeError reports a schema with more than MaxSchemaValues
// JSON values.
type SchemaTooLargeError struct {
	// Where names the schema, e.g. "output schema".
	Where string
}

func (e *SchemaTooLargeError) Error() string {
	return fmt.Sprintf("%s: more than %d JSON values; agentc refuses schemas this large (split the contract, or share parts through $defs and $ref)", e.Where, MaxSchemaValues)
}

// CheckLimits refuses a plan whose schemas exceed MaxSchemaValues or
// MaxSchemaDepth, so that reading a plan compiled elsewhere, or edited and
// resealed, costs bounded time before any schema is compiled. A schema that
// is not JSON is left to the compiler, which reports it.
func CheckLimits(p *Plan) error {
	a := &p.Agent
	check := func(where string, data json.RawMessage) error {
		if len(data) == 0 {
			return nil
		}
		doc, err := UnmarshalJSONValue(data)
		if err != nil {
			return nil
		}
		if SchemaValues(doc, MaxSchemaValues) > MaxSchemaValues {
			return &SchemaTooLargeError{Where: where}
		}
		if SchemaDepth(doc, MaxSchemaDepth) > MaxSchemaDepth {
			return &SchemaTooDeepError{Where: where}
		}
		return nil
	}
	if a.Input != nil {
		if err := check("input schema", a.Input.Schema); err != nil {
			return err
		}
	}
	if a.Output != nil {
		if err := check("output schema", a.Output.Schema); err != nil {
			return err
		}
	}
	if p.Output != nil {
		if err := check("output schema lowered for "+p.Output.Provider, p.Output.Schema); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(a.Capabilities.Tools)) {
		if t := a.Capabilities.Tools[name]; t.Input != nil {
			if err := check(fmt.Sprintf("tool %q: input schema", name), t.Input.Schema); err != nil {
				return err
			}
		}
	}
	lowered := []map[string]*Lowering{p.ToolInputs}
	for _, f := range p.Fallbacks {
		if f.Output != nil {
			if err := check(fmt.Sprintf("fallback %s: output schema lowered for %s", f.Ref(), f.Output.Provider), f.Output.Schema); err != nil {
				return err
			}
		}
		lowered = append(lowered, f.ToolInputs)
	}
	for _, lows := range lowered {
		for _, name := range slices.Sorted(maps.Keys(lows)) {
			if l := lows[name]; l != nil {
				if err := check(fmt.Sprintf("tool %q: input schema lowered for %s", name, l.Provider), l.Schema); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// MaxCalleeDepth is how deep agents may call agents in one plan: a plan
// holds the plans of the agents it calls, and theirs, down to this many
// levels. Real chains are two or three deep; the bound keeps a plan, and
// the work of reading and running it, bounded.
const MaxCalleeDepth = 8

// MaxAgents is the most agents one plan may hold, itself included, an
// agent called from two places counting twice: agents that call the same
// agents at every level would otherwise make a plan that grows
// exponentially with its depth.
const MaxAgents = 64

// Nesting returns how deep agents call agents in a plan (0 when it calls
// none) and how many agents it holds, itself included.
func Nesting(p *Plan) (depth, agents int) {
	agents = 1
	for _, c := range p.Callees {
		if c.Plan == nil {
			continue
		}
		d, n := Nesting(c.Plan)
		depth = max(depth, d+1)
		agents += n
	}
	return depth, agents
}

// nestingProblem says why a plan that calls agents too deep, or holds too
// many, is refused.
func nestingProblem(depth, agents int) string {
	if depth > MaxCalleeDepth {
		return fmt.Sprintf("agents call agents %d deep in this plan, more than the %d agentc allows", depth, MaxCalleeDepth)
	}
	return fmt.Sprintf("the plan holds %d agents (callees of callees counted each time they are called), more than the %d agentc allows", agents, MaxAgents)
}
