package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"agentc.dev/agentc/cost"
)

// providers maps genai-prices' provider ids to agentc's provider names:
// the providers agentc serves, and those it is about to.
var providers = map[string]string{
	"openai":    "openai",
	"anthropic": "anthropic",
	"google":    "google",
	"aws":       "bedrock",
	"azure":     "azure",
}

// srcProvider is a provider of genai-prices' data file (v2), with the
// fields read here.
type srcProvider struct {
	ID     string     `json:"id"`
	Models []srcModel `json:"models"`
}

type srcModel struct {
	ID            string          `json:"id"`
	Match         json.RawMessage `json:"match"`
	ContextWindow float64         `json:"context_window"` // a whole number, which JavaScript may write 2e5
	Prices        json.RawMessage `json:"prices"`
}

// condition is one of a model's conditional prices.
type condition struct {
	Constraint map[string]json.RawMessage `json:"constraint"`
	Prices     map[string]json.RawMessage `json:"prices"`
}

// step is a price by the input tokens of a call: base, or a tier's price
// once the call's input is more than its start (genai-prices' cliff: the
// tier's price applies to all the call's tokens).
type step struct {
	base  float64
	tiers []tierAt
}

type tierAt struct {
	start int
	price float64
}

// at is the price for a call of n input tokens.
func (s step) at(n int) float64 {
	p := s.base
	for _, t := range s.tiers {
		if n > t.start {
			p = t.price
		}
	}
	return p
}

func (s step) starts() []int {
	var out []int
	for _, t := range s.tiers {
		out = append(out, t.start)
	}
	return out
}

// maxStep is the larger of two prices at every size of call.
func maxStep(a, b step) step {
	out := step{base: max(a.base, b.base)}
	starts := append(a.starts(), b.starts()...)
	slices.Sort(starts)
	for _, s := range slices.Compact(starts) {
		out.tiers = append(out.tiers, tierAt{s, max(a.at(s+1), b.at(s+1))})
	}
	return out
}

// whole is f as a count of tokens, if it is one.
func whole(f float64) (int, bool) {
	if f < 0 || f > 1<<40 || f != float64(int(f)) {
		return 0, false
	}
	return int(f), true
}

func readStep(raw json.RawMessage) (step, error) {
	var f float64
	if err := json.Unmarshal(raw, &f); err == nil {
		return step{base: f}, nil
	}
	var t struct {
		Base  *float64 `json:"base"`
		Tiers []struct {
			Start float64 `json:"start"`
			Price float64 `json:"price"`
		} `json:"tiers"`
	}
	if err := json.Unmarshal(raw, &t); err != nil || t.Base == nil {
		return step{}, fmt.Errorf("a price is neither a number nor {base, tiers}: %s", raw)
	}
	s := step{base: *t.Base}
	for _, x := range t.Tiers {
		n, ok := whole(x.Start)
		if !ok {
			return step{}, fmt.Errorf("a tier's start is not a whole number of tokens: %v", x.Start)
		}
		s.tiers = append(s.tiers, tierAt{n, x.Price})
	}
	sort.SliceStable(s.tiers, func(i, j int) bool { return s.tiers[i].start < s.tiers[j].start })
	return s, nil
}

// prices are what agentc's table holds of one condition: input, cached
// input (a cache read), a cache write and output; writes says the data
// gives a cache write price (where it does not, a write is priced as
// input, and the table leaves cache_write out).
type prices struct {
	input, cached, written, output step
	writes                         bool
}

func readPrices(m map[string]json.RawMessage) (p prices, ok bool, err error) {
	in, hasIn := m["input_mtok"]
	out, hasOut := m["output_mtok"]
	if !hasIn || !hasOut {
		return p, false, nil
	}
	if p.input, err = readStep(in); err != nil {
		return p, false, err
	}
	if p.output, err = readStep(out); err != nil {
		return p, false, err
	}
	p.cached = p.input // agentc prices a cache read as input where none is given
	if c, ok := m["cache_read_mtok"]; ok {
		if p.cached, err = readStep(c); err != nil {
			return p, false, err
		}
	}
	p.written = p.input // and a cache write likewise
	if c, ok := m["cache_write_mtok"]; ok {
		if p.written, err = readStep(c); err != nil {
			return p, false, err
		}
		p.writes = true
	}
	return p, true, nil
}

// modelPrices reduces a model's prices to one set: the conditional price
// in force on date, and where others start after date or hold at some
// times of day, at every size of call the highest of them, so that the
// table never prices a call below what it may cost after date.
func modelPrices(raw json.RawMessage, date string) (prices, bool, error) {
	var flat map[string]json.RawMessage
	if err := json.Unmarshal(raw, &flat); err == nil {
		return readPrices(flat)
	}
	var conds []condition
	if err := json.Unmarshal(raw, &conds); err != nil {
		return prices{}, false, fmt.Errorf("prices are neither an object nor a list of conditions")
	}
	inForce := -1
	var also []int
	for i, c := range conds {
		// A start date, written {"start_date": D} or with "type":
		// "start_date" too; any other constraint (a time of day) holds
		// only at times, and counts as a later price.
		start, dated := "", false
		var typ string
		if t, ok := c.Constraint["type"]; ok && json.Unmarshal(t, &typ) != nil {
			return prices{}, false, fmt.Errorf("constraint type: %s", t)
		}
		if s, ok := c.Constraint["start_date"]; ok && (typ == "" || typ == "start_date") {
			if err := json.Unmarshal(s, &start); err != nil {
				return prices{}, false, fmt.Errorf("start_date: %s", s)
			}
			_, typed := c.Constraint["type"]
			dated = len(c.Constraint) == 1 || typed && len(c.Constraint) == 2
		}
		switch {
		case len(c.Constraint) == 0 || dated && start <= date:
			inForce = i // the last in force is the one that holds
		default:
			also = append(also, i)
		}
	}
	if inForce < 0 {
		return prices{}, false, nil
	}
	p, ok, err := readPrices(conds[inForce].Prices)
	if !ok || err != nil {
		return p, ok, err
	}
	for _, i := range also {
		q, ok, err := readPrices(conds[i].Prices)
		if err != nil {
			return p, false, err
		}
		if ok {
			p = prices{maxStep(p.input, q.input), maxStep(p.cached, q.cached), maxStep(p.written, q.written), maxStep(p.output, q.output), p.writes || q.writes}
		}
	}
	return p, true, nil
}

// name is a model name an alias may be: what a caller sends, not a
// pattern's fragment ending in a separator.
var name = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/@-]*[A-Za-z0-9]$`)

// matchNames are the names a model's match rule names as wholes: every
// equals, and the prefixes and fragments (starts_with, contains) that are
// names themselves. An "and" names nothing: no one name satisfies it for
// certain.
func matchNames(raw json.RawMessage) ([]string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("match: %v", err)
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		switch k {
		case "or":
			var subs []json.RawMessage
			if err := json.Unmarshal(m[k], &subs); err != nil {
				return nil, fmt.Errorf("match.or: %v", err)
			}
			for _, s := range subs {
				names, err := matchNames(s)
				if err != nil {
					return nil, err
				}
				out = append(out, names...)
			}
		case "equals", "starts_with", "contains":
			var s string
			if err := json.Unmarshal(m[k], &s); err != nil {
				return nil, fmt.Errorf("match.%s: %v", k, err)
			}
			if name.MatchString(s) {
				out = append(out, s)
			}
		}
	}
	return out, nil
}

type entry struct {
	key                      string
	p                        prices
	contextWindow, maxOutput int
	aliases                  []string
}

type limit struct {
	ContextWindow int `json:"context_window"`
	MaxOutput     int `json:"max_output"`
}

// Generate reads genai-prices' data file and the limits kept by hand and
// writes agentc's price table.
func Generate(data, limitsData []byte, date, origin string) ([]byte, error) {
	var src []srcProvider
	if err := json.Unmarshal(data, &src); err != nil {
		return nil, fmt.Errorf("the data file: %v", err)
	}
	var limits map[string]map[string]limit
	if err := json.Unmarshal(limitsData, &limits); err != nil {
		return nil, fmt.Errorf("the limits file: %v", err)
	}
	table := map[string][]*entry{}
	for _, sp := range src {
		prov, ok := providers[sp.ID]
		if !ok {
			continue
		}
		taken := map[string]bool{}
		for _, m := range sp.Models {
			taken[m.ID] = true
		}
		for _, m := range sp.Models {
			p, ok, err := modelPrices(m.Prices, date)
			if err != nil {
				return nil, fmt.Errorf("%s/%s: %v", sp.ID, m.ID, err)
			}
			if !ok || !name.MatchString(m.ID) {
				continue // not priced by input and output tokens
			}
			names, err := matchNames(m.Match)
			if err != nil {
				return nil, fmt.Errorf("%s/%s: %v", sp.ID, m.ID, err)
			}
			ctx, ok := whole(m.ContextWindow)
			if !ok {
				return nil, fmt.Errorf("%s/%s: context_window is not a whole number of tokens: %v", sp.ID, m.ID, m.ContextWindow)
			}
			e := &entry{key: m.ID, p: p, contextWindow: ctx}
			for _, n := range names {
				if !taken[n] { // a name two models match goes to the first
					taken[n] = true
					e.aliases = append(e.aliases, n)
				}
			}
			slices.Sort(e.aliases)
			table[prov] = append(table[prov], e)
		}
	}
	for _, es := range table {
		sort.Slice(es, func(i, j int) bool { return es[i].key < es[j].key })
	}
	// The limits are kept by the names agentc has used; each finds its
	// entry as a run's model would.
	parsed, err := cost.Parse("generated", render(table, date, origin), "")
	if err != nil {
		return nil, fmt.Errorf("the generated table does not read: %v", err)
	}
	for _, prov := range slices.Sorted(maps.Keys(limits)) {
		for _, model := range slices.Sorted(maps.Keys(limits[prov])) {
			l := limits[prov][model]
			pr, ok := parsed.Lookup(prov, model)
			if !ok {
				return nil, fmt.Errorf("the limits file: %s/%s matches no model of the data file", prov, model)
			}
			for _, e := range table[prov] {
				if e.key == pr.Key {
					// The larger window: a call may fill what either
					// source says, and the worst case must hold it.
					e.contextWindow = max(e.contextWindow, l.ContextWindow)
					e.maxOutput = max(e.maxOutput, l.MaxOutput)
				}
			}
		}
	}
	out := render(table, date, origin)
	if _, err := cost.Parse("generated", out, ""); err != nil {
		return nil, fmt.Errorf("the generated table does not read: %v", err)
	}
	return out, nil
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// render writes the table: one model a line, providers and models in
// order, so that an update's diff shows what changed.
func render(table map[string][]*entry, date, origin string) []byte {
	var b bytes.Buffer
	source := "genai-prices (MIT, see genai-prices.LICENSE): " + origin + ", reduced by cost/internal/updateprices: " +
		"USD per million tokens, cached input is a cache read, cache write a cache write (input where absent); a tier applies to every token of a call whose input is more than its above; " +
		"where a price changes after as_of, the higher of the two"
	fmt.Fprintf(&b, "{\n  \"as_of\": %s,\n  \"source\": %s,\n  \"models\": {", quote(date), quote(source))
	for i, prov := range slices.Sorted(maps.Keys(table)) {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\n    %s: {", quote(prov))
		for j, e := range table[prov] {
			if j > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "\n      %s: {\"input\": %s, \"cached_input\": %s, ", quote(e.key), num(e.p.input.base), num(e.p.cached.base))
			if e.p.writes {
				fmt.Fprintf(&b, "\"cache_write\": %s, ", num(e.p.written.base))
			}
			fmt.Fprintf(&b, "\"output\": %s", num(e.p.output.base))
			if e.contextWindow > 0 {
				fmt.Fprintf(&b, ", \"context_window\": %d", e.contextWindow)
			}
			if e.maxOutput > 0 {
				fmt.Fprintf(&b, ", \"max_output\": %d", e.maxOutput)
			}
			starts := append(append(e.p.input.starts(), e.p.cached.starts()...), e.p.output.starts()...)
			if e.p.writes {
				starts = append(starts, e.p.written.starts()...)
			}
			slices.Sort(starts)
			var tiers []string
			for _, s := range slices.Compact(starts) {
				written := ""
				if e.p.writes {
					written = fmt.Sprintf(", \"cache_write\": %s", num(e.p.written.at(s+1)))
				}
				tiers = append(tiers, fmt.Sprintf("{\"above\": %d, \"input\": %s, \"cached_input\": %s%s, \"output\": %s}", s, num(e.p.input.at(s+1)), num(e.p.cached.at(s+1)), written, num(e.p.output.at(s+1))))
			}
			if len(tiers) > 0 {
				fmt.Fprintf(&b, ", \"tiers\": [%s]", strings.Join(tiers, ", "))
			}
			if len(e.aliases) > 0 {
				qs := make([]string, len(e.aliases))
				for k, a := range e.aliases {
					qs[k] = quote(a)
				}
				fmt.Fprintf(&b, ", \"aliases\": [%s]", strings.Join(qs, ", "))
			}
			b.WriteString("}")
		}
		b.WriteString("\n    }")
	}
	b.WriteString("\n  }\n}\n")
	return b.Bytes()
}
