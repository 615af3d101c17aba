package temporal

import (
	"fmt"
	"strings"
	"testing"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/redact"
)

// TestEventLog: a run's events are paged from an index on, a page at a
// time; past maxKeptEvents the oldest are dropped, and a page asked from
// before them starts at the oldest kept.
func TestEventLog(t *testing.T) {
	l := &eventLog{}
	p, _ := l.page(0)
	if p.From != 0 || len(p.Events) != 0 {
		t.Fatalf("no events: %+v", p)
	}
	total := maxKeptEvents + 10
	for i := range total {
		l.add(agentrt.Event{Type: "e", Message: fmt.Sprint(i)})
	}
	if l.first != 10 || len(l.events) != maxKeptEvents {
		t.Fatalf("kept from %d, %d events", l.first, len(l.events))
	}
	p, _ = l.page(0)
	if p.From != 10 || len(p.Events) != eventsPage || p.Events[0].Message != "10" {
		t.Errorf("from 0: from %d, %d events, the first %q", p.From, len(p.Events), p.Events[0].Message)
	}
	p, _ = l.page(total - 3)
	if p.From != total-3 || len(p.Events) != 3 || p.Events[2].Message != fmt.Sprint(total-1) {
		t.Errorf("the last three: %+v", p)
	}
	p, _ = l.page(total + 5)
	if p.From != total+5 || len(p.Events) != 0 {
		t.Errorf("past the end: %+v", p)
	}
	// What a page holds is a copy: the log's own are not changed by it.
	p, _ = l.page(total - 1)
	p.Events[0].Message = "changed"
	if q, _ := l.page(total - 1); q.Events[0].Message != fmt.Sprint(total-1) {
		t.Error("a page shares the log's events")
	}
}

// TestRedactedEvent: what the workflow keeps of an event, for whoever
// queries it, holds none of the worker's secrets.
func TestRedactedEvent(t *testing.T) {
	secrets := redact.Of("sk-worker-key-0123456789")
	ev := agentrt.Event{Type: agentrt.EventModelError, Model: "m", Message: "attempt 1 failed: 401: bad key sk-worker-key-0123456789"}
	got := redactedEvent(secrets, ev)
	if got.Type != ev.Type || got.Model != "m" || strings.Contains(got.Message, "sk-worker-key") || !strings.Contains(got.Message, "attempt 1 failed: 401") {
		t.Errorf("kept %+v", got)
	}
}
