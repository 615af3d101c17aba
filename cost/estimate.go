package cost

import (
	"fmt"
	"maps"
	"math"
	"math/bits"
	"slices"

	"agentc.dev/agentc/plan"
)

// Estimate is the worst case one run of a plan may spend, from its
// budgets and the price table, before it makes any call. It is an upper
// bound on what the runtime lets a run spend, given providers that keep
// to the context windows and output limits the table records.
type Estimate struct {
	Agent    string `json:"agent"`
	Tool     string `json:"tool,omitempty"` // for a called agent: the caller's tool
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// Tokens is the most the run may be charged, called agents included;
	// nil when nothing bounds it (see Unbounded).
	Tokens *int64 `json:"tokens"`
	// USD is the most the run may cost; nil when nothing bounds it, or
	// a model has no price.
	USD *float64 `json:"usd"`
	// Decides says which bound gives Tokens.
	Decides string `json:"decides"`
	// Assumptions are the steps of the arithmetic, in words.
	Assumptions []string `json:"assumptions"`
	// Unbounded says what leaves the run unbounded and what to set.
	Unbounded []string `json:"unbounded,omitempty"`
	// Prices are the table entries the run's models matched.
	Prices  []Price     `json:"prices,omitempty"`
	Callees []*Estimate `json:"callees,omitempty"`
	// Pool is the token pool the run draws from (agentc run
	// --pool-tokens), 0 for none: it bounds the run, and a batch, too.
	Pool int64 `json:"pool_tokens,omitempty"`
	// perToken is the dearest rate any token of the run is charged at,
	// called agents' included; priced says every model of the run and
	// its called agents has a price.
	perToken float64
	priced   bool
	// capped says every model call of the run and its called agents has
	// a bound on its output (model.max_output_tokens), which it reserves
	// from a pool; bigCall is the most one call of any of them may take,
	// 0 when one has no bound.
	capped  bool
	bigCall int64
}

// Overrides replace budgets of the run's own agent, as agentc run's flags
// do (--tool-budget, --token-budget, --rounds): a nil field keeps the
// plan's. Called agents keep their own budgets, as at run time. Pool is
// the tokens of one pool every run and called agent draws from
// (--pool-tokens), 0 for none.
type Overrides struct {
	Tools, Tokens, Rounds *int
	Pool                  int64
}

// Batch returns the worst case of n runs: n times one run's, and at most
// the pool's tokens (priced at the dearest rate) when the runs share one.
// A nil result is unbounded. It fails with an *OverflowError where the
// worst case is more than an int64 of tokens or a finite float64 of
// dollars holds.
func (e *Estimate) Batch(n int64) (tokens *int64, usd *float64, err error) {
	c := checked{agent: e.Agent}
	pt, pu := e.poolBound(&c)
	if e.Tokens != nil {
		if t, ok := product(*e.Tokens, n); ok {
			tokens = &t
		} else {
			c.fail(fmt.Sprintf("%d runs × %d tokens", n, *e.Tokens))
		}
	}
	if e.USD != nil {
		if v := math.Ceil(*e.USD*float64(n)*1e6-1e-6) / 1e6; finite(v) {
			usd = &v
		} else {
			c.fail(fmt.Sprintf("%d runs × $%g", n, *e.USD))
		}
	}
	// What the pool bounds is the batch's bound, whatever n runs' worth
	// would be.
	if pt != nil && (tokens == nil || *tokens > *pt) {
		tokens = pt
	}
	if pu != nil && (usd == nil || *usd > *pu) {
		usd = pu
	}
	if e.Tokens != nil && tokens == nil || e.USD != nil && usd == nil {
		return nil, nil, c.err
	}
	return tokens, usd, nil
}

// poolBound is what the pool lets all its runs spend together: its tokens
// where every call reserves its worst case; where a call has no bound on
// its output it reserves all that is left (one such call at a time) and
// may pass it by one call, so the pool's tokens − 1 + the largest call.
// Priced at the dearest rate of any model; nil where it bounds nothing,
// or where it is past what a number holds (which c records).
func (e *Estimate) poolBound(c *checked) (tokens *int64, usd *float64) {
	if e.Pool <= 0 {
		return nil, nil
	}
	n := e.Pool
	if !e.capped {
		if e.bigCall == 0 {
			return nil, nil
		}
		var ok bool
		if n, ok = sum(e.Pool-1, e.bigCall); !ok {
			c.fail(fmt.Sprintf("--pool-tokens %d − 1 + the largest call (%d)", e.Pool, e.bigCall))
			return nil, nil
		}
	}
	tokens = &n
	if e.priced {
		if v := math.Ceil(float64(n)*e.perToken*1e6-1e-6) / 1e6; finite(v) {
			usd = &v
		} else {
			c.fail(fmt.Sprintf("%d pool tokens at the dearest rate ($%g a million)", n, e.perToken*1e6))
		}
	}
	return tokens, usd
}

// Why lists what leaves the run unbounded, its called agents' included
// (each named by the tools that lead to it).
func (e *Estimate) Why() []string {
	out := append([]string(nil), e.Unbounded...)
	for _, c := range e.Callees {
		for _, w := range c.Why() {
			out = append(out, "agent tool "+c.Tool+": "+w)
		}
	}
	return out
}

// CostUnbounded reports whether nothing bounds what a run may cost.
func (e *Estimate) CostUnbounded() bool { return e.USD == nil }

// Worst returns the worst case of one run of p, priced by t:
//
//	one call   ≤ the model's context window (input and output together),
//	             priced at its dearest split, its output at most
//	             max_output_tokens (or the model's max_output) and each
//	             split at the tier its input reaches, every input token uncached,
//	             and written to the prompt cache unless model.cache is
//	             false, at the dearer of the input and cache write prices
//	one round  ≤ Attempts × (one call of the model, or of its escalation
//	             model, + one call of each fallback): an attempt the
//	             provider answered and lost is charged, and made again
//	model      ≤ min(rounds × one round, budgets.tokens − 1 + one round)
//	             (a round starts only while less than budgets.tokens is
//	             spent, so the last may pass it by one round)
//	called     ≤ budgets.tools × the dearest agent tool's own worst case
//	run        = model + called
//
// An escalation model counts as the run's model where it costs more.
//
// Every step is checked: a worst case past what an int64 of tokens or a
// finite float64 of dollars holds fails with an *OverflowError, never a
// smaller number.
func Worst(p *plan.Plan, t *Table) (*Estimate, error) { return WorstWith(p, t, Overrides{}) }

// WorstWith is Worst for a run whose budgets the overrides replace, and
// whose tokens a pool may bound.
func WorstWith(p *plan.Plan, t *Table, o Overrides) (*Estimate, error) {
	c := &checked{agent: p.Agent.Name}
	e := estimate(p, t, "", o, c)
	if c.err != nil {
		return nil, c.err
	}
	if o.Pool > 0 {
		e.Pool = o.Pool
		tokens, usd := e.poolBound(c)
		// A pool's bound past what a number holds matters only where
		// nothing else bounds the run.
		if c.err != nil && (e.Tokens == nil && tokens == nil || e.USD == nil && usd == nil && e.priced) {
			return nil, c.err
		}
		if tokens != nil && (e.Tokens == nil || *e.Tokens > *tokens) {
			e.Tokens, e.Decides = tokens, "--pool-tokens"
		}
		if usd != nil && (e.USD == nil || *e.USD > *usd) {
			e.USD = usd
		}
		switch {
		case e.capped:
			e.Assumptions = append(e.Assumptions, fmt.Sprintf("--pool-tokens %d: every call, called agents' too, reserves its worst case from the pool before it is sent, so the pool's tokens bound the run and a batch of runs, priced at the dearest rate", o.Pool))
		case tokens != nil:
			e.Assumptions = append(e.Assumptions, fmt.Sprintf("--pool-tokens %d: a call without model.max_output_tokens reserves all the pool has left and may pass it by one call, so the pool bounds the run and a batch of runs at %d − 1 + the largest call, %d, priced at the dearest rate", o.Pool, o.Pool, *tokens))
		default:
			e.Assumptions = append(e.Assumptions, fmt.Sprintf("--pool-tokens %d: a call without model.max_output_tokens may pass the pool by one call, which nothing bounds", o.Pool))
		}
	}
	return e, nil
}

// estimate is the worst case of one run of p; ch records the first step
// that overflows, after which the numbers mean nothing.
func estimate(p *plan.Plan, t *Table, tool string, o Overrides, ch *checked) *Estimate {
	a := &p.Agent
	prov := a.Model.Provider
	e := &Estimate{Agent: a.Name, Tool: tool, Provider: prov, Model: a.Model.Name, Assumptions: []string{}}
	say := func(format string, args ...any) { e.Assumptions = append(e.Assumptions, fmt.Sprintf(format, args...)) }
	unbounded := func(format string, args ...any) { e.Unbounded = append(e.Unbounded, fmt.Sprintf(format, args...)) }

	// Every model a call may go to: the agent's, the one it escalates to,
	// and its fallbacks; one call is priced at the dearest of them.
	type model struct{ prov, name string }
	models := []model{{prov, a.Model.Name}}
	if esc := a.Strategy.Escalate; esc != nil && esc.Model != "" && esc.Model != a.Model.Name {
		models = append(models, model{prov, esc.Model})
	}
	own := len(models) // the models a round starts on; the rest are fallbacks
	for _, fb := range p.Fallbacks {
		models = append(models, model{fb.Model.Provider, fb.Model.Name})
	}
	var call int64 // tokens of one call
	var callUSD float64
	// One round: each model of the chain it may go through (the agent's,
	// or the one it escalated to, then every fallback) answering and
	// losing every attempt of its call but the last, each attempt charged
	// a call's worth.
	var ownTok, fbTok int64
	var ownUSD, fbUSD float64
	// With prompt caching on, every input token of a call may be written
	// to the cache, which some providers bill above input.
	writes := a.Model.Caches()
	written := func(in int) int {
		if writes {
			return in
		}
		return 0
	}
	dearWrites := false
	callOK, priced := true, true
	e.priced, e.capped = true, a.Model.MaxOutputTokens > 0
	for i, mm := range models {
		prov, m := mm.prov, mm.name
		pr, ok := t.Lookup(prov, m)
		if !ok {
			callOK, priced, e.priced = false, false, false
			unbounded("%s/%s has no entry in the price table: nothing bounds one call's input or prices it; add it, with its context_window, to a price file (--prices or %s)", prov, m, EnvPrices)
			continue
		}
		e.Prices = append(e.Prices, pr)
		e.perToken = max(e.perToken, pr.perToken(writes))
		dearWrites = dearWrites || writes && pr.writesDearer()
		if pr.ContextWindow == 0 {
			callOK = false
			if pr.perToken(writes) > 0 {
				priced = false
			}
			unbounded("the price table gives no context_window for %s/%s: nothing bounds one call's input; add it in a price file (--prices or %s)", prov, m, EnvPrices)
			continue
		}
		ctx := pr.ContextWindow
		out, why := a.Model.MaxOutputTokens, "model.max_output_tokens"
		if out == 0 || pr.MaxOutput > 0 && pr.MaxOutput < out {
			out, why = pr.MaxOutput, "the model's max_output"
		}
		if out == 0 || out > ctx {
			out, why = ctx, "the context window"
		}
		call = max(call, int64(ctx))
		// A call of the whole window, in at least ctx − out: its price is
		// linear in the input between the points where a tier starts, so
		// the dearest is at an end or on either side of such a point (just
		// past a tier below the window, every token is at the tier's
		// prices and the rest of the window may be output).
		ins := []int{ctx - out, ctx}
		for _, t := range pr.Tiers {
			for _, in := range []int{t.Above, t.Above + 1} {
				if in > ctx-out && in < ctx {
					ins = append(ins, in)
				}
			}
		}
		var usd float64
		for _, in := range ins {
			usd = max(usd, ch.usd(pr.USD(in, 0, written(in), ctx-in), fmt.Sprintf("one call of %s/%s, %d tokens at $%g/$%g per million", prov, m, ctx, pr.Input, pr.Output)))
		}
		callUSD = max(callUSD, usd)
		if i < own {
			ownTok, ownUSD = max(ownTok, int64(ctx)), max(ownUSD, usd)
		} else {
			fbTok, fbUSD = fbTok+int64(ctx), fbUSD+usd
		}
		say("one call of %s/%s (priced as %s): at most its context window, %d tokens in and out together; at most %d out (%s)", prov, m, pr.Key, ctx, out, why)
	}

	rounds, roundsFrom := a.Budgets.RoundLimit(), "budgets.rounds"
	if o.Rounds != nil {
		rounds, roundsFrom = *o.Rounds, "--rounds"
	}
	say("at most %d rounds (%s)", rounds, roundsFrom)
	// What one round may charge: every model of the chain, each call made
	// up to Attempts times.
	roundTok := ch.mul(Attempts, ch.add(ownTok, fbTok, "one call of each model of the chain"), fmt.Sprintf("%d attempts of each model of the chain", Attempts))
	roundUSD := ch.usd(Attempts*(ownUSD+fbUSD), fmt.Sprintf("%d attempts of each model of the chain", Attempts))
	if callOK {
		if len(models) > own {
			say("one round: a call may be made %d times (agentc run's retries), each attempt the provider answered and lost charged as one call, on the model and on each of its %d fallbacks: %d tokens", Attempts, len(models)-own, roundTok)
		} else {
			say("one round: a call may be made %d times (agentc run's retries), each attempt the provider answered and lost charged as one call: %d tokens", Attempts, roundTok)
		}
	}
	tokens, tokensFrom := int64(a.Budgets.Tokens), "budgets.tokens"
	if o.Tokens != nil {
		tokens, tokensFrom = int64(*o.Tokens), "--token-budget"
	}
	toolBudget, toolsFrom := a.Budgets.Tools, "budgets.tools"
	if o.Tools != nil {
		toolBudget, toolsFrom = o.Tools, "--tool-budget"
	}
	// The model's tokens and dollars are the least of two bounds, either
	// of which may be past what a number holds: only where both are is
	// it an overflow.
	modelTok, tokOK := product(int64(rounds), roundTok)
	modelUSD := float64(rounds) * roundUSD
	usdOK := finite(modelUSD)
	if callOK {
		e.Decides = roundsFrom + " × one round"
	}
	if tokens > 0 {
		say("%s %d: a round starts only while fewer are spent, so the last round may pass it (%d − 1 + one round)", tokensFrom, tokens, tokens)
		switch r := a.Budgets.Reserve(int(tokens), a.Model.MaxOutputTokens); {
		case r > 0 && a.Budgets.AnswerReserve > 0:
			say("the answer reserve (%d) is kept inside %s: it changes what the last rounds ask for, not the total", r, tokensFrom)
		case r > 0:
			say("the answer reserve (one answering turn: the conversation it sends and %d out) is kept inside %s: it changes what the last rounds ask for, not the total", r, tokensFrom)
		}
		if n, ok := sum(tokens-1, roundTok); callOK && ok && (!tokOK || n < modelTok) {
			modelTok, tokOK, e.Decides = n, true, tokensFrom+" − 1 + one round"
		}
	} else {
		say("no budgets.tokens: rounds alone bound the model calls")
	}
	if a.Budgets.Deadline != "" {
		say("budgets.deadline %s bounds time, not tokens", a.Budgets.Deadline)
	}

	// Called agents: their runs are charged to this one.
	var agentTools []string
	for _, name := range slices.Sorted(maps.Keys(a.Capabilities.Tools)) {
		if a.Capabilities.Tools[name].Kind == "agent" {
			agentTools = append(agentTools, name)
		}
	}
	var nestTok int64
	var nestUSD float64
	nestTokOK, nestUSDOK := true, true
	// The largest call of the run or its called agents, for a pool's bound.
	big, bigOK := call, callOK
	for _, name := range agentTools {
		c, ok := p.Callees[name]
		if !ok || c.Plan == nil {
			nestTokOK, nestUSDOK = false, false
			e.priced, e.capped, bigOK = false, false, false
			unbounded("agent tool %s: the plan holds no compiled agent for it", name)
			continue
		}
		ce := estimate(c.Plan, t, name, Overrides{}, ch)
		e.Callees = append(e.Callees, ce)
		e.perToken = max(e.perToken, ce.perToken)
		e.priced = e.priced && ce.priced
		e.capped = e.capped && ce.capped
		bigOK = bigOK && ce.bigCall > 0
		big = max(big, ce.bigCall)
		if ce.Tokens == nil {
			nestTokOK = false
		} else {
			nestTok = max(nestTok, *ce.Tokens)
		}
		if ce.USD == nil {
			nestUSDOK = false
		} else {
			nestUSD = max(nestUSD, *ce.USD)
		}
	}
	if len(agentTools) > 0 {
		switch b := toolBudget; {
		case b == nil:
			nestTokOK = false
			if nestUSD > 0 || !nestUSDOK {
				nestUSDOK = false
			}
			unbounded("agent tools %v: nothing bounds how often they are called; set budgets.tools", agentTools)
		default:
			say("%s %d: each call may be of the agent tool whose run may spend the most", toolsFrom, *b)
			nestTok = ch.mul(int64(*b), nestTok, fmt.Sprintf("%s %d × the dearest called agent (%d tokens)", toolsFrom, *b, nestTok))
			nestUSD = ch.usd(float64(*b)*nestUSD, fmt.Sprintf("%s %d × the dearest called agent ($%g)", toolsFrom, *b, nestUSD))
			if e.Decides != "" {
				e.Decides += " + " + toolsFrom + " × the dearest called agent"
			}
		}
	}
	if tokens > 0 && priced && callOK && nestUSDOK {
		// Before the last round, fewer than the token budget's tokens, each at
		// the dearest rate of any model of the run.
		if v := float64(tokens-1)*e.perToken + roundUSD; finite(v) && (!usdOK || v < modelUSD) {
			modelUSD, usdOK = v, true
		}
	}
	if callOK && !tokOK {
		ch.fail(fmt.Sprintf("%s %d × one round (%d tokens), with no budgets.tokens below it", roundsFrom, rounds, roundTok))
	}
	if priced && nestUSDOK && !usdOK {
		ch.fail(fmt.Sprintf("%s %d × one round ($%g)", roundsFrom, rounds, roundUSD))
	}
	if bigOK {
		e.bigCall = big
	}
	if callOK && nestTokOK {
		e.Tokens = ptr(ch.add(modelTok, nestTok, fmt.Sprintf("the model's %d tokens + the called agents' %d", modelTok, nestTok)))
	} else {
		e.Decides = "unbounded"
	}
	if priced && nestUSDOK {
		// Free models cost nothing, bounded or not. Rounded up to a
		// millionth of a dollar, so it stays a bound.
		e.USD = ptr(ch.usd(math.Ceil((modelUSD+nestUSD)*1e6-1e-6)/1e6, fmt.Sprintf("the model's $%g + the called agents' $%g", modelUSD, nestUSD)))
	}
	if dearWrites {
		say("prices: every input token uncached and written to the prompt cache (model.cache), at the cache write price where it is above the input price; tokens before the last round at the dearest rate of the run's models")
	} else {
		say("prices: every input token uncached; tokens before the last round at the dearest rate of the run's models")
	}
	return e
}

// OverflowError is a worst case past what an estimate can hold: more
// tokens than an int64, or dollars that are not a finite float64.
type OverflowError struct {
	Agent string
	Step  string // the step of the arithmetic that overflowed, in words
}

func (e *OverflowError) Error() string {
	return fmt.Sprintf("agent %q: the worst case overflows at %s: no estimate can be given; lower the budgets, the batch or the prices", e.Agent, e.Step)
}

// checked does an estimate's arithmetic on non-negative numbers and
// keeps the first step that overflows.
type checked struct {
	agent string
	err   error
}

func (c *checked) fail(step string) {
	if c.err == nil {
		c.err = &OverflowError{Agent: c.agent, Step: step}
	}
}

func (c *checked) mul(a, b int64, step string) int64 {
	n, ok := product(a, b)
	if !ok {
		c.fail(step)
		return math.MaxInt64
	}
	return n
}

// product multiplies two non-negative numbers; ok is false where the
// product is past an int64.
func product(a, b int64) (n int64, ok bool) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if a < 0 || b < 0 || hi != 0 || lo > math.MaxInt64 {
		return 0, false
	}
	return int64(lo), true
}

func (c *checked) add(a, b int64, step string) int64 {
	n, ok := sum(a, b)
	if !ok {
		c.fail(step)
		return math.MaxInt64
	}
	return n
}

// sum adds two non-negative numbers; ok is false where the sum is past
// an int64.
func sum(a, b int64) (n int64, ok bool) {
	s, carry := bits.Add64(uint64(a), uint64(b), 0)
	if a < 0 || b < 0 || carry != 0 || s > math.MaxInt64 {
		return 0, false
	}
	return int64(s), true
}

func finite(v float64) bool { return !math.IsInf(v, 0) && !math.IsNaN(v) }

func (c *checked) usd(v float64, step string) float64 {
	if !finite(v) {
		c.fail(step)
		return math.MaxFloat64
	}
	return v
}

func ptr[T any](v T) *T { return &v }

// Attempts is the most attempts agentc run makes of one model call
// (the providers' retry.Default, TestAttempts): an attempt the provider
// answered and lost is billed, and a run charges it as a call's input and
// the reply it read (runtime.Retried).
const Attempts = 5
