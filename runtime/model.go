package runtime

import (
	"context"
	"encoding/json"
	"io"
	"math"
)

// Role says who wrote a message.
type Role string

// The roles of a conversation.
const (
	System    Role = "system"
	User      Role = "user"
	Assistant Role = "assistant"
	ToolRole  Role = "tool" // a tool's result
)

// Message is one message of a conversation.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content,omitempty"`
	// ToolCalls are the calls an assistant message asks for.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID and Name say which call a tool result answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	Name       string `json:"name,omitempty"`
	// IsError marks a tool result that reports a failure.
	IsError bool `json:"is_error,omitempty"`
	// Parts, when there are any, carry files: in the first user message
	// of an agent that takes files, they are its content in order, text
	// and files, and Content is empty; in a tool's result, they are the
	// files it returned, after its text in Content.
	Parts []Part `json:"parts,omitempty"`
	// State is what a provider returned with an assistant message and
	// asks to be sent back with it in later turns (the OpenAI Responses
	// API's reasoning items, Gemini's thought signatures): opaque to
	// agentc, journaled with the message, and read only by the provider
	// that wrote it (ProviderState.Provider).
	State *ProviderState `json:"state,omitempty"`
}

// ProviderState is a provider's opaque state of an assistant message.
type ProviderState struct {
	// Provider names the provider, and its API where it has several
	// ("openai-responses", "google").
	Provider string          `json:"provider"`
	Data     json.RawMessage `json:"data"`
}

// Part is one part of a message's content: a text, or a file.
type Part struct {
	Text string `json:"text,omitempty"`
	File *File  `json:"file,omitempty"`
}

// File is a file a message carries, by reference: its bytes are in the
// run's file store under Digest, which identifies the request (a file
// changed is a request changed), while the bytes go only to the provider.
type File struct {
	// Name is the input property it was given as.
	Name string `json:"name"`
	// FileName is its base name as it was handed in, when it had one.
	FileName  string `json:"file_name,omitempty"`
	MediaType string `json:"media_type"`
	Size      int64  `json:"size"`
	Digest    string `json:"digest"`
}

// FileReader reads the files a request's messages carry, by digest; a
// reader fails at its end when the bytes are not the digest's.
type FileReader interface {
	Open(digest string) (io.ReadCloser, int64, error)
}

// ToolCall is a model's request to call a tool.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ToolSpec describes a tool to a model.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"` // JSON Schema of the arguments
	// Strict asks the provider to enforce Schema while the model
	// generates the arguments (OpenAI strict function calling, Anthropic
	// strict tool use); the schema is then in the provider's dialect.
	Strict bool `json:"strict,omitempty"`
	// Contract, for a tool sent with its schema lowered to the provider's
	// dialect (plan.Plan.ToolInputs), is the schema as written, which the
	// arguments are validated against. Providers send Schema; a model
	// that enforces everything (the test model) answers by Contract.
	Contract json.RawMessage `json:"contract,omitempty"`
}

// ToolChoice says which tools a turn may or must call.
type ToolChoice struct {
	Mode string `json:"mode"` // ChooseAuto, ChooseRequired or ChooseTool
	Name string `json:"name,omitempty"`
}

// Modes of a ToolChoice.
const (
	ChooseAuto     = "auto"     // the model may answer in prose
	ChooseRequired = "required" // it must call some tool
	ChooseTool     = "tool"     // it must call the tool Name
)

// Request is one call to a model.
type Request struct {
	Model           string     `json:"model"`
	Reasoning       string     `json:"reasoning,omitempty"`
	Temperature     *float64   `json:"temperature,omitempty"`
	MaxOutputTokens int        `json:"max_output_tokens,omitempty"`
	Messages        []Message  `json:"messages"`
	Tools           []ToolSpec `json:"tools,omitempty"`
	ToolChoice      ToolChoice `json:"tool_choice"`
	// OutputTool names the tool among Tools that carries the answer; empty
	// for an agent without an output contract.
	OutputTool string `json:"output_tool,omitempty"`
	// OutputWrap, when set, names the member of the output tool's
	// arguments that holds the answer (plan.Lowering.Wrap): the answer is
	// not an object, and a tool's arguments are.
	OutputWrap string `json:"output_wrap,omitempty"`
	// OutputNullable are the pointers, into the lowered schema sent (the
	// output tool's or the answer format's), of the properties whose null
	// stands for their absence (plan.Lowering.Nullable). The journal keeps
	// them so that a reader of a call takes its answer as the run did.
	OutputNullable []string `json:"output_nullable,omitempty"`
	// Answer, when set, says the turn may answer in its text, as JSON
	// that satisfies a schema: through the provider's structured output
	// (native), or as asked in the instructions (prompted).
	Answer *AnswerFormat `json:"answer,omitempty"`
	// Contract is the full contract schema every answer is validated
	// against, for an agent with an output contract. Providers send only
	// its lowered form (in Answer or the output tool); it identifies the
	// request, and a model that enforces everything answers by it.
	Contract json.RawMessage `json:"contract,omitempty"`
	// Files reads the files the messages carry (Message.Parts); nil when
	// they carry none.
	Files FileReader `json:"-"`
	// Cache asks the provider to keep the request's stable start in its
	// prompt cache where caching must be asked for (Anthropic's
	// cache_control breakpoints); CacheKey, when Cache is set, names the
	// requests that share that start (OpenAI's prompt_cache_key), in at
	// most 64 characters. Neither changes what the model answers, so
	// neither identifies the request: a cached run replays as an uncached
	// one.
	Cache    bool   `json:"cache,omitempty"`
	CacheKey string `json:"cache_key,omitempty"`
	// Stream, when set, asks for the reply as it is generated: a
	// provider that streams calls it with each piece, from the goroutine
	// that called Complete, and with Delta.Restart before an attempt
	// that follows a failed one. What Complete returns is the whole
	// reply, as without it. A provider that does not stream ignores it.
	Stream func(Delta) `json:"-"`
}

// Delta is a piece of a reply as it streams in.
type Delta struct {
	// Text is more of the reply's text.
	Text string
	// Answer is more of the arguments of the output tool (Request's
	// OutputTool): the answer as it forms, not yet validated.
	Answer string
	// Restart says the attempt failed: what came of it is void, and the
	// reply starts again.
	Restart bool
}

// AnswerFormat is an answer written as the text of a message.
type AnswerFormat struct {
	// Mode is plan.ModeNative (the provider's JSON response format) or
	// plan.ModePrompted (the schema is in the instructions; providers send
	// nothing for it).
	Mode        string          `json:"mode"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	// Strict asks the provider to enforce Schema while generating.
	Strict bool `json:"strict,omitempty"`
}

// Usage counts tokens. Input includes cached input tokens: Cached says how
// many of them were read from the provider's prompt cache, and CacheWrite
// how many were written to it (Anthropic's cache creation, which is billed
// at a rate of its own); the two are apart, and together at most Input.
type Usage struct {
	Input      int `json:"input"`
	Output     int `json:"output"`
	Cached     int `json:"cached,omitempty"`
	CacheWrite int `json:"cache_write,omitempty"`
}

// Total is the number of tokens a budget is charged.
func (u Usage) Total() int { return u.Input + u.Output }

// Add returns the sum of two usages. A count that would pass the
// largest int (or the smallest) stays there rather than wrap round: a
// usage may come from a provider or a journal, which may say anything.
func (u Usage) Add(v Usage) Usage {
	return Usage{Input: addCount(u.Input, v.Input), Output: addCount(u.Output, v.Output),
		Cached: addCount(u.Cached, v.Cached), CacheWrite: addCount(u.CacheWrite, v.CacheWrite)}
}

// addCount is a+b, saturating.
func addCount(a, b int) int {
	s := a + b
	switch {
	case b > 0 && s < a:
		return math.MaxInt
	case b < 0 && s > a:
		return math.MinInt
	}
	return s
}

// Response is a model's answer to a Request: one assistant message.
type Response struct {
	Message Message `json:"message"`
	Usage   Usage   `json:"usage"`
	// Model is the model that answered, as the provider names it; empty
	// when it does not say, and in a response served from a journal.
	Model string `json:"model,omitempty"`
	// MaxOutputTokens is the output limit the provider sent for a
	// request that set none (MaxOutputTokens 0): Bedrock and Anthropic
	// send a default of their own. The turn's usage is held to it as to
	// the request's. It is journaled, so that a replay counts alike.
	MaxOutputTokens int `json:"max_output_tokens,omitempty"`
	// Retried is what the call's attempts before this reply that the
	// provider answered and that then failed read: they report no usage,
	// yet a provider bills them, and the run charges them as estimated.
	// It is journaled, so that a replay charges alike.
	Retried Retried `json:"retried,omitzero"`
}

// Model is a language model. Providers, the offline test model and
// scripted models in tests implement it. Complete must honour ctx.
type Model interface {
	Complete(ctx context.Context, req *Request) (*Response, error)
}

// ToolResult is what a tool call returns to the model.
type ToolResult struct {
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
	// Usage is the tokens the tool itself spent on models (an agent
	// called as a tool); the run's token budget is charged with them.
	// Cost is what they cost.
	Usage Usage `json:"usage,omitzero"`
	Cost  Cost  `json:"cost,omitzero"`
	// Files are files the result carries (an MCP server's images), put in
	// the run's file store (FileStore); the model is sent each where its
	// provider takes it in a tool's result, and reads Content either way.
	Files []File `json:"files,omitempty"`
}

// Tool is a capability an agent may use. Call receives arguments that
// have been validated against Spec().Schema; an error it returns is
// reported to the model as a failed call, never ends the run.
type Tool interface {
	Spec() ToolSpec
	Call(ctx context.Context, args json.RawMessage) (ToolResult, error)
}
