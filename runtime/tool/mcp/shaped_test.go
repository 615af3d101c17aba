package mcp

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// denseResult is a call's answer whose structuredContent holds n empty
// objects: about 3n bytes that the SDK would decode into n maps.
func denseResult(id json.RawMessage, n int) string {
	return `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[{"type":"text","text":"ok"}],"structuredContent":{"j":[` +
		strings.TrimSuffix(strings.Repeat("{},", n), ",") + `]}}}`
}

// TestDenseAnswer: an answer of more JSON values than MaxMessageValues
// fails its call with the bound's error before the SDK decodes it (16 MiB
// of {} decoded to 580 MB), and the session goes on.
func TestDenseAnswer(t *testing.T) {
	ic := intercept(t, isTool("big"), func(w io.Writer, id json.RawMessage) error {
		_, err := io.WriteString(w, denseResult(id, 4*MaxMessageValues))
		return err
	}, "application/json")
	s, err := connectURL(t, ic, "big", "echo")
	if err != nil {
		t.Fatal(err)
	}
	content, err := callTool(s, "big", `{}`)
	if want := "JSON values, more than the 262144 agentc reads of one message (a large result goes as text)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("a call answered past the bound: %.200q, %v; want the error %q", content, err, want)
	}
	if out, err := callTool(s, "echo", `{"text":"hi"}`); err != nil || !strings.Contains(out, "hi") {
		t.Errorf("a call after the answer past the bound: %q, %v", out, err)
	}
	// Within the bound, the answer is read.
	ic = intercept(t, isTool("big"), func(w io.Writer, id json.RawMessage) error {
		_, err := io.WriteString(w, denseResult(id, MaxMessageValues/2))
		return err
	}, "application/json")
	if s, err = connectURL(t, ic, "big"); err != nil {
		t.Fatal(err)
	}
	if content, err := callTool(s, "big", `{}`); err != nil || !strings.Contains(content, "ok") {
		t.Errorf("an answer within the bound: %.200q, %v", content, err)
	}
}

// TestDenseListing: a tool listing past the bounds on a message's shape
// fails the server's start, saying why.
func TestDenseListing(t *testing.T) {
	ic := intercept(t, func(method, _ string) bool { return method == "tools/list" }, func(w io.Writer, id json.RawMessage) error {
		_, err := io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object","enum":[`+
			strings.TrimSuffix(strings.Repeat("{},", 2*MaxMessageValues), ",")+`]}}]}}`)
		return err
	}, "application/json")
	_, err := connectURL(t, ic, "echo")
	if want := "more than the 262144 agentc reads of one message"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("a listing past the bound: %v; want %q", err, want)
	}
}

// TestDenseNotification: a notification past MaxMessageValues, sent in
// the middle of a call, ends the session before the SDK decodes it, and
// the call fails saying why.
func TestDenseNotification(t *testing.T) {
	ic := intercept(t, isTool("big"), func(w io.Writer, id json.RawMessage) error {
		note := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":[` +
			strings.TrimSuffix(strings.Repeat("{},", 2*MaxMessageValues), ",") + `]}}`
		_, err := io.WriteString(w, "data: "+note+"\n\ndata: "+resultStart(id)+"ok"+resultEnd+"\n\n")
		return err
	}, "text/event-stream")
	s, err := connectURL(t, ic, "big")
	if err != nil {
		t.Fatal(err)
	}
	content, err := callTool(s, "big", `{}`)
	if want := "the server sent a notification (notifications/message) of 524291 JSON values, more than the 262144 agentc reads of one message"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("a call with a notification past the bound: %.200q, %v; want the error %q", content, err, want)
	}
}
