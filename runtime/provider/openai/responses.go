package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/internal/replylimit"
	"agentc.dev/agentc/runtime/provider/internal/files"
	"agentc.dev/agentc/runtime/provider/internal/limit"
)

// The APIs a Model may speak (Config.API).
const (
	APIChat      = "chat"      // Chat Completions, the default
	APIResponses = "responses" // the Responses API
)

// StateProvider names the Responses API in a Message's State: the
// reasoning items of an assistant message, sent back with it.
const StateProvider = "openai-responses"

// completeResponses sends req as one response of the Responses API,
// retrying under the Model's policy.
func (m *Model) completeResponses(ctx context.Context, req *agentrt.Request) (*agentrt.Response, error) {
	params, splice, err := buildResponsesParams(req)
	if err != nil {
		return nil, err
	}
	if m.deployment != "" {
		params.Model = m.deployment
	}
	if m.cacheKey && req.Cache && req.CacheKey != "" {
		params.PromptCacheKey = param.NewOpt(req.CacheKey)
	}
	var out *responses.Response
	var streamed []byte // a streamed response, as its last event carried it
	err = m.retry.Do(ctx, func(ctx context.Context, attempt int) error {
		var raw *http.Response
		// The splice also bounds a body without files (files.MaxBody).
		opts := []option.RequestOption{option.WithResponseInto(&raw), option.WithMiddleware(splice.Middleware)}
		if req.Stream != nil {
			if attempt > 1 {
				req.Stream(agentrt.Delta{Restart: true})
			}
			body, err := m.streamResponse(ctx, params, opts, req.Stream, req.OutputTool)
			if err != nil {
				return m.classify(ctx, err, raw)
			}
			streamed = body
			return nil
		}
		r, err := m.respond(limit.WithWhole(ctx, params.MaxOutputTokens.Value), params, opts...)
		if err != nil {
			return m.classify(ctx, err, raw)
		}
		out = r
		return nil
	})
	if err != nil {
		return nil, err
	}
	var resp *agentrt.Response
	switch {
	case streamed != nil:
		resp, err = parseResponsesBody(streamed, m.redact)
	case out == nil:
		// A body of null decodes to no response, and no error.
		return nil, errors.New("openai: the response is null, not a response object")
	default:
		resp, err = parseResponsesBody([]byte(out.RawJSON()), m.redact)
	}
	if err != nil {
		return nil, err
	}
	if err := agentrt.CheckReply(params.MaxOutputTokens.Value, &resp.Message); err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	return resp, nil
}

// streamResponse makes one streamed Responses API request: delta hears
// each piece of output text, and of the output tool's arguments, as it
// arrives; the response is the one the response.completed event (or
// response.incomplete, which the parse refuses as a plain one is)
// carries whole. A stream that ends before it is cut: a transport
// failure, tried again; a response.failed or error event is the API's
// error. A stream whose deltas (text, arguments, reasoning) pass what the
// request's max_output_tokens can make is cut there (limit.Reply).
func (m *Model) streamResponse(ctx context.Context, params responses.ResponseNewParams, opts []option.RequestOption, delta func(agentrt.Delta), outputTool string) ([]byte, error) {
	ctx, meter := limit.NewReply(ctx, params.MaxOutputTokens.Value)
	st := m.respondStream(ctx, params, opts...)
	defer st.Close()
	answer := map[int64]bool{} // output items, by index, that call the output tool
	for st.Next() {
		ev := st.Current()
		n := len(ev.Delta)
		if ev.Type == "response.output_item.added" && ev.Item.Type == "function_call" {
			n += replylimit.CallBytes
		}
		if err := meter.Add(n); err != nil {
			return nil, err
		}
		switch ev.Type {
		case "response.output_item.added":
			answer[ev.OutputIndex] = outputTool != "" && ev.Item.Type == "function_call" && ev.Item.Name == outputTool
		case "response.output_text.delta":
			delta(agentrt.Delta{Text: ev.Delta})
		case "response.function_call_arguments.delta":
			if answer[ev.OutputIndex] {
				delta(agentrt.Delta{Answer: ev.Delta})
			}
		case "response.completed", "response.incomplete":
			var e struct {
				Response json.RawMessage `json:"response"`
			}
			if err := json.Unmarshal([]byte(ev.RawJSON()), &e); err != nil || len(e.Response) == 0 {
				return nil, fmt.Errorf("the %s event holds no response", ev.Type)
			}
			return e.Response, nil
		case "response.failed":
			msg := ev.Response.Error.Message
			if msg == "" {
				msg = "the response failed"
			}
			return nil, fmt.Errorf("%s (%s)", msg, ev.Response.Error.Code)
		case "error":
			return nil, fmt.Errorf("error event in the stream: %s (%s)", ev.Message, ev.Code)
		}
	}
	if err := st.Err(); err != nil {
		if u, ok := errors.AsType[*limit.Unstreamed](err); ok {
			wholeResponse(u.Body, delta, outputTool)
			return u.Body, nil
		}
		return nil, err
	}
	return nil, fmt.Errorf("the stream ended before the response did: %w", io.ErrUnexpectedEOF)
}

// wholeResponse tells delta what a response object a server answered a
// streamed request with whole holds (limit.Unstreamed, a server that
// ignores "stream"): its text and the output tool's arguments, one piece
// each. parseResponsesBody reads the object, and says what it lacks.
func wholeResponse(body []byte, delta func(agentrt.Delta), outputTool string) {
	var r struct {
		Output []outputItem `json:"output"`
	}
	if json.Unmarshal(body, &r) != nil {
		return
	}
	for _, it := range r.Output {
		switch it.Type {
		case "message":
			for _, c := range it.Content {
				if c.Type == "output_text" && c.Text != "" {
					delta(agentrt.Delta{Text: c.Text})
				}
			}
		case "function_call":
			if outputTool != "" && it.Name == outputTool && it.Arguments != "" {
				delta(agentrt.Delta{Answer: it.Arguments})
			}
		}
	}
}

// buildResponsesParams makes a stateless request: nothing is stored on
// the server, and what the model reasoned in earlier turns goes back as
// the encrypted reasoning items the assistant messages carry.
func buildResponsesParams(req *agentrt.Request) (responses.ResponseNewParams, *files.Splice, error) {
	p := responses.ResponseNewParams{Model: req.Model, Store: param.NewOpt(false)}
	splice := files.NewSplice(req.Files)
	var instructions []string
	var input responses.ResponseInputParam
	// Files tools returned: a function_call_output here holds only text
	// as the chat path sends it, so they go in a user message after the
	// turn's outputs.
	var returned []agentrt.Part
	for i, msg := range req.Messages {
		switch msg.Role {
		case agentrt.System:
			instructions = append(instructions, msg.Content)
		case agentrt.User:
			parts := msg.Parts
			if len(parts) == 0 {
				parts = []agentrt.Part{{Text: msg.Content}}
			}
			item, err := responsesUser(parts, splice)
			if err != nil {
				return p, nil, fmt.Errorf("openai: message %d: %w", i, err)
			}
			input = append(input, item)
		case agentrt.Assistant:
			items, err := responsesAssistant(msg)
			if err != nil {
				return p, nil, fmt.Errorf("openai: message %d: %w", i, err)
			}
			input = append(input, items...)
		case agentrt.ToolRole:
			for _, part := range msg.Parts {
				if part.File != nil && Limits.Check("openai", part.File) == nil {
					returned = append(returned, agentrt.Part{Text: fmt.Sprintf("The tool %s returned this file (%s):", msg.Name, part.File.MediaType)}, part)
				}
			}
			input = append(input, responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
				CallID: param.NewOpt(msg.ToolCallID),
				Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: param.NewOpt(msg.Content)},
			}})
		default:
			return p, nil, fmt.Errorf("openai: message %d: unknown role %q", i, msg.Role)
		}
		if next := i + 1; len(returned) > 0 && (next == len(req.Messages) || req.Messages[next].Role != agentrt.ToolRole) {
			item, err := responsesUser(returned, splice)
			if err != nil {
				return p, nil, fmt.Errorf("openai: message %d: %w", i, err)
			}
			input = append(input, item)
			returned = nil
		}
	}
	if len(instructions) > 0 {
		p.Instructions = param.NewOpt(strings.Join(instructions, "\n\n"))
	}
	p.Input.OfInputItemList = input
	for _, t := range req.Tools {
		tool, err := functionTool(t)
		if err != nil {
			return p, nil, err
		}
		p.Tools = append(p.Tools, tool)
	}
	if a := req.Answer; a != nil && a.Mode == plan.ModeNative {
		if !json.Valid(a.Schema) {
			return p, nil, fmt.Errorf("openai: answer schema is not JSON")
		}
		// Built as JSON, not as the SDK's map, so that the schema's
		// properties keep their order: the model writes them in it.
		format, err := json.Marshal(jsonSchemaFormat{Type: "json_schema", Name: a.Name, Description: a.Description, Schema: a.Schema, Strict: a.Strict})
		if err != nil {
			return p, nil, fmt.Errorf("openai: answer schema: %w", err)
		}
		p.Text.Format = param.Override[responses.ResponseFormatTextConfigUnionParam](json.RawMessage(format))
	}
	if len(req.Tools) > 0 {
		switch req.ToolChoice.Mode {
		case "":
		case agentrt.ChooseAuto, agentrt.ChooseRequired, "none":
			p.ToolChoice.OfToolChoiceMode = param.NewOpt(responses.ToolChoiceOptions(req.ToolChoice.Mode))
		case agentrt.ChooseTool:
			p.ToolChoice.OfFunctionTool = &responses.ToolChoiceFunctionParam{Name: req.ToolChoice.Name}
		default:
			return p, nil, fmt.Errorf("openai: unknown tool choice mode %q", req.ToolChoice.Mode)
		}
	}
	if req.Temperature != nil {
		p.Temperature = param.NewOpt(*req.Temperature)
	}
	if req.MaxOutputTokens > 0 {
		p.MaxOutputTokens = param.NewOpt(int64(req.MaxOutputTokens))
	}
	switch req.Reasoning {
	case "", "none":
	case "low", "medium", "high":
		p.Reasoning = shared.ReasoningParam{Effort: shared.ReasoningEffort(req.Reasoning)}
		// Only a reasoning model takes this: others refuse the request.
		p.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
	default:
		return p, nil, fmt.Errorf("openai: unknown reasoning effort %q (want low, medium, high or none)", req.Reasoning)
	}
	return p, splice, nil
}

// jsonSchemaFormat is text.format for a native answer.
type jsonSchemaFormat struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema"`
	Strict      bool            `json:"strict"`
}

// functionToolJSON is a function tool. Strict is always sent: the
// Responses API makes a function strict when it is not said, Chat
// Completions does not, and agentc has decided for each tool.
type functionToolJSON struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

func functionTool(t agentrt.ToolSpec) (responses.ToolUnionParam, error) {
	params := t.Schema
	if len(params) == 0 {
		params = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	if !json.Valid(params) {
		return responses.ToolUnionParam{}, fmt.Errorf("openai: tool %q: schema is not JSON", t.Name)
	}
	b, err := json.Marshal(functionToolJSON{Type: "function", Name: t.Name, Description: t.Description, Parameters: params, Strict: t.Strict})
	if err != nil {
		return responses.ToolUnionParam{}, fmt.Errorf("openai: tool %q: schema: %w", t.Name, err)
	}
	return param.Override[responses.ToolUnionParam](json.RawMessage(b)), nil
}

// responsesUser is a user message item of text and files.
func responsesUser(parts []agentrt.Part, splice *files.Splice) (responses.ResponseInputItemUnionParam, error) {
	var content responses.ResponseInputMessageContentListParam
	textPart := func(s string) responses.ResponseInputContentUnionParam {
		return responses.ResponseInputContentUnionParam{OfInputText: &responses.ResponseInputTextParam{Text: s}}
	}
	for _, p := range parts {
		f := p.File
		if f == nil {
			content = append(content, textPart(p.Text))
			continue
		}
		if err := Limits.Check("openai", f); err != nil {
			return responses.ResponseInputItemUnionParam{}, err
		}
		switch {
		case f.MediaType == "text/plain":
			text, err := splice.Text(f)
			if err != nil {
				return responses.ResponseInputItemUnionParam{}, err
			}
			content = append(content, textPart(text))
		case f.MediaType == "application/pdf":
			url, err := splice.DataURL(f)
			if err != nil {
				return responses.ResponseInputItemUnionParam{}, err
			}
			name := f.FileName
			if name == "" {
				name = f.Name + ".pdf"
			}
			content = append(content, responses.ResponseInputContentUnionParam{OfInputFile: &responses.ResponseInputFileParam{FileData: param.NewOpt(url), Filename: param.NewOpt(name)}})
		default:
			url, err := splice.DataURL(f)
			if err != nil {
				return responses.ResponseInputItemUnionParam{}, err
			}
			content = append(content, responses.ResponseInputContentUnionParam{OfInputImage: &responses.ResponseInputImageParam{ImageURL: param.NewOpt(url), Detail: responses.ResponseInputImageDetailAuto}})
		}
	}
	return responses.ResponseInputItemUnionParam{OfMessage: &responses.EasyInputMessageParam{
		Type:    responses.EasyInputMessageTypeMessage,
		Role:    responses.EasyInputMessageRoleUser,
		Content: responses.EasyInputMessageContentUnionParam{OfInputItemContentList: content},
	}}, nil
}

// responsesAssistant is an assistant message as the items the model
// output: its reasoning, its text, its calls.
func responsesAssistant(msg agentrt.Message) ([]responses.ResponseInputItemUnionParam, error) {
	var items []responses.ResponseInputItemUnionParam
	if s := msg.State; s != nil && s.Provider == StateProvider {
		var reasoning []json.RawMessage
		if err := json.Unmarshal(s.Data, &reasoning); err != nil {
			return nil, fmt.Errorf("the state of an assistant message is not a list of items: %w", err)
		}
		for _, r := range reasoning {
			items = append(items, param.Override[responses.ResponseInputItemUnionParam](r))
		}
	}
	// An output message item needs the id the server gave it, which
	// agentc does not keep; the assistant's text goes as an input
	// message, which the API takes for earlier turns.
	if msg.Content != "" {
		items = append(items, responses.ResponseInputItemUnionParam{OfMessage: &responses.EasyInputMessageParam{
			Type:    responses.EasyInputMessageTypeMessage,
			Role:    responses.EasyInputMessageRoleAssistant,
			Content: responses.EasyInputMessageContentUnionParam{OfString: param.NewOpt(msg.Content)},
		}})
	}
	for _, tc := range msg.ToolCalls {
		items = append(items, responses.ResponseInputItemUnionParam{OfFunctionCall: &responses.ResponseFunctionToolCallParam{
			CallID: tc.ID, Name: tc.Name, Arguments: string(tc.Arguments),
		}})
	}
	return items, nil
}

// responseBody is the part of a response object agentc reads.
type responseBody struct {
	Model             string `json:"model"`
	Status            string `json:"status"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Error *struct {
		Code    string `json:"code"`
		Type    string `json:"type"` // an error object's, where a server sends one in place of a response
		Message string `json:"message"`
	} `json:"error"`
	Output []json.RawMessage `json:"output"`
	Usage  *struct {
		InputTokens        count `json:"input_tokens"`
		OutputTokens       count `json:"output_tokens"`
		InputTokensDetails struct {
			CachedTokens     count `json:"cached_tokens"`
			CacheWriteTokens count `json:"cache_write_tokens"`
		} `json:"input_tokens_details"`
		OutputTokensDetails struct {
			ReasoningTokens count `json:"reasoning_tokens"`
		} `json:"output_tokens_details"`
	} `json:"usage"`
}

// count is a usage count as a server wrote it, read as Chat Completions'
// SDK reads one: a number cut to an int (a float's fraction dropped, one
// past an int's range held at its end), a string holding one; anything
// else is none. The runtime holds a count that is implausible to its
// estimate; one that did not decode as an int failed the whole reply.
type count int

func (c *count) UnmarshalJSON(b []byte) error {
	s := string(b)
	if strings.HasPrefix(s, `"`) && json.Unmarshal(b, &s) != nil {
		return nil
	}
	if n, err := strconv.Atoi(s); err == nil {
		*c = count(n)
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange), math.IsNaN(f):
		// None: null, true, an object, a string of no number.
	case f >= math.MaxInt:
		*c = math.MaxInt
	case f <= math.MinInt:
		*c = math.MinInt
	default:
		*c = count(f)
	}
	return nil
}

// outputItem is one item of a response's output.
type outputItem struct {
	Type    string `json:"type"`
	Content []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
	CallID           string  `json:"call_id"`
	Name             string  `json:"name"`
	Arguments        string  `json:"arguments"`
	EncryptedContent *string `json:"encrypted_content"`
}

// parseResponsesBody reads a response object into the assistant's message.
// quote is how an error holds the server's own text (its status, a reason,
// an error's code and message): redacted and cut, as classify's are.
func parseResponsesBody(data []byte, quote func(string) string) (*agentrt.Response, error) {
	var body responseBody
	if err := json.Unmarshal(data, &body); err != nil {
		return nil, fmt.Errorf("openai: the response is not a response object: %w", err)
	}
	msg := agentrt.Message{Role: agentrt.Assistant}
	var text, refusal strings.Builder
	var reasoning []json.RawMessage
	for i, raw := range body.Output {
		var it outputItem
		if err := json.Unmarshal(raw, &it); err != nil {
			return nil, fmt.Errorf("openai: output item %d: %w", i, err)
		}
		switch it.Type {
		case "message":
			for _, c := range it.Content {
				switch c.Type {
				case "output_text":
					text.WriteString(c.Text)
				case "refusal":
					refusal.WriteString(c.Refusal)
				}
			}
		case "function_call":
			// Invalid JSON is passed through: the runtime validates the
			// arguments and asks the model again.
			msg.ToolCalls = append(msg.ToolCalls, agentrt.ToolCall{ID: it.CallID, Name: it.Name, Arguments: json.RawMessage(it.Arguments)})
		case "reasoning":
			// Without its encrypted content an item can be sent back only
			// to a server that stored it, and agentc stores nothing.
			if it.EncryptedContent == nil || *it.EncryptedContent == "" {
				continue
			}
			var b bytes.Buffer
			if err := json.Compact(&b, raw); err != nil {
				return nil, fmt.Errorf("openai: output item %d: %w", i, err)
			}
			reasoning = append(reasoning, b.Bytes())
		}
	}
	msg.Content = text.String()
	if msg.Content == "" && refusal.Len() > 0 {
		msg.Content = refusal.String()
	}
	if len(reasoning) > 0 {
		data, err := json.Marshal(reasoning)
		if err != nil {
			return nil, fmt.Errorf("openai: reasoning items: %w", err)
		}
		msg.State = &agentrt.ProviderState{Provider: StateProvider, Data: data}
	}
	var usage agentrt.Usage
	if u := body.Usage; u != nil {
		// output_tokens includes the reasoning tokens: a server
		// reporting more reasoning than that reports output no less.
		usage = agentrt.Usage{Input: int(u.InputTokens), Output: int(max(u.OutputTokens, u.OutputTokensDetails.ReasoningTokens)), Cached: int(u.InputTokensDetails.CachedTokens),
			CacheWrite: int(u.InputTokensDetails.CacheWriteTokens)}
	}
	switch body.Status {
	case "completed", "":
		// A body that is an error object (as a proxy or a gateway may
		// send with 200), or holds no output at all, is no response:
		// taken as one, it was an empty answer, and an agent without an
		// output contract printed "" and exited 0.
		if e := body.Error; e != nil && (e.Code != "" || e.Type != "" || e.Message != "") {
			code := e.Code
			if code == "" {
				code = e.Type
			}
			return nil, fmt.Errorf("openai: the response is an error, not a response object (%s): %s", quote(code), quote(e.Message))
		}
		if body.Output == nil {
			return nil, errors.New("openai: the response is not a response object: it has no output")
		}
	case "incomplete":
		// The reply is billed either way: the failure carries what it
		// spent (agentrt.Spent), for the run to charge.
		reason := ""
		if body.IncompleteDetails != nil {
			reason = body.IncompleteDetails.Reason
		}
		switch {
		case reason == "max_output_tokens":
			// Whatever the turn holds: a call's arguments cut short may
			// still fit its schema, so no call of it is made.
			return nil, agentrt.Spent(fmt.Errorf("openai: the output was cut at the token limit (incomplete_details.reason %q)", reason), usage)
		case reason == "content_filter":
			return nil, agentrt.Spent(fmt.Errorf("openai: %w (incomplete_details.reason %q)", ErrFiltered, reason), usage)
		default:
			return nil, agentrt.Spent(fmt.Errorf("openai: the response is incomplete (incomplete_details.reason %q)", quote(reason)), usage)
		}
	case "failed":
		if e := body.Error; e != nil {
			return nil, fmt.Errorf("openai: the response failed (%s): %s", quote(e.Code), quote(e.Message))
		}
		return nil, errors.New("openai: the response failed")
	default:
		return nil, fmt.Errorf("openai: the response's status is %q", quote(body.Status))
	}
	return &agentrt.Response{Model: body.Model, Message: msg, Usage: usage}, nil
}

// ErrFiltered reports that the provider's content filter stopped the
// answer: there is no refusal of the model's own to return.
var ErrFiltered = errors.New("the content filter stopped the answer")
