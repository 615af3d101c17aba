package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/internal/leaf/userfile"
)

// Format is the plan format this package writes and reads.
const Format = "agentc.plan/v4"

// olderFormats are the formats earlier agentc versions wrote: a plan of
// one is compiled again, not read. Format 3 named the agents it called by
// path, for the runtime to find beside it; format 4 carries their plans.
var olderFormats = []string{"agentc.plan/v1", "agentc.plan/v2", "agentc.plan/v3"}

// Plan is a compiled agent: everything the runtime needs, with the digests
// that identify it.
type Plan struct {
	Format  string  `json:"format"`
	Digests Digests `json:"digests"`
	// Agent is the manifest with every default applied and durations
	// normalised.
	Agent Agent `json:"agent"`
	// Callees are the agents this one calls through agent tools, by tool
	// name, each compiled into the plan: a run needs no other file.
	Callees map[string]Callee `json:"callees,omitempty"`
	// Output says how the answer is asked of the provider: the resolved
	// output mode, the output tool's name, and the contract schema lowered
	// to the provider's dialect; nil for an agent without an output
	// contract.
	Output *Lowering `json:"output,omitempty"`
	// Fallbacks are the model's fallbacks (Agent.Model.Fallback), in
	// order, each with its settings and the answer format lowered to its
	// dialect, as if the manifest named it.
	Fallbacks []FallbackModel `json:"fallbacks,omitempty"`
	// ToolInputs are the argument schemas of the agent's exec and http
	// tools lowered to the provider's dialect, by tool name, for those
	// whose schema the provider can enforce while the model writes the
	// arguments (OpenAI's strict function calling, Anthropic's strict tool
	// use): the tool is sent with the lowered schema, strict. A tool not
	// here is sent with its schema as written, not strict. Either way its
	// arguments are validated against the schema as written.
	ToolInputs map[string]*Lowering `json:"tool_inputs,omitempty"`
	// Sources maps manifest paths (e.g. "output.schema") to where they
	// were written, "file:line:col" with the file relative to the agent's
	// directory, for run-time messages. They are outside the plan digest:
	// where an agent is written does not change what it does.
	Sources map[string]string `json:"sources,omitempty"`
	// Tests are the agent's test cases, by name. They count in the plan
	// digest; a plan without them has the digest it had before they
	// existed.
	Tests map[string]Test `json:"tests,omitempty"`
}

// FallbackModel is one of a model's fallbacks, compiled: the model with
// the agent's settings that go with it, and how the answer is asked of
// it (nil for an agent without an output contract).
type FallbackModel struct {
	Model  Model     `json:"model"`
	Output *Lowering `json:"output,omitempty"`
	// ToolInputs are as Plan.ToolInputs, for this model's provider.
	ToolInputs map[string]*Lowering `json:"tool_inputs,omitempty"`
}

// FallbackPlan returns the plan as if its manifest named its i-th
// fallback (from 0) as its model: that model's settings and answer
// format, and no fallbacks of its own. It shares the rest with p, and
// keeps p's digests: it is the same agent.
func (p *Plan) FallbackPlan(i int) *Plan {
	q := *p
	q.Agent.Model = p.Fallbacks[i].Model
	q.Output, q.ToolInputs, q.Fallbacks = p.Fallbacks[i].Output, p.Fallbacks[i].ToolInputs, nil
	return &q
}

// Ref names the model as PROVIDER:MODEL.
func (f FallbackModel) Ref() string { return f.Model.Provider + ":" + f.Model.Name }

// Digests identify a plan.
type Digests struct {
	Contract digest.Digest `json:"contract"`
	Plan     digest.Digest `json:"plan"`
}

// Callee is an agent called as a tool, compiled into its caller's plan.
type Callee struct {
	// Path is the callee's manifest or plan, as the tool declares it, for
	// messages.
	Path string `json:"path"`
	// Dir is the directory the callee's own relative paths (an fs root,
	// say) resolve against, relative to its caller's, slash-separated:
	// its manifest's or plan's directory, as when it runs on its own.
	Dir string `json:"dir"`
	// Contract is the callee's contract digest, which a pin fixes.
	Contract digest.Digest `json:"contract"`
	// Plan is the callee's sealed plan, with its own callees in it.
	Plan *Plan `json:"plan"`
}

// contract is what a consumer of an agent depends on.
type contract struct {
	Provides string          `json:"provides,omitempty"`
	Input    json.RawMessage `json:"input,omitempty"`
	Output   *outputContract `json:"output,omitempty"`
}

type outputContract struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	KeepsTools  bool            `json:"keeps_tools"`
}

// ContractDigest returns the digest of an agent's contract: what it
// provides, its input schema, and its output's name, description, schema
// and keeps_tools. Instructions, model, tools and budgets are not part of
// it.
func ContractDigest(a *Agent) (digest.Digest, error) {
	c, err := ContractJSON(a)
	if err != nil {
		return "", err
	}
	return digest.Contract.OfCanonical(c), nil
}

// ContractJSON returns the canonical JSON of an agent's contract, the
// bytes its contract digest is computed over. A lock file keeps them, so
// that a later version of the agent can be compared with this one.
func ContractJSON(a *Agent) ([]byte, error) {
	var c contract
	c.Provides = a.Capabilities.Provides
	if a.Input != nil {
		c.Input = a.Input.Schema
	}
	if o := a.Output; o != nil {
		c.Output = &outputContract{Name: o.Name, Description: o.Description, Schema: o.Schema, KeepsTools: o.KeepsTools}
	}
	b, err := digest.CanonicalValue(c)
	if err != nil {
		return nil, fmt.Errorf("contract digest: %w", err)
	}
	return b, nil
}

// ContractAgent returns an agent holding only the contract ContractJSON
// wrote (provides, input, and the output's contract members): enough to
// compare with another version of the agent, and nothing else.
func ContractAgent(data []byte) (*Agent, error) {
	var c contract
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("contract: %w", err)
	}
	a := &Agent{}
	a.Capabilities.Provides = c.Provides
	if c.Input != nil {
		a.Input = &Input{Schema: c.Input}
	}
	if o := c.Output; o != nil {
		a.Output = &Output{Name: o.Name, Description: o.Description, Schema: o.Schema, KeepsTools: o.KeepsTools}
	}
	return a, nil
}

// calleeDigest is what the plan digest covers of a callee: its place, its
// contract, and its whole plan through the plan's own digest, so that any
// change to what a callee does moves its callers' plan digests.
type calleeDigest struct {
	Path     string        `json:"path"`
	Dir      string        `json:"dir"`
	Contract digest.Digest `json:"contract"`
	Plan     digest.Digest `json:"plan"`
}

// planDigest covers everything that drives behaviour: the format, the
// contract digest, the agent, its callees and how its answer is asked for;
// and the agent's test cases.
// A callee's plan counts through its recorded plan digest, which must be
// verified first.
func planDigest(p *Plan) (digest.Digest, error) {
	var callees map[string]calleeDigest
	for name, c := range p.Callees {
		if callees == nil {
			callees = map[string]calleeDigest{}
		}
		callees[name] = calleeDigest{Path: c.Path, Dir: c.Dir, Contract: c.Contract, Plan: c.Plan.Digests.Plan}
	}
	v := struct {
		Format   string                  `json:"format"`
		Contract digest.Digest           `json:"contract"`
		Agent    *Agent                  `json:"agent"`
		Callees  map[string]calleeDigest `json:"callees,omitempty"`
		Output   *Lowering               `json:"output,omitempty"`
		Fallback []FallbackModel         `json:"fallbacks,omitempty"`
		Tests    map[string]Test         `json:"tests,omitempty"`
		Tools    map[string]*Lowering    `json:"tool_inputs,omitempty"`
	}{p.Format, p.Digests.Contract, &p.Agent, callees, p.Output, p.Fallbacks, p.Tests, p.ToolInputs}
	d, err := digest.Plan.OfValue(v)
	if err != nil {
		return "", fmt.Errorf("plan digest: %w", err)
	}
	return d, nil
}

// Seal sets the plan's format and computes both digests, once it has
// checked that the callees are the agent's agent tools (see checkCallees).
// The callees' plans must be sealed already.
func (p *Plan) Seal() error {
	if err := p.checkCallees(); err != nil {
		return err
	}
	if err := checkToolInputs(&p.Agent, p.Agent.Model.Provider, p.ToolInputs); err != nil {
		return err
	}
	for _, f := range p.Fallbacks {
		if err := checkToolInputs(&p.Agent, f.Model.Provider, f.ToolInputs); err != nil {
			return fmt.Errorf("fallback %s: %w", f.Ref(), err)
		}
	}
	p.Format = Format
	c, err := ContractDigest(&p.Agent)
	if err != nil {
		return err
	}
	p.Digests.Contract = c
	d, err := planDigest(p)
	if err != nil {
		return err
	}
	p.Digests.Plan = d
	return nil
}

// Encode writes a sealed plan deterministically: its canonical JSON form,
// indented, so the same plan is the same bytes on every machine.
func (p *Plan) Encode() ([]byte, error) {
	c, err := digest.CanonicalValue(p)
	if err != nil {
		return nil, fmt.Errorf("encoding plan: %w", err)
	}
	var b bytes.Buffer
	if err := json.Indent(&b, c, "", "  "); err != nil {
		return nil, fmt.Errorf("encoding plan: %w", err)
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// IsPlan tells a plan file from a JSON manifest by its format field, of
// any version.
func IsPlan(data []byte) bool {
	var head struct {
		Format string `json:"format"`
	}
	return json.Unmarshal(data, &head) == nil && strings.HasPrefix(head.Format, "agentc.plan/")
}

// ReadFile reads the file at path as a plan when it is one: a .json file
// whose format field names a plan format (IsPlan). isPlan is false, with a
// nil error, for any other file, which the caller reads as a manifest; a
// file that cannot be read is an error either way.
func ReadFile(path string) (p *Plan, isPlan bool, err error) {
	if !strings.EqualFold(filepath.Ext(path), ".json") {
		return nil, false, nil
	}
	data, err := userfile.Read(path, MaxPlanBytes, "a plan")
	if err != nil {
		return nil, false, err
	}
	if !IsPlan(data) {
		return nil, false, nil
	}
	p, err = Read(path, data)
	return p, true, err
}

// ReadPlanOrLock reads the file at path, which may be a plan or a lock
// file, as those are read: a regular file (a FIFO or a device is refused
// unread), at most MaxPlanBytes, and at most MaxLockBytes unless it is a
// plan (IsPlan).
func ReadPlanOrLock(path string) ([]byte, error) {
	data, err := userfile.Read(path, max(MaxPlanBytes, MaxLockBytes), "a plan or lock file")
	if err != nil {
		return nil, err
	}
	if !IsPlan(data) && len(data) > MaxLockBytes {
		return nil, &userfile.TooLargeError{Name: path, What: "a lock file", Limit: MaxLockBytes}
	}
	return data, nil
}

// Error is a problem with a plan file, with a position where there is one.
type Error struct {
	File         string
	Line, Column int // zero when the problem is not at one place
	Msg          string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Read decodes a plan and verifies it: a format this package knows, no
// field it does not know, and digests that match the content, those of the
// plans of the agents it calls (and of theirs) included. A plan that was
// edited after it was compiled, or cut short, is refused; so is one whose
// model names CheckModelName refuses, which vet refuses in a manifest.
func Read(file string, data []byte, opts ...ReadOption) (*Plan, error) {
	var o readOptions
	for _, opt := range opts {
		opt(&o)
	}
	var head struct {
		Format string `json:"format"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, jsonError(file, data, err)
	}
	if head.Format != Format {
		return nil, &Error{File: file, Msg: formatProblem(head.Format)}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p Plan
	// json.Unmarshal above has refused anything after the value.
	if err := dec.Decode(&p); err != nil {
		return nil, jsonError(file, data, err)
	}
	if depth, agents := Nesting(&p); depth > MaxCalleeDepth || agents > MaxAgents {
		return nil, &Error{File: file, Msg: nestingProblem(depth, agents)}
	}
	if err := verify(file, data, &p, nil); err != nil {
		return nil, err
	}
	if err := asWritten(file, data, &p); err != nil {
		return nil, err
	}
	// Every reader of a plan (run, diff, digest, a caller's compile) may
	// compile or compare its schemas: they are held to the limits vet
	// holds a manifest's to, the called agents' included.
	if err := checkAllLimits(&p); err != nil {
		return nil, &Error{File: file, Msg: err.Error()}
	}
	if !o.anyModelName {
		if err := checkModelNames(file, data, &p, nil); err != nil {
			return nil, err
		}
	}
	return &p, nil
}

// ReadOption changes what Read refuses.
type ReadOption func(*readOptions)

type readOptions struct {
	anyModelName bool
}

// AnyModelName reads a plan whatever its model names hold, as Read did
// before it refused control characters in them: for a Temporal workflow
// begun then, whose history replays as it was made.
func AnyModelName() ReadOption { return func(o *readOptions) { o.anyModelName = true } }

// checkModelNames refuses a plan found at a path of object keys in the
// file (none for the file's own), or a plan it calls, that names a model
// CheckModelName refuses: the agent's, a fallback's, an escalation's. A
// problem is positioned at the field, or at the list that holds it.
func checkModelNames(file string, data []byte, p *Plan, at []string) error {
	fail := func(keys []string, field, name string, err error) error {
		e := &Error{File: file, Msg: fmt.Sprintf("%s: model %q: %v", strings.Join(append(slices.Clip(at), field), "."), name, err)}
		if off := offsetOf(data, append(slices.Clip(at), keys...)); off >= 0 {
			e.Line, e.Column = lineCol(data, off)
		}
		return e
	}
	m := p.Agent.Model
	if err := CheckModelName(m.Name); err != nil {
		return fail([]string{"agent", "model", "name"}, "agent.model.name", m.Name, err)
	}
	if m.Fallback != nil {
		for i, ref := range m.Fallback.Models {
			if err := CheckModelName(ref); err != nil {
				return fail([]string{"agent", "model", "fallback", "models"}, fmt.Sprintf("agent.model.fallback.models[%d]", i), ref, err)
			}
		}
	}
	if e := p.Agent.Strategy.Escalate; e != nil {
		if err := CheckModelName(e.Model); err != nil {
			return fail([]string{"agent", "strategy", "escalate", "model"}, "agent.strategy.escalate.model", e.Model, err)
		}
	}
	for i, f := range p.Fallbacks {
		if err := CheckModelName(f.Model.Name); err != nil {
			return fail([]string{"fallbacks"}, fmt.Sprintf("fallbacks[%d].model.name", i), f.Model.Name, err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(p.Callees)) {
		if c := p.Callees[name]; c.Plan != nil {
			if err := checkModelNames(file, data, c.Plan, append(slices.Clip(at), "callees", name, "plan")); err != nil {
				return err
			}
		}
	}
	return nil
}

// asWritten refuses a plan that is not what agentc would write of what it
// decodes to: the digests are computed from the decoded plan, so the file
// must say exactly that, to jq and to a reviewer as to agentc.
// encoding/json matches member names without regard to case ("ARGV",
// "toolſ" with U+017F, which folds to "s", fill argv and tools), takes the
// last of a repeated member and merges repeated objects, and a schema's
// number written longer than the double it rounds to
// (0.1000000000000000055511151231257827021181583404541015625) is 0.1 to
// the digests and the exact decimal to the validator. agentc writes its
// plans canonical (Encode), so every plan it wrote is its own canonical
// form, exactly.
func asWritten(file string, data []byte, p *Plan) error {
	const notAsWritten = "the plan is not as agentc compile writes it: "
	exact, err := digest.CanonicalExact(data)
	if err != nil {
		return &Error{File: file, Msg: notAsWritten + strings.TrimPrefix(err.Error(), "canonical JSON: ") + "; compile the agent again (agentc compile)"}
	}
	again, err := digest.CanonicalValue(p)
	if err != nil {
		return &Error{File: file, Msg: notAsWritten + err.Error()}
	}
	if !bytes.Equal(exact, again) {
		return &Error{File: file, Msg: notAsWritten + difference(exact, again) + "; compile the agent again (agentc compile)"}
	}
	return nil
}

// difference names the first place where the canonical JSON texts file and
// decoded, which differ, differ: a member of file that decoding did not
// keep under its name, or a value it read otherwise.
func difference(file, decoded []byte) string {
	var a, b any
	if json.Unmarshal(file, &a) != nil || json.Unmarshal(decoded, &b) != nil {
		return "it reads otherwise than it is written"
	}
	var walk func(at string, a, b any) string
	walk = func(at string, a, b any) string {
		if at == "" {
			at = "/"
		}
		switch a := a.(type) {
		case map[string]any:
			b, _ := b.(map[string]any)
			keys := slices.Sorted(maps.Keys(a))
			for _, k := range keys {
				if _, ok := b[k]; !ok {
					return fmt.Sprintf("member %q at %s is not a member agentc writes there (a name is matched exactly, case and all)", k, at)
				}
			}
			for _, k := range slices.Sorted(maps.Keys(b)) {
				if _, ok := a[k]; !ok {
					return fmt.Sprintf("member %q at %s, which agentc writes, is not written there as it is read", k, at)
				}
			}
			for _, k := range keys {
				if d := walk(strings.TrimSuffix(at, "/")+"/"+k, a[k], b[k]); d != "" {
					return d
				}
			}
		case []any:
			b, _ := b.([]any)
			for i := range min(len(a), len(b)) {
				if d := walk(fmt.Sprintf("%s/%d", strings.TrimSuffix(at, "/"), i), a[i], b[i]); d != "" {
					return d
				}
			}
			if len(a) != len(b) {
				return fmt.Sprintf("the array at %s reads otherwise than it is written", at)
			}
		default:
			if !reflect.DeepEqual(a, b) {
				return fmt.Sprintf("the value at %s reads otherwise than it is written", at)
			}
		}
		return ""
	}
	if d := walk("", a, b); d != "" {
		return d
	}
	return "it reads otherwise than it is written"
}

// checkAllLimits runs CheckLimits on a plan and the plans it calls.
func checkAllLimits(p *Plan) error {
	if err := CheckLimits(p); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(p.Callees)) {
		if c := p.Callees[name]; c.Plan != nil {
			if err := checkAllLimits(c.Plan); err != nil {
				return fmt.Errorf("agent tool %q: %w", name, err)
			}
		}
	}
	return nil
}

// formatProblem says why a plan of a format other than Format is not read.
func formatProblem(format string) string {
	switch {
	case format == "":
		return fmt.Sprintf("not an agentc plan: no \"format\" field (want %q)", Format)
	case slices.Contains(olderFormats, format):
		return fmt.Sprintf("the plan is of format %q, older than the %q this agentc reads: compile the agent again (agentc compile)", format, Format)
	}
	return fmt.Sprintf("unknown plan format %q: this agentc reads %q; recompile the plan", format, Format)
}

// verify checks a decoded plan found at a path of object keys in the file
// (none for the file's own plan): the plans of its callees first, each as
// a plan of its own, then its digests against its content. An embedded
// plan's problem is positioned where that plan begins.
func verify(file string, data []byte, p *Plan, at []string) error {
	fail := func(keys []string, msg string) error {
		if len(at) == 0 {
			return &Error{File: file, Msg: msg}
		}
		e := &Error{File: file, Msg: strings.Join(at, ".") + ": " + msg}
		if off := offsetOf(data, keys); off >= 0 {
			e.Line, e.Column = lineCol(data, off)
		}
		return e
	}
	if len(at) > 0 && p.Format != Format {
		return fail(append(slices.Clip(at), "format"), formatProblem(p.Format))
	}
	for _, name := range slices.Sorted(maps.Keys(p.Callees)) {
		// A callee without a plan is Seal's to report, naming its tool.
		if c := p.Callees[name]; c.Plan != nil {
			if err := verify(file, data, c.Plan, append(slices.Clip(at), "callees", name, "plan")); err != nil {
				return err
			}
		}
	}
	recorded := p.Digests
	if err := p.Seal(); err != nil {
		return fail(at, err.Error())
	}
	if p.Digests != recorded {
		moved := []string{}
		if p.Digests.Contract != recorded.Contract {
			moved = append(moved, fmt.Sprintf("contract: recorded %s, content %s", recorded.Contract, p.Digests.Contract))
		}
		if p.Digests.Plan != recorded.Plan {
			moved = append(moved, fmt.Sprintf("plan: recorded %s, content %s", recorded.Plan, p.Digests.Plan))
		}
		return fail(at, "the plan's content does not match its digests; it was changed after it was compiled ("+strings.Join(moved, "; ")+")")
	}
	return nil
}

// jsonError positions a decoding error in the file. encoding/json's
// offsets count the bytes read when the error was found, so the byte at
// fault, the last one read, is one before.
func jsonError(file string, data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || err.Error() == "unexpected end of JSON input":
		line, col := lineCol(data, len(data))
		return &Error{File: file, Line: line, Column: col, Msg: "the plan is truncated: unexpected end of JSON"}
	case errors.As(err, &se):
		line, col := lineCol(data, int(se.Offset)-1)
		return &Error{File: file, Line: line, Column: col, Msg: "not valid JSON: " + se.Error()}
	case errors.As(err, &te):
		line, col := lineCol(data, int(te.Offset)-1)
		return &Error{File: file, Line: line, Column: col, Msg: fmt.Sprintf("%s: want %v, found JSON %s", te.Field, te.Type, te.Value)}
	}
	return &Error{File: file, Msg: strings.TrimPrefix(err.Error(), "json: ")}
}

func lineCol(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	before := data[:off]
	line = 1 + bytes.Count(before, []byte("\n"))
	col = off - bytes.LastIndexByte(before, '\n')
	return line, col
}
