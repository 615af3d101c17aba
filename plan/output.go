package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/internal/leaf/jsonpointer"
)

// Output modes: how the answer travels from the model.
const (
	ModeAuto     = "auto"     // the strongest mode the provider supports
	ModeTool     = "tool"     // the arguments of the reserved output tool
	ModeNative   = "native"   // the provider's structured output (a JSON response format)
	ModePrompted = "prompted" // JSON in the text, asked for in the instructions
)

// Lowering is how an agent's answer is asked of its provider: the output
// mode with "auto" resolved, and the contract schema lowered to what the
// provider's structured output can enforce while the model generates.
// Local validation always uses the full contract schema.
type Lowering struct {
	Provider string `json:"provider"`
	Mode     string `json:"mode"`
	// Tool is the output tool's name in tool mode (OutputToolName); the
	// other modes offer no output tool, and leave it empty.
	Tool string `json:"tool,omitempty"`
	// Strict says the provider enforces Schema while generating; when it
	// is false the schema only guides the model, and Reason says why.
	Strict bool   `json:"strict"`
	Reason string `json:"reason,omitempty"`
	// Schema is what is sent to the provider.
	Schema json.RawMessage `json:"schema"`
	// Nullable holds the JSON pointers, into Schema, of properties that
	// are optional in the contract but required and nullable in Schema,
	// as strict dialects demand: a null there means "absent", and Raise
	// removes it before the answer is validated.
	Nullable []string `json:"nullable,omitempty"`
	// Local lists the contract's constraints the provider cannot enforce
	// while generating; only local validation enforces them.
	Local []Constraint `json:"local,omitempty"`
	// Wrap, in tool mode, names the member of the output tool's arguments
	// that holds the answer, when the answer is not an object: a tool's
	// arguments are an object at every provider, so Schema is then an
	// object with that one member, required. Empty when the arguments are
	// the answer.
	Wrap string `json:"wrap,omitempty"`
}

// AnswerMember is the member of the output tool's arguments that holds an
// answer that is not an object (Lowering.Wrap).
const AnswerMember = "value"

// Unwrap returns the answer an output tool's arguments carry: the
// arguments themselves, or, where the lowering wraps the answer, the
// member holding it, and whether they carry one. Arguments that hold
// anything but that one member are returned as they are, with false, for
// validation to refuse.
func (l *Lowering) Unwrap(args json.RawMessage) (json.RawMessage, bool) {
	if l.Wrap == "" {
		return args, true
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return args, false
	}
	if v, ok := m[l.Wrap]; ok && len(m) == 1 {
		return v, true
	}
	return args, false
}

// Way says how an answer asked for this way comes back, for messages:
// through the output tool, by name, or in the text with no output tool.
func (l *Lowering) Way() string {
	switch l.Mode {
	case ModeNative:
		return "answer in the provider's response format (native mode), no output tool"
	case ModePrompted:
		return "answer as JSON in the reply's text (prompted mode), no output tool"
	}
	return "output tool " + l.Tool
}

// OutputToolName returns the name of an agent's output tool: output.name,
// "_", and the first 8 hex digits of a digest of the output contract (the
// contract digest's "output" member) and a draw count, drawn again while
// the name is one of the agent's tools (an mcp server's allowed tools
// included: the names the model sees). Known before any run and the same
// on every run and machine, it keeps the tool definitions sent, and so a
// provider's prompt cache, the same; it moves only when the output tool's
// definition does.
func OutputToolName(a *Agent) (string, error) {
	o := a.Output
	if o == nil {
		return "", errors.New("the agent declares no output")
	}
	taken := map[string]bool{}
	for name, t := range a.Capabilities.Tools {
		if t.Kind == "mcp" {
			for _, n := range t.Allow {
				taken[n] = true
			}
			continue
		}
		taken[name] = true
	}
	out := &outputContract{Name: o.Name, Description: o.Description, Schema: o.Schema, KeepsTools: o.KeepsTools}
	for draw := 0; ; draw++ {
		d, err := digest.OutputTool.OfValue(suffixDraw{out, draw})
		if err != nil {
			return "", fmt.Errorf("output tool name: %w", err)
		}
		name := o.Name + "_" + strings.TrimPrefix(string(d), digest.Prefix)[:8]
		if !taken[name] {
			return name, nil
		}
	}
}

// suffixDraw is what an output tool's suffix is drawn from.
type suffixDraw struct {
	Output *outputContract `json:"output"`
	Draw   int             `json:"draw"`
}

// Constraint is one keyword of a contract schema.
type Constraint struct {
	// Pointer is the keyword's JSON pointer in the contract schema.
	Pointer string `json:"pointer"`
	Keyword string `json:"keyword"`
	// Value qualifies the keyword where only some of its values are
	// unenforced: a format name, a minItems count.
	Value string `json:"value,omitempty"`
}

// Raise turns an answer shaped by a lowered schema back into the
// contract's shape: a null at a property in nullable (pointers into the
// lowered schema) is removed, since it stands for an absent optional
// property. It returns the answer unchanged when there is nothing to do
// or the answer is not JSON; validation reports the latter.
func Raise(lowered json.RawMessage, nullable []string, answer json.RawMessage) json.RawMessage {
	if len(nullable) == 0 {
		return answer
	}
	doc, err := UnmarshalJSONValue(lowered)
	if err != nil {
		return answer
	}
	val, err := UnmarshalJSONValue(answer)
	if err != nil {
		return answer
	}
	r := raiser{root: doc, nullable: map[string]bool{}, branches: map[string]*jsonschema.Schema{}}
	for _, p := range nullable {
		r.nullable[p] = true
	}
	r.compiler = newCompiler()
	if err := r.compiler.AddResource(SchemaURL, doc); err != nil {
		r.compiler = nil
	}
	if !r.walk(doc, "", val, 0) {
		return answer
	}
	out, err := json.Marshal(val)
	if err != nil {
		return answer
	}
	return out
}

// maxHops bounds the $refs followed in a row without a step into the
// value: no schema chains more, so more is a cycle.
const maxHops = 64

type raiser struct {
	root     any
	nullable map[string]bool
	compiler *jsonschema.Compiler
	branches map[string]*jsonschema.Schema // by pointer; nil: does not compile
}

// walk removes nulls standing for absent properties from val, which the
// schema node at ptr describes; it reports whether it changed anything.
// hops counts the $refs followed since the last step into the value, so
// that a cycle of references ends while a deep value does not.
func (r *raiser) walk(node any, ptr string, val any, hops int) bool {
	m, ok := node.(map[string]any)
	if !ok || hops > maxHops {
		return false
	}
	changed := false
	if ref, ok := m["$ref"].(string); ok && strings.HasPrefix(ref, "#") {
		if target, tptr, ok := r.resolve(ref); ok {
			changed = r.walk(target, tptr, val, hops+1) || changed
		}
	}
	switch v := val.(type) {
	case map[string]any:
		props, _ := m["properties"].(map[string]any)
		for k, pv := range v {
			sub, ok := props[k]
			if !ok {
				continue
			}
			pp := ptr + "/properties/" + jsonpointer.Escape(k)
			if pv == nil && r.nullable[pp] {
				delete(v, k)
				changed = true
				continue
			}
			changed = r.walk(sub, pp, pv, 0) || changed
		}
	case []any:
		if items, ok := m["items"].(map[string]any); ok {
			for _, e := range v {
				changed = r.walk(items, ptr+"/items", e, 0) || changed
			}
		}
	}
	if branches, ok := m["anyOf"].([]any); ok {
		if i := r.branch(ptr, branches, val); i >= 0 {
			changed = r.walk(branches[i], ptr+"/anyOf/"+strconv.Itoa(i), val, hops+1) || changed
		}
	}
	return changed
}

// branch chooses the branch of an anyOf a value was generated under: the
// first it is valid against (a strict provider generated it valid), or,
// for a value valid under none, the first it plausibly fits. A value valid
// against a branch fits it (a number such as 1.0 under "integer" need not,
// but nothing below a number is raised), so a branch is validated only
// when the value fits more than one: validation reads the whole value
// below, and doing it at every level of a deep value (a nullable $ref is
// such an anyOf) would cost its size times its depth.
func (r *raiser) branch(ptr string, branches []any, val any) int {
	var fit []int
	for i, b := range branches {
		if r.fits(b, val, 0) {
			fit = append(fit, i)
		}
	}
	switch len(fit) {
	case 0:
		return -1
	case 1:
		return fit[0]
	}
	for _, i := range fit {
		if s := r.compiled(ptr + "/anyOf/" + strconv.Itoa(i)); s != nil && s.Validate(val) == nil {
			return i
		}
	}
	return fit[0]
}

func (r *raiser) compiled(ptr string) *jsonschema.Schema {
	if r.compiler == nil {
		return nil
	}
	s, ok := r.branches[ptr]
	if !ok {
		s, _ = r.compiler.Compile(SchemaURL + "#" + ptr)
		r.branches[ptr] = s
	}
	return s
}

// fits reports whether a value could be an instance of a schema branch,
// judged by its type and, for objects, the properties it requires: enough
// to choose the branch of an anyOf a strict provider generated. hops
// counts the $refs followed, so that a cycle of them ends; a value is an
// instance of no such cycle.
func (r *raiser) fits(node any, val any, hops int) bool {
	m, ok := node.(map[string]any)
	if !ok {
		return node == true
	}
	if ref, ok := m["$ref"].(string); ok {
		if hops > maxHops {
			// Undecided: validation decides, as it would have.
			return true
		}
		if target, _, ok := r.resolve(ref); ok {
			return r.fits(target, val, hops+1)
		}
	}
	if t, ok := m["type"]; ok && !typeAdmits(t, val) {
		return false
	}
	if obj, ok := val.(map[string]any); ok {
		req, _ := m["required"].([]any)
		for _, name := range req {
			if s, ok := name.(string); ok {
				if _, present := obj[s]; !present {
					return false
				}
			}
		}
	}
	return true
}

func (r *raiser) resolve(ref string) (any, string, bool) {
	ptr := strings.TrimPrefix(ref, "#")
	node := r.root
	if ptr == "" {
		return node, "", true
	}
	var at strings.Builder
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		m, ok := node.(map[string]any)
		if !ok {
			return nil, "", false
		}
		// A fragment is percent-encoded before it is a JSON pointer; the
		// pointer returned is the plain one, as nullable's are.
		tok, err := url.PathUnescape(tok)
		if err != nil {
			return nil, "", false
		}
		name := jsonpointer.Unescape(tok)
		if node, ok = m[name]; !ok {
			return nil, "", false
		}
		at.WriteString("/" + jsonpointer.Escape(name))
	}
	return node, at.String(), true
}

func typeAdmits(t any, val any) bool {
	name := jsonType(val)
	admits := func(s string) bool {
		return s == name || s == "number" && name == "integer"
	}
	switch t := t.(type) {
	case string:
		return admits(t)
	case []any:
		for _, e := range t {
			if s, ok := e.(string); ok && admits(s) {
				return true
			}
		}
		return false
	}
	return true
}

func jsonType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case json.Number:
		if !strings.ContainsAny(string(v), ".eE") {
			return "integer"
		}
		return "number"
	default:
		return "number"
	}
}

// OutputSuffix is the suffix of the plan's output tool after the output's
// name and "_" (what OutputToolName drew), which a journal's header
// records; empty when the plan offers no output tool.
func (p *Plan) OutputSuffix() string {
	if p.Output == nil || p.Agent.Output == nil {
		return ""
	}
	return strings.TrimPrefix(p.Output.Tool, p.Agent.Output.Name+"_")
}
