package cost

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
)

// FuzzParse: a price file either reads, and then it was JSON and every
// price is a finite number of at least 0, or it is refused with an error
// positioned inside the file; never a panic.
func FuzzParse(f *testing.F) {
	f.Add(embedded)
	f.Add([]byte(`{"as_of": "2025-01-01", "models": {"openai": {"m": {"input": 1, "output": 2}}}}`))
	f.Add([]byte(`{"as_of": "2025-01-01", "models": {"openai": {"m": {"input": 1, "output": 2, "cached_input": 0.5, "context_window": 8192, "max_output": 1024}}}}`))
	f.Add([]byte(`{"as_of": "2025-01-01", "models": {"openai": {"m": {"input": -1, "output": 2}}}}`))
	f.Add([]byte(`{"as_of": "2025-01-01", "models": {"openai": {"m": {"input": 1, "output": 2, "tiers": [{"above": 10, "input": 2, "output": 3}], "aliases": ["n", "m-1"]}}}}`))
	f.Add([]byte(`{"as_of": "2025-01-01", "as_of": "2025-01-02", "models": {}}`))
	f.Add([]byte("{\"as_of\": \"2025-01-01\",\n \"models\": {\"x\": {\"m\": {\"input\": 1e400, \"output\": 0}}}} trailing"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sameTree(t, data)
		tab, err := Parse("prices.json", data, "prices.json")
		if err != nil {
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v (%T) is not a FileError", err, err)
			}
			if fe.File != "prices.json" || !strings.HasPrefix(err.Error(), "prices.json:") {
				t.Fatalf("error %q does not name the file", err)
			}
			if fe.Line != 0 && (fe.Line < 1 || fe.Line > strings.Count(string(data), "\n")+1 || fe.Col < 1 || fe.Col > len(data)+1) {
				t.Fatalf("error %q is positioned outside the file (%d lines, %d bytes)", err, strings.Count(string(data), "\n")+1, len(data))
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("Parse accepted what is not JSON: %q", data)
		}
		sameShipped(t, data, tab)
		for prov, models := range tab.models {
			for model := range models {
				pr, ok := tab.Lookup(prov, model)
				if !ok {
					t.Fatalf("%s/%s does not look up", prov, model)
				}
				rates := []float64{pr.Input, pr.CachedInput, pr.Output}
				for i, tier := range pr.Tiers {
					rates = append(rates, tier.Input, tier.CachedInput, tier.Output)
					if tier.Above < 0 || i > 0 && tier.Above <= pr.Tiers[i-1].Above {
						t.Fatalf("%s/%s has tiers out of order: %+v", prov, model, pr.Tiers)
					}
				}
				for _, v := range rates {
					if v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
						t.Fatalf("%s/%s has the price %v", prov, model, v)
					}
				}
				if pr.ContextWindow < 0 || pr.MaxOutput < 0 {
					t.Fatalf("%s/%s has limits %d, %d", prov, model, pr.ContextWindow, pr.MaxOutput)
				}
			}
			for a, k := range tab.aliases[prov] {
				if pr, ok := tab.Lookup(prov, a); !ok || pr.Key != k {
					t.Fatalf("the alias %s/%s does not look up %s: %+v", prov, a, k, pr)
				}
			}
		}
	})
}

// FuzzChecked: the estimate's arithmetic gives the exact product and sum
// of two non-negative numbers wherever it fits an int64, and says it does
// not everywhere else.
func FuzzChecked(f *testing.F) {
	f.Add(int64(3), int64(1)<<40)
	f.Add(int64(math.MaxInt64), int64(1))
	f.Add(int64(1)<<32, int64(1)<<31)
	f.Add(int64(-1), int64(2))
	f.Fuzz(func(t *testing.T, a, b int64) {
		ba, bb := big.NewInt(a), big.NewInt(b)
		maxI := big.NewInt(math.MaxInt64)
		for _, c := range []struct {
			name string
			got  func(a, b int64) (int64, bool)
			want *big.Int
		}{
			{"product", product, new(big.Int).Mul(ba, bb)},
			{"sum", sum, new(big.Int).Add(ba, bb)},
		} {
			n, ok := c.got(a, b)
			fits := a >= 0 && b >= 0 && c.want.Cmp(maxI) <= 0
			if ok != fits || ok && big.NewInt(n).Cmp(c.want) != 0 {
				t.Errorf("%s(%d, %d) = %d, %v; want %v, fits %v", c.name, a, b, n, ok, c.want, fits)
			}
		}
	})
}

// sameShipped: data read as the shipped table is, a provider at a time
// and unchecked, gives the entries whole, the table Parse read of it.
func sameShipped(t *testing.T, data []byte, whole *Table) {
	t.Helper()
	s := readShipped(data)
	if s.asOf != whole.AsOf || s.source != whole.Source || len(s.providers) != len(whole.models) {
		t.Fatalf("read a provider at a time: %q, %q, %d providers; whole: %q, %q, %d", s.asOf, s.source, len(s.providers), whole.AsOf, whole.Source, len(whole.models))
	}
	for prov, models := range whole.models {
		want := maps.Clone(models)
		for k, p := range want {
			p.From = "" // the shipped table's entries come from no file
			want[k] = p
		}
		if ms, as := s.provider(prov); !reflect.DeepEqual(ms, want) || !maps.Equal(as, whole.aliases[prov]) {
			t.Fatalf("%s read alone: %+v, %v; read whole: %+v, %v", prov, ms, as, want, whole.aliases[prov])
		}
	}
}

// sameTree: JSON read in one pass (tree) is the nodes the decoder's
// tokens make of it (value), offsets and errors included.
func sameTree(t *testing.T, data []byte) {
	t.Helper()
	if !json.Valid(data) {
		return
	}
	fast, errFast := (&parser{name: "p.json", data: data}).tree()
	p := &parser{name: "p.json", data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	p.dec.UseNumber()
	slow, errSlow := p.value(0)
	if fmt.Sprint(errFast) != fmt.Sprint(errSlow) || !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%q read in one pass: %s, %v; by the decoder: %s, %v", data, dump(fast), errFast, dump(slow), errSlow)
	}
}

// dump prints a node tree, for a message.
func dump(n *node) string {
	if n == nil {
		return "nil"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "@%d", n.off)
	switch {
	case n.obj:
		b.WriteString("{")
		for i, k := range n.keys {
			fmt.Fprintf(&b, "%q@%d:%s,", k, n.koff[i], dump(n.vals[i]))
		}
		b.WriteString("}")
	case n.arr:
		b.WriteString("[")
		for _, v := range n.vals {
			b.WriteString(dump(v) + ",")
		}
		b.WriteString("]")
	default:
		fmt.Fprintf(&b, "%#v", n.v)
	}
	return b.String()
}

// TestTreeEmbedded: the shipped table, and files written every way JSON
// allows, read the same in one pass as through the decoder.
func TestTreeEmbedded(t *testing.T) {
	for _, s := range []string{string(embedded), `{}`, `[]`, ` { "a" : [ 1 , -2.5e+3 , true , false , null , "x\"y\u00e9" ] , "b" : { } } `,
		"{\"\xff\": \"\xfe\"}", `{"a": 1, "a": 2}`, `{"a": {"b": 1, "c": [{"b": 2, "b": 3}]}}`, "\t\n\r[0]\n"} {
		sameTree(t, []byte(s))
	}
}
