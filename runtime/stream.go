package runtime

import "agentc.dev/agentc/plan"

// streamer turns a call's deltas into model_delta events, with every
// secret replaced: a piece is sent on only where no secret could begin in
// it that the text so far does not hold whole (redact.Set.Prefix), so the
// pieces shown trail what arrived by the longest secret's length.
type streamer struct {
	x     *run
	round int
	// textAnswer says the reply's text is the answer (native mode).
	textAnswer bool
	pending    [2][]byte // text, answer: received, not yet sent on
	// held is, for each, how much was pending after a check that held
	// back more than the lookahead (a secret's start before a long run of
	// characters left out before matching), else 0: such text is checked
	// again only once it has grown by half, since each check reads all of
	// it.
	held [2]int
	any  bool // some delta came
}

// streamer sets req.Stream for a run that streams; its end flushes what
// is pending. For a run that does not, it is nil, and end does nothing.
func (x *run) streamer(round int, req *Request) *streamer {
	if !x.opts.Stream {
		return nil
	}
	s := &streamer{x: x, round: round, textAnswer: req.Answer != nil && req.Answer.Mode == plan.ModeNative}
	req.Stream = s.delta
	return s
}

func (s *streamer) delta(d Delta) {
	s.any = true
	if d.Restart {
		s.pending, s.held = [2][]byte{}, [2]int{}
		s.x.emit(Event{Type: EventModelDelta, Round: s.round, Model: s.x.shown(), Part: PartRestart})
		return
	}
	s.add(0, d.Text, false)
	s.add(1, d.Answer, false)
}

// add sends on what of part i's text is safe to show.
func (s *streamer) add(i int, more string, final bool) {
	if more == "" && !final {
		return
	}
	s.pending[i] = append(s.pending[i], more...)
	look := s.x.opts.Secrets.Lookahead()
	if !final && (len(s.pending[i]) <= look || s.held[i] > 0 && len(s.pending[i]) < s.held[i]+s.held[i]/2) {
		return
	}
	t := string(s.pending[i])
	var out string
	n := len(t)
	if final {
		out = s.x.opts.Secrets.String(t)
	} else {
		// The last Lookahead bytes wait for what follows them: a secret
		// may begin there.
		out, n = s.x.opts.Secrets.Prefix(t, len(t)-look)
	}
	s.pending[i] = append(s.pending[i][:0], t[n:]...)
	s.held[i] = 0
	if rest := len(t) - n; rest > 2*look {
		s.held[i] = rest
	}
	if out == "" {
		return
	}
	part := PartText
	if i == 1 || s.textAnswer {
		part = PartAnswer
	}
	s.x.emit(Event{Type: EventModelDelta, Round: s.round, Model: s.x.shown(), Delta: out, Part: part})
}

// restart voids what came of a call that failed and goes to the next
// model of the chain, as a provider voids a failed attempt before the
// next: the pieces after it are the fallback's reply alone.
func (s *streamer) restart() {
	if s != nil && s.any {
		s.delta(Delta{Restart: true})
	}
}

// end sends on what is pending; a reply that came whole, with no delta
// (a provider that does not stream, the test model, a journal), is sent
// on whole.
func (s *streamer) end(resp *Response) {
	if s == nil {
		return
	}
	if !s.any && resp != nil {
		s.pending[0] = []byte(resp.Message.Content)
		for _, c := range resp.Message.ToolCalls {
			if c.Name == s.x.outputTool && s.x.outputTool != "" {
				// The first call of the output tool is the answer
				// (toolTurn): another one's arguments are no part of it.
				s.pending[1] = append(s.pending[1], c.Arguments...)
				break
			}
		}
	}
	if resp == nil {
		return // the call failed: nothing more is shown of it
	}
	s.add(0, "", true)
	s.add(1, "", true)
}
