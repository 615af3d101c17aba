// Package anthropic is the `anthropic` provider: a runtime.Model over the
// Anthropic Messages API, through the official Go SDK. The SDK's own retries
// are off; every attempt goes through the runtime's retry.Policy.
package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/internal/origin"
	"agentc.dev/agentc/runtime/internal/replylimit"
	"agentc.dev/agentc/runtime/provider/internal/failure"
	"agentc.dev/agentc/runtime/provider/internal/files"
	"agentc.dev/agentc/runtime/provider/internal/limit"
	"agentc.dev/agentc/runtime/provider/retry"
	"agentc.dev/agentc/runtime/redact"
)

// DefaultMaxTokens is the max_tokens sent when a request sets no
// MaxOutputTokens; the API requires one.
const DefaultMaxTokens = 4096

// ErrTruncated reports an answer cut at the output token limit.
var ErrTruncated = errors.New("the output was cut at the token limit")

// ErrRefused reports that the model declined to answer (stop_reason "refusal").
var ErrRefused = errors.New("the model refused to answer")

// Config configures a Model.
type Config struct {
	APIKey     string       // may be empty only with BaseURL (a server that needs none)
	BaseURL    string       // "" = the SDK's default
	HTTPClient *http.Client // optional
	// Retry bounds the attempts of a call. Attempts zero means retry.Default
	// (keeping OnAttempt).
	Retry retry.Policy
	// Stall gives up an attempt when the server makes no progress for
	// this long: no response, no part of a streamed reply (keep-alives are
	// none), a whole body taking longer than this and a second per 16 KiB
	// (see retry.DefaultStall, the default when zero); negative waits for
	// ever. A given-up attempt is retried as the policy allows.
	Stall time.Duration
	// Secrets, when set, is the secret set of the runs the Model serves
	// (runtime.Options.Secrets): the API key is added to it, so that what
	// a server echoes of it is redacted wherever the runs write it. The
	// Model's errors are redacted with it. Nil keeps the key in a set of
	// the Model's own, for its errors alone.
	Secrets *redact.Set
}

// Model is a runtime.Model over the Anthropic Messages API.
type Model struct {
	// messages is the one service used, not the whole client: see the
	// openai package's Model for why that keeps agentc smaller.
	messages sdk.MessageService
	key      *redact.Set // the API key (Config.Secrets), for errors that echo it
	retry    retry.Policy
}

var _ agentrt.Model = (*Model)(nil)

// New returns a Model. It reads no environment: the key and base URL are
// the caller's.
func New(cfg Config) (*Model, error) {
	if cfg.APIKey == "" && cfg.BaseURL == "" {
		return nil, errors.New("anthropic: no API key (one may be omitted only with a base URL)")
	}
	// Without a key, requests carry no credential at all.
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithMaxRetries(0),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	// The key goes to the base URL's origin only: a redirect elsewhere
	// is refused (see package origin).
	opts = append(opts, option.WithHTTPClient(origin.Client(cfg.HTTPClient)))
	// A response past the limit fails the call rather than fill memory.
	opts = append(opts, option.WithMiddleware(limit.Middleware("anthropic", replylimit.MaxResponse)),
		option.WithMiddleware(limit.Stall("anthropic", cfg.Stall)))
	p := cfg.Retry
	if p.Attempts == 0 {
		on := p.OnAttempt
		p = retry.Default
		p.OnAttempt = on
	}
	key := cfg.Secrets
	if key == nil {
		key = &redact.Set{}
	}
	key.Add(cfg.APIKey)
	return &Model{messages: sdk.NewClient(opts...).Messages, key: key, retry: p}, nil
}

// Complete sends one request, retrying as the policy allows, and returns
// the assistant's message. Reasoning maps to output_config.effort, not to
// extended thinking: thinking blocks would have to be sent back on the next
// turn, and runtime messages cannot carry them.
func (m *Model) Complete(ctx context.Context, req *agentrt.Request) (*agentrt.Response, error) {
	return failure.Tallied(ctx, func(ctx context.Context) (*agentrt.Response, error) { return m.complete(ctx, req) })
}

func (m *Model) complete(ctx context.Context, req *agentrt.Request) (*agentrt.Response, error) {
	if req == nil {
		return nil, errors.New("anthropic: no request")
	}
	params, opts, err := buildParams(req)
	if err != nil {
		return nil, fmt.Errorf("anthropic: %w", err)
	}
	// A request whose max_tokens could take longer than the API lets a
	// plain request run (the SDK's own rule) is streamed, and the message
	// put together from its events; so is one whose caller asks for the
	// reply as it comes.
	_, long := sdk.CalculateNonStreamingTimeout(int(params.MaxTokens), params.Model, opts)
	var msg *sdk.Message
	err = m.retry.Do(ctx, func(ctx context.Context, attempt int) error {
		if long != nil || req.Stream != nil {
			if attempt > 1 && req.Stream != nil {
				req.Stream(agentrt.Delta{Restart: true})
			}
			var err error
			msg, err = m.stream(ctx, params, opts, req.Stream, req.OutputTool)
			return m.classify(ctx, err)
		}
		var err error
		msg, err = m.messages.New(limit.WithWhole(ctx, params.MaxTokens), params, opts...)
		if err == nil {
			return m.notMessage(msg)
		}
		return m.classify(ctx, err)
	})
	if err != nil {
		return nil, err
	}
	resp, err := parseMessage(msg, m.redact)
	if err != nil {
		return nil, err
	}
	if req.MaxOutputTokens <= 0 {
		resp.MaxOutputTokens = int(params.MaxTokens)
	}
	if err := agentrt.CheckReply(params.MaxTokens, &resp.Message); err != nil {
		return nil, fmt.Errorf("anthropic: %w", err)
	}
	return resp, nil
}

// Limits are the files the Messages API takes (plan.FileLimits).
var Limits = files.Limits(plan.FileLimits["anthropic"])

// partBlock is a part of a user message as a content block.
func partBlock(part agentrt.Part, splice *files.Splice) (sdk.ContentBlockParamUnion, error) {
	f := part.File
	if f == nil {
		return sdk.NewTextBlock(part.Text), nil
	}
	if err := Limits.Check("anthropic", f); err != nil {
		return sdk.ContentBlockParamUnion{}, err
	}
	title := func(b sdk.ContentBlockParamUnion) sdk.ContentBlockParamUnion {
		if f.FileName != "" {
			b.OfDocument.Title = sdk.String(f.FileName)
		}
		return b
	}
	switch f.MediaType {
	case "text/plain":
		text, err := splice.Text(f)
		if err != nil {
			return sdk.ContentBlockParamUnion{}, err
		}
		return title(sdk.NewDocumentBlock(sdk.PlainTextSourceParam{Data: text})), nil
	case "application/pdf":
		data, err := splice.Base64(f)
		if err != nil {
			return sdk.ContentBlockParamUnion{}, err
		}
		return title(sdk.NewDocumentBlock(sdk.Base64PDFSourceParam{Data: data})), nil
	}
	data, err := splice.Base64(f)
	if err != nil {
		return sdk.ContentBlockParamUnion{}, err
	}
	return sdk.NewImageBlockBase64(f.MediaType, data), nil
}

func buildParams(req *agentrt.Request) (sdk.MessageNewParams, []option.RequestOption, error) {
	p := sdk.MessageNewParams{
		Model:     sdk.Model(req.Model),
		MaxTokens: DefaultMaxTokens,
	}
	if req.MaxOutputTokens > 0 {
		p.MaxTokens = int64(req.MaxOutputTokens)
	}
	var opts []option.RequestOption
	// The files' bytes go in the body as it is sent (see files.Splice).
	splice := files.NewSplice(req.Files)
	if req.Temperature != nil {
		// The v2 SDK's params have no temperature field; the API still reads it.
		opts = append(opts, option.WithJSONSet("temperature", *req.Temperature))
	}
	switch req.Reasoning {
	case "":
	case "low", "medium", "high":
		p.OutputConfig.Effort = sdk.OutputConfigEffort(req.Reasoning)
	default:
		return p, nil, fmt.Errorf("unknown reasoning %q (want low, medium or high)", req.Reasoning)
	}

	type turn struct {
		role   agentrt.Role // User or Assistant
		blocks []sdk.ContentBlockParamUnion
	}
	var turns []turn
	for i, msg := range req.Messages {
		var role agentrt.Role
		var blocks []sdk.ContentBlockParamUnion
		switch msg.Role {
		case agentrt.System:
			if msg.Content != "" {
				p.System = append(p.System, sdk.TextBlockParam{Text: msg.Content})
			}
			continue
		case agentrt.User:
			role = agentrt.User
			if msg.Content != "" {
				blocks = append(blocks, sdk.NewTextBlock(msg.Content))
			}
			for _, part := range msg.Parts {
				b, err := partBlock(part, splice)
				if err != nil {
					return p, nil, err
				}
				blocks = append(blocks, b)
			}
		case agentrt.Assistant:
			role = agentrt.Assistant
			if msg.Content != "" {
				blocks = append(blocks, sdk.NewTextBlock(msg.Content))
			}
			for _, c := range msg.ToolCalls {
				args := c.Arguments
				if len(args) == 0 {
					args = json.RawMessage("{}")
				} else if !json.Valid(args) {
					return p, nil, fmt.Errorf("message %d: tool call %q has arguments that are not JSON", i, c.ID)
				}
				blocks = append(blocks, sdk.NewToolUseBlock(c.ID, args, c.Name))
			}
		case agentrt.ToolRole:
			role = agentrt.User
			r := sdk.ToolResultBlockParam{ToolUseID: msg.ToolCallID}
			if msg.Content != "" {
				r.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: msg.Content}}}
			}
			// The files the tool returned follow its text; one the API
			// does not take in a result is left to the text, which names it.
			for _, part := range msg.Parts {
				if part.File == nil || Limits.Check("anthropic", part.File) != nil {
					continue
				}
				b, err := partBlock(part, splice)
				if err != nil {
					return p, nil, fmt.Errorf("message %d: %w", i, err)
				}
				r.Content = append(r.Content, sdk.ToolResultBlockParamContentUnion{OfImage: b.OfImage, OfDocument: b.OfDocument})
			}
			if msg.IsError {
				r.IsError = sdk.Bool(true)
			}
			blocks = append(blocks, sdk.ContentBlockParamUnion{OfToolResult: &r})
		default:
			return p, nil, fmt.Errorf("message %d: unknown role %q", i, msg.Role)
		}
		if len(blocks) == 0 {
			continue
		}
		// Consecutive messages of one role become one message, so tool
		// results of a turn (and any user text after them) are one user turn.
		if n := len(turns); n > 0 && turns[n-1].role == role {
			turns[n-1].blocks = append(turns[n-1].blocks, blocks...)
			continue
		}
		turns = append(turns, turn{role, blocks})
	}
	for _, t := range turns {
		if t.role == agentrt.User {
			p.Messages = append(p.Messages, sdk.NewUserMessage(t.blocks...))
		} else {
			p.Messages = append(p.Messages, sdk.NewAssistantMessage(t.blocks...))
		}
	}

	for _, t := range req.Tools {
		schema, err := inputSchema(t.Schema)
		if err != nil {
			return p, nil, fmt.Errorf("tool %q: %w", t.Name, err)
		}
		tp := sdk.ToolParam{Name: t.Name, InputSchema: schema}
		if t.Description != "" {
			tp.Description = sdk.String(t.Description)
		}
		if t.Strict {
			tp.Strict = sdk.Bool(true)
		}
		p.Tools = append(p.Tools, sdk.ToolUnionParam{OfTool: &tp})
	}
	if a := req.Answer; a != nil && a.Mode == plan.ModeNative {
		// Structured output: the answer is the text, as JSON that
		// satisfies the schema (already in Anthropic's dialect).
		dec := json.NewDecoder(bytes.NewReader(a.Schema))
		dec.UseNumber()
		var schema map[string]any
		if err := dec.Decode(&schema); err != nil {
			return p, nil, fmt.Errorf("answer schema: %w", err)
		}
		p.OutputConfig.Format = sdk.JSONOutputFormatParam{Schema: schema}
	}
	if len(req.Tools) > 0 {
		switch req.ToolChoice.Mode {
		case "":
		case agentrt.ChooseAuto:
			p.ToolChoice = sdk.ToolChoiceUnionParam{OfAuto: &sdk.ToolChoiceAutoParam{}}
		case agentrt.ChooseRequired:
			p.ToolChoice = sdk.ToolChoiceUnionParam{OfAny: &sdk.ToolChoiceAnyParam{}}
		case agentrt.ChooseTool:
			if req.ToolChoice.Name == "" {
				return p, nil, errors.New(`tool choice "tool" names no tool`)
			}
			p.ToolChoice = sdk.ToolChoiceParamOfTool(req.ToolChoice.Name)
		default:
			return p, nil, fmt.Errorf("unknown tool choice mode %q", req.ToolChoice.Mode)
		}
	}
	if req.Cache {
		cacheBreakpoints(&p, gathering(req))
	}
	// The splice also bounds a body without files (files.MaxBody).
	opts = append(opts, option.WithMiddleware(splice.Middleware))
	return p, opts, nil
}

// cacheBreakpoints marks where the stable start of a request ends, for the
// API to cache what comes before: the last tool definition (the tools
// change only on the answering turn), the last system block (the
// instructions) and, on a turn that may gather (call a tool other than
// the output tool, after which the run goes on), the last block of the
// last message, so that each round reads the conversation the round
// before wrote and writes only what it adds. The answering turn's
// conversation is not written: no call reads it after, and a write costs
// more than input; an agent that only answers (one call, its input a
// document as often as not) writes its tools and instructions alone, for
// its next runs. That is three breakpoints; the API takes at most four.
func cacheBreakpoints(p *sdk.MessageNewParams, gathering bool) {
	if n := len(p.Tools); n > 0 {
		if cc := p.Tools[n-1].GetCacheControl(); cc != nil {
			*cc = sdk.NewCacheControlEphemeralParam()
		}
	}
	if n := len(p.System); n > 0 {
		p.System[n-1].CacheControl = sdk.NewCacheControlEphemeralParam()
	}
	if n := len(p.Messages); n > 0 && gathering {
		var blocks []sdk.ContentBlockParamUnion
		switch m := p.Messages[n-1]; {
		case m.OfUser != nil:
			blocks = m.OfUser.Content
		case m.OfAssistant != nil:
			blocks = m.OfAssistant.Content
		}
		if len(blocks) > 0 {
			if cc := blocks[len(blocks)-1].GetCacheControl(); cc != nil {
				*cc = sdk.NewCacheControlEphemeralParam()
			}
		}
	}
}

// gathering reports whether a request lets the model call a tool other
// than the output tool: a turn after which the run goes on.
func gathering(req *agentrt.Request) bool {
	if req.ToolChoice.Mode == agentrt.ChooseTool && req.ToolChoice.Name == req.OutputTool {
		return false
	}
	for _, t := range req.Tools {
		if t.Name != req.OutputTool || req.OutputTool == "" {
			return true
		}
	}
	return false
}

// inputSchema splits a JSON Schema into the SDK's input_schema parameter:
// properties and required as fields, every other keyword as an extra.
func inputSchema(raw json.RawMessage) (sdk.ToolInputSchemaParam, error) {
	var s sdk.ToolInputSchemaParam
	if len(raw) == 0 {
		return s, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return s, fmt.Errorf("schema is not a JSON object: %w", err)
	}
	if t, ok := m["type"]; ok && t != "object" {
		return s, fmt.Errorf("schema has type %v; the API takes object schemas only", t)
	}
	s.Properties = m["properties"]
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				s.Required = append(s.Required, name)
			}
		}
	}
	for k, v := range m {
		switch k {
		case "type", "properties", "required":
		default:
			if s.ExtraFields == nil {
				s.ExtraFields = map[string]any{}
			}
			s.ExtraFields[k] = v
		}
	}
	return s, nil
}

// parseMessage reads a message into the assistant's; quote is how an error
// holds the server's own text (a refusal's explanation): redacted and cut,
// as classify's are.
func parseMessage(msg *sdk.Message, quote func(string) string) (*agentrt.Response, error) {
	if msg == nil {
		// A body of null decodes to no message, and no error.
		return nil, errors.New("anthropic: the response is null, not a message")
	}
	out := agentrt.Message{Role: agentrt.Assistant}
	var text []string
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "tool_use":
			args := b.Input
			if len(args) == 0 {
				args = json.RawMessage("{}")
			}
			out.ToolCalls = append(out.ToolCalls, agentrt.ToolCall{ID: b.ID, Name: b.Name, Arguments: append(json.RawMessage(nil), args...)})
		}
	}
	out.Content = strings.Join(text, "")
	u := msg.Usage
	usage := agentrt.Usage{
		// Anthropic's input_tokens leave out the tokens read from and
		// written to the cache.
		Input:      int(u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens),
		Output:     int(u.OutputTokens),
		Cached:     int(u.CacheReadInputTokens),
		CacheWrite: int(u.CacheCreationInputTokens),
	}
	// The message is whole and billed either way: a failure carries what
	// it spent (agentrt.Spent), for the run to charge.
	switch msg.StopReason {
	case sdk.StopReasonMaxTokens, sdk.StopReasonModelContextWindowExceeded:
		// Whatever the turn holds: its last tool_use block may be cut
		// short, and its input, an object, can still fit the tool's
		// schema (or the output's), so no call of it is made.
		return nil, agentrt.Spent(fmt.Errorf("anthropic: %w (stop_reason %s)", ErrTruncated, msg.StopReason), usage)
	}
	if len(out.ToolCalls) == 0 {
		switch msg.StopReason {
		case sdk.StopReasonRefusal:
			if e := msg.StopDetails.Explanation; e != "" {
				return nil, agentrt.Spent(fmt.Errorf("anthropic: %w: %s", ErrRefused, quote(e)), usage)
			}
			return nil, agentrt.Spent(fmt.Errorf("anthropic: %w", ErrRefused), usage)
		}
	}
	return &agentrt.Response{Model: string(msg.Model), Message: out, Usage: usage}, nil
}

// StatusError is an error response of the API. It keeps the provider's own
// message, with the API key redacted should it echo it, and none of the
// request: no key, no headers.
type StatusError struct {
	StatusCode int
	Type       string // the API's error type, such as "overloaded_error"
	Message    string
	RequestID  string
	// whole is set for an error object a whole response answered 200
	// held in place of a message; else a status under 400 is an error
	// event in a stream.
	whole bool
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("anthropic: %d %s", e.StatusCode, statusText(e.StatusCode))
	if e.StatusCode < 400 {
		// An error event in a stream, on a response that began well.
		s = "anthropic: error event in the stream"
		if e.whole {
			s = "anthropic: the response, answered 200, is an error, not a message"
		}
		if e.Type != "" && e.Message != "" {
			s += ": " + e.Type
		}
	}
	switch {
	case e.Message != "":
		s += ": " + e.Message
	case e.Type != "":
		s += ": " + e.Type
	}
	if e.RequestID != "" {
		s += " (request-id " + e.RequestID + ")"
	}
	return s
}

func statusText(code int) string {
	if code == 529 {
		return "Overloaded"
	}
	return http.StatusText(code)
}

// stream makes one streamed request and accumulates its events into the
// message a plain request would have returned; delta, when set, hears
// each piece of text, and of the output tool's arguments, as it arrives.
// A stream whose blocks pass what the request's max_tokens can make is
// cut there (limit.Reply), not read to its end.
func (m *Model) stream(ctx context.Context, params sdk.MessageNewParams, opts []option.RequestOption, delta func(agentrt.Delta), outputTool string) (*sdk.Message, error) {
	ctx, meter := limit.NewReply(ctx, params.MaxTokens)
	st := m.messages.NewStreaming(ctx, params, opts...)
	defer st.Close()
	var msg sdk.Message
	answer := map[int64]bool{} // the content blocks that call the output tool
	var texts blockTexts
	for st.Next() {
		ev := st.Current()
		// What Accumulate keeps of each event: the message's start and a
		// block's, each whole, and the pieces of each delta.
		n := 0
		switch ev.Type {
		case "message_start":
			n = len(ev.Message.RawJSON())
		case "content_block_start":
			n = len(ev.ContentBlock.RawJSON())
			if ev.ContentBlock.Type == "tool_use" {
				n = max(n, replylimit.CallBytes)
			}
		case "content_block_delta":
			d := &ev.Delta
			n = len(d.Text) + len(d.PartialJSON) + len(d.Thinking) + len(d.Signature) + len(d.Citation.RawJSON())
		}
		if err := meter.Add(n); err != nil {
			return nil, err
		}
		if err := texts.accumulate(&msg, ev); err != nil {
			return nil, fmt.Errorf("reading the stream: %w", err)
		}
		if delta == nil {
			continue
		}
		switch ev.Type {
		case "content_block_start":
			if b := ev.ContentBlock; b.Type == "tool_use" && outputTool != "" && b.Name == outputTool {
				answer[ev.Index] = true
			}
		case "content_block_delta":
			switch d := ev.Delta; d.Type {
			case "text_delta":
				delta(agentrt.Delta{Text: d.Text})
			case "input_json_delta":
				if answer[ev.Index] {
					delta(agentrt.Delta{Answer: d.PartialJSON})
				}
			}
		}
	}
	if msg.ID != "" && msg.StopReason != "" {
		// The message is whole (its stop reason and usage arrived), even if
		// the connection went away before the stream's last event: asking
		// again would pay for it twice.
		texts.flush(&msg)
		return &msg, nil
	}
	if err := st.Err(); err != nil {
		if u, ok := errors.AsType[*limit.Unstreamed](err); ok {
			return m.wholeMessage(u.Body, delta, outputTool)
		}
		return nil, err
	}
	return nil, errStreamCut
}

// wholeMessage is the message a server answered a streamed request with
// whole (limit.Unstreamed, a server that ignores "stream"): what the
// stream would have put together, its text and the output tool's input
// heard as one piece each. A body that is no message is the call's
// error, as a whole response's is (notMessage).
func (m *Model) wholeMessage(body []byte, delta func(agentrt.Delta), outputTool string) (*sdk.Message, error) {
	var msg sdk.Message
	if err := json.Unmarshal(body, &msg); err != nil {
		return nil, fmt.Errorf("the server answered the streamed request whole, with no message: %w", err)
	}
	if err := m.notMessage(&msg); err != nil {
		return nil, err
	}
	if delta != nil {
		for _, b := range msg.Content {
			switch {
			case b.Type == "text" && b.Text != "":
				delta(agentrt.Delta{Text: b.Text})
			case b.Type == "tool_use" && outputTool != "" && b.Name == outputTool && len(b.Input) > 0:
				delta(agentrt.Delta{Answer: string(b.Input)})
			}
		}
	}
	return &msg, nil
}

// blockTexts puts a streamed message's text, thinking, signatures and
// tool input together for the SDK's Message.Accumulate, which adds each
// delta to a string (cb.Text += …): a message of 236,000 deltas of 27 bytes
// took 157 s of CPU. Here each block's pieces go to a builder, and
// Accumulate sees the deltas without them; a block gets its texts back
// before its stop, and the message's, is read (refreshContentBlockRaw
// reads them).
//
// A tool_use block's input is kept here too, exactly as streamed: at a
// stop, Accumulate replaces input that is not JSON with {}, which fits an
// output schema that requires nothing and calls a tool with no arguments.
// The block gets the streamed bytes back after Accumulate, so the runtime
// sees what the model wrote, and refuses it as it refuses any arguments
// that are not JSON.
type blockTexts struct {
	blocks []*blockText // by content block index
}

type blockText struct {
	text, thinking, signature strings.Builder
	added                     bool // some delta was added since the last flush

	kind    string // the block's type
	input   []byte // a tool_use block's input_json_delta pieces, put together
	stopped bool   // its content_block_stop, or the message's, came
}

func (b *blockTexts) accumulate(msg *sdk.Message, ev sdk.MessageStreamEventUnion) error {
	switch ev.Type {
	case "content_block_delta":
		if ev.Index < 0 || ev.Index >= int64(len(b.blocks)) || ev.Index >= int64(len(msg.Content)) {
			break // Accumulate refuses it
		}
		bt := b.blocks[ev.Index]
		if bt.stopped {
			// Accumulate would add it to a block already read, or to
			// input already judged to be JSON.
			return fmt.Errorf("the stream added to content block %d (%s) after the block's content_block_stop", ev.Index, ev.Delta.Type)
		}
		switch ev.Delta.Type {
		case "text_delta":
			bt.text.WriteString(ev.Delta.Text)
			ev.Delta.Text = ""
		case "thinking_delta":
			bt.thinking.WriteString(ev.Delta.Thinking)
			ev.Delta.Thinking = ""
		case "signature_delta":
			bt.signature.WriteString(ev.Delta.Signature)
			ev.Delta.Signature = ""
		case "input_json_delta":
			if bt.kind != "tool_use" {
				return fmt.Errorf("the stream sent tool input (input_json_delta) for content block %d, a %s block, not tool_use", ev.Index, bt.kind)
			}
			// The pieces replace the input the block started with (the
			// API starts it as {}); Accumulate appended them to any other.
			bt.input = append(bt.input, ev.Delta.PartialJSON...)
			ev.Delta.PartialJSON = ""
		default:
			return msg.Accumulate(ev)
		}
		bt.added = true
		return nil
	case "content_block_stop":
		if ev.Index >= 0 && ev.Index < int64(min(len(b.blocks), len(msg.Content))) {
			b.blocks[ev.Index].set(&msg.Content[ev.Index])
			b.blocks[ev.Index].stopped = true
		}
	case "message_stop":
		b.flush(msg)
		for _, bt := range b.blocks {
			bt.stopped = true
		}
	}
	if err := msg.Accumulate(ev); err != nil {
		return err
	}
	switch ev.Type {
	case "message_start":
		// Accumulate starts the message again, with the blocks it holds.
		b.blocks = b.blocks[:0]
		for i := range msg.Content {
			b.blocks = append(b.blocks, newBlockText(&msg.Content[i]))
		}
	case "content_block_start":
		// A block may start with text of its own; its deltas follow it.
		if len(b.blocks) == len(msg.Content)-1 {
			b.blocks = append(b.blocks, newBlockText(&msg.Content[len(msg.Content)-1]))
		}
	case "content_block_stop", "message_stop":
		// Accumulate makes input that is not JSON {} at a stop; the
		// block gets back what was sent.
		b.restoreInput(msg)
	}
	return nil
}

func newBlockText(cb *sdk.ContentBlockUnion) *blockText {
	bt := &blockText{kind: cb.Type}
	bt.text.WriteString(cb.Text)
	bt.thinking.WriteString(cb.Thinking)
	bt.signature.WriteString(cb.Signature)
	return bt
}

// flush gives every block its texts back.
func (b *blockTexts) flush(msg *sdk.Message) {
	for i := range b.blocks {
		if i < len(msg.Content) {
			b.blocks[i].set(&msg.Content[i])
		}
	}
}

// restoreInput gives every tool_use block its input as streamed, after
// Accumulate has read it (the message's raw JSON keeps the input the block
// started with when the streamed one is not JSON).
func (b *blockTexts) restoreInput(msg *sdk.Message) {
	for i, bt := range b.blocks {
		if i < len(msg.Content) && len(bt.input) > 0 {
			msg.Content[i].Input = slices.Clip(bt.input)
		}
	}
}

// set gives cb its texts, put together, when a delta added to them.
func (bt *blockText) set(cb *sdk.ContentBlockUnion) {
	if !bt.added {
		return
	}
	cb.Text, cb.Thinking, cb.Signature = bt.text.String(), bt.thinking.String(), bt.signature.String()
	if len(bt.input) > 0 {
		cb.Input = slices.Clip(bt.input)
	}
	bt.added = false
}

// notMessage is the error of a whole response answered 200 whose body is
// not a message, which the SDK decodes to a message of no content and no
// error: an error object (as a proxy or a gateway may send with 200),
// retried as an error event of its type in a stream is; a body of another
// type, or of no content at all. Taken as the model's reply, either was
// an empty answer: an agent without an output contract printed "" and
// exited 0. Nil for a message, and for no body (parseMessage says so).
func (m *Model) notMessage(msg *sdk.Message) error {
	switch {
	case msg == nil:
		return nil
	case msg.Type == "error":
		var e struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		}
		_ = json.Unmarshal([]byte(msg.JSON.ExtraFields["error"].Raw()), &e)
		se := &StatusError{StatusCode: http.StatusOK, Type: m.redact(e.Type), Message: m.redact(e.Message), whole: true}
		if id, ok := msg.JSON.ExtraFields["request_id"]; ok {
			var s string
			if json.Unmarshal([]byte(id.Raw()), &s) == nil {
				se.RequestID = m.redact(s)
			}
		}
		return &retry.Error{Err: se, Retryable: streamRetryable(se.Type), Status: http.StatusOK}
	case msg.Type != "" && msg.Type != "message":
		return fmt.Errorf("anthropic: the response is not a message: its type is %q", m.redact(string(msg.Type)))
	case !msg.JSON.Content.Valid():
		return errors.New("anthropic: the response is not a message: it has no content")
	}
	return nil
}

// streamRetryable says whether an error that came on a response answered
// 200 (an error event in a stream, an error object in place of a message)
// may be served by another attempt, by its type.
func streamRetryable(typ string) bool { return typ == "overloaded_error" || typ == "api_error" }

// errStreamCut is a stream that ended before its message did: the
// connection went away mid-response.
var errStreamCut = errors.New("the stream ended before the message did")

// classify turns an SDK error into what retry.Policy.Do reads, with the
// key redacted from its message.
func (m *Model) classify(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("anthropic: %w", ctxErr)
	}
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		se := &StatusError{
			StatusCode: apiErr.StatusCode,
			Type:       m.redact(string(apiErr.Type())),
			Message:    m.redact(apiErr.Message),
			RequestID:  m.redact(apiErr.RequestID),
		}
		re := &retry.Error{Err: se, Retryable: retry.RetryableStatus(apiErr.StatusCode), Status: apiErr.StatusCode}
		// An error event in a stream arrives on a 200 response; its type
		// says whether another attempt may be served.
		if apiErr.StatusCode < 400 && streamRetryable(se.Type) {
			re.Retryable = true
		}
		if apiErr.Response != nil {
			re.RetryAfter = retry.ParseRetryAfter(apiErr.Response.Header, time.Now())
		}
		return re
	}
	if b, ok := failure.Bounded("anthropic", err); ok {
		return b
	}
	wrapped := failure.Wrap("anthropic", m.redact(err.Error()), err)
	if failure.Transient(err) || errors.Is(err, errStreamCut) {
		return &retry.Error{Err: wrapped, Retryable: true}
	}
	return wrapped
}

// redact is s, the server's text, as an error may quote it: the key
// replaced, and cut (failure.Quote).
func (m *Model) redact(s string) string { return failure.Quote(m.key, s) }

// FailureClass classifies the error for a model's fallbacks: a prompt
// past the model's context, a spent balance (billing_error), an
// overloaded or failing server (an error event in a stream included),
// else by status (retry.StatusClass).
func (e *StatusError) FailureClass() string {
	switch {
	case e.Type == "billing_error":
		return "quota"
	case e.StatusCode == http.StatusBadRequest && strings.Contains(e.Message, "prompt is too long"):
		return "too_long"
	case e.Type == "overloaded_error", e.Type == "api_error", e.Type == "rate_limit_error":
		return "unavailable"
	case e.Type == "not_found_error":
		return "not_found"
	}
	return retry.StatusClass(e.StatusCode)
}
