package bedrock

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	agentrt "agentc.dev/agentc/runtime"
)

// events is a ConverseStream response: each event an event-stream
// message of the type its name says, its JSON the payload, as the
// service sends them.
func events(t *testing.T, evs ...[2]string) reply {
	t.Helper()
	var b bytes.Buffer
	enc := eventstream.NewEncoder()
	for _, ev := range evs {
		msg := eventstream.Message{Payload: []byte(ev[1])}
		msg.Headers.Set(":event-type", eventstream.StringValue(ev[0]))
		msg.Headers.Set(":content-type", eventstream.StringValue("application/json"))
		msg.Headers.Set(":message-type", eventstream.StringValue("event"))
		if err := enc.Encode(&b, msg); err != nil {
			t.Fatal(err)
		}
	}
	return reply{status: 200, body: b.String(), stream: true}
}

var streamEvents = [][2]string{
	{"messageStart", `{"role":"assistant"}`},
	{"contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Let me "}}`},
	{"contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"answer."}}`},
	{"contentBlockStop", `{"contentBlockIndex":0}`},
	{"contentBlockStart", `{"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"tooluse_1","name":"answer"}}}`},
	{"contentBlockDelta", `{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\"city\":"}}}`},
	{"contentBlockDelta", `{"contentBlockIndex":1,"delta":{"toolUse":{"input":"\"Paris\"}"}}}`},
	{"contentBlockStop", `{"contentBlockIndex":1}`},
	{"messageStop", `{"stopReason":"tool_use"}`},
	{"metadata", `{"usage":{"inputTokens":12,"outputTokens":9,"totalTokens":21},"metrics":{"latencyMs":120}}`},
}

// TestStream: a request whose caller asks for the reply as it comes goes
// to converse-stream, signed; the text and the output tool's input reach
// the caller in their pieces; the reply is the message the events make,
// usage included. A stream cut before its messageStop is tried again,
// the caller told.
func TestStream(t *testing.T) {
	f := newFake(t, events(t, streamEvents[:4]...), events(t, streamEvents...))
	m := newModel(t, f, 2, nil)
	var text, answer strings.Builder
	restarts := 0
	req := &agentrt.Request{Model: claude, MaxOutputTokens: 300, OutputTool: "answer",
		Messages: []agentrt.Message{{Role: agentrt.User, Content: "Weather in Paris?"}},
		Tools:    []agentrt.ToolSpec{weatherTool(), {Name: "answer", Description: "Answer.", Schema: []byte(`{"type":"object"}`)}},
		Stream: func(d agentrt.Delta) {
			if d.Restart {
				restarts++
				text.Reset()
				answer.Reset()
			}
			text.WriteString(d.Text)
			answer.WriteString(d.Answer)
		}}
	resp, err := m.Complete(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	got := f.requests()
	if len(got) != 2 || !strings.HasSuffix(got[0].rawPath, "/converse-stream") || restarts != 1 {
		t.Fatalf("%d requests (%v), %d restarts", len(got), got, restarts)
	}
	if text.String() != "Let me answer." || answer.String() != `{"city":"Paris"}` {
		t.Errorf("deltas: text %q, answer %q", text.String(), answer.String())
	}
	if resp.Message.Content != "Let me answer." || len(resp.Message.ToolCalls) != 1 || string(resp.Message.ToolCalls[0].Arguments) != `{"city":"Paris"}` || resp.Message.ToolCalls[0].ID != "tooluse_1" {
		t.Errorf("message %+v", resp.Message)
	}
	if resp.Usage != (agentrt.Usage{Input: 12, Output: 9}) {
		t.Errorf("usage %+v", resp.Usage)
	}
}

// TestStreamStallIsStream: a stream's progress reaches the stall watch
// through the request the SDK makes: a stream that sent a part of the
// reply and then keeps still is given up as a stream, waited on for its
// next part, not as a whole body to come at a least rate (which would cut
// a long stream that keeps making progress).
func TestStreamStallIsStream(t *testing.T) {
	still := events(t, streamEvents[:2]...)
	still.hold = true
	f := newFake(t, still)
	m, err := New(Config{Region: testRegion, Credentials: staticCreds, BaseURL: f.srv.URL, Stall: 200 * time.Millisecond, Retry: fastPolicy(1)})
	if err != nil {
		t.Fatal(err)
	}
	req := &agentrt.Request{Model: claude, MaxOutputTokens: 300, Messages: []agentrt.Message{{Role: agentrt.User, Content: "Weather in Paris?"}},
		Stream: func(agentrt.Delta) {}}
	_, err = m.Complete(t.Context(), req)
	if err == nil || !strings.Contains(err.Error(), "the stream sent keep-alives at most") {
		t.Errorf("a still stream: %v", err)
	}
}
