package telemetry_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"

	agentrt "agentc.dev/agentc/runtime"
)

// promise is a row of one of docs/observability.md's tables: a span or a
// metric and the attributes it has. The attributes before the row's first
// ";" are on every span (every one that did not fail) or data point; those
// after it on some. A promise "key=value" promises the value too.
type promise struct {
	line        int
	name        *regexp.Regexp // the span's or metric's name
	client      bool           // a span of kind client
	kind, unit  string         // a metric's
	every, some map[string]string
}

var (
	backticked  = regexp.MustCompile("`([^`]+)`")
	attrKey     = regexp.MustCompile(`^([a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+)(?:=([a-z_]+))?$`)
	placeholder = regexp.MustCompile(`\\\{[a-z]+\\\}`)
)

// docPromises reads the span table and the metric table of
// docs/observability.md.
func docPromises(t *testing.T) (spans, metrics []promise) {
	t.Helper()
	f, err := os.Open("../docs/observability.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	table := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case line == "| span | attributes |", line == "| metric | kind | attributes |":
			table = line
			continue
		case !strings.HasPrefix(line, "| `"):
			if !strings.HasPrefix(line, "|") {
				table = ""
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		name := backticked.FindStringSubmatch(cells[0])
		if name == nil || table == "" {
			continue
		}
		p := promise{line: n, name: regexp.MustCompile("^" + placeholder.ReplaceAllString(regexp.QuoteMeta(name[1]), ".+") + "$")}
		attrs := cells[len(cells)-1]
		every, some, _ := strings.Cut(attrs, ";")
		p.every, p.some = attrKeys(every), attrKeys(some)
		if table == "| span | attributes |" {
			p.client = strings.Contains(cells[0], "(kind client)")
			spans = append(spans, p)
			continue
		}
		kind, unit, _ := strings.Cut(cells[1], ", ")
		p.kind, p.unit = kind, strings.Trim(unit, "`")
		metrics = append(metrics, p)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(spans) < 4 || len(metrics) < 8 {
		t.Fatalf("docs/observability.md: read %d span rows and %d metric rows", len(spans), len(metrics))
	}
	return spans, metrics
}

// attrKeys are the attribute keys named in a cell's text, with the values
// it promises.
func attrKeys(text string) map[string]string {
	keys := map[string]string{}
	for _, m := range backticked.FindAllStringSubmatch(text, -1) {
		if k := attrKey.FindStringSubmatch(m[1]); k != nil {
			keys[k[1]] = k[2]
		}
	}
	return keys
}

// check holds one span's or data point's attributes to a promise.
type check struct {
	t    *testing.T
	p    promise
	what string
	seen map[string][]string // key: the values seen
}

func (c *check) point(where string, set attribute.Set, failed bool) {
	have := map[string]string{}
	for _, kv := range set.ToSlice() {
		have[string(kv.Key)] = kv.Value.Emit()
		c.seen[string(kv.Key)] = append(c.seen[string(kv.Key)], kv.Value.Emit())
		if _, ok := c.p.every[string(kv.Key)]; !ok {
			if _, ok := c.p.some[string(kv.Key)]; !ok {
				c.t.Errorf("docs/observability.md:%d: %s %s has %s=%s, which the row does not name", c.p.line, c.what, where, kv.Key, kv.Value.Emit())
			}
		}
	}
	if failed {
		return
	}
	for k, v := range c.p.every {
		if got, ok := have[k]; !ok || v != "" && got != v {
			c.t.Errorf("docs/observability.md:%d: %s %s has %s=%q, want %s", c.p.line, c.what, where, k, got, promised(k, v))
		}
	}
}

func (c *check) done(n int) {
	if n == 0 {
		c.t.Errorf("docs/observability.md:%d: no %s matching %s was recorded", c.p.line, c.what, c.p.name)
		return
	}
	for k, v := range c.p.some {
		if !slices.ContainsFunc(c.seen[k], func(got string) bool { return v == "" || got == v }) {
			c.t.Errorf("docs/observability.md:%d: no %s %s has %s; seen %v", c.p.line, c.what, c.p.name, promised(k, v), c.seen[k])
		}
	}
}

// promised says what a row promises of an attribute.
func promised(key, value string) string {
	if value == "" {
		return key + " set"
	}
	return key + "=" + value
}

// TestDocumented holds the spans and metrics of runs that cover what the
// doc's tables describe (a called agent, a failed tool call, a provider's
// retries, a failed model call, a run a bound ended) to the tables: every
// attribute they promise is recorded, and none they do not name.
func TestDocumented(t *testing.T) {
	r := newRecording(t, false)
	r.runTriage(t)
	f, err := os.Open("testdata/failing-runs.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rec := r.tel.Recorder(context.Background())
	dec := json.NewDecoder(f)
	for dec.More() {
		var ev agentrt.Event
		if err := dec.Decode(&ev); err != nil {
			t.Fatal(err)
		}
		rec.Event(ev)
	}
	spans, rm := r.collect(t)
	spanRows, metricRows := docPromises(t)

	for _, s := range spans {
		if !slices.ContainsFunc(spanRows, func(p promise) bool { return p.name.MatchString(s.Name) }) {
			t.Errorf("span %q is in no row of docs/observability.md's span table", s.Name)
		}
	}
	for _, p := range spanRows {
		c := &check{t: t, p: p, what: "span", seen: map[string][]string{}}
		n := 0
		for _, s := range spans {
			if !p.name.MatchString(s.Name) {
				continue
			}
			n++
			c.point(s.Name, attribute.NewSet(s.Attributes...), s.Status.Code == codes.Error)
			want := trace.SpanKindInternal
			if p.client {
				want = trace.SpanKindClient
			}
			if s.SpanKind != want {
				t.Errorf("docs/observability.md:%d: span %s is of kind %v, want %v", p.line, s.Name, s.SpanKind, want)
			}
		}
		c.done(n)
	}

	got := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			got[m.Name] = m
			if !slices.ContainsFunc(metricRows, func(p promise) bool { return p.name.MatchString(m.Name) }) {
				t.Errorf("metric %q is in no row of docs/observability.md's metric table", m.Name)
			}
		}
	}
	for _, p := range metricRows {
		c := &check{t: t, p: p, what: "metric", seen: map[string][]string{}}
		var names []string
		for name := range got {
			if p.name.MatchString(name) {
				names = append(names, name)
			}
		}
		sort.Strings(names)
		n := 0
		for _, name := range names {
			m := got[name]
			if m.Unit != p.unit {
				t.Errorf("docs/observability.md:%d: metric %s has the unit %q, want %q", p.line, name, m.Unit, p.unit)
			}
			kind, sets := points(m.Data)
			if kind != p.kind {
				t.Errorf("docs/observability.md:%d: metric %s is a %s, want a %s", p.line, name, kind, p.kind)
			}
			for _, set := range sets {
				n++
				c.point(name, set, false)
			}
		}
		c.done(n)
	}
}

// points says what kind of instrument made an aggregation, and the
// attributes of its data points.
func points(data metricdata.Aggregation) (kind string, sets []attribute.Set) {
	switch d := data.(type) {
	case metricdata.Histogram[int64]:
		for _, dp := range d.DataPoints {
			sets = append(sets, dp.Attributes)
		}
		return "histogram", sets
	case metricdata.Histogram[float64]:
		for _, dp := range d.DataPoints {
			sets = append(sets, dp.Attributes)
		}
		return "histogram", sets
	case metricdata.Sum[int64]:
		for _, dp := range d.DataPoints {
			sets = append(sets, dp.Attributes)
		}
		return sumKind(d.IsMonotonic), sets
	case metricdata.Sum[float64]:
		for _, dp := range d.DataPoints {
			sets = append(sets, dp.Attributes)
		}
		return sumKind(d.IsMonotonic), sets
	}
	return "something else", nil
}

func sumKind(monotonic bool) string {
	if monotonic {
		return "counter"
	}
	return "up-down counter"
}
