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
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

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
	Output      float64 `json:"output"`
	// ContextWindow bounds the input and output of one call together; 0
	// when the table does not say.
	ContextWindow int `json:"context_window,omitempty"`
	// MaxOutput bounds the output of one call; 0 when the table does not say.
	MaxOutput int `json:"max_output,omitempty"`
	// Key is the table entry the model matched; From the file it came
	// from ("" for the embedded table) and AsOf that file's date.
	Key  string `json:"key"`
	From string `json:"from,omitempty"`
	AsOf string `json:"as_of"`
}

// USD is the price of input tokens (cached of them read from a cache),
// and output tokens.
func (p Price) USD(input, cached, output int) float64 {
	cached = min(max(cached, 0), input)
	return (float64(input-cached)*p.Input + float64(cached)*p.CachedInput + float64(output)*p.Output) / 1e6
}

// perToken is the most the model charges for any one token.
func (p Price) perToken() float64 { return max(p.Input, p.CachedInput, p.Output) / 1e6 }

// Table holds prices by provider and model. The zero Table holds none.
type Table struct {
	AsOf   string // the embedded table's date, or the first file's
	Source string // where the prices were taken, in words
	// Files are the price files that extended the embedded table.
	Files  []string
	models map[string]map[string]Price
}

// Embedded returns the table shipped in the binary.
func Embedded() *Table {
	t, err := Parse("prices.json", embedded, "")
	if err != nil {
		panic(err) // the shipped table is checked by its tests
	}
	return t
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
	if t.models == nil {
		t.models = map[string]map[string]Price{}
	}
	for prov, ms := range u.models {
		if t.models[prov] == nil {
			t.models[prov] = map[string]Price{}
		}
		for k, p := range ms {
			t.models[prov][k] = p
		}
	}
	t.Files = append(t.Files, u.Files...)
}

// dateSuffix is a dated snapshot's suffix: OpenAI's -2024-08-06,
// Anthropic's -20250929, or an alias's -latest.
var dateSuffix = regexp.MustCompile(`-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$`)

// Lookup returns the price of a provider's model: the entry named
// exactly, else the entry of the name without its date suffix
// (gpt-4o-2024-08-06 is priced as gpt-4o, claude-sonnet-4-5-20250929 as
// claude-sonnet-4-5, claude-3-5-haiku-latest as claude-3-5-haiku). No
// other prefix matches: gpt-4o-mini is never priced as gpt-4o. The test
// model, which runs offline, costs nothing unless the table prices it.
func (t *Table) Lookup(provider, model string) (Price, bool) {
	ms := t.models[provider]
	if p, ok := ms[model]; ok {
		return p, true
	}
	if base := dateSuffix.ReplaceAllString(model, ""); base != model {
		if p, ok := ms[base]; ok {
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
	var out []string
	for prov, ms := range t.models {
		for k := range ms {
			out = append(out, prov+"/"+k)
		}
	}
	sort.Strings(out)
	return out
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
// cached_input (USD per million tokens; input's when absent),
// context_window and max_output (tokens). name is the file's name for
// errors, from what the prices record as their origin.
func Parse(name string, data []byte, from string) (*Table, error) {
	p := &parser{name: name, data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	p.dec.UseNumber()
	root, err := p.value()
	if err != nil {
		return nil, err
	}
	if rest := bytes.TrimLeft(data[p.dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
		return nil, p.errAt(len(data)-len(rest), "data after the price table's JSON object")
	}
	t := &Table{models: map[string]map[string]Price{}}
	if from != "" {
		t.Files = []string{from}
	}
	if err := p.fields(root, "the price table", map[string]bool{"as_of": true, "models": true, "source": false}, func(k string, v *node) error {
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
				t.models[prov] = map[string]Price{}
				return p.fields(pv, "models."+prov, nil, func(model string, mv *node) error {
					pr, err := p.price(prov+"."+model, mv)
					if err != nil {
						return err
					}
					pr.Key, pr.From = model, from
					t.models[prov][model] = pr
					return nil
				})
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
	return t, nil
}

// price reads one model's entry.
func (p *parser) price(what string, v *node) (Price, error) {
	var pr Price
	cached := false
	err := p.fields(v, "models."+what, map[string]bool{"input": true, "output": true, "cached_input": false, "context_window": false, "max_output": false}, func(k string, fv *node) error {
		n, ok := fv.v.(json.Number)
		if !ok {
			return p.errAt(fv.off, "models.%s.%s: want a number", what, k)
		}
		f, err := n.Float64()
		if err != nil || f < 0 {
			return p.errAt(fv.off, "models.%s.%s: want a number of at least 0, not %s", what, k, n)
		}
		switch k {
		case "input":
			pr.Input = f
		case "output":
			pr.Output = f
		case "cached_input":
			pr.CachedInput, cached = f, true
		default:
			i, err := n.Int64()
			if err != nil || i > 1<<40 {
				return p.errAt(fv.off, "models.%s.%s: want a whole number of tokens, not %s", what, k, n)
			}
			if k == "context_window" {
				pr.ContextWindow = int(i)
			} else {
				pr.MaxOutput = int(i)
			}
		}
		return nil
	})
	if !cached {
		pr.CachedInput = pr.Input
	}
	return pr, err
}

// node is a JSON value with the offset it starts at; an object keeps its
// members in order.
type node struct {
	off  int
	v    any // string, json.Number, bool, nil; or nil with members
	obj  bool
	keys []string
	koff []int
	vals []*node
}

type parser struct {
	name string
	data []byte
	dec  *json.Decoder
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

func (p *parser) value() (*node, error) {
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
		n.obj = d == '{'
		for p.dec.More() {
			if n.obj {
				koff := p.start()
				kt, err := p.dec.Token()
				if err != nil {
					return nil, p.errAt(koff, "not JSON: %v", err)
				}
				k := kt.(string)
				for _, seen := range n.keys {
					if seen == k {
						return nil, p.errAt(koff, "%q appears twice", k)
					}
				}
				n.keys, n.koff = append(n.keys, k), append(n.koff, koff)
			}
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
		}
		if _, err := p.dec.Token(); err != nil {
			return nil, p.errAt(p.start(), "not JSON: %v", err)
		}
		if !n.obj {
			n.v = "array" // not an object: fields refuses it
		}
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
