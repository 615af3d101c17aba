package fault

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
)

// Wire formats the server speaks.
const (
	WireOpenAI    = "openai"    // Chat Completions, POST /chat/completions
	WireAnthropic = "anthropic" // Messages, POST /v1/messages
	WireGoogle    = "google"    // Gemini API, POST /v1beta/models/MODEL:generateContent
	WireBedrock   = "bedrock"   // Bedrock's Converse, POST /model/MODEL/converse
)

// conversePath is Bedrock's Converse path, the model ID escaped.
var conversePath = regexp.MustCompile(`^/model/[^/]+/converse$`)

// geminiPath is the Gemini API's generateContent path.
var geminiPath = regexp.MustCompile(`^/v1beta/models/([^/:]+):generateContent$`)

// proseAnswer is the prose fault's answer.
const proseAnswer = "I looked into it and everything is in order; I would rather explain in words than fill in a form."

// Server is a loopback provider that answers a run's model calls with a
// script's responses, in order, in one provider's wire format, and
// injects a model fault once. It ignores what the requests say: the run
// without the fault has already been checked against the journal.
type Server struct {
	// URL is the base URL a provider client is given.
	URL string

	wire    string
	script  *Script
	kind    Kind
	invalid json.RawMessage // the invalid_answer fault's answer
	own     string          // the agent's own model, which an outage refuses
	answer  int             // the script's response that gave the answer (answerAt)
	tool    string          // the output tool, "" where the answer is the text

	srv  *http.Server
	ln   net.Listener
	done chan struct{}

	mu       sync.Mutex
	next     int  // the next script response
	injected bool // the fault was injected
}

// NewServer starts a server on the loopback interface that plays s back in
// wire's format with the fault k (a model fault; any other injects
// nothing). p is the agent's plan, from which an answer its contract
// rejects is made.
func NewServer(wire string, s *Script, k Kind, p *plan.Plan) (*Server, error) {
	if wire != WireOpenAI && wire != WireAnthropic && wire != WireGoogle && wire != WireBedrock {
		return nil, fmt.Errorf("fault: unknown wire format %q", wire)
	}
	sv := &Server{wire: wire, script: s, kind: k, done: make(chan struct{}), own: p.Agent.Model.Name, answer: answerAt(p, s), tool: outputTool(p)}
	if k.Name == InvalidAnswer {
		v, err := Invalid(p)
		if err != nil {
			return nil, err
		}
		sv.invalid = v
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fault: %w", err)
	}
	sv.ln = ln
	sv.srv = &http.Server{Handler: sv, ReadHeaderTimeout: 10 * time.Second}
	sv.URL = "http://" + ln.Addr().String()
	if wire == WireOpenAI {
		sv.URL += "/v1"
	}
	go sv.srv.Serve(ln)
	return sv, nil
}

// Close stops the server, and ends the calls it holds.
func (sv *Server) Close() error {
	close(sv.done)
	return sv.srv.Close()
}

// Injected reports whether the server has injected its fault (a model
// fault) into a call.
func (sv *Server) Injected() bool {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	return sv.injected
}

// ownModel reports whether a request calls the agent's own model: the
// model its body names, or (Gemini, Bedrock) its path.
func (sv *Server) ownModel(r *http.Request, model string) bool {
	switch sv.wire {
	case WireGoogle:
		if m := geminiPath.FindStringSubmatch(r.URL.Path); m != nil {
			model = m[1]
		}
	case WireBedrock:
		model = strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/model/"), "/converse")
	}
	return model == sv.own
}

// take decides what a call gets: the fault to inject ("" for none), and
// otherwise the script's next response (nil once they are all served).
func (sv *Server) take() (string, *agentrt.Response) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if !sv.injected {
		switch {
		case sv.kind.where == onFirstCall && sv.kind.Name != "",
			sv.kind.where == onAnswer && sv.next == sv.answer:
			// The response the call would have had, which the fault cuts
			// or replaces; it is served again to the call after.
			sv.injected = true
			return sv.kind.Name, &sv.script.Models[sv.next]
		}
	}
	if sv.next >= len(sv.script.Models) {
		return "", nil
	}
	r := &sv.script.Models[sv.next]
	sv.next++
	return "", r
}

func (sv *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	want := "/v1/chat/completions"
	switch sv.wire {
	case WireAnthropic:
		want = "/v1/messages"
	case WireGoogle:
		want = "/v1beta/models/MODEL:generateContent"
	}
	if m := geminiPath.FindStringSubmatch(r.URL.Path); sv.wire == WireGoogle && m != nil && r.Method == http.MethodPost {
		want = r.URL.Path
	}
	if sv.wire == WireBedrock {
		want = "/model/MODEL/converse"
		if conversePath.MatchString(r.URL.EscapedPath()) {
			want = r.URL.Path
		}
	}
	if r.Method != http.MethodPost || r.URL.Path != want {
		sv.apiError(w, http.StatusNotFound, "not_found", fmt.Sprintf("agentc's fault layer serves POST %s, not %s %s", want, r.Method, r.URL.Path))
		return
	}
	var req struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil {
		sv.apiError(w, http.StatusBadRequest, "invalid_request_error", "the request is not JSON: "+err.Error())
		return
	}
	if sv.kind.Name == Outage && sv.ownModel(r, req.Model) {
		// Down for five minutes: past what a call waits, so its attempts
		// end at once, and the fallback serves.
		sv.mu.Lock()
		sv.injected = true
		sv.mu.Unlock()
		w.Header().Set("Retry-After", "300")
		sv.apiError(w, http.StatusServiceUnavailable, "server_error", "The service is temporarily unavailable (agentc fault layer: an outage)")
		return
	}
	fault, resp := sv.take()
	switch fault {
	case RateLimit:
		w.Header().Set("Retry-After", "1")
		sv.apiError(w, http.StatusTooManyRequests, "rate_limit", "Rate limit reached (agentc fault layer)")
		return
	case ServerError:
		sv.apiError(w, http.StatusInternalServerError, "server_error", "The server had an error while processing your request (agentc fault layer)")
		return
	case Timeout:
		select {
		case <-r.Context().Done():
		case <-sv.done:
		}
		return
	case InvalidAnswer:
		resp = withAnswer(resp, sv.tool, sv.invalid)
	case Prose:
		resp = &agentrt.Response{Message: agentrt.Message{Role: agentrt.Assistant, Content: proseAnswer}, Usage: resp.Usage}
	}
	if resp == nil {
		sv.apiError(w, http.StatusBadRequest, "invalid_request_error",
			fmt.Sprintf("agentc's fault layer: the run made more model calls than the journal recorded (%d)", len(sv.script.Models)))
		return
	}
	if req.Stream {
		sv.stream(w, req.Model, resp, fault)
		return
	}
	var out []byte
	switch sv.wire {
	case WireOpenAI:
		out, err = openAIResponse(req.Model, resp)
	case WireGoogle:
		out, err = googleResponse(resp)
	case WireBedrock:
		out, err = converseResponse(resp)
	default:
		out, err = anthropicResponse(req.Model, resp)
	}
	if err != nil {
		sv.apiError(w, http.StatusInternalServerError, "server_error", err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch fault {
	case Truncated:
		out = out[:len(out)/2]
	case Dropped:
		// The length promised is the whole body's; half of it arrives,
		// then the connection goes.
		w.Header().Set("Content-Length", strconv.Itoa(len(out)))
		w.Write(out[:len(out)/2])
		http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler)
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	w.Write(out)
}

// apiError answers with an error in the provider's shape.
func (sv *Server) apiError(w http.ResponseWriter, status int, typ, msg string) {
	var body any
	switch sv.wire {
	case WireOpenAI:
		body = map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": typ}}
	case WireBedrock:
		code := map[int]string{http.StatusTooManyRequests: "ThrottlingException", http.StatusInternalServerError: "InternalServerException", http.StatusNotFound: "ResourceNotFoundException"}[status]
		if code == "" {
			code = "ValidationException"
		}
		w.Header().Set("X-Amzn-Errortype", code)
		body = map[string]any{"message": msg}
	case WireGoogle:
		st := map[int]string{http.StatusTooManyRequests: "RESOURCE_EXHAUSTED", http.StatusInternalServerError: "INTERNAL", http.StatusNotFound: "NOT_FOUND"}[status]
		if st == "" {
			st = "INVALID_ARGUMENT"
		}
		body = map[string]any{"error": map[string]any{"code": status, "message": msg, "status": st}}
	default:
		switch status {
		case http.StatusTooManyRequests:
			typ = "rate_limit_error"
		case http.StatusInternalServerError:
			typ = "api_error"
		case http.StatusNotFound:
			typ = "not_found_error"
		}
		body = map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
	}
	out, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(out)
}

// withAnswer returns r with its answer replaced by v: the arguments of
// its call of the output tool, whatever calls come before it, or, with no
// output tool, its text.
func withAnswer(r *agentrt.Response, tool string, v json.RawMessage) *agentrt.Response {
	c := *r
	c.Message.ToolCalls = slicesClone(r.Message.ToolCalls)
	if tool == "" {
		c.Message.Content = string(v)
		return &c
	}
	for i := range c.Message.ToolCalls {
		if c.Message.ToolCalls[i].Name == tool {
			c.Message.ToolCalls[i].Arguments = v
			break
		}
	}
	return &c
}

func slicesClone[T any](s []T) []T { return append([]T(nil), s...) }

// Invalid returns an answer the agent's contract rejects: the first of a
// few values of other types than an answer's that its schema does not
// accept.
func Invalid(p *plan.Plan) (json.RawMessage, error) {
	if p.Agent.Output == nil {
		return nil, errors.New("fault: the agent has no output contract")
	}
	s, err := plan.CompileSchemaJSON(p.Agent.Output.Schema)
	if err != nil {
		return nil, fmt.Errorf("fault: the output schema: %w", err)
	}
	for _, c := range []string{`{}`, `[]`, `"an answer"`, `0`, `null`, `{"agentc_fault": true}`} {
		v, _ := plan.UnmarshalJSONValue([]byte(c))
		if plan.Validate(s, v) != nil {
			return json.RawMessage(c), nil
		}
	}
	return nil, errors.New("fault: the output schema accepts every value tried")
}

// openAIResponse is a chat.completion object.
func openAIResponse(model string, r *agentrt.Response) ([]byte, error) {
	type function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type call struct {
		ID       string   `json:"id"`
		Type     string   `json:"type"`
		Function function `json:"function"`
	}
	msg := struct {
		Role      string  `json:"role"`
		Content   *string `json:"content"`
		Refusal   *string `json:"refusal"`
		ToolCalls []call  `json:"tool_calls,omitempty"`
	}{Role: "assistant"}
	if r.Message.Content != "" {
		msg.Content = &r.Message.Content
	}
	finish := "stop"
	for _, c := range r.Message.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, call{ID: c.ID, Type: "function", Function: function{Name: c.Name, Arguments: string(c.Arguments)}})
		finish = "tool_calls"
	}
	u := r.Usage
	return json.Marshal(map[string]any{
		"id":      "chatcmpl-agentc-fault",
		"object":  "chat.completion",
		"created": time.Now().Unix(),
		"model":   model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finish}},
		"usage": map[string]any{
			"prompt_tokens":         u.Input,
			"completion_tokens":     u.Output,
			"total_tokens":          u.Input + u.Output,
			"prompt_tokens_details": map[string]any{"cached_tokens": u.Cached},
		},
	})
}

// converseResponse is a Converse response: the message's text and tool
// uses (their IDs kept) as its content blocks.
func converseResponse(r *agentrt.Response) ([]byte, error) {
	var content []map[string]any
	if r.Message.Content != "" {
		content = append(content, map[string]any{"text": r.Message.Content})
	}
	stop := "end_turn"
	for _, c := range r.Message.ToolCalls {
		args := c.Arguments
		if !json.Valid(args) {
			args = json.RawMessage("{}")
		}
		content = append(content, map[string]any{"toolUse": map[string]any{"toolUseId": c.ID, "name": c.Name, "input": args}})
		stop = "tool_use"
	}
	u := r.Usage
	return json.Marshal(map[string]any{
		"output":     map[string]any{"message": map[string]any{"role": "assistant", "content": content}},
		"stopReason": stop,
		"usage":      map[string]any{"inputTokens": u.Input - u.Cached - u.CacheWrite, "outputTokens": u.Output, "cacheReadInputTokens": u.Cached, "cacheWriteInputTokens": u.CacheWrite, "totalTokens": u.Input + u.Output},
		"metrics":    map[string]any{"latencyMs": 1},
	})
}

// googleResponse is a generateContent response: the message's text and
// function calls (their IDs kept, as the Gemini API may give them) as the
// parts of its one candidate.
func googleResponse(r *agentrt.Response) ([]byte, error) {
	var parts []map[string]any
	if r.Message.Content != "" {
		parts = append(parts, map[string]any{"text": r.Message.Content})
	}
	for _, c := range r.Message.ToolCalls {
		args := c.Arguments
		if !json.Valid(args) {
			args = json.RawMessage("{}")
		}
		parts = append(parts, map[string]any{"functionCall": map[string]any{"id": c.ID, "name": c.Name, "args": args}})
	}
	u := r.Usage
	return json.Marshal(map[string]any{
		"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{
			"promptTokenCount": u.Input, "candidatesTokenCount": u.Output,
			"cachedContentTokenCount": u.Cached, "totalTokenCount": u.Input + u.Output,
		},
		"modelVersion": "agentc-fault", "responseId": "agentc-fault",
	})
}

// anthropicContent is a message's content blocks, and its stop reason.
func anthropicContent(r *agentrt.Response) ([]map[string]any, string) {
	var blocks []map[string]any
	if r.Message.Content != "" {
		blocks = append(blocks, map[string]any{"type": "text", "text": r.Message.Content})
	}
	stop := "end_turn"
	for _, c := range r.Message.ToolCalls {
		args := c.Arguments
		if !json.Valid(args) {
			args = json.RawMessage("{}")
		}
		blocks = append(blocks, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": args})
		stop = "tool_use"
	}
	return blocks, stop
}

// anthropicUsage splits the runtime's usage as Anthropic reports it: its
// input tokens leave out those read from and written to the cache.
func anthropicUsage(u agentrt.Usage) map[string]any {
	return map[string]any{"input_tokens": u.Input - u.Cached - u.CacheWrite, "output_tokens": u.Output, "cache_read_input_tokens": u.Cached, "cache_creation_input_tokens": u.CacheWrite}
}

// anthropicResponse is a Messages API message.
func anthropicResponse(model string, r *agentrt.Response) ([]byte, error) {
	blocks, stop := anthropicContent(r)
	if blocks == nil {
		blocks = []map[string]any{}
	}
	return json.Marshal(map[string]any{
		"id": "msg_agentc_fault", "type": "message", "role": "assistant", "model": model,
		"content": blocks, "stop_reason": stop, "stop_sequence": nil, "usage": anthropicUsage(r.Usage),
	})
}

// stream answers a streamed Messages request with its server-sent events;
// dropped cuts the connection after the first content block starts;
// truncated ends the stream there, cleanly, before the message ends.
func (sv *Server) stream(w http.ResponseWriter, model string, r *agentrt.Response, fault string) {
	if sv.wire != WireAnthropic {
		sv.apiError(w, http.StatusBadRequest, "invalid_request_error", "agentc's fault layer does not stream Chat Completions")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	rc := http.NewResponseController(w)
	send := func(event string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		rc.Flush()
	}
	blocks, stop := anthropicContent(r)
	u := anthropicUsage(r.Usage)
	start := map[string]any{"input_tokens": u["input_tokens"], "output_tokens": 1, "cache_read_input_tokens": u["cache_read_input_tokens"], "cache_creation_input_tokens": 0}
	send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_agentc_fault", "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": start}})
	for i, b := range blocks {
		var first, delta map[string]any
		if b["type"] == "text" {
			first = map[string]any{"type": "text", "text": ""}
			delta = map[string]any{"type": "text_delta", "text": b["text"]}
		} else {
			first = map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}
			delta = map[string]any{"type": "input_json_delta", "partial_json": string(b["input"].(json.RawMessage))}
		}
		send("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": first})
		switch fault {
		case Dropped:
			panic(http.ErrAbortHandler)
		case Truncated:
			return
		}
		send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": delta})
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	switch fault {
	case Dropped:
		panic(http.ErrAbortHandler)
	case Truncated:
		return
	}
	send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": r.Usage.Output}})
	send("message_stop", map[string]any{"type": "message_stop"})
}
