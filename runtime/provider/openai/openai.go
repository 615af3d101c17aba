// Package openai is the `openai` provider: a runtime.Model over OpenAI Chat
// Completions, or any OpenAI-compatible server reached by base URL, or over
// OpenAI's Responses API (Config.API), through the official SDK. The runtime's retry policy owns retries; the SDK's own
// are off.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

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

// Config configures a Model.
type Config struct {
	APIKey     string       // may be empty only with BaseURL (local servers)
	BaseURL    string       // "" = the SDK's default
	HTTPClient *http.Client // optional
	Retry      retry.Policy // zero value = retry.Default
	// Stall gives up an attempt when the server makes no progress for
	// this long: no response, no part of a streamed reply (keep-alives are
	// none), a whole body taking longer than this and a second per 16 KiB
	// (see retry.DefaultStall, the default when zero); negative waits for
	// ever. A given-up attempt is retried as the policy allows.
	Stall time.Duration
	// Azure, when set, sends the requests to an Azure OpenAI resource
	// instead, through the SDK's own Azure support; APIKey and BaseURL
	// are then unused.
	Azure *Azure
	// API is the API the requests use: APIChat (or "") for Chat
	// Completions, APIResponses for the Responses API, stateless.
	API string
	// Secrets, when set, is the secret set of the runs the Model serves
	// (runtime.Options.Secrets): the credential the Model sends (APIKey,
	// or Azure's key or token) is added to it, so that what a server
	// echoes of it is redacted wherever the runs write it. The Model's
	// errors are redacted with it. Nil keeps the credential in a set of
	// the Model's own, for its errors alone.
	Secrets *redact.Set
}

// Azure is an Azure OpenAI resource: its endpoint, the API version to
// ask for, the deployment that serves the model, and one credential.
type Azure struct {
	// Endpoint is the resource's endpoint, https://RESOURCE.openai.azure.com
	// (plain http only on loopback, for local servers).
	Endpoint string
	// APIVersion is the data-plane API version (2024-10-21).
	APIVersion string
	// Deployment names the deployment requests go to; "" sends each to
	// the deployment named as the request's model.
	Deployment string
	// APIKey is the resource's key, sent as Api-Key; else Token, a
	// Microsoft Entra ID access token, as a bearer token.
	APIKey, Token string
}

// Model is a runtime.Model over Chat Completions or the Responses API. It
// is safe for concurrent use.
type Model struct {
	// chat is the one service used, kept rather than the whole client: a
	// program that also links CUE keeps every exported method of every type
	// a kept value reaches by reflection (CUE's evaluator reaches
	// text/template), and the client reaches every API the SDK has. Keeping
	// the client made agentc's text 28 MB larger (81 MB, not 53 MB).
	chat sdk.ChatCompletionService
	// respond, for the same reason, is the one method of the Responses
	// API used, not its service (whose methods cost 1.2 MB more text);
	// nil when the Model speaks Chat Completions.
	respond func(context.Context, responses.ResponseNewParams, ...option.RequestOption) (*responses.Response, error)
	// respondStream is the Responses API's streaming call.
	respondStream func(context.Context, responses.ResponseNewParams, ...option.RequestOption) *ssestream.Stream[responses.ResponseStreamEventUnion]
	key           *redact.Set // the credential sent (Config.Secrets), for errors that echo it
	retry         retry.Policy
	// deployment, when set, is the Azure deployment every request names
	// as its model.
	deployment string
	// cacheKey says the server is OpenAI's own API, which takes a
	// request's CacheKey as prompt_cache_key (see ownAPI).
	cacheKey bool
}

var _ agentrt.Model = (*Model)(nil)

// New returns a Model for cfg.
func New(cfg Config) (*Model, error) {
	var opts []option.RequestOption
	switch cfg.API {
	case "", APIChat, APIResponses:
	default:
		return nil, fmt.Errorf("openai: unknown API %q (want %q or %q)", cfg.API, APIChat, APIResponses)
	}
	switch a := cfg.Azure; {
	case a != nil:
		o, err := azureOptions(a)
		if err != nil {
			return nil, err
		}
		opts = o
	case cfg.APIKey == "" && cfg.BaseURL == "":
		return nil, errors.New("openai: no API key (one may be omitted only with a base URL)")
	default:
		// The explicit key overrides the SDK's OPENAI_API_KEY default; an
		// empty one sends no Authorization header, as local servers expect.
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
		if cfg.BaseURL != "" {
			opts = append(opts, option.WithBaseURL(cfg.BaseURL))
		}
	}
	opts = append(opts, option.WithMaxRetries(0))
	// The key goes to the base URL's origin only: a redirect elsewhere
	// is refused (see package origin).
	opts = append(opts, option.WithHTTPClient(origin.Client(cfg.HTTPClient)))
	// A response past the limit fails the call rather than fill memory.
	opts = append(opts, option.WithMiddleware(limit.Middleware("openai", replylimit.MaxResponse)),
		option.WithMiddleware(limit.Stall("openai", cfg.Stall)))
	p := cfg.Retry
	if p.Attempts == 0 && p.Base == 0 && p.Max == 0 && p.RetryAfterCap == 0 {
		onAttempt := p.OnAttempt
		p = retry.Default
		p.OnAttempt = onAttempt
	}
	key := cfg.Secrets
	if key == nil {
		key = &redact.Set{}
	}
	if cfg.Azure != nil {
		key.Add(cfg.Azure.APIKey, cfg.Azure.Token)
	} else {
		key.Add(cfg.APIKey)
	}
	m := &Model{key: key, retry: p, cacheKey: cfg.Azure == nil && ownAPI(cfg.BaseURL)}
	if cfg.API == APIResponses {
		c := sdk.NewClient(opts...)
		m.respond, m.respondStream = c.Responses.New, c.Responses.NewStreaming
	} else {
		m.chat = sdk.NewClient(opts...).Chat.Completions
	}
	if cfg.Azure != nil {
		m.deployment = cfg.Azure.Deployment
	}
	return m, nil
}

// Complete sends req as one chat completion, or one response of the
// Responses API, retrying under the Model's policy, and returns the
// assistant's message.
func (m *Model) Complete(ctx context.Context, req *agentrt.Request) (*agentrt.Response, error) {
	return failure.Tallied(ctx, func(ctx context.Context) (*agentrt.Response, error) { return m.complete(ctx, req) })
}

func (m *Model) complete(ctx context.Context, req *agentrt.Request) (*agentrt.Response, error) {
	if req == nil {
		return nil, errors.New("openai: no request")
	}
	if m.respond != nil {
		return m.completeResponses(ctx, req)
	}
	params, splice, err := buildParams(req)
	if err != nil {
		return nil, err
	}
	if m.deployment != "" {
		params.Model = m.deployment
	}
	if m.cacheKey && req.Cache && req.CacheKey != "" {
		params.PromptCacheKey = sdk.String(req.CacheKey)
	}
	if req.Stream != nil {
		params.StreamOptions = sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)}
	}
	var out *sdk.ChatCompletion
	err = m.retry.Do(ctx, func(ctx context.Context, attempt int) error {
		var raw *http.Response
		// The splice also bounds a body without files (files.MaxBody).
		opts := []option.RequestOption{option.WithResponseInto(&raw), option.WithMiddleware(splice.Middleware)}
		if req.Stream != nil {
			if attempt > 1 {
				req.Stream(agentrt.Delta{Restart: true})
			}
			c, err := m.stream(ctx, params, opts, req.Stream, req.OutputTool)
			if err != nil {
				return m.classify(ctx, err, raw)
			}
			out = c
			return nil
		}
		c, err := m.chat.New(limit.WithWhole(ctx, params.MaxCompletionTokens.Value), params, opts...)
		if err != nil {
			return m.classify(ctx, err, raw)
		}
		out = c
		return nil
	})
	if err != nil {
		return nil, err
	}
	resp, err := parseResponse(out)
	if err != nil {
		return nil, err
	}
	if err := agentrt.CheckReply(params.MaxCompletionTokens.Value, &resp.Message); err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	return resp, nil
}

// stream makes one streamed chat completion and puts the completion a
// plain request would have returned together from its chunks; delta
// hears each piece of the text, and of the output tool's arguments, as
// it arrives. A stream that ends before a choice's finish_reason is cut:
// a transport failure, tried again. A stream whose text and tool calls
// pass what the request's max_completion_tokens can make is cut there
// (limit.Reply), not read to its end.
func (m *Model) stream(ctx context.Context, params sdk.ChatCompletionNewParams, opts []option.RequestOption, delta func(agentrt.Delta), outputTool string) (*sdk.ChatCompletion, error) {
	ctx, meter := limit.NewReply(ctx, params.MaxCompletionTokens.Value)
	st := m.chat.NewStreaming(ctx, params, opts...)
	defer st.Close()
	var acc sdk.ChatCompletionAccumulator
	// The usage is the last a chunk reported: OpenAI reports it once, in
	// the last chunk (null in the others), but a server that reports it
	// in every chunk reports in each what the completion has used so far,
	// which the accumulator added up, chunk after chunk.
	var usage *sdk.CompletionUsage
	answer := map[int64]bool{}   // the tool calls, by index, that call the output tool
	calls := map[[2]int64]bool{} // the tool calls begun, by choice and index
	for st.Next() {
		chunk := st.Current()
		if chunk.JSON.Usage.Valid() {
			u := chunk.Usage
			usage = &u
		}
		for _, ch := range chunk.Choices {
			// Every choice is put together, not only the first.
			d := &ch.Delta
			n := len(d.Content) + len(d.Refusal) + len(d.FunctionCall.Name) + len(d.FunctionCall.Arguments) + len(d.Audio.Data) + len(d.Audio.Transcript)
			for _, tc := range d.ToolCalls {
				c := len(tc.ID) + len(tc.Function.Name) + len(tc.Function.Arguments)
				if k := [2]int64{ch.Index, tc.Index}; !calls[k] {
					// A call's first piece counts it (replylimit.CallBytes).
					calls[k], c = true, max(c, replylimit.CallBytes)
				}
				n += c
			}
			if err := meter.Add(n); err != nil {
				return nil, err
			}
		}
		if !acc.AddChunk(chunk) {
			return nil, fmt.Errorf("the stream's chunks do not add up (chunk %q)", chunk.ID)
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue
			}
			if ch.Delta.Content != "" {
				delta(agentrt.Delta{Text: ch.Delta.Content})
			}
			for _, tc := range ch.Delta.ToolCalls {
				if tc.Function.Name != "" {
					answer[tc.Index] = outputTool != "" && tc.Function.Name == outputTool
				}
				if answer[tc.Index] && tc.Function.Arguments != "" {
					delta(agentrt.Delta{Answer: tc.Function.Arguments})
				}
			}
		}
	}
	if err := st.Err(); err != nil {
		if u, ok := errors.AsType[*limit.Unstreamed](err); ok {
			return wholeCompletion(u.Body, delta, outputTool)
		}
		return nil, err
	}
	if len(acc.Choices) == 0 || acc.Choices[0].FinishReason == "" {
		return nil, fmt.Errorf("the stream ended before the completion did: %w", io.ErrUnexpectedEOF)
	}
	if usage != nil {
		acc.Usage = *usage
	}
	return &acc.ChatCompletion, nil
}

// wholeCompletion is the completion a server answered a streamed request
// with whole (limit.Unstreamed, a server that ignores "stream"): what the
// stream would have put together, its text and the output tool's
// arguments heard as one piece each. What it lacks (no choices, an error
// object) parseResponse says.
func wholeCompletion(body []byte, delta func(agentrt.Delta), outputTool string) (*sdk.ChatCompletion, error) {
	var c sdk.ChatCompletion
	if err := json.Unmarshal(body, &c); err != nil {
		return nil, fmt.Errorf("the server answered the streamed request whole, with no chat completion: %w", err)
	}
	if len(c.Choices) > 0 {
		msg := c.Choices[0].Message
		if msg.Content != "" {
			delta(agentrt.Delta{Text: msg.Content})
		}
		for _, tc := range msg.ToolCalls {
			if outputTool != "" && tc.Function.Name == outputTool && tc.Function.Arguments != "" {
				delta(agentrt.Delta{Answer: tc.Function.Arguments})
			}
		}
	}
	return &c, nil
}

// ownAPI reports whether a base URL is OpenAI's own API (or none, the
// SDK's default, which is): the only server sent prompt_cache_key. OpenAI
// routes requests that share a key to the machines that hold their cached
// prefix; an OpenAI-compatible server may refuse a parameter it does not
// know (as some gateways and strict servers do) and gains nothing by it,
// and Azure OpenAI takes it only from some API versions on.
func ownAPI(baseURL string) bool {
	if baseURL == "" {
		return true
	}
	u, err := url.Parse(baseURL)
	return err == nil && u.Scheme == "https" && u.Host == "api.openai.com"
}

// buildParams makes the request's parameters; the splice puts its files'
// bytes in the body as it is sent.
func buildParams(req *agentrt.Request) (sdk.ChatCompletionNewParams, *files.Splice, error) {
	p := sdk.ChatCompletionNewParams{Model: req.Model}
	splice := files.NewSplice(req.Files)
	// Files tools returned: a tool message holds only text, so they go in
	// a user message after the turn's tool messages.
	var returned []agentrt.Part
	for i, msg := range req.Messages {
		if msg.Role == agentrt.ToolRole {
			for _, part := range msg.Parts {
				if part.File != nil && Limits.Check("openai", part.File) == nil {
					returned = append(returned, agentrt.Part{Text: fmt.Sprintf("The tool %s returned this file (%s):", msg.Name, part.File.MediaType)}, part)
				}
			}
			msg.Parts = nil
		}
		mp, err := message(msg, splice)
		if err != nil {
			return p, nil, fmt.Errorf("openai: message %d: %w", i, err)
		}
		p.Messages = append(p.Messages, mp)
		if next := i + 1; len(returned) > 0 && (next == len(req.Messages) || req.Messages[next].Role != agentrt.ToolRole) {
			parts, err := userParts(agentrt.Message{Role: agentrt.User, Parts: returned}, splice)
			if err != nil {
				return p, nil, fmt.Errorf("openai: message %d: %w", i, err)
			}
			p.Messages = append(p.Messages, sdk.UserMessage(parts))
			returned = nil
		}
	}
	for _, t := range req.Tools {
		fn := shared.FunctionDefinitionParam{Name: t.Name}
		if t.Description != "" {
			fn.Description = sdk.String(t.Description)
		}
		if len(t.Schema) > 0 {
			if err := json.Unmarshal(t.Schema, &fn.Parameters); err != nil {
				return p, nil, fmt.Errorf("openai: tool %q: schema: %w", t.Name, err)
			}
		}
		if t.Strict {
			fn.Strict = sdk.Bool(true)
		}
		p.Tools = append(p.Tools, sdk.ChatCompletionFunctionTool(fn))
	}
	if a := req.Answer; a != nil && a.Mode == plan.ModeNative {
		js := shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: a.Name}
		if a.Description != "" {
			js.Description = sdk.String(a.Description)
		}
		if a.Strict {
			js.Strict = sdk.Bool(true)
		}
		if !json.Valid(a.Schema) {
			return p, nil, fmt.Errorf("openai: answer schema is not JSON")
		}
		js.Schema = json.RawMessage(a.Schema)
		p.ResponseFormat.OfJSONSchema = &shared.ResponseFormatJSONSchemaParam{JSONSchema: js}
	}
	if len(req.Tools) > 0 {
		switch req.ToolChoice.Mode {
		case "":
		case agentrt.ChooseAuto, agentrt.ChooseRequired:
			p.ToolChoice.OfAuto = sdk.String(req.ToolChoice.Mode)
		case agentrt.ChooseTool:
			p.ToolChoice = sdk.ToolChoiceOptionFunctionToolChoice(sdk.ChatCompletionNamedToolChoiceFunctionParam{Name: req.ToolChoice.Name})
		default:
			return p, nil, fmt.Errorf("openai: unknown tool choice mode %q", req.ToolChoice.Mode)
		}
	}
	if req.Temperature != nil {
		p.Temperature = sdk.Float(*req.Temperature)
	}
	if req.MaxOutputTokens > 0 {
		p.MaxCompletionTokens = sdk.Int(int64(req.MaxOutputTokens))
	}
	switch req.Reasoning {
	case "", "none":
	case "low", "medium", "high":
		p.ReasoningEffort = shared.ReasoningEffort(req.Reasoning)
	default:
		return p, nil, fmt.Errorf("openai: unknown reasoning effort %q (want low, medium, high or none)", req.Reasoning)
	}
	return p, splice, nil
}

// Limits are the files Chat Completions and the Responses API take
// (plan.FileLimits).
var Limits = files.Limits(plan.FileLimits["openai"])

// userParts are a user message's parts as Chat Completions content parts.
func userParts(msg agentrt.Message, splice *files.Splice) ([]sdk.ChatCompletionContentPartUnionParam, error) {
	var out []sdk.ChatCompletionContentPartUnionParam
	for _, p := range msg.Parts {
		f := p.File
		if f == nil {
			out = append(out, sdk.TextContentPart(p.Text))
			continue
		}
		if err := Limits.Check("openai", f); err != nil {
			return nil, err
		}
		switch {
		case f.MediaType == "text/plain":
			text, err := splice.Text(f)
			if err != nil {
				return nil, err
			}
			out = append(out, sdk.TextContentPart(text))
		case f.MediaType == "application/pdf":
			url, err := splice.DataURL(f)
			if err != nil {
				return nil, err
			}
			name := f.FileName
			if name == "" {
				name = f.Name + ".pdf"
			}
			out = append(out, sdk.FileContentPart(sdk.ChatCompletionContentPartFileFileParam{FileData: sdk.String(url), Filename: sdk.String(name)}))
		default:
			url, err := splice.DataURL(f)
			if err != nil {
				return nil, err
			}
			out = append(out, sdk.ImageContentPart(sdk.ChatCompletionContentPartImageImageURLParam{URL: url}))
		}
	}
	return out, nil
}

func message(msg agentrt.Message, splice *files.Splice) (sdk.ChatCompletionMessageParamUnion, error) {
	switch msg.Role {
	case agentrt.System:
		return sdk.SystemMessage(msg.Content), nil
	case agentrt.User:
		if len(msg.Parts) > 0 {
			parts, err := userParts(msg, splice)
			if err != nil {
				return sdk.ChatCompletionMessageParamUnion{}, err
			}
			return sdk.UserMessage(parts), nil
		}
		return sdk.UserMessage(msg.Content), nil
	case agentrt.ToolRole:
		return sdk.ToolMessage(msg.Content, msg.ToolCallID), nil
	case agentrt.Assistant:
		a := sdk.ChatCompletionAssistantMessageParam{}
		// Content may be absent only when there are tool calls.
		if msg.Content != "" || len(msg.ToolCalls) == 0 {
			a.Content.OfString = sdk.String(msg.Content)
		}
		for _, tc := range msg.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
					ID: tc.ID,
					Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{
						Name:      tc.Name,
						Arguments: string(tc.Arguments),
					},
				},
			})
		}
		return sdk.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	}
	return sdk.ChatCompletionMessageParamUnion{}, fmt.Errorf("unknown role %q", msg.Role)
}

func parseResponse(c *sdk.ChatCompletion) (*agentrt.Response, error) {
	if c == nil {
		// A body of null decodes to no completion, and no error.
		return nil, errors.New("openai: the response is null, not a chat completion")
	}
	if len(c.Choices) == 0 {
		return nil, errors.New("openai: the response has no choices")
	}
	ch := c.Choices[0]
	msg := agentrt.Message{Role: agentrt.Assistant, Content: ch.Message.Content}
	if msg.Content == "" && ch.Message.Refusal != "" {
		msg.Content = ch.Message.Refusal
	}
	for _, tc := range ch.Message.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			continue
		}
		// Invalid JSON is passed through: the runtime validates the
		// arguments and asks the model again.
		args := json.RawMessage(tc.Function.Arguments)
		msg.ToolCalls = append(msg.ToolCalls, agentrt.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: args})
	}
	usage := agentrt.Usage{
		Input: int(c.Usage.PromptTokens),
		// completion_tokens includes the reasoning tokens: a server
		// reporting more reasoning than that reports output no less.
		Output: int(max(c.Usage.CompletionTokens, c.Usage.CompletionTokensDetails.ReasoningTokens)),
		Cached: int(c.Usage.PromptTokensDetails.CachedTokens),
		// Models that bill writing to the cache (above input) say
		// how much of the prompt was written.
		CacheWrite: int(c.Usage.PromptTokensDetails.CacheWriteTokens),
	}
	// The reply is whole and billed either way: a failure carries what
	// it spent (agentrt.Spent), for the run to charge.
	switch {
	case ch.FinishReason == "length":
		// Whatever the turn holds: a tool call's arguments cut short
		// may still be JSON that fits the tool's schema (or the
		// output's), so no call of it is made.
		return nil, agentrt.Spent(fmt.Errorf("openai: the output was cut at the token limit (finish_reason %q)", ch.FinishReason), usage)
	case ch.FinishReason == "content_filter":
		// What came before the filter stopped it is no answer.
		return nil, agentrt.Spent(fmt.Errorf("openai: %w (finish_reason %q)", ErrFiltered, ch.FinishReason), usage)
	}
	return &agentrt.Response{Model: c.Model, Message: msg, Usage: usage}, nil
}

// classify turns an attempt's error into one the retry policy can judge.
// raw is the HTTP response, if one arrived.
func (m *Model) classify(ctx context.Context, err error, raw *http.Response) error {
	// The call's own end (its deadline, a cancellation) is final; a
	// deadline of the connection's (a dial's timeout, which errors.Is
	// takes for context.DeadlineExceeded) is a failure like any other.
	if ctx.Err() != nil {
		return fmt.Errorf("openai: %w", err)
	}
	var apiErr *sdk.Error
	status := 0
	var header http.Header
	if errors.As(err, &apiErr) {
		status = apiErr.StatusCode
		if apiErr.Response != nil {
			header = apiErr.Response.Header
		}
	} else if raw != nil && raw.StatusCode >= 400 {
		// An error status whose body the SDK could not read as an error.
		status, header = raw.StatusCode, raw.Header
	}
	if status != 0 {
		se := &StatusError{StatusCode: status, err: err}
		if apiErr != nil {
			se.Code, se.Type = m.redact(apiErr.Code), m.redact(apiErr.Type)
			se.Message = m.redact(apiErr.Message)
		}
		retryable := retry.RetryableStatus(status) && se.Code != "insufficient_quota"
		return &retry.Error{Err: se, Retryable: retryable, RetryAfter: retry.ParseRetryAfter(header, time.Now()), Status: status}
	}
	if b, ok := failure.Bounded("openai", err); ok {
		return b
	}
	retryable := failure.Transient(err)
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		retryable = streamRetryable(se.Event.Data)
	}
	return &retry.Error{Err: failure.Wrap("openai", m.redact(err.Error()), err), Retryable: retryable}
}

// streamRetryable says whether an error a stream sent after it began, as
// its event's data holds it, may be served by another attempt: the
// server's own failure mid-reply (OpenAI's server_error), or a code that
// is a status worth another attempt (a gateway's, for its upstream's).
func streamRetryable(data []byte) bool {
	var e struct {
		Error struct {
			Type string `json:"type"`
			Code any    `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &e) != nil {
		return false
	}
	switch c := e.Error.Code.(type) {
	case float64:
		return c == math.Trunc(c) && c >= 100 && c < 600 && retry.RetryableStatus(int(c))
	case string:
		return c == "server_error"
	}
	return e.Error.Type == "server_error"
}

// redact is s, the server's text, as an error may quote it: the key
// replaced, and cut (failure.Quote).
func (m *Model) redact(s string) string { return failure.Quote(m.key, s) }

// StatusError is an error status from the server. Its message is the
// provider's own, with the API key redacted should it echo it.
type StatusError struct {
	StatusCode int
	Code       string // the provider's error code, e.g. "insufficient_quota"
	Type       string
	Message    string
	err        error
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("openai: %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.StatusCode == 529 {
		s = "openai: 529 Overloaded"
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Unwrap returns the SDK's error.
func (e *StatusError) Unwrap() error { return e.err }

// FailureClass classifies the error for a model's fallbacks: a quota or
// balance spent ("insufficient_quota"), a request past the model's
// context ("context_length_exceeded"), else by status (retry.StatusClass).
func (e *StatusError) FailureClass() string {
	switch {
	case e.Code == "insufficient_quota":
		return "quota"
	case e.Code == "context_length_exceeded", e.StatusCode == http.StatusBadRequest && strings.Contains(e.Message, "maximum context length"):
		return "too_long"
	case e.Code == "model_not_found":
		return "not_found"
	}
	return retry.StatusClass(e.StatusCode)
}
