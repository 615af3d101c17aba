package compile

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"cuelang.org/go/cue"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"agentc.dev/agentc/internal/leaf/jsonpointer"
	"agentc.dev/agentc/plan"
)

// checkTests checks the agent's test cases against the agent: each input
// against the input schema, as a run would check it before any call, and
// each tool a case expects called against the tools the agent has.
func (c *checker) checkTests() {
	tv := lookup(c.v, "tests")
	it, err := tv.Fields()
	if err != nil || c.reported("tests") {
		return
	}
	for it.Next() {
		name := it.Selector().Unquoted()
		if in := lookup(it.Value(), "input"); in.Exists() {
			c.checkTestInput(name, in)
		}
		tools := c.toolNames()
		for i, call := range elems(lookup(it.Value(), "tool_calls")) {
			nv := lookup(call, "name")
			tool, ok := str(nv)
			if !ok || slices.Contains(tools, tool) {
				continue
			}
			c.add(nv.Pos(), CodeTestTool, "tests.%s.tool_calls[%d].name: the agent has no tool %q (it has %s)", name, i, tool, toolList(tools))
		}
	}
}

func (c *checker) checkTestInput(name string, in cue.Value) {
	s := c.schemaOf("input.schema")
	if s == nil {
		return // no input schema, or a broken one, reported
	}
	data, err := in.MarshalJSON()
	if err != nil {
		return // not data: the loader reports it
	}
	sch, err := plan.CompileSchemaIn(s.Doc, c.patterns)
	if err != nil {
		return // SCHEMA_INVALID
	}
	val, err := plan.UnmarshalJSONValue(data)
	if err != nil {
		return
	}
	if err := plan.Validate(sch, val); err != nil {
		msg := err.Error()
		if ve, ok := asValidation(err); ok {
			// The place as agentc run writes it for the same input.
			leaf := deepest(ve)
			at := jsonpointer.Join(leaf.InstanceLocation)
			if at == "" {
				at = "/" // the whole input
			}
			msg = fmt.Sprintf("at %s: %s", at, leaf.ErrorKind.LocalizedString(printer))
		}
		c.add(in.Pos(), CodeTestInput, "tests.%s.input: the input schema rejects it: %s", name, msg)
	}
}

func toolList(tools []string) string {
	if len(tools) == 0 {
		return "none"
	}
	slices.Sort(tools)
	return strings.Join(tools, ", ")
}

func asValidation(err error) (*jsonschema.ValidationError, bool) {
	var ve *jsonschema.ValidationError
	ok := errors.As(err, &ve)
	return ve, ok
}
