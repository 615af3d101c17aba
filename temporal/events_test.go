package temporal

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

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

// TestEventLogBounds: a long message is cut when kept, at a character's
// start; a page stays within maxPageBytes however large its events, and
// holds one at least; adding past the bound costs no copy of the log.
func TestEventLogBounds(t *testing.T) {
	l := &eventLog{}
	big := strings.Repeat("é", maxEventMessage) // two bytes a character
	for range 100 {
		l.add(agentrt.Event{Type: "tool_result", Message: "x" + big})
	}
	if m := l.events[0].Message; len(m) > maxEventMessage+64 || !strings.HasSuffix(m, "bytes more)") || strings.ContainsRune(m, utf8.RuneError) {
		t.Errorf("a long message kept as %d bytes, ending %q", len(m), m[len(m)-20:])
	}
	next, pages := 0, 0
	for {
		p, _ := l.page(next)
		if len(p.Events) == 0 {
			break
		}
		b, _ := json.Marshal(p)
		if len(b) > maxPageBytes+maxEventMessage*2 {
			t.Fatalf("a page of %d bytes", len(b))
		}
		next, pages = p.From+len(p.Events), pages+1
	}
	if next != 100 || pages < 2 {
		t.Errorf("paged to %d in %d pages", next, pages)
	}
	// Past the bound, adding is cheap: allocations stay few per add.
	l = &eventLog{}
	for range maxKeptEvents {
		l.add(agentrt.Event{Type: "e"})
	}
	if n := testing.AllocsPerRun(1000, func() { l.add(agentrt.Event{Type: "e"}) }); n > 1 {
		t.Errorf("%.1f allocations an add past the bound", n)
	}
}
