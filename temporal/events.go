package temporal

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"go.temporal.io/sdk/client"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/redact"
)

// QueryEvents is the query that returns a run's events from an index on
// (its argument, an int): an EventsPage. A front that waits on a run
// (agentc serve --temporal) passes them on as they happen.
const QueryEvents = "events"

const (
	// maxKeptEvents bounds the events a run's workflow keeps for
	// QueryEvents: past it, the oldest are dropped.
	maxKeptEvents = 4096
	// eventsPage bounds the events one query returns.
	eventsPage = 256
	// eventsPoll is how soon a waiting front asks for a run's events
	// again after some came; each time none come it waits twice as long,
	// up to eventsPollMax.
	eventsPoll    = 250 * time.Millisecond
	eventsPollMax = 2 * time.Second
	// eventsDrain bounds the wait for the events a run ended with.
	eventsDrain = 5 * time.Second
	// eventsAsk bounds one query, so that a slow one does not hold up
	// noticing the run's end.
	eventsAsk = 2 * time.Second
	// maxEventMessage bounds an event's message as it is kept: a failed
	// tool call's can be its whole output.
	maxEventMessage = 16 << 10
	// maxPageBytes bounds the JSON of one page (a query's result, which
	// the Temporal server takes up to 2 MB of); a page holds at least one
	// event.
	maxPageBytes = 512 << 10
)

// EventsPage is QueryEvents' answer: the events from index From on, at
// most eventsPage of them and maxPageBytes of their JSON (one at least).
// From is past the index asked for when the events between were dropped
// (maxKeptEvents).
type EventsPage struct {
	From   int             `json:"from"`
	Events []agentrt.Event `json:"events"`
}

// eventLog keeps a run's last maxKeptEvents events in its workflow, in
// replays too: a query answered on another worker, after a replay, gives
// the same.
type eventLog struct {
	first  int // index of events[0]
	events []agentrt.Event
}

func (l *eventLog) add(ev agentrt.Event) {
	if len(ev.Message) > maxEventMessage {
		cut := maxEventMessage
		for cut > 0 && !utf8.RuneStart(ev.Message[cut]) {
			cut--
		}
		ev.Message = ev.Message[:cut] + fmt.Sprintf(" … (%d bytes more)", len(ev.Message)-cut)
	}
	l.events = append(l.events, ev)
	if over := len(l.events) - maxKeptEvents; over > 0 {
		// Sliced, not copied: append moves what is kept when it grows.
		l.events = l.events[over:]
		l.first += over
	}
}

// redactedEvent is ev with the worker's secrets replaced, as every
// field of it the JSON holds: whoever can query the run (a Temporal
// client) reads it.
func redactedEvent(secrets *redact.Set, ev agentrt.Event) agentrt.Event {
	b, err := json.Marshal(ev)
	if err != nil {
		return agentrt.Event{Time: ev.Time, Type: ev.Type}
	}
	var out agentrt.Event
	if err := json.Unmarshal(secrets.JSON(b), &out); err != nil {
		return agentrt.Event{Time: ev.Time, Type: ev.Type}
	}
	return out
}

// page answers QueryEvents.
func (l *eventLog) page(from int) (EventsPage, error) {
	from = max(from, l.first)
	i := min(from-l.first, len(l.events))
	p := EventsPage{From: from}
	size := 0
	for _, ev := range l.events[i:min(len(l.events), i+eventsPage)] {
		b, _ := json.Marshal(ev)
		if size += len(b); size > maxPageBytes && len(p.Events) > 0 {
			break
		}
		p.Events = append(p.Events, ev)
	}
	return p, nil
}

// Follow waits for a run's report as Wait does and, while it waits,
// hands events each event the run makes, in order, asking its workflow
// for them every eventsPoll, less often while none come; once the run
// has ended, the events it ended with. A nil events only waits. events is called from one goroutine, the
// caller's, and never after Follow returns.
func Follow(ctx context.Context, c client.Client, run client.WorkflowRun, events func(agentrt.Event)) (*agentrt.Report, error) {
	if events == nil {
		return Wait(ctx, c, run)
	}
	type result struct {
		rep *agentrt.Report
		err error
	}
	done := make(chan result, 1)
	go func() {
		rep, err := Wait(ctx, c, run)
		done <- result{rep, err}
	}()
	next := 0
	// ask hands on one page of events; it reports whether there may be
	// more at once.
	ask := func(ctx context.Context) bool {
		qctx, cancel := context.WithTimeout(ctx, eventsAsk)
		defer cancel()
		v, err := c.QueryWorkflow(qctx, run.GetID(), run.GetRunID(), QueryEvents, next)
		if err != nil {
			return false
		}
		var p EventsPage
		if err := v.Get(&p); err != nil || p.From < next || len(p.Events) == 0 {
			return false
		}
		for _, ev := range p.Events {
			events(ev)
		}
		next = p.From + len(p.Events)
		return true // a page may be short of the log's end: ask again
	}
	wait := eventsPoll
	tick := time.NewTimer(wait)
	defer tick.Stop()
	for {
		select {
		case r := <-done:
			if ctx.Err() == nil {
				// The events the run ended with; not for a caller that
				// has gone.
				dctx, cancel := context.WithTimeout(ctx, eventsDrain)
				for ask(dctx) {
				}
				cancel()
			}
			return r.rep, r.err
		case <-tick.C:
			got := false
			for ask(ctx) {
				got = true
			}
			// A run that says nothing for a while (a long call, a call
			// waiting for approval) is asked less often.
			if got {
				wait = eventsPoll
			} else {
				wait = min(2*wait, eventsPollMax)
			}
			tick.Reset(wait)
		}
	}
}
