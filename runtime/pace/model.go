package pace

import (
	"context"
	"errors"
	"fmt"
	"time"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/provider/retry"
)

// Model returns m, a client of provider, paced by set: each call takes
// its worst case of tokens (agentrt.InputTokens and the request's
// max_output_tokens) from the limiter of the request's model when it
// limits tokens, settling to the usage reported, and each attempt waits
// its turn there (retry.WithGate: m must make its attempts through
// retry.Policy.Do, as agentc's providers do). A 429 an attempt meets
// holds every caller of that model. events, when not nil, receives a
// model_paced event for a long wait and for each 429 that begins a hold.
func Model(m agentrt.Model, provider string, set *Set, events func(agentrt.Event)) agentrt.Model {
	return &model{Model: m, provider: provider, set: set, events: events}
}

type model struct {
	agentrt.Model
	provider string
	set      *Set
	events   func(agentrt.Event)
}

func (m *model) Complete(ctx context.Context, req *agentrt.Request) (*agentrt.Response, error) {
	l := m.set.For(m.provider, req.Model)
	note := func(msg string) {
		if m.events != nil {
			m.events(agentrt.Event{Time: time.Now(), Type: agentrt.EventModelPaced, Model: req.Model, Message: msg})
		}
	}
	var t *Tokens
	if l.tok != nil {
		var err error
		if t, err = l.Take(ctx, agentrt.InputTokens(m.provider, req)+req.MaxOutputTokens, note); err != nil {
			return nil, said(err, note)
		}
	}
	resp, err := m.Model.Complete(retry.WithGate(ctx, gate{l, note}), req)
	if t != nil {
		// Settled as the run charges the call: a reply that reports no
		// usage, and a failure after a reply the provider bills, spent
		// tokens all the same.
		t.Settle(agentrt.CountedUsage(req, resp, err).Total())
	}
	return resp, err
}

// gate is a limiter as the retry policy consults it.
type gate struct {
	l    *Limiter
	note func(string)
}

func (g gate) Wait(ctx context.Context) error { return said(g.l.Wait(ctx, g.note), g.note) }

// said says a wait that would outlast the deadline, which the run
// reports only as a deadline passed during a model call.
func said(err error, note func(string)) error {
	var we *WaitError
	if errors.As(err, &we) {
		note(we.text(we.detail))
	}
	return err
}

func (g gate) Failed(err error) {
	re, ok := retry.RateLimited(err)
	if !ok {
		return
	}
	hold, began := g.l.Refused(re.RetryAfter)
	if !began {
		return
	}
	msg := fmt.Sprintf("%s refused a call for rate (429): every call to it waits %s", g.l.key, hold.Round(time.Millisecond))
	if !g.l.limit.None() {
		msg += fmt.Sprintf(", and then goes at %.0f%% of the limit, %s, for a while", g.l.Factor()*100, g.l.limit)
	}
	g.note(msg)
}
