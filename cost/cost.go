// Package cost prices what agents spend: a dated table of what providers
// charge per million tokens, which a user's own file may extend, and the
// worst case a run of a plan may spend before it makes any call
// (Estimate). It imports only the plan, so the runtime prices its rounds
// and the compiler bounds a manifest from the same table.
package cost

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"agentc.dev/agentc/internal/leaf/userfile"
	"agentc.dev/agentc/plan"
)

//go:embed prices.json
var embedded []byte

// EnvPrices names the environment variable that names a price file
// extending the embedded table; a --prices flag overrides it.
const EnvPrices = "AGENTC_PRICES"

// Price is what a provider charges for one model, in USD per million
// tokens, and the model's limits where the table gives them.
type Price struct {
	Input       float64 `json:"input"`
	CachedInput float64 `json:"cached_input"`
	// CacheWrite is what input written to the provider's prompt cache
	// costs (Anthropic's cache writes, dearer than input).
	CacheWrite float64 `json:"cache_write"`
	Output     float64 `json:"output"`
	// ContextWindow bounds the input and output of one call together; 0
	// when the table does not say.
	ContextWindow int `json:"context_window,omitempty"`
	// MaxOutput bounds the output of one call; 0 when the table does not say.
	MaxOutput int `json:"max_output,omitempty"`
	// Tiers are the prices of calls with more input: each applies to
	// every token of a call whose input is more than its Above. In order
	// of Above.
	Tiers []Tier `json:"tiers,omitempty"`
	// Key is the table entry the model matched; From the file it came
	// from ("" for the embedded table) and AsOf that file's date.
	Key  string `json:"key"`
	From string `json:"from,omitempty"`
	AsOf string `json:"as_of"`
}

// Tier is what a model charges, in USD per million tokens, for every token
// of a call whose input is more than Above tokens.
type Tier struct {
	Above       int     `json:"above"`
	Input       float64 `json:"input"`
	CachedInput float64 `json:"cached_input"`
	CacheWrite  float64 `json:"cache_write"`
	Output      float64 `json:"output"`
}

// USD is the price of one call's input tokens (cached of them read from
// the provider's prompt cache, written of them written to it) and output
// tokens: at the tier the input reaches. Reads and writes are parts of
// the input apart from each other; what they claim past it is not priced.
func (p Price) USD(input, cached, written, output int) float64 {
	return p.USDCalls(input, input, cached, written, output)
}

// USDCalls is the price of tokens several calls used together (a call
// and the attempts of it the provider answered and lost, each a call of
// its own), none with more than largest tokens of input: at the tier
// largest reaches, not the tier of their inputs summed.
func (p Price) USDCalls(largest, input, cached, written, output int) float64 {
	cached = min(max(cached, 0), input)
	written = min(max(written, 0), input-cached)
	in, ci, cw, out := p.Input, p.CachedInput, p.CacheWrite, p.Output
	for _, t := range p.Tiers {
		if largest > t.Above {
			in, ci, cw, out = t.Input, t.CachedInput, t.CacheWrite, t.Output
		}
	}
	return (float64(input-cached-written)*in + float64(cached)*ci + float64(written)*cw + float64(output)*out) / 1e6
}

// perToken is the most the model charges for any one token, at any tier
// a call can reach: none past the context window. writes says input may
// be written to the prompt cache.
func (p Price) perToken(writes bool) float64 {
	m := max(p.Input, p.CachedInput, p.Output)
	if writes {
		m = max(m, p.CacheWrite)
	}
	for _, t := range p.Tiers {
		if p.ContextWindow == 0 || t.Above < p.ContextWindow {
			m = max(m, t.Input, t.CachedInput, t.Output)
			if writes {
				m = max(m, t.CacheWrite)
			}
		}
	}
	return m / 1e6
}

// writesDearer reports whether a cache write costs more than input, at
// any tier a call can reach.
func (p Price) writesDearer() bool {
	if p.CacheWrite > p.Input {
		return true
	}
	for _, t := range p.Tiers {
		if (p.ContextWindow == 0 || t.Above < p.ContextWindow) && t.CacheWrite > t.Input {
			return true
		}
	}
	return false
}

// Table holds prices by provider and model. The zero Table holds none.
type Table struct {
	AsOf   string // the embedded table's date, or the first file's
	Source string // where the prices were taken, in words
	// Files are the price files that extended the embedded table, and
	// Dates their as_of, in the same order.
	Files  []string
	Dates  []string
	models map[string]map[string]Price
	// aliases are other names of a provider's models, by the name, each
	// to its entry's key.
	aliases map[string]map[string]string
	// base is the embedded table under models and aliases, which replace
	// its entries and names; nil in a table read from one file.
	base *shipped
}

// Embedded returns the table shipped in the binary: a table of its own,
// which the caller may extend.
func Embedded() *Table {
	s := shippedTable()
	return &Table{AsOf: s.asOf, Source: s.source, base: s}
}

// shippedTable is the shipped table's date and source, and where each
// provider's entries are, found once.
var shippedTable = sync.OnceValue(func() *shipped { return readShipped(embedded) })

// shipped is the embedded table, whose providers are read one at a time,
// each when a model of it is first looked up: a run prices the models of
// one or two providers, and reading every entry was a tenth of the CPU
// time of a plan's run. The tests read the whole table as a price file is
// read (Parse), so each provider is read here without checking it again.
type shipped struct {
	data         []byte
	asOf, source string
	providers    map[string]*shippedProvider
}

// shippedProvider is one provider of the shipped table: where its entries
// are, and once read, its entries and their other names.
type shippedProvider struct {
	name    string
	off     int // where its object starts in the embedded table
	once    sync.Once
	models  map[string]Price
	aliases map[string]string
}

// readShipped finds the date, the source and each provider's entries in
// the embedded table, reading no entry.
func readShipped(data []byte) *shipped {
	s := &shipped{data: data, providers: map[string]*shippedProvider{}}
	p := &parser{name: "prices.json", data: data}
	pos := 0
	p.space(&pos)
	pos++ // {
	for {
		k, _, ok := p.member(&pos)
		if !ok {
			return s
		}
		switch k {
		case "as_of":
			s.asOf = p.str(&pos)
		case "source":
			s.source = p.str(&pos)
		case "models":
			pos++ // {
			for {
				prov, _, ok := p.member(&pos)
				if !ok {
					break
				}
				s.providers[prov] = &shippedProvider{name: prov, off: pos}
				p.skip(&pos)
			}
		default:
			p.skip(&pos)
		}
	}
}

// provider returns the entries and names of a provider of the shipped
// table, read the first time it is asked for; nil maps for a provider it
// does not have.
func (s *shipped) provider(name string) (map[string]Price, map[string]string) {
	sp := s.providers[name]
	if sp == nil {
		return nil, nil
	}
	sp.once.Do(func() {
		p := &parser{name: "prices.json", data: s.data}
		pos := sp.off
		n, err := p.scan(&pos, 2)
		t := &Table{AsOf: s.asOf, models: map[string]map[string]Price{}, aliases: map[string]map[string]string{}}
		if err == nil {
			err = p.provider(t, sp.name, n, "")
		}
		if err != nil {
			panic(err) // the shipped table is checked by its tests
		}
		sp.models, sp.aliases = t.models[sp.name], t.aliases[sp.name]
	})
	return sp.models, sp.aliases
}

// Load returns the embedded table extended by the price file at path, if
// path is not empty; entries of the file replace the embedded entries of
// the same provider and model, whole, and add the others.
func Load(path string) (*Table, error) {
	t := Embedded()
	if path == "" {
		return t, nil
	}
	data, err := userfile.Read(path, plan.MaxPriceBytes, "a price file")
	if err != nil {
		return nil, fmt.Errorf("price file: %w", err)
	}
	u, err := Parse(path, data, path)
	if err != nil {
		return nil, err
	}
	t.Extend(u)
	return t, nil
}

// Extend adds u's entries to t, replacing those of the same provider and
// model.
func (t *Table) Extend(u *Table) {
	if u.base != nil { // the shipped table's entries, each replacing t's
		ms, as := map[string]map[string]Price{}, map[string]map[string]string{}
		for prov := range u.base.providers {
			ms[prov], as[prov] = u.base.provider(prov)
		}
		t.Extend(&Table{models: ms, aliases: as})
	}
	if t.models == nil {
		t.models = map[string]map[string]Price{}
	}
	if t.aliases == nil {
		t.aliases = map[string]map[string]string{}
	}
	for prov, ms := range u.models {
		if t.models[prov] == nil {
			t.models[prov] = map[string]Price{}
		}
		if t.aliases[prov] == nil {
			t.aliases[prov] = map[string]string{}
		}
		for k, p := range ms {
			t.models[prov][k] = p
		}
		for a, k := range u.aliases[prov] {
			t.aliases[prov][a] = k
		}
	}
	t.Files = append(t.Files, u.Files...)
	t.Dates = append(t.Dates, u.Dates...)
}

// dateSuffix is a dated snapshot's suffix: OpenAI's -2024-08-06,
// Anthropic's -20250929, or an alias's -latest.
var dateSuffix = regexp.MustCompile(`-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$`)

// Lookup returns the price of a provider's model: the entry named
// exactly, else the entry with the name among its aliases, else the same
// for the name without its date suffix (gpt-4o-2024-08-06 is priced as
// gpt-4o, claude-sonnet-4-5-20250929 as claude-sonnet-4-5,
// claude-3-5-haiku-latest as claude-3-5-haiku). No other prefix matches:
// gpt-4o-mini is never priced as gpt-4o. The test model, which runs
// offline, costs nothing unless the table prices it.
func (t *Table) Lookup(provider, model string) (Price, bool) {
	var bm map[string]Price
	var ba map[string]string
	if t.base != nil {
		bm, ba = t.base.provider(provider)
	}
	entry := func(k string) (Price, bool) {
		if p, ok := t.models[provider][k]; ok {
			return p, true
		}
		p, ok := bm[k]
		return p, ok
	}
	find := func(name string) (Price, bool) {
		if p, ok := entry(name); ok {
			return p, true
		}
		k, ok := t.aliases[provider][name]
		if !ok {
			k, ok = ba[name]
		}
		if ok {
			return entry(k)
		}
		return Price{}, false
	}
	if p, ok := find(model); ok {
		return p, true
	}
	if base := dateSuffix.ReplaceAllString(model, ""); base != model {
		if p, ok := find(base); ok {
			return p, true
		}
	}
	if provider == "test" {
		return Price{Key: "test"}, true
	}
	return Price{}, false
}

// Entries lists the table's entries as "provider/model", sorted.
func (t *Table) Entries() []string {
	seen := map[string]bool{}
	add := func(prov string, ms map[string]Price) {
		for k := range ms {
			seen[prov+"/"+k] = true
		}
	}
	for prov, ms := range t.models {
		add(prov, ms)
	}
	if t.base != nil {
		for prov := range t.base.providers {
			ms, _ := t.base.provider(prov)
			add(prov, ms)
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// FileError is a price file that does not read: where, and what is wrong.
type FileError struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *FileError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

// Parse reads a price file: a JSON object with as_of (a date,
// YYYY-MM-DD), source (where the prices were taken) and models, by
// provider and model, each with input, output and optionally
// cached_input and cache_write (USD per million tokens; input's when
// absent), context_window and max_output (tokens). name is the file's name for
// errors, from what the prices record as their origin.
func Parse(name string, data []byte, from string) (*Table, error) {
	p := &parser{name: name, data: data}
	root, err := p.root()
	if err != nil {
		return nil, err
	}
	t := &Table{models: map[string]map[string]Price{}, aliases: map[string]map[string]string{}}
	if err := p.fields(root, "the price table", tableFields, func(k string, v *node) error {
		switch k {
		case "as_of":
			s, ok := v.v.(string)
			if _, err := time.Parse(time.DateOnly, s); !ok || err != nil {
				return p.errAt(v.off, "as_of: want the date the prices were taken, as YYYY-MM-DD")
			}
			t.AsOf = s
		case "source":
			s, ok := v.v.(string)
			if !ok {
				return p.errAt(v.off, "source: want a string")
			}
			t.Source = s
		case "models":
			return p.fields(v, "models", nil, func(prov string, pv *node) error {
				return p.provider(t, prov, pv, from)
			})
		}
		return nil
	}); err != nil {
		return nil, err
	}
	for prov := range t.models {
		for k, pr := range t.models[prov] {
			pr.AsOf = t.AsOf
			t.models[prov][k] = pr
		}
	}
	if from != "" {
		t.Files, t.Dates = []string{from}, []string{t.AsOf}
	}
	return t, nil
}

// provider reads a provider's entries, pv, into t; the prices say they
// come from the file from, as of t.AsOf.
func (p *parser) provider(t *Table, prov string, pv *node, from string) error {
	t.models[prov] = make(map[string]Price, len(pv.keys))
	t.aliases[prov] = map[string]string{}
	aliasAt := map[string]int{}
	if err := p.fields(pv, "models."+prov, nil, func(model string, mv *node) error {
		pr, aliases, err := p.price(prov+"."+model, mv)
		if err != nil {
			return err
		}
		pr.Key, pr.From, pr.AsOf = model, from, t.AsOf
		t.models[prov][model] = pr
		for _, a := range aliases {
			if _, dup := t.aliases[prov][a.name]; dup {
				return p.errAt(a.off, "models.%s.%s.aliases: %q is already another name of %s", prov, model, a.name, t.aliases[prov][a.name])
			}
			t.aliases[prov][a.name], aliasAt[a.name] = model, a.off
		}
		return nil
	}); err != nil {
		return err
	}
	for _, a := range slices.Sorted(maps.Keys(aliasAt)) {
		if _, ok := t.models[prov][a]; ok {
			return p.errAt(aliasAt[a], "models.%s.%s.aliases: %q is the name of an entry", prov, t.aliases[prov][a], a)
		}
	}
	return nil
}

// The members of the table, an entry and a tier, true for those required.
var (
	tableFields = map[string]bool{"as_of": true, "models": true, "source": false}
	entryFields = map[string]bool{"input": true, "output": true, "cached_input": false, "cache_write": false, "context_window": false, "max_output": false, "tiers": false, "aliases": false}
	tierFields  = map[string]bool{"above": true, "input": true, "output": true, "cached_input": false, "cache_write": false}
)

// alias is one of an entry's other names, and where it is written.
type alias struct {
	name string
	off  int
}

// price reads one model's entry.
func (p *parser) price(what string, v *node) (Price, []alias, error) {
	var pr Price
	var aliases []alias
	err := p.fields(v, "models."+what, entryFields, func(k string, fv *node) error {
		switch k {
		case "tiers":
			return p.tiers(what, fv, &pr)
		case "aliases":
			if !fv.arr {
				return p.errAt(fv.off, "models.%s.aliases: want a list of model names", what)
			}
			for _, a := range fv.vals {
				s, ok := a.v.(string)
				if !ok || s == "" {
					return p.errAt(a.off, "models.%s.aliases: want a model name", what)
				}
				aliases = append(aliases, alias{s, a.off})
			}
			return nil
		}
		return p.rates(what, k, fv, &pr.Input, &pr.CachedInput, &pr.CacheWrite, &pr.Output, &pr.ContextWindow, &pr.MaxOutput)
	})
	if err != nil {
		return pr, nil, err
	}
	if !slices.Contains(v.keys, "cached_input") {
		pr.CachedInput = pr.Input
	}
	if !slices.Contains(v.keys, "cache_write") {
		pr.CacheWrite = pr.Input
	}
	return pr, aliases, nil
}

// tiers reads an entry's tiers: a list of objects, each with above (more
// than the last's), input, output and optionally cached_input and
// cache_write (the tier's input when absent).
func (p *parser) tiers(what string, v *node, pr *Price) error {
	if !v.arr {
		return p.errAt(v.off, "models.%s.tiers: want a list of tiers", what)
	}
	for i, tv := range v.vals {
		var t Tier
		tw := fmt.Sprintf("%s.tiers[%d]", what, i)
		if err := p.fields(tv, "models."+tw, tierFields, func(k string, fv *node) error {
			return p.rates(tw, k, fv, &t.Input, &t.CachedInput, &t.CacheWrite, &t.Output, &t.Above, nil)
		}); err != nil {
			return err
		}
		if !slices.Contains(tv.keys, "cached_input") {
			t.CachedInput = t.Input
		}
		if !slices.Contains(tv.keys, "cache_write") {
			t.CacheWrite = t.Input
		}
		if i > 0 && t.Above <= pr.Tiers[i-1].Above {
			return p.errAt(tv.off, "models.%s.above: want more than the tier before's (%d)", tw, pr.Tiers[i-1].Above)
		}
		pr.Tiers = append(pr.Tiers, t)
	}
	return nil
}

// rates reads one number of an entry or a tier into its field: a price
// (input, cached_input, cache_write, output) or a count of tokens
// (context_window or above into tokens, max_output into maxOut).
func (p *parser) rates(what, k string, fv *node, input, cached, written, output *float64, tokens, maxOut *int) error {
	n, ok := fv.v.(json.Number)
	if !ok {
		return p.errAt(fv.off, "models.%s.%s: want a number", what, k)
	}
	f, err := n.Float64()
	if err != nil || f < 0 {
		return p.errAt(fv.off, "models.%s.%s: want a number of at least 0, not %s", what, k, n)
	}
	if k != "context_window" && k != "above" && k != "max_output" && f > MaxPrice {
		return p.errAt(fv.off, "models.%s.%s: a price of at most %g USD a million tokens (a dollar a token), not %s", what, k, float64(MaxPrice), n)
	}
	switch k {
	case "input":
		*input = f
	case "output":
		*output = f
	case "cached_input":
		*cached = f
	case "cache_write":
		*written = f
	default:
		i, err := n.Int64()
		if err != nil || i > 1<<40 {
			return p.errAt(fv.off, "models.%s.%s: want a whole number of tokens, not %s", what, k, n)
		}
		if k == "max_output" {
			*maxOut = int(i)
		} else {
			*tokens = int(i)
		}
	}
	return nil
}

// MaxPrice is the most a price file may charge, in USD a million tokens:
// a dollar a token, thousands of times the dearest model's list price.
// Past it a run's cost could pass what a float64 holds, and a report then
// says +Inf, or cannot be written at all.
const MaxPrice = 1e6

// maxDepth bounds how deep a price file nests: a table is six levels
// deep. Past it the file is refused, positioned, before it is read
// further; the reader recurses once a level.
const maxDepth = 64

// node is a JSON value with the offset it starts at; an object keeps its
// members in order.
type node struct {
	off  int
	v    any // string, json.Number, bool, nil; or nil with members
	obj  bool
	arr  bool // a list: its values are vals
	keys []string
	koff []int
	vals []*node
	seen map[string]bool // keys, once there are many: each looked up once
}

// add adds member k, written at koff, to an object, or says where it
// appears twice.
func (n *node) add(p *parser, k string, koff int) error {
	dup := false
	switch {
	case n.seen != nil:
		dup = n.seen[k]
	case len(n.keys) < 16:
		dup = slices.Contains(n.keys, k)
	default:
		n.seen = make(map[string]bool, 2*len(n.keys))
		for _, seen := range n.keys {
			n.seen[seen] = true
		}
		dup = n.seen[k]
	}
	if dup {
		return p.errAt(koff, "%q appears twice", k)
	}
	if n.seen != nil {
		n.seen[k] = true
	}
	n.keys, n.koff = append(n.keys, k), append(n.koff, koff)
	return nil
}

type parser struct {
	name string
	data []byte
	dec  *json.Decoder
}

// root reads the file's JSON value. JSON, as a price file is, is read in
// one pass (tree); anything else through encoding/json's decoder, a token
// at a time, for its message and where it says the fault is.
func (p *parser) root() (*node, error) {
	if json.Valid(p.data) {
		return p.tree()
	}
	p.dec = json.NewDecoder(bytes.NewReader(p.data))
	p.dec.UseNumber()
	root, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if rest := bytes.TrimLeft(p.data[p.dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
		return nil, p.errAt(len(p.data)-len(rest), "data after the price table's JSON object")
	}
	return root, nil // nested deeper than json.Valid allows: as before
}

// tree reads p.data, known to be JSON, into the nodes value makes of it,
// offsets and all, in one pass: the decoder's tokens cost about a hundred
// times as much, and reading the shipped table is part of every run's
// start.
func (p *parser) tree() (*node, error) {
	pos := 0
	return p.scan(&pos, 0)
}

func (p *parser) scan(pos *int, depth int) (*node, error) {
	d := p.data
	p.space(pos)
	n := &node{off: *pos}
	switch c := d[*pos]; c {
	case '{', '[':
		if depth == maxDepth {
			return nil, p.errAt(*pos, "nested more than %d levels deep; a price table is six", maxDepth)
		}
		n.obj, n.arr = c == '{', c == '['
		*pos++
		for {
			if n.obj {
				k, koff, ok := p.member(pos)
				if !ok {
					break
				}
				if err := n.add(p, k, koff); err != nil {
					return nil, err
				}
			} else if !p.element(pos) {
				break
			}
			v, err := p.scan(pos, depth+1)
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
		}
	case '"':
		n.v = p.str(pos)
	case 't':
		n.v, *pos = true, *pos+len("true")
	case 'f':
		n.v, *pos = false, *pos+len("false")
	case 'n':
		*pos += len("null")
	default:
		start := *pos
		p.number(pos)
		n.v = json.Number(d[start:*pos])
	}
	return n, nil
}

// space moves *pos past white space.
func (p *parser) space(pos *int) {
	for *pos < len(p.data) && strings.IndexByte(" \t\r\n", p.data[*pos]) >= 0 {
		*pos++
	}
}

// number moves *pos past the number there.
func (p *parser) number(pos *int) {
	for *pos < len(p.data) && strings.IndexByte("+-.0123456789eE", p.data[*pos]) >= 0 {
		*pos++
	}
}

// member moves *pos, inside an object known to be JSON, to the value of
// its next member and returns the member's name and where it is written;
// at the end of the object it moves past it and returns false.
func (p *parser) member(pos *int) (key string, off int, ok bool) {
	d := p.data
	p.space(pos)
	if d[*pos] == '}' {
		*pos++
		return "", 0, false
	}
	if d[*pos] == ',' {
		*pos++
		p.space(pos)
	}
	off = *pos
	key = p.str(pos)
	p.space(pos)
	*pos++ // :
	p.space(pos)
	return key, off, true
}

// element moves *pos, inside a list known to be JSON, to its next value;
// at the end of the list it moves past it and returns false.
func (p *parser) element(pos *int) bool {
	p.space(pos)
	switch p.data[*pos] {
	case ']':
		*pos++
		return false
	case ',':
		*pos++
	}
	return true
}

// skip moves *pos past the value there, known to be JSON.
func (p *parser) skip(pos *int) {
	d := p.data
	p.space(pos)
	depth := 0
	for {
		switch d[*pos] {
		case '"':
			p.skipString(pos)
		case '{', '[':
			depth++
			*pos++
		case '}', ']':
			depth--
			*pos++
		case 't', 'n':
			*pos += len("true")
		case 'f':
			*pos += len("false")
		default:
			if depth == 0 {
				p.number(pos)
			} else {
				*pos++ // white space, a separator or a number's byte
			}
		}
		if depth == 0 {
			return
		}
	}
}

// str reads the string at *pos, known to be JSON, as the decoder would:
// escapes decoded, bytes that are not UTF-8 replaced.
func (p *parser) str(pos *int) string {
	start := *pos
	p.skipString(pos)
	q := p.data[start:*pos]
	if bytes.IndexByte(q, '\\') < 0 && utf8.Valid(q) {
		return string(q[1 : len(q)-1])
	}
	var s string
	_ = json.Unmarshal(q, &s) // valid JSON
	return s
}

// skipString moves *pos past the string there, known to be JSON.
func (p *parser) skipString(pos *int) {
	d := p.data
	for *pos++; d[*pos] != '"'; *pos++ {
		if d[*pos] == '\\' {
			*pos++
		}
	}
	*pos++
}

func (p *parser) errAt(off int, format string, args ...any) error {
	line, col := 1, 1
	for _, c := range p.data[:min(max(off, 0), len(p.data))] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return &FileError{File: p.name, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// start is where the next value begins: past white space and the
// separators the decoder has not yet read.
func (p *parser) start() int {
	off := int(p.dec.InputOffset())
	for off < len(p.data) && strings.IndexByte(" \t\r\n:,", p.data[off]) >= 0 {
		off++
	}
	return off
}

func (p *parser) value(depth int) (*node, error) {
	off := p.start()
	tok, err := p.dec.Token()
	if err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, p.errAt(int(se.Offset), "not JSON: %v", se)
		}
		return nil, p.errAt(off, "not JSON: %v", err)
	}
	n := &node{off: off}
	switch d := tok.(type) {
	case json.Delim:
		if d != '{' && d != '[' {
			return nil, p.errAt(off, "not JSON: unexpected %v", d)
		}
		if depth == maxDepth {
			return nil, p.errAt(off, "nested more than %d levels deep; a price table is six", maxDepth)
		}
		n.obj = d == '{'
		for p.dec.More() {
			if n.obj {
				koff := p.start()
				kt, err := p.dec.Token()
				if err != nil {
					return nil, p.errAt(koff, "not JSON: %v", err)
				}
				if err := n.add(p, kt.(string), koff); err != nil {
					return nil, err
				}
			}
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
		}
		if _, err := p.dec.Token(); err != nil {
			return nil, p.errAt(p.start(), "not JSON: %v", err)
		}
		n.arr = !n.obj
	default:
		n.v = tok
	}
	return n, nil
}

// fields calls f on each member of an object, in order. known, when not
// nil, lists the member names allowed, true for those required.
func (p *parser) fields(n *node, what string, known map[string]bool, f func(k string, v *node) error) error {
	if !n.obj {
		return p.errAt(n.off, "%s: want an object", what)
	}
	for i, k := range n.keys {
		if _, ok := known[k]; known != nil && !ok {
			return p.errAt(n.koff[i], "%s: unknown field %q", what, k)
		}
		if err := f(k, n.vals[i]); err != nil {
			return err
		}
	}
	var missing []string
	for k, req := range known {
		if req && !slices.Contains(n.keys, k) {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return p.errAt(n.off, "%s: missing %s", what, strings.Join(missing, ", "))
	}
	return nil
}
