// Server is a zero-latency OpenAI-compatible Chat Completions server for
// bench/run.sh. It listens on loopback only and answers every
// POST /v1/chat/completions (or /chat/completions) at once with a fixed,
// schema-valid answer:
//
//   - a request whose response_format is json_schema (the "native" output
//     mode) gets the answer as the message content;
//   - otherwise a request that offers tools gets one call of the tool its
//     tool_choice names (or of its only tool, unless tool_choice is
//     "none"), the answer as the arguments;
//   - otherwise the answer is the message content (the "prompted" mode).
//
// With -tool-rounds N, a request that offers a tool named lookup gets a
// call of it until its conversation holds N tool results; then a call of
// the other tool offered beside it, the answer as the arguments, or, with
// none (agentc offers its output tool apart), prose, after which agentc's
// answering turn gets the answer: N tool calls and N+2 model calls, a run
// run.sh records to time its replay. Its usage then counts a token every
// four bytes of the request, as a provider's grows with the conversation.
//
// With -same, every request must equal the first one it received, tool
// names aside (agentc's output tool has a suffix drawn from its plan, the
// floor's one of its own); one that differs gets a 400 naming the
// difference. run.sh uses it to check that
// agentc and the floor send the same request.
//
// Usage:
//
//	server -answer bench/testdata/answer.json [-addr 127.0.0.1:0] [-addr-file FILE] [-same] [-tool-rounds N]
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

func run(args []string, stderr io.Writer) error {
	fl := flag.NewFlagSet("server", flag.ContinueOnError)
	fl.SetOutput(stderr)
	addr := fl.String("addr", "127.0.0.1:0", "the loopback address to listen on (port 0: a free one)")
	addrFile := fl.String("addr-file", "", "write the address listened on to this file once listening")
	answerFile := fl.String("answer", "", "a JSON file holding the answer (required)")
	same := fl.Bool("same", false, "refuse a request that differs from the first one")
	toolRounds := fl.Int("tool-rounds", 0, "call the tool named lookup until the conversation holds this many tool results")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *answerFile == "" || fl.NArg() > 0 || *toolRounds < 0 {
		fl.Usage()
		return errors.New("usage: server -answer FILE [-addr ADDR] [-addr-file FILE] [-same] [-tool-rounds N]")
	}
	answer, err := os.ReadFile(*answerFile)
	if err != nil {
		return err
	}
	h, err := NewHandler(answer, *same, stderr)
	if err != nil {
		return err
	}
	h.ToolRounds = *toolRounds
	if err := loopback(*addr); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	if *addrFile != "" {
		// Written whole, then renamed, so a reader never sees half of it.
		tmp := *addrFile + ".tmp"
		if err := os.WriteFile(tmp, []byte(ln.Addr().String()+"\n"), 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, *addrFile); err != nil {
			return err
		}
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	return srv.Serve(ln)
}

// loopback refuses an address that is not on the loopback interface: the
// bench never serves anything to the network.
func loopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%s is not a loopback address", addr)
	}
	return nil
}

// Handler answers chat completions. It is safe for concurrent use.
type Handler struct {
	answer string // compact JSON
	same   bool
	log    io.Writer
	// ToolRounds, when set, is how many calls of the tool named lookup
	// a conversation gets before its answer.
	ToolRounds int

	mu    sync.Mutex
	first []byte // the first request, normalised, when same
}

// NewHandler returns a Handler answering with answer, a JSON value. With
// same, it refuses a request that differs from the first, and says why on
// log.
func NewHandler(answer []byte, same bool, log io.Writer) (*Handler, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, answer); err != nil {
		return nil, fmt.Errorf("the answer is not JSON: %w", err)
	}
	return &Handler{answer: b.String(), same: same, log: log}, nil
}

// request is what the handler reads of a Chat Completions request.
type request struct {
	Model string `json:"model"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	ToolChoice json.RawMessage `json:"tool_choice"`
	Messages   []struct {
		Role string `json:"role"`
	} `json:"messages"`
	ResponseFormat *struct {
		Type string `json:"type"`
	} `json:"response_format"`
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" && r.URL.Path != "/chat/completions" {
		apiError(w, http.StatusNotFound, "not_found", "no such endpoint: "+r.URL.Path)
		return
	}
	if r.Method != http.MethodPost {
		apiError(w, http.StatusMethodNotAllowed, "invalid_request_error", "use POST")
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		apiError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "the body is not a chat completion request: "+err.Error())
		return
	}
	if h.same {
		if msg := h.compare(body); msg != "" {
			fmt.Fprintln(h.log, "server:", msg)
			apiError(w, http.StatusBadRequest, "invalid_request_error", msg)
			return
		}
	}
	msg := message{Role: "assistant"}
	finish := "stop"
	use := usage{PromptTokens: 120, CompletionTokens: 24, TotalTokens: 144}
	if tool, args, ok := h.toolRound(&req); ok {
		use = usage{PromptTokens: len(body) / 4, CompletionTokens: 24, TotalTokens: len(body)/4 + 24}
		if tool != "" {
			msg.ToolCalls = []toolCall{{ID: fmt.Sprintf("call_bench_%d", len(req.Messages)), Type: "function", Function: function{Name: tool, Arguments: args}}}
			finish = "tool_calls"
		} else {
			done := "Looked the ticket up."
			msg.Content = &done
		}
	} else if tool := toolToCall(&req); tool != "" {
		msg.ToolCalls = []toolCall{{ID: "call_bench", Type: "function", Function: function{Name: tool, Arguments: h.answer}}}
		finish = "tool_calls"
	} else {
		msg.Content = &h.answer
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(completion{
		ID: "chatcmpl-bench", Object: "chat.completion", Created: time.Now().Unix(), Model: req.Model,
		Choices: []choice{{Index: 0, Message: msg, FinishReason: finish}},
		Usage:   use,
	})
}

// lookupTool is the tool -tool-rounds calls.
const lookupTool = "lookup"

// toolRound returns the call a conversation of -tool-rounds gets, with its
// arguments, or no tool where it gets prose; ok is false for a request that
// is not one (that does not offer lookup).
func (h *Handler) toolRound(req *request) (tool, args string, ok bool) {
	if h.ToolRounds == 0 {
		return "", "", false
	}
	offered := false
	for _, t := range req.Tools {
		offered = offered || t.Function.Name == lookupTool
	}
	if !offered {
		return "", "", false
	}
	results := 0
	for _, m := range req.Messages {
		if m.Role == "tool" {
			results++
		}
	}
	if results < h.ToolRounds {
		return lookupTool, fmt.Sprintf(`{"q":"ticket %d"}`, results+1), true
	}
	for _, t := range req.Tools {
		if t.Function.Name != lookupTool {
			return t.Function.Name, h.answer, true
		}
	}
	// Done looking, and no output tool offered with lookup: prose, which
	// ends the tool rounds, and agentc's answering turn follows.
	return "", "", true
}

// toolToCall returns the function to answer with, or "" to answer in the
// message content.
func toolToCall(req *request) string {
	if req.ResponseFormat != nil && req.ResponseFormat.Type == "json_schema" {
		return ""
	}
	var named struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(req.ToolChoice, &named) == nil && named.Function.Name != "" {
		return named.Function.Name
	}
	var mode string
	if json.Unmarshal(req.ToolChoice, &mode) == nil && mode == "none" {
		return ""
	}
	if len(req.Tools) == 1 {
		return req.Tools[0].Function.Name
	}
	return ""
}

// compare records the first request and returns "" when body equals it,
// tool names aside, or a message naming the first difference.
func (h *Handler) compare(body []byte) string {
	norm, err := normalise(body)
	if err != nil {
		return err.Error()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.first == nil {
		h.first = norm
		return ""
	}
	if bytes.Equal(norm, h.first) {
		return ""
	}
	i := 0
	for i < len(norm) && i < len(h.first) && norm[i] == h.first[i] {
		i++
	}
	from := max(0, i-60)
	return fmt.Sprintf("the request differs from the first one at byte %d:\n first: ...%s\n  this: ...%s",
		i, h.first[from:min(len(h.first), i+60)], norm[from:min(len(norm), i+60)])
}

// normalise returns body as JSON with sorted keys and every function name
// (in tools and tool_choice) blanked.
func normalise(body []byte) ([]byte, error) {
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, err
	}
	blank := func(x any) {
		if m, ok := x.(map[string]any); ok {
			if f, ok := m["function"].(map[string]any); ok {
				f["name"] = ""
			}
		}
	}
	if tools, ok := v["tools"].([]any); ok {
		for _, t := range tools {
			blank(t)
		}
	}
	blank(v["tool_choice"])
	return json.Marshal(v)
}

// The response, in the shape of OpenAI's CreateChatCompletionResponse.
type (
	completion struct {
		ID      string   `json:"id"`
		Object  string   `json:"object"`
		Created int64    `json:"created"`
		Model   string   `json:"model"`
		Choices []choice `json:"choices"`
		Usage   usage    `json:"usage"`
	}
	choice struct {
		Index        int       `json:"index"`
		Message      message   `json:"message"`
		FinishReason string    `json:"finish_reason"`
		Logprobs     *struct{} `json:"logprobs"`
	}
	message struct {
		Role      string     `json:"role"`
		Content   *string    `json:"content"`
		Refusal   *string    `json:"refusal"`
		ToolCalls []toolCall `json:"tool_calls,omitempty"`
	}
	toolCall struct {
		ID       string   `json:"id"`
		Type     string   `json:"type"`
		Function function `json:"function"`
	}
	function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	}
)

// apiError writes an error in OpenAI's shape.
func apiError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": nil}})
}
