package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// azureChat is the path of an Azure OpenAI deployment's chat completions.
var azureChat = regexp.MustCompile(`/openai/deployments/[^/]+/chat/completions$`)

// respond answers a request of OpenAI's Responses API: with the answer as
// a forced function's call or as the text of a JSON format, else in prose.
func respond(w nethttp.ResponseWriter, body []byte, answer json.RawMessage) {
	var req struct {
		Model      string          `json:"model"`
		ToolChoice json.RawMessage `json:"tool_choice"`
		Text       struct {
			Format struct {
				Type string `json:"type"`
			} `json:"format"`
		} `json:"text"`
	}
	if json.Unmarshal(body, &req) != nil {
		nethttp.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, 400)
		return
	}
	var forced struct {
		Type, Name string
	}
	_ = json.Unmarshal(req.ToolChoice, &forced)
	text := "Done."
	if req.Text.Format.Type == "json_schema" {
		text = string(answer)
	}
	item := map[string]any{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
		"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
	if forced.Type == "function" {
		item = map[string]any{"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": forced.Name, "arguments": string(answer), "status": "completed"}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "resp_1", "object": "response", "created_at": 1764700000, "status": "completed", "model": req.Model,
		"output": []any{item}, "usage": map[string]any{"input_tokens": 20, "output_tokens": 5, "total_tokens": 25},
	})
}

// streamMessages writes a message as the Messages API streams it: each
// block's start, its text or its tool input cut in two deltas, its stop,
// then the stop reason and usage. A tool input is sent as it is, JSON or
// not, as a model may write it.
func streamMessages(w nethttp.ResponseWriter, model string, content []any, stop string, usage map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(v map[string]any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", v["type"], b)
		w.(nethttp.Flusher).Flush()
	}
	send(map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_1", "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": usage["input_tokens"], "output_tokens": 1},
	}})
	for i, c := range content {
		b := c.(map[string]any)
		var start map[string]any
		var pieces []string
		var kind, field string
		if b["type"] == "tool_use" {
			in, ok := b["input"].(json.RawMessage)
			if !ok {
				in, _ = json.Marshal(b["input"])
			}
			start = map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}
			pieces, kind, field = []string{string(in[:len(in)/2]), string(in[len(in)/2:])}, "input_json_delta", "partial_json"
		} else {
			text := b["text"].(string)
			start = map[string]any{"type": "text", "text": ""}
			pieces, kind, field = []string{text[:len(text)/2], text[len(text)/2:]}, "text_delta", "text"
		}
		send(map[string]any{"type": "content_block_start", "index": i, "content_block": start})
		for _, p := range pieces {
			send(map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": kind, field: p}})
		}
		send(map[string]any{"type": "content_block_stop", "index": i})
	}
	send(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": usage["output_tokens"]}})
	send(map[string]any{"type": "message_stop"})
}

// converse is Bedrock's Converse path, the model ID escaped.
var converse = regexp.MustCompile(`^/model/[^/]+/converse$`)

// geminiPath is generateContent's path on the Gemini API and on Vertex AI.
var geminiPath = regexp.MustCompile(`^/(v1beta/models/[^/:]+|v1beta1/(?:projects/[^/]+/locations/[^/]+/)?publishers/google/models/[^/:]+):generateContent$`)

// streamChat writes a chat completion as Chat Completions streams it:
// chunks of its text and of each tool call's arguments, each cut in two,
// then its finish reason, its usage, and [DONE].
func streamChat(w nethttp.ResponseWriter, model string, msg map[string]any, finish string, usage map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(v map[string]any) {
		v["id"], v["object"], v["created"], v["model"] = "chatcmpl-1", "chat.completion.chunk", 1, model
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		w.(nethttp.Flusher).Flush()
	}
	delta := func(d map[string]any, finish any) {
		send(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": d, "finish_reason": finish}}})
	}
	delta(map[string]any{"role": "assistant", "content": ""}, nil)
	if text, _ := msg["content"].(string); text != "" {
		delta(map[string]any{"content": text[:len(text)/2]}, nil)
		delta(map[string]any{"content": text[len(text)/2:]}, nil)
	}
	calls, _ := msg["tool_calls"].([]any)
	for i, c := range calls {
		fn := c.(map[string]any)["function"].(map[string]any)
		args := fn["arguments"].(string)
		delta(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.(map[string]any)["id"], "type": "function",
			"function": map[string]any{"name": fn["name"], "arguments": ""}}}}, nil)
		for _, part := range []string{args[:len(args)/2], args[len(args)/2:]} {
			delta(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": part}}}}, nil)
		}
	}
	delta(map[string]any{}, finish)
	if usage != nil {
		send(map[string]any{"choices": []any{}, "usage": usage})
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// streamCut streams a chat completion's first chunks, carrying text, and
// ends the stream there, before its finish_reason.
func streamCut(w nethttp.ResponseWriter, model, text string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, d := range []map[string]any{{"role": "assistant", "content": ""}, {"content": text}} {
		b, _ := json.Marshal(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": d, "finish_reason": nil}}})
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	w.(nethttp.Flusher).Flush()
}

// fakeProvider starts, for a testscript, a server on loopback that speaks
// a provider's wire format: asked to call a function (a shaping turn), it
// calls it with the given answer; asked for structured output, the answer
// is its text; otherwise it answers in prose. It points
// the provider's environment variables at itself.
func fakeProvider(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: fakeprovider openai|anthropic|google|bedrock[-MODE] ANSWER-JSON|@FILE [FILE...]")
	}
	if rest, ok := strings.CutPrefix(args[0], "openai-batch"); ok {
		batchProvider(ts, rest, args[2:])
		return
	}
	provider, answer := args[0], json.RawMessage(args[1])
	if name, ok := strings.CutPrefix(args[1], "@"); ok {
		// @FILE: the answer is the file's.
		answer = json.RawMessage(ts.ReadFile(name))
	}
	// "anthropic-cut" answers with the output tool as anthropic does, but
	// stops at max_tokens.
	// "openai-flaky" is openai whose first request fails with 503;
	// "openai-stall" is openai that sends nothing at all for its first
	// request, until the client goes; "openai-trickle" answers its first
	// request at once, and then sends only keep-alives (a blank for a
	// whole body, a comment for a stream) every 200ms until the client
	// goes.
	// "openai-drop" answers its first two requests 200 and drops the
	// connection after 1,000 bytes of its reply's text, as a server or a
	// proxy that fails mid-reply does (the provider bills what it
	// generated); a whole body ends short of its Content-Length.
	// "openai-drop-all" drops every request so.
	// "openai-tools" calls every tool the request offers, with {}, until
	// the conversation holds a tool result; "openai-tools-hang" does too,
	// but holds every request after its first unanswered (a run to kill).
	// "openai-args" calls every tool the request offers with the text of
	// line N of fake-args.txt (read at each request) in the conversation's
	// Nth tool-calling round, as a model writes them (spaces, any key
	// order, not JSON at all), then answers as "openai-tools" does.
	// "openai-prose" and "anthropic-prose" never answer: every reply is
	// prose, whatever the request forces, and "openai-loop" calls every
	// tool offered, with {}, in every turn it is not forced (then prose);
	// all three report usage as broken servers do, in turn: none, zeros,
	// negative counts, counts that overflow.
	// "openai" reports 20 tokens in and 5 out, or the usage
	// fake-usage.json holds (read at each request) where there is one.
	// "openai-gather" calls every tool offered, with {}, in every turn it
	// is not forced, answers when it is, and reports usage as a tokeniser
	// of four bytes a token would count the request and the reply: each
	// call costs more than the one before, as a conversation grows.
	// "anthropic-cache" keeps a prompt cache as the Messages API does (see
	// promptCache) and reports the tokens it read from it and wrote to it;
	// unforced, it calls the first tool offered, with {}, until the
	// conversation holds a tool result.
	// "openai-401" and "anthropic-401" refuse every request with 401,
	// echoing the key they were sent, as some servers do.
	// Each request is logged to fake-requests.log as "messages=N", its
	// body to fake-bodies.jsonl (compacted: one line a request) and its credential headers to fake-auth.log
	// as "authorization=... x-api-key=...", one line each.
	// "openai-null" and "anthropic-null" answer every request 200 with a
	// body of null, as a broken server or proxy may.
	// "google-echo" and "bedrock-echo" echo the credential each request
	// carried (see echoCredential): the odd requests are answered 503
	// with it in the message, which a run tries again; in the even ones'
	// answer, the text CREDENTIAL is replaced by it. "-echo400" answers
	// every request 400 with it in the message. Each credential is logged
	// to fake-echo.log, one line a request. "google-echo" also stands in
	// for a service account's token endpoint: it writes the account's
	// key file, fake-sa.json, whose token_uri is the fake, which gives a
	// new access token each time it is asked.
	echo := ""
	for _, suffix := range []string{"-echo400", "-echo"} {
		if rest, ok := strings.CutSuffix(provider, suffix); ok && (rest == "google" || rest == "bedrock") {
			echo, provider = suffix, rest
			break
		}
	}
	unauthorized := strings.HasSuffix(provider, "-401")
	provider = strings.TrimSuffix(provider, "-401")
	nullBody := strings.HasSuffix(provider, "-null")
	provider = strings.TrimSuffix(provider, "-null")
	// "openai-error200" and "anthropic-error200" answer their first
	// request 200 with the provider's error object in place of a reply,
	// as a proxy or a gateway may, and the rest as the provider does.
	error200 := strings.HasSuffix(provider, "-error200")
	provider = strings.TrimSuffix(provider, "-error200")
	flaky := provider == "openai-flaky"
	stallFirst := provider == "openai-stall"
	trickleFirst := provider == "openai-trickle"
	drop, dropAll := provider == "openai-drop", provider == "openai-drop-all"
	// "openai-429" answers every request 429 with a Retry-After of two
	// minutes.
	// "openai-404" answers every request 404, the model not found, as
	// OpenAI does for a model it does not serve.
	// "openai-400" answers every request 400, its error's message the
	// ANSWER (a JSON string), as a hostile server may write one.
	status := map[string]int{"openai-429": 429, "openai-404": 404, "openai-400": 400}[provider]
	prose := provider == "openai-prose" || provider == "anthropic-prose" || provider == "openai-loop"
	loop := provider == "openai-loop"
	gather := provider == "openai-gather"
	brokenUsage := func(n int, in, out string) map[string]any {
		switch n % 4 {
		case 1:
			return nil
		case 2:
			return map[string]any{in: 0, out: 0}
		case 3:
			return map[string]any{in: -20, out: -5}
		}
		return map[string]any{in: int64(9223372036854775807), out: int64(9223372036854775807)}
	}
	// "openai-flood" ignores max_tokens, as a broken or hostile server
	// may: every reply holds 1 MiB of text and, where the turn may call
	// tools, a call of every tool offered, with {}.
	flood := provider == "openai-flood"
	// "openai-turns" takes a JSON array for ANSWER: request N is answered
	// with its Nth element, round and round, as a model that does not
	// answer the same way twice.
	var turns []json.RawMessage
	if provider == "openai-turns" {
		ts.Check(json.Unmarshal(answer, &turns))
		if len(turns) == 0 {
			ts.Fatalf("fakeprovider openai-turns: no answers")
		}
	}
	callTools := provider == "openai-tools" || provider == "openai-tools-hang"
	hang := provider == "openai-tools-hang"
	scripted := provider == "openai-args"
	if flaky || stallFirst || trickleFirst || drop || dropAll || callTools || scripted || provider == "openai-prose" || loop || gather || flood || turns != nil || status != 0 {
		provider = "openai"
	}
	var cache *promptCache
	if provider == "anthropic-cache" {
		cache = &promptCache{held: map[[32]byte]bool{}}
	}
	cut := provider == "anthropic-cut"
	// "anthropic-notjson" streams its answer, the output tool's input, as
	// a model may write it: text that is not JSON. It streams only.
	notJSON := provider == "anthropic-notjson"
	if provider == "anthropic-prose" || provider == "anthropic-cache" || cut || notJSON {
		provider = "anthropic"
	}
	logFile := ts.MkAbs("fake-requests.log")
	ts.Check(os.WriteFile(logFile, nil, 0o644))
	bodiesFile, authFile := ts.MkAbs("fake-bodies.jsonl"), ts.MkAbs("fake-auth.log")
	// The files the handlers read or add to, named here: a handler runs
	// beside the script, whose cd moves what MkAbs resolves against.
	azureFile, argsFile, usageFile := ts.MkAbs("fake-azure.log"), ts.MkAbs("fake-args.txt"), ts.MkAbs("fake-usage.json")
	ts.Check(os.WriteFile(bodiesFile, nil, 0o644))
	ts.Check(os.WriteFile(authFile, nil, 0o644))
	var logMu sync.Mutex
	// logRequest reads a request's body and logs it with its credentials.
	logRequest := func(r *nethttp.Request) []byte {
		body, _ := io.ReadAll(r.Body)
		var line bytes.Buffer
		if json.Compact(&line, body) != nil {
			line.Write(body)
		}
		logMu.Lock()
		defer logMu.Unlock()
		for file, text := range map[string]string{
			bodiesFile: line.String() + "\n",
			authFile:   fmt.Sprintf("authorization=%s x-api-key=%s\n", r.Header.Get("Authorization"), r.Header.Get("X-Api-Key")),
		} {
			if f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0); err == nil {
				_, _ = f.WriteString(text)
				f.Close()
			}
		}
		return body
	}
	requests := 0
	if !json.Valid(answer) && !notJSON {
		ts.Fatalf("fakeprovider: the answer is not JSON")
	}
	// answerFor is the answer to a request: with echo, CREDENTIAL in it
	// replaced by the credential the request carried.
	answerFor := func(r *nethttp.Request) json.RawMessage {
		if echo == "" {
			return answer
		}
		quoted, _ := json.Marshal(echoCredential(r))
		return json.RawMessage(strings.ReplaceAll(string(answer), "CREDENTIAL", string(quoted[1:len(quoted)-1])))
	}
	var h nethttp.HandlerFunc
	switch provider {
	case "openai":
		h = func(w nethttp.ResponseWriter, r *nethttp.Request) {
			var req struct {
				Model    string `json:"model"`
				Messages []struct {
					Role      string            `json:"role"`
					ToolCalls []json.RawMessage `json:"tool_calls"`
				} `json:"messages"`
				Tools []struct {
					Function struct {
						Name string `json:"name"`
					} `json:"function"`
				} `json:"tools"`
				ToolChoice     json.RawMessage `json:"tool_choice"`
				ResponseFormat struct {
					Type string `json:"type"`
				} `json:"response_format"`
				Stream bool `json:"stream"`
			}
			body := logRequest(r)
			if r.URL.Path == "/v1/responses" {
				respond(w, body, answer)
				return
			}
			// An Azure OpenAI resource's path for a deployment's chat
			// completions is served too, and what it carried logged to
			// fake-azure.log.
			azure := azureChat.MatchString(r.URL.Path)
			if azure {
				logMu.Lock()
				if f, err := os.OpenFile(azureFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
					fmt.Fprintf(f, "path=%s api-version=%s api-key=%s authorization=%s\n", r.URL.Path, r.URL.Query().Get("api-version"), r.Header.Get("Api-Key"), r.Header.Get("Authorization"))
					f.Close()
				}
				logMu.Unlock()
			}
			if r.URL.Path != "/v1/chat/completions" && !azure || json.Unmarshal(body, &req) != nil {
				nethttp.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, 400)
				return
			}
			var choice struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			}
			logMu.Lock()
			requests++
			n := requests
			if f, err := os.OpenFile(logFile, os.O_APPEND|os.O_WRONLY, 0); err == nil {
				fmt.Fprintf(f, "messages=%d\n", len(req.Messages))
				f.Close()
			}
			logMu.Unlock()
			answer := answer
			if turns != nil {
				answer = turns[(n-1)%len(turns)]
			}
			if hang && n > 1 || stallFirst && n == 1 {
				<-r.Context().Done() // until the client goes away
				return
			}
			if trickleFirst && n == 1 {
				keepAlive := " "
				w.Header().Set("Content-Type", "application/json")
				if req.Stream {
					keepAlive = ": keep-alive\n\n"
					w.Header().Set("Content-Type", "text/event-stream")
				}
				w.WriteHeader(200)
				tick := time.NewTicker(200 * time.Millisecond)
				defer tick.Stop()
				for {
					_, _ = io.WriteString(w, keepAlive)
					w.(nethttp.Flusher).Flush()
					select {
					case <-r.Context().Done():
						return
					case <-tick.C:
					}
				}
			}
			if drop && n <= 2 || dropAll {
				text := strings.Repeat("a", 1000)
				if req.Stream {
					streamCut(w, req.Model, text)
					return
				}
				b, _ := json.Marshal(map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": req.Model,
					"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": text}, "finish_reason": "stop"}}})
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Length", strconv.Itoa(len(b)))
				_, _ = w.Write(b[:len(b)-20]) // the server closes the connection short of the length it said
				return
			}
			msg := map[string]any{"role": "assistant", "content": "Done."}
			finish := "stop"
			toolResult := false
			callRounds := 0
			for _, m := range req.Messages {
				toolResult = toolResult || m.Role == "tool"
				if len(m.ToolCalls) > 0 {
					callRounds++
				}
			}
			args := "{}"
			mayCall := len(req.Tools) > 0 && len(req.ToolChoice) == 0 || string(req.ToolChoice) == `"auto"`
			call := callTools && !toolResult && mayCall || gather && mayCall
			if scripted {
				data, _ := os.ReadFile(argsFile)
				lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
				if call = mayCall && callRounds < len(lines); call {
					args = lines[callRounds]
				}
			}
			if call {
				var calls []any
				for i, t := range req.Tools {
					id := fmt.Sprintf("call_%d", i+1)
					if scripted || gather {
						id = fmt.Sprintf("call_%d_%d", callRounds+1, i+1)
					}
					calls = append(calls, map[string]any{"id": id, "type": "function",
						"function": map[string]any{"name": t.Function.Name, "arguments": args}})
				}
				msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": calls}
				finish = "tool_calls"
			}
			if req.ResponseFormat.Type == "json_schema" {
				msg["content"] = string(answer) // structured output
			}
			if json.Unmarshal(req.ToolChoice, &choice) == nil && choice.Function.Name != "" {
				msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
					"id": "call_1", "type": "function", "function": map[string]any{"name": choice.Function.Name, "arguments": string(answer)}}}}
				finish = "tool_calls"
			}
			usage := map[string]any{"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}
			if data, err := os.ReadFile(usageFile); err == nil {
				// A file that is not JSON is the script's mistake: the
				// server says so in its answer (a handler may not end
				// the script).
				usage = nil
				if err := json.Unmarshal(data, &usage); err != nil {
					nethttp.Error(w, "fake-usage.json: "+err.Error(), nethttp.StatusInternalServerError)
					return
				}
			}
			if gather {
				out, _ := json.Marshal(msg)
				in, outN := (len(body)+3)/4, (len(out)+3)/4
				usage = map[string]any{"prompt_tokens": in, "completion_tokens": outN, "total_tokens": in + outN}
			}
			if prose {
				msg = map[string]any{"role": "assistant", "content": "Let me think about this some more before I answer."}
				finish = "stop"
				if loop && mayCall && choice.Function.Name == "" {
					var calls []any
					for i, t := range req.Tools {
						calls = append(calls, map[string]any{"id": fmt.Sprintf("call_%d_%d", n, i+1), "type": "function",
							"function": map[string]any{"name": t.Function.Name, "arguments": "{}"}})
					}
					msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": calls}
					finish = "tool_calls"
				}
				usage = brokenUsage(n, "prompt_tokens", "completion_tokens")
			}
			if flood {
				msg = map[string]any{"role": "assistant", "content": strings.Repeat("A", 1<<20)}
				finish = "stop"
				if mayCall {
					var calls []any
					for i, t := range req.Tools {
						calls = append(calls, map[string]any{"id": fmt.Sprintf("call_%d_%d", n, i+1), "type": "function",
							"function": map[string]any{"name": t.Function.Name, "arguments": "{}"}})
					}
					msg["tool_calls"], finish = calls, "tool_calls"
				}
			}
			resp := map[string]any{
				"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": req.Model,
				"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			}
			if usage != nil {
				resp["usage"] = usage
			}
			if req.Stream {
				streamChat(w, req.Model, msg, finish, usage)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(resp)
		}
	case "anthropic":
		h = func(w nethttp.ResponseWriter, r *nethttp.Request) {
			var req struct {
				Model      string `json:"model"`
				ToolChoice struct {
					Type string `json:"type"`
					Name string `json:"name"`
				} `json:"tool_choice"`
				OutputConfig struct {
					Format struct {
						Type string `json:"type"`
					} `json:"format"`
				} `json:"output_config"`
				Tools []struct {
					Name string `json:"name"`
				} `json:"tools"`
				Stream bool `json:"stream"`
			}
			body := logRequest(r)
			if r.URL.Path != "/v1/messages" || json.Unmarshal(body, &req) != nil {
				nethttp.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad request"}}`, 400)
				return
			}
			content := []any{map[string]any{"type": "text", "text": "Done."}}
			if req.OutputConfig.Format.Type == "json_schema" {
				content = []any{map[string]any{"type": "text", "text": string(answer)}} // structured output
			}
			stop := "end_turn"
			if req.ToolChoice.Type == "tool" {
				content = []any{map[string]any{"type": "tool_use", "id": "toolu_1", "name": req.ToolChoice.Name, "input": answer}}
				stop = "tool_use"
				if cut {
					// A turn cut there: the input may be part of what
					// the model meant, and still fit the schema.
					stop = "max_tokens"
				}
			}
			usage := map[string]any{"input_tokens": 20, "output_tokens": 5}
			if cache != nil && req.ToolChoice.Type != "tool" && len(req.Tools) > 0 && !bytes.Contains(body, []byte(`"tool_result"`)) {
				content = []any{map[string]any{"type": "tool_use", "id": "toolu_0", "name": req.Tools[0].Name, "input": map[string]any{}}}
				stop = "tool_use"
			}
			if cache != nil {
				in, read, written := cache.use(body)
				usage = map[string]any{"input_tokens": in, "cache_read_input_tokens": read, "cache_creation_input_tokens": written, "output_tokens": 5}
			}
			if prose {
				logMu.Lock()
				requests++
				n := requests
				if f, err := os.OpenFile(logFile, os.O_APPEND|os.O_WRONLY, 0); err == nil {
					fmt.Fprintf(f, "request=%d\n", n)
					f.Close()
				}
				logMu.Unlock()
				content = []any{map[string]any{"type": "text", "text": "Let me think about this some more before I answer."}}
				stop = "end_turn"
				usage = brokenUsage(n, "input_tokens", "output_tokens")
			}
			resp := map[string]any{
				"id": "msg_1", "type": "message", "role": "assistant", "model": req.Model, "content": content,
				"stop_reason": stop, "stop_sequence": nil,
			}
			if usage != nil {
				resp["usage"] = usage
			}
			if req.Stream {
				streamMessages(w, req.Model, content, stop, usage)
				return
			}
			if notJSON {
				nethttp.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"anthropic-notjson streams only"}}`, 400)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(resp)
		}
	case "google":
		// The Gemini API's generateContent: a forced function call
		// (toolConfig ANY naming one function) is made with the answer;
		// a JSON response format is answered with it; else prose. A
		// Vertex AI path is served too.
		h = func(w nethttp.ResponseWriter, r *nethttp.Request) {
			var req struct {
				GenerationConfig struct {
					ResponseMIMEType string `json:"responseMimeType"`
				} `json:"generationConfig"`
				ToolConfig struct {
					FunctionCallingConfig struct {
						Mode                 string   `json:"mode"`
						AllowedFunctionNames []string `json:"allowedFunctionNames"`
					} `json:"functionCallingConfig"`
				} `json:"toolConfig"`
			}
			body := logRequest(r)
			if !geminiPath.MatchString(r.URL.Path) || json.Unmarshal(body, &req) != nil {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(400)
				_, _ = io.WriteString(w, `{"error":{"code":400,"message":"Invalid JSON payload received.","status":"INVALID_ARGUMENT"}}`)
				return
			}
			part := map[string]any{"text": "Done."}
			if req.GenerationConfig.ResponseMIMEType == "application/json" {
				part = map[string]any{"text": string(answerFor(r))}
			}
			if fc := req.ToolConfig.FunctionCallingConfig; fc.Mode == "ANY" && len(fc.AllowedFunctionNames) == 1 {
				part = map[string]any{"functionCall": map[string]any{"name": fc.AllowedFunctionNames[0], "args": answerFor(r)}}
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{
				"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0}},
				"usageMetadata": map[string]any{"promptTokenCount": 20, "candidatesTokenCount": 5, "totalTokenCount": 25},
				"modelVersion":  "gemini-test", "responseId": "resp-1",
			})
		}
	case "bedrock":
		// Bedrock's Converse: a forced tool (toolChoice.tool) is called
		// with the answer; else prose. What signed the request is logged
		// to fake-auth.log.
		h = func(w nethttp.ResponseWriter, r *nethttp.Request) {
			var req struct {
				ToolConfig struct {
					ToolChoice struct {
						Tool struct {
							Name string `json:"name"`
						} `json:"tool"`
					} `json:"toolChoice"`
				} `json:"toolConfig"`
			}
			body := logRequest(r)
			if strings.HasPrefix(r.URL.Path, "/latest/") {
				// Standing in for a machine's metadata service that
				// refuses IMDSv2's tokens and holds no role, as one
				// outside EC2 may.
				if r.URL.Path == "/latest/api/token" {
					nethttp.Error(w, "Forbidden", nethttp.StatusForbidden)
					return
				}
				nethttp.NotFound(w, r)
				return
			}
			if !converse.MatchString(r.URL.EscapedPath()) || json.Unmarshal(body, &req) != nil {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("X-Amzn-Errortype", "ValidationException")
				w.WriteHeader(400)
				_, _ = io.WriteString(w, `{"message":"Malformed input request"}`)
				return
			}
			content, stop := []any{map[string]any{"text": "Done."}}, "end_turn"
			if name := req.ToolConfig.ToolChoice.Tool.Name; name != "" {
				content, stop = []any{map[string]any{"toolUse": map[string]any{"toolUseId": "tooluse_1", "name": name, "input": answerFor(r)}}}, "tool_use"
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{
				"output":     map[string]any{"message": map[string]any{"role": "assistant", "content": content}},
				"stopReason": stop,
				"usage":      map[string]any{"inputTokens": 20, "outputTokens": 5, "totalTokens": 25},
				"metrics":    map[string]any{"latencyMs": 120},
			})
		}
	default:
		ts.Fatalf("fakeprovider: unknown provider %q", provider)
	}
	if flaky {
		var mu sync.Mutex
		failed := false
		inner := h
		h = func(w nethttp.ResponseWriter, r *nethttp.Request) {
			mu.Lock()
			first := !failed
			failed = true
			mu.Unlock()
			if first {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(503)
				_, _ = io.WriteString(w, `{"error":{"message":"The server is overloaded.","type":"server_error"}}`)
				return
			}
			inner(w, r)
		}
	}
	if status != 0 {
		h = func(w nethttp.ResponseWriter, r *nethttp.Request) {
			logRequest(r)
			w.Header().Set("Content-Type", "application/json")
			if status == 400 {
				w.WriteHeader(status)
				_, _ = fmt.Fprintf(w, `{"error":{"message":%s,"type":"invalid_request_error"}}`, answer)
				return
			}
			if status == 404 {
				w.WriteHeader(status)
				_, _ = io.WriteString(w, `{"error":{"message":"The model `+"`gpt-4o-2024-08-06`"+` does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}`)
				return
			}
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(status)
			_, _ = io.WriteString(w, `{"error":{"message":"Rate limit reached for requests.","type":"requests","code":"rate_limit_exceeded"}}`)
		}
	}
	if nullBody {
		h = func(w nethttp.ResponseWriter, r *nethttp.Request) {
			logRequest(r)
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, "null")
		}
	}
	if unauthorized {
		h = func(w nethttp.ResponseWriter, r *nethttp.Request) {
			logRequest(r)
			key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
			if k := r.Header.Get("X-Api-Key"); k != "" {
				key = k
			}
			// The messages of the providers' own servers, but echoing the
			// whole key.
			var body any
			switch {
			case provider == "openai" && key == "":
				body = map[string]any{"error": map[string]any{"message": "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).", "type": "invalid_request_error", "param": nil, "code": nil}}
			case provider == "openai":
				body = map[string]any{"error": map[string]any{"message": "Incorrect API key provided: " + key + ". You can find your API key at https://platform.openai.com/account/api-keys.", "type": "invalid_request_error", "param": nil, "code": "invalid_api_key"}}
			case key == "":
				body = map[string]any{"type": "error", "error": map[string]any{"type": "authentication_error", "message": "x-api-key header is required"}}
			default:
				body = map[string]any{"type": "error", "error": map[string]any{"type": "authentication_error", "message": "invalid x-api-key: " + key}}
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(nethttp.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(body)
		}
	}
	if error200 {
		next, answered := h, false
		var mu sync.Mutex
		h = func(w nethttp.ResponseWriter, r *nethttp.Request) {
			mu.Lock()
			first := !answered
			answered = true
			mu.Unlock()
			if !first {
				next(w, r)
				return
			}
			logRequest(r)
			w.Header().Set("Content-Type", "application/json")
			if provider == "anthropic" {
				_, _ = io.WriteString(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CTest"}`)
				return
			}
			_, _ = io.WriteString(w, `{"error":{"message":"The server is overloaded.","type":"server_error","param":null,"code":null}}`)
		}
	}
	var srv *httptest.Server
	if echo != "" {
		h = echoing(ts, provider, echo, h, func() string { return srv.URL })
	}
	srv = httptest.NewServer(h)
	ts.Defer(srv.Close)
	base := srv.URL
	if echo != "" && provider == "google" {
		writeServiceAccount(ts, srv.URL+"/token")
	}
	if provider == "openai" {
		base += "/v1/"
	}
	// Files may name the server as http://PROVIDER (a manifest's base_url).
	for _, f := range args[2:] {
		data, err := os.ReadFile(ts.MkAbs(f))
		ts.Check(err)
		ts.Check(os.WriteFile(ts.MkAbs(f), bytes.ReplaceAll(data, []byte("http://PROVIDER"), []byte(base)), 0o644))
	}
	switch provider {
	case "openai":
		ts.Setenv("OPENAI_BASE_URL", srv.URL+"/v1/")
		ts.Setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
	case "anthropic":
		ts.Setenv("ANTHROPIC_BASE_URL", srv.URL)
		ts.Setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-secret")
	case "bedrock":
		ts.Setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", srv.URL)
		ts.Setenv("AWS_REGION", "us-east-1")
		ts.Setenv("AWS_ACCESS_KEY_ID", "AKIDFAKENOTASECRET")
		ts.Setenv("AWS_SECRET_ACCESS_KEY", "fake-secret-planted-Qx81")
		ts.Setenv("AWS_CONFIG_FILE", ts.MkAbs("no-aws-config"))
		ts.Setenv("AWS_SHARED_CREDENTIALS_FILE", ts.MkAbs("no-aws-credentials"))
		ts.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	case "google":
		ts.Setenv("GOOGLE_GEMINI_BASE_URL", srv.URL)
		ts.Setenv("GOOGLE_VERTEX_BASE_URL", srv.URL)
		ts.Setenv("GEMINI_API_KEY", "gemini-test-not-a-secret")
	}
}

// batchProvider is the fake for batches, "openai-batch": an OpenAI server
// whose answer to a forced function call is {"echo": the last user
// message}, so each item's answer names its input. A user message holding
// "sleep=N" is answered after N ms, one holding "fail" with a final 400.
// Usage is a quarter of the body's bytes in, more than a real server
// charges (the count of the messages' text, about half as much for the
// scripts' agents), and max_completion_tokens out (20 without): a call in
// a pool is charged at most its reservation. With the
// suffix "-holdN" ("openai-batch-hold100"), every request after the Nth
// is held unanswered until the client goes away (a batch to kill), or
// until a file fake-release appears in the script's directory, when it
// is answered. With the suffix "-overreport", every answer reports a
// hundred times the body's bytes as input tokens, as a provider
// over-charging would. With the suffix "-rateN/W" ("openai-batch-rate60/1s"),
// it refuses, as OpenAI does, with 429, a Retry-After-Ms and
// OpenAI's error body, every request that arrives when N were answered
// in the last W, a sliding window.
//
// Each request is one line of fake-requests.log, written when its fate
// is known: "n=K fp=F USER answered|failed|held|refused", K its number in
// arrival order, F the first 16 hex digits of the SHA-256 of its body (a
// request sent again has the same), USER the last user message.
func batchProvider(ts *testscript.TestScript, mode string, files []string) {
	hold := -1
	overreport := mode == "-overreport"
	var limit *slidingWindow
	if n, ok := strings.CutPrefix(mode, "-hold"); ok {
		var err error
		if hold, err = strconv.Atoi(n); err != nil {
			ts.Fatalf("fakeprovider: openai-batch-holdN: %v", err)
		}
	} else if spec, ok := strings.CutPrefix(mode, "-rate"); ok {
		n, w, _ := strings.Cut(spec, "/")
		count, err := strconv.Atoi(n)
		window, err2 := time.ParseDuration(w)
		if err != nil || err2 != nil || count <= 0 || window <= 0 {
			ts.Fatalf("fakeprovider: openai-batch-rateN/W: want a count and a duration, as rate60/1s")
		}
		limit = &slidingWindow{n: count, window: window}
	} else if mode != "" && !overreport {
		ts.Fatalf("fakeprovider: unknown mode openai-batch%s", mode)
	}
	logFile, releaseFile := ts.MkAbs("fake-requests.log"), ts.MkAbs("fake-release")
	ts.Check(os.WriteFile(logFile, nil, 0o644))
	var mu sync.Mutex
	requests := 0
	logLine := func(line string) {
		mu.Lock()
		defer mu.Unlock()
		if f, err := os.OpenFile(logFile, os.O_APPEND|os.O_WRONLY, 0); err == nil {
			_, _ = f.WriteString(line + "\n")
			f.Close()
		}
	}
	sleep := regexp.MustCompile(`sleep=(\d+)`)
	h := func(w nethttp.ResponseWriter, r *nethttp.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
			ToolChoice struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tool_choice"`
			MaxTokens int `json:"max_completion_tokens"`
		}
		if r.URL.Path != "/v1/chat/completions" || json.Unmarshal(body, &req) != nil || req.ToolChoice.Function.Name == "" {
			nethttp.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, 400)
			return
		}
		user := ""
		for _, m := range req.Messages {
			if m.Role == "user" {
				_ = json.Unmarshal(m.Content, &user)
			}
		}
		sum := sha256.Sum256(body)
		mu.Lock()
		requests++
		n := requests
		mu.Unlock()
		line := fmt.Sprintf("n=%d fp=%s %s", n, hex.EncodeToString(sum[:8]), user)
		if hold >= 0 && n > hold {
			logLine(line + " held")
			if !released(r.Context(), releaseFile) {
				return
			}
		}
		if m := sleep.FindStringSubmatch(user); m != nil {
			ms, _ := strconv.Atoi(m[1])
			select {
			case <-time.After(time.Duration(ms) * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		if limit != nil {
			if wait, ok := limit.admit(time.Now()); !ok {
				logLine(line + " refused")
				w.Header().Set("Retry-After-Ms", strconv.FormatInt(max(wait.Milliseconds(), 1), 10))
				w.Header().Set("X-Ratelimit-Limit-Requests", strconv.Itoa(limit.n))
				w.Header().Set("X-Ratelimit-Remaining-Requests", "0")
				w.WriteHeader(429)
				fmt.Fprintf(w, `{"error":{"message":"Rate limit reached for %s in organization org-test on requests per min (RPM): Limit %d, Used %d, Requested 1. Please try again in %dms. Visit https://platform.openai.com/account/rate-limits to learn more.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
					req.Model, limit.n, limit.n, wait.Milliseconds())
				return
			}
		}
		if strings.Contains(user, "fail") {
			logLine(line + " failed")
			w.WriteHeader(400)
			_, _ = io.WriteString(w, `{"error":{"message":"This request was refused.","type":"invalid_request_error"}}`)
			return
		}
		in, out := len(body)/4, req.MaxTokens
		if out == 0 {
			out = 20
		}
		if overreport {
			in = len(body) * 100
		}
		args, _ := json.Marshal(map[string]string{"echo": user})
		logLine(line + " answered")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "tool_calls", "message": map[string]any{
				"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "call_1", "type": "function",
					"function": map[string]any{"name": req.ToolChoice.Function.Name, "arguments": string(args)}}}}}},
			"usage": map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out},
		})
	}
	srv := httptest.NewServer(nethttp.HandlerFunc(h))
	ts.Defer(srv.Close)
	for _, f := range files {
		data, err := os.ReadFile(ts.MkAbs(f))
		ts.Check(err)
		ts.Check(os.WriteFile(ts.MkAbs(f), bytes.ReplaceAll(data, []byte("http://PROVIDER"), []byte(srv.URL+"/v1/")), 0o644))
	}
	ts.Setenv("OPENAI_BASE_URL", srv.URL+"/v1/")
	ts.Setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
}

// slidingWindow admits at most n requests in any window of time.
type slidingWindow struct {
	mu       sync.Mutex
	n        int
	window   time.Duration
	admitted []time.Time // in the last window, oldest first
}

// admit admits a request at now, or refuses it and says how long until
// the window has room.
func (s *slidingWindow) admit(now time.Time) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := 0
	for i < len(s.admitted) && now.Sub(s.admitted[i]) >= s.window {
		i++
	}
	s.admitted = s.admitted[i:]
	if len(s.admitted) >= s.n {
		return s.admitted[0].Add(s.window).Sub(now), false
	}
	s.admitted = append(s.admitted, now)
	return 0, true
}

// released waits until the file exists, and reports true, or until ctx
// ends, and reports false.
func released(ctx context.Context, file string) bool {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		if _, err := os.Stat(file); err == nil {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
}

// promptCache is the Messages API's prompt cache as Anthropic describes
// it: a request's prompt is read in order (tools, system, messages) as
// blocks; each cache_control breakpoint writes the prefix up to its block,
// and a request reads the longest prefix held that ends at one of its
// breakpoints or up to 20 blocks before one. A block's tokens are a
// quarter of its JSON's bytes; there is no minimum length.
type promptCache struct {
	mu   sync.Mutex
	held map[[32]byte]bool
}

// use serves one request body: the input tokens neither read nor
// written, those read from the cache and those written to it.
func (c *promptCache) use(body []byte) (in, read, written int) {
	var req struct {
		Tools    []map[string]any `json:"tools"`
		System   []map[string]any `json:"system"`
		Messages []struct {
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(body, &req)
	blocks := append(req.Tools, req.System...)
	for _, m := range req.Messages {
		blocks = append(blocks, m.Content...)
	}
	tokens := make([]int, len(blocks)+1)
	keys := make([][32]byte, len(blocks)+1)
	var marks []int
	h := sha256.New()
	for i, b := range blocks {
		if _, ok := b["cache_control"]; ok {
			marks = append(marks, i+1)
			delete(b, "cache_control")
		}
		plain, _ := json.Marshal(b)
		tokens[i+1] = tokens[i] + (len(plain)+3)/4
		fmt.Fprintf(h, "%d:%s", len(plain), plain)
		copy(keys[i+1][:], h.Sum(nil))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, end := range marks {
		for at := end; at > max(0, end-20); at-- {
			if c.held[keys[at]] {
				read = max(read, tokens[at])
				break
			}
		}
	}
	for _, end := range marks {
		if !c.held[keys[end]] {
			c.held[keys[end]] = true
			written = max(written, tokens[end]-read)
		}
	}
	return tokens[len(blocks)] - read - written, read, written
}

// echoCredential is the credential a request carried, as a server that
// echoes it would read it: a bearer token (a Vertex AI access token, a
// Bedrock API key), a Gemini API key, or an AWS signature's access key ID
// and session token.
func echoCredential(r *nethttp.Request) string {
	auth := r.Header.Get("Authorization")
	if k := r.Header.Get("X-Goog-Api-Key"); k != "" {
		return k
	}
	if m := regexp.MustCompile(`Credential=([^/]+)/`).FindStringSubmatch(auth); m != nil {
		return strings.TrimSpace(m[1] + " " + r.Header.Get("X-Amz-Security-Token"))
	}
	return auth
}

// echoing wraps a fake provider's handler h with the echo modes of
// fakeProvider ("-echo", "-echo400"); url is the server's.
func echoing(ts *testscript.TestScript, provider, mode string, h nethttp.HandlerFunc, url func() string) nethttp.HandlerFunc {
	var mu sync.Mutex
	calls, tokens := 0, 0
	logFile := ts.MkAbs("fake-echo.log")
	ts.Check(os.WriteFile(logFile, nil, 0o644))
	return func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if provider == "google" && r.URL.Path == "/token" {
			// A service account's token endpoint: a JWT bearer grant
			// for a new access token each time.
			_ = r.ParseForm()
			if r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" || r.PostForm.Get("assertion") == "" {
				nethttp.Error(w, `{"error":"invalid_grant"}`, 400)
				return
			}
			mu.Lock()
			tokens++
			n := tokens
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"access_token":"ya29.c.fake-vertex-access-token-%d-Kq81Zx","token_type":"Bearer","expires_in":3600}`, n)
			return
		}
		if !(provider == "google" && geminiPath.MatchString(r.URL.Path) || provider == "bedrock" && converse.MatchString(r.URL.EscapedPath())) {
			h(w, r)
			return
		}
		cred := echoCredential(r)
		mu.Lock()
		calls++
		n := calls
		if f, err := os.OpenFile(logFile, os.O_APPEND|os.O_WRONLY, 0); err == nil {
			fmt.Fprintln(f, cred)
			f.Close()
		}
		mu.Unlock()
		if mode == "-echo" && n%2 == 0 {
			h(w, r)
			return
		}
		status := map[bool]int{true: 400, false: 503}[mode == "-echo400"]
		msg := "your credential was " + cred
		w.Header().Set("Content-Type", "application/json")
		if provider == "bedrock" {
			w.Header().Set("X-Amzn-Errortype", map[int]string{400: "ValidationException", 503: "ServiceUnavailableException"}[status])
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(map[string]any{"message": msg})
			return
		}
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": status, "message": msg,
			"status": map[int]string{400: "INVALID_ARGUMENT", 503: "UNAVAILABLE"}[status]}})
	}
}

// writeServiceAccount writes fake-sa.json, a Google Cloud service
// account's key file, with a key made now and tokenURI its token
// endpoint.
func writeServiceAccount(ts *testscript.TestScript, tokenURI string) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	ts.Check(err)
	der, err := x509.MarshalPKCS8PrivateKey(key)
	ts.Check(err)
	sa, err := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "fake-project", "private_key_id": "fake-key-1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": "agent@fake-project.iam.gserviceaccount.com", "client_id": "1",
		"token_uri": tokenURI,
	})
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs("fake-sa.json"), sa, 0o600))
}
