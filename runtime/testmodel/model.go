// Package testmodel is the offline `test` model: a runtime.Model that
// calls each declared tool once and then answers, with tool arguments and
// answers synthesised from their JSON Schemas, deterministically and
// without a network. Synthesize is the schema-to-value half on its own.
package testmodel

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
)

// Prose is what the model says when it has no tool left to call.
const Prose = "Done."

// Model is the `test` model. The zero value is ready to use; Seed varies
// the synthesised values (0 gives the simplest ones).
type Model struct {
	Seed int64
}

var _ agentrt.Model = Model{}

// Complete answers one turn:
//   - with ToolChoice mode "tool", a call of that tool;
//   - else, if some tool other than the output tool has not been called in
//     the conversation, one message calling every such tool;
//   - else, if there is an output tool, a call of it with a synthesised
//     answer (a new seed after each rejected answer, so a retry differs);
//   - else, if the turn may answer in its text (req.Answer), a synthesised
//     answer as that text: the JSON alone (native), or in a fenced block
//     after a sentence (prompted), a new seed after each answer that
//     was not accepted;
//   - else, with mode "required", a call of the first tool;
//   - else the prose answer "Done.".
//
// An answer's members that ask for a file's name, size, media type or
// digest (file_name, size_bytes, document_digest, ...) hold those of the
// request's files where their schemas take them (see facts).
func (m Model) Complete(ctx context.Context, req *agentrt.Request) (*agentrt.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil {
		return nil, fmt.Errorf("testmodel: no request")
	}
	conv := readConversation(req)
	var calls []string
	switch {
	case req.ToolChoice.Mode == agentrt.ChooseTool:
		if _, ok := findTool(req.Tools, req.ToolChoice.Name); !ok {
			return nil, fmt.Errorf("testmodel: tool choice names %q, which is not among the request's tools", req.ToolChoice.Name)
		}
		calls = []string{req.ToolChoice.Name}
	default:
		for _, t := range req.Tools {
			if t.Name != req.OutputTool && !conv.called[t.Name] && !slices.Contains(calls, t.Name) {
				calls = append(calls, t.Name)
			}
		}
		if len(calls) == 0 && req.OutputTool != "" {
			if _, ok := findTool(req.Tools, req.OutputTool); ok {
				calls = []string{req.OutputTool}
			}
		}
		if len(calls) == 0 && req.Answer != nil {
			return m.textAnswer(req, conv)
		}
		if len(calls) == 0 && req.ToolChoice.Mode == agentrt.ChooseRequired && len(req.Tools) > 0 {
			calls = []string{req.Tools[0].Name}
		}
	}

	msg := agentrt.Message{Role: agentrt.Assistant}
	if len(calls) == 0 {
		msg.Content = Prose
	}
	for _, name := range calls {
		spec, _ := findTool(req.Tools, name)
		seed := m.Seed
		if name == req.OutputTool {
			seed += int64(conv.rejected)
		}
		if name == req.OutputTool && len(req.Contract) > 0 {
			// It enforces everything: the answer satisfies the whole
			// contract, not only what a provider's dialect could carry.
			spec.Schema = req.Contract
		} else if len(spec.Contract) > 0 {
			// The same for a tool sent with its schema lowered.
			spec.Schema = spec.Contract
		}
		var f facts
		if name == req.OutputTool {
			f = fileFacts(req)
		}
		args, err := toolArguments(spec, seed, f)
		if err == nil && name == req.OutputTool && req.OutputWrap != "" {
			// The answer is not an object: it goes in the member the
			// arguments hold it in.
			args, err = json.Marshal(map[string]json.RawMessage{req.OutputWrap: args})
		}
		if err != nil {
			if name == req.OutputTool {
				return nil, fmt.Errorf("testmodel: cannot synthesise an answer for output tool %q: %w", name, err)
			}
			return nil, fmt.Errorf("testmodel: cannot synthesise arguments for tool %q: %w", name, err)
		}
		msg.ToolCalls = append(msg.ToolCalls, agentrt.ToolCall{ID: conv.nextID(), Name: name, Arguments: args})
	}
	return &agentrt.Response{Message: msg, Usage: agentrt.EstimateUsage(req, msg)}, nil
}

func (m Model) textAnswer(req *agentrt.Request, conv *conversation) (*agentrt.Response, error) {
	schema := req.Answer.Schema
	if len(req.Contract) > 0 {
		schema = req.Contract
	}
	v, err := synthesize(schema, m.Seed+int64(conv.texts), true, fileFacts(req))
	if err != nil {
		return nil, fmt.Errorf("testmodel: cannot synthesise a %s answer: %w", req.Answer.Mode, err)
	}
	msg := agentrt.Message{Role: agentrt.Assistant, Content: string(v)}
	if req.Answer.Mode == plan.ModePrompted {
		msg.Content = "Here is the answer.\n\n```json\n" + string(v) + "\n```"
	}
	return &agentrt.Response{Message: msg, Usage: agentrt.EstimateUsage(req, msg)}, nil
}

// conversation is what the model reads from the messages so far.
type conversation struct {
	called   map[string]bool // tools called by an assistant message
	ids      map[string]bool // tool call IDs in use
	rejected int             // output-tool calls whose result was an error
	texts    int             // assistant messages that called no tool
	n        int
}

func readConversation(req *agentrt.Request) *conversation {
	c := &conversation{called: map[string]bool{}, ids: map[string]bool{}}
	outputCalls := map[string]bool{}
	for _, msg := range req.Messages {
		switch msg.Role {
		case agentrt.Assistant:
			if len(msg.ToolCalls) == 0 {
				c.texts++
			}
			for _, call := range msg.ToolCalls {
				c.called[call.Name] = true
				c.ids[call.ID] = true
				if req.OutputTool != "" && call.Name == req.OutputTool {
					outputCalls[call.ID] = true
				}
			}
		case agentrt.ToolRole:
			if msg.IsError && (outputCalls[msg.ToolCallID] || (req.OutputTool != "" && msg.Name == req.OutputTool)) {
				c.rejected++
			}
		}
	}
	return c
}

// nextID returns call_1, call_2, ..., skipping IDs the conversation holds.
func (c *conversation) nextID() string {
	for {
		c.n++
		id := "call_" + strconv.Itoa(c.n)
		if !c.ids[id] {
			c.ids[id] = true
			return id
		}
	}
}

func findTool(tools []agentrt.ToolSpec, name string) (agentrt.ToolSpec, bool) {
	for _, t := range tools {
		if t.Name == name {
			return t, true
		}
	}
	return agentrt.ToolSpec{}, false
}

// toolArguments synthesises a tool's arguments; a tool without a schema
// takes an empty object.
func toolArguments(spec agentrt.ToolSpec, seed int64, f facts) (json.RawMessage, error) {
	if len(spec.Schema) == 0 {
		return json.RawMessage(`{}`), nil
	}
	return synthesize(spec.Schema, seed, true, f)
}
