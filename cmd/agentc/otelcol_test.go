package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	v1 "go.opentelemetry.io/proto/otlp/trace/v1"
)

// The scripts' real OpenTelemetry Collector is the one
// scripts/install-otelcol.sh builds (the OTLP receiver and the file
// exporter): $AGENTC_OTELCOL, else otelcol-agentc on the PATH. Where there
// is none, the scripts that need one skip, saying so, unless
// AGENTC_REQUIRE_OTELCOL is set (the test script sets it), which makes
// them fail.

func otelcolProgram() (string, string) {
	if p := os.Getenv("AGENTC_OTELCOL"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Sprintf("AGENTC_OTELCOL names %s: %v", p, err)
		}
		return p, ""
	}
	p, err := exec.LookPath("otelcol-agentc")
	if err != nil {
		return "", "otelcol-agentc is not on the PATH and AGENTC_OTELCOL is not set; build it with scripts/install-otelcol.sh"
	}
	return p, ""
}

// otelcolCondition is the [otelcol] condition: a collector is there, or
// must be.
func otelcolCondition() bool {
	prog, why := otelcolProgram()
	if prog == "" && os.Getenv("AGENTC_REQUIRE_OTELCOL") == "" {
		fmt.Fprintf(os.Stderr, "SKIPPED: scripts that need an OpenTelemetry Collector: %s\n", why)
		return false
	}
	return true
}

// otelcolConfig receives OTLP over gRPC and HTTP on loopback and writes
// each signal, as OTLP JSON (a line a request), to a file of its own. The
// collector's own metrics are off: they would take a fixed port.
const otelcolConfig = `receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
      http:
        endpoint: 127.0.0.1:%d
exporters:
  file/traces:
    path: %s
    format: json
  file/metrics:
    path: %s
    format: json
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [file/traces]
    metrics:
      receivers: [otlp]
      exporters: [file/metrics]
`

// otelcolStart starts, for a testscript, a real collector on free loopback
// ports, stopped when the script ends, and points
// OTEL_EXPORTER_OTLP_ENDPOINT at its HTTP receiver, or with "grpc" at its
// gRPC receiver (and the protocol). What it receives goes to the folder
// $OTELCOL_OUT, which otelcolwait reads.
func otelcolStart(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) > 1 || len(args) == 1 && args[0] != "grpc" {
		ts.Fatalf("usage: otelcol [grpc]")
	}
	prog, why := otelcolProgram()
	if prog == "" {
		ts.Fatalf("no OpenTelemetry Collector: %s", why)
	}
	out, err := os.MkdirTemp(ts.MkAbs("."), "otelcol-")
	ts.Check(err)
	grpcPort, httpPort := freeLoopbackPort(ts), freeLoopbackPort(ts)
	config := filepath.Join(out, "config.yaml")
	ts.Check(os.WriteFile(config, fmt.Appendf(nil, otelcolConfig, grpcPort, httpPort,
		filepath.Join(out, "traces.jsonl"), filepath.Join(out, "metrics.jsonl")), 0o644))
	cmd := exec.Command(prog, "--config", "file:"+config)
	ownGroup(cmd)
	log := &readyLog{ready: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = log, log
	ts.Check(cmd.Start())
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	ts.Defer(func() {
		killGroup(cmd)
		<-exited
	})
	select {
	case <-log.ready:
	case <-exited:
		ts.Fatalf("the collector ended before it was ready: %v\n%s", cmd.ProcessState, log)
	case <-time.After(time.Minute):
		ts.Fatalf("the collector was not ready within a minute:\n%s", log)
	}
	ts.Setenv("OTELCOL_OUT", out)
	if len(args) == 1 {
		ts.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:"+strconv.Itoa(grpcPort))
		ts.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
		return
	}
	ts.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:"+strconv.Itoa(httpPort))
	ts.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
}

// readyLog keeps what the collector writes, and says when it is ready:
// its receivers listen then.
type readyLog struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	ready chan struct{}
	said  bool
}

func (l *readyLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if !l.said && bytes.Contains(l.buf.Bytes(), []byte("Everything is ready")) {
		l.said = true
		close(l.ready)
	}
	return len(p), nil
}

func (l *readyLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func freeLoopbackPort(ts *testscript.TestScript) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// otelcolWait waits, for at most a minute, until the collector the script
// started has written a span named SPAN and a data point of each METRIC,
// then writes what it has written as lines: the spans to otelcol-spans.txt
// as otlpreceiver writes otlp-spans.txt, and the metrics' data points to
// otelcol-metrics.txt, one a line (see metricLines).
func otelcolWait(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: otelcolwait SPAN METRIC...")
	}
	out := ts.Getenv("OTELCOL_OUT")
	if out == "" {
		ts.Fatalf("otelcolwait: no collector started (otelcol)")
	}
	deadline := time.Now().Add(time.Minute)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		spans, metrics, err := readOtelcolFiles(out)
		if err != nil {
			ts.Fatalf("otelcolwait: %v", err)
		}
		missing := []string{}
		if !slices.ContainsFunc(spans, func(s *v1.Span) bool { return s.Name == args[0] }) {
			missing = append(missing, "the span "+args[0])
		}
		for _, m := range args[1:] {
			if !slices.ContainsFunc(metrics, func(p metricPoint) bool { return p.name == m }) {
				missing = append(missing, "the metric "+m)
			}
		}
		if len(missing) == 0 {
			ts.Check(os.WriteFile(ts.MkAbs("otelcol-spans.txt"), []byte(spanLines(spans)), 0o644))
			ts.Check(os.WriteFile(ts.MkAbs("otelcol-metrics.txt"), []byte(metricLines(metrics)), 0o644))
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("otelcolwait: after a minute the collector has not written %s", strings.Join(missing, ", "))
		}
		<-tick.C
	}
}

// The OTLP JSON the file exporter writes, as far as the scripts read it
// (opentelemetry-proto's JSON mapping: IDs in hex, 64-bit integers as
// strings).
type (
	jsonKeyValue struct {
		Key   string `json:"key"`
		Value struct {
			StringValue *string          `json:"stringValue"`
			IntValue    *json.RawMessage `json:"intValue"`
			BoolValue   *bool            `json:"boolValue"`
			DoubleValue *float64         `json:"doubleValue"`
		} `json:"value"`
	}
	jsonTraces struct {
		ResourceSpans []struct {
			ScopeSpans []struct {
				Spans []struct {
					SpanID       string         `json:"spanId"`
					ParentSpanID string         `json:"parentSpanId"`
					Name         string         `json:"name"`
					Attributes   []jsonKeyValue `json:"attributes"`
					Events       []struct {
						Name string `json:"name"`
					} `json:"events"`
				} `json:"spans"`
			} `json:"scopeSpans"`
		} `json:"resourceSpans"`
	}
	jsonNumberPoint struct {
		Attributes []jsonKeyValue   `json:"attributes"`
		AsInt      *json.RawMessage `json:"asInt"`
		AsDouble   *float64         `json:"asDouble"`
	}
	jsonMetrics struct {
		ResourceMetrics []struct {
			ScopeMetrics []struct {
				Metrics []struct {
					Name      string `json:"name"`
					Unit      string `json:"unit"`
					Histogram *struct {
						DataPoints []struct {
							Attributes     []jsonKeyValue  `json:"attributes"`
							Count          json.RawMessage `json:"count"`
							ExplicitBounds []float64       `json:"explicitBounds"`
						} `json:"dataPoints"`
					} `json:"histogram"`
					Sum *struct {
						DataPoints  []jsonNumberPoint `json:"dataPoints"`
						IsMonotonic bool              `json:"isMonotonic"`
					} `json:"sum"`
				} `json:"metrics"`
			} `json:"scopeMetrics"`
		} `json:"resourceMetrics"`
	}
)

// metricPoint is one data point of a metric, as metricLines prints it.
type metricPoint struct {
	name, kind, unit string
	attrs            []*commonpb.KeyValue
	// value is a counter's value, or a histogram's count; bounds a
	// histogram's explicit bucket boundaries.
	value  string
	bounds []float64
}

// readOtelcolFiles reads what the file exporters wrote so far: whole
// lines, each an export request.
func readOtelcolFiles(dir string) ([]*v1.Span, []metricPoint, error) {
	var spans []*v1.Span
	err := eachLine(filepath.Join(dir, "traces.jsonl"), func(line []byte) error {
		var req jsonTraces
		if err := json.Unmarshal(line, &req); err != nil {
			return err
		}
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					id, err := hex.DecodeString(s.SpanID)
					if err != nil {
						return fmt.Errorf("span %s: spanId: %v", s.Name, err)
					}
					parent, err := hex.DecodeString(s.ParentSpanID)
					if err != nil {
						return fmt.Errorf("span %s: parentSpanId: %v", s.Name, err)
					}
					span := &v1.Span{Name: s.Name, SpanId: id, ParentSpanId: parent, Attributes: protoAttrs(s.Attributes)}
					for _, e := range s.Events {
						span.Events = append(span.Events, &v1.Span_Event{Name: e.Name})
					}
					spans = append(spans, span)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	var points []metricPoint
	err = eachLine(filepath.Join(dir, "metrics.jsonl"), func(line []byte) error {
		var req jsonMetrics
		if err := json.Unmarshal(line, &req); err != nil {
			return err
		}
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					switch {
					case m.Histogram != nil:
						for _, dp := range m.Histogram.DataPoints {
							points = append(points, metricPoint{name: m.Name, kind: "histogram", unit: m.Unit, attrs: protoAttrs(dp.Attributes),
								value: strings.Trim(string(dp.Count), `"`), bounds: dp.ExplicitBounds})
						}
					case m.Sum != nil:
						kind := "updowncounter"
						if m.Sum.IsMonotonic {
							kind = "counter"
						}
						for _, dp := range m.Sum.DataPoints {
							p := metricPoint{name: m.Name, kind: kind, unit: m.Unit, attrs: protoAttrs(dp.Attributes)}
							if dp.AsInt != nil {
								p.value = strings.Trim(string(*dp.AsInt), `"`)
							} else if dp.AsDouble != nil {
								p.value = strconv.FormatFloat(*dp.AsDouble, 'g', -1, 64)
							}
							points = append(points, p)
						}
					default:
						points = append(points, metricPoint{name: m.Name, kind: "other", unit: m.Unit})
					}
				}
			}
		}
		return nil
	})
	return spans, points, err
}

// eachLine calls f with each whole line of the file, if it is there.
func eachLine(name string, f func([]byte) error) error {
	data, err := os.ReadFile(name)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	for n := 1; ; n++ {
		line, rest, ok := bytes.Cut(data, []byte("\n"))
		if !ok {
			return nil // a line still being written
		}
		if len(bytes.TrimSpace(line)) > 0 {
			if err := f(line); err != nil {
				return fmt.Errorf("%s:%d: %v", filepath.Base(name), n, err)
			}
		}
		data = rest
	}
}

func protoAttrs(kvs []jsonKeyValue) []*commonpb.KeyValue {
	var out []*commonpb.KeyValue
	for _, kv := range kvs {
		v := &commonpb.AnyValue{}
		switch x := kv.Value; {
		case x.StringValue != nil:
			v.Value = &commonpb.AnyValue_StringValue{StringValue: *x.StringValue}
		case x.IntValue != nil:
			n, _ := strconv.ParseInt(strings.Trim(string(*x.IntValue), `"`), 10, 64)
			v.Value = &commonpb.AnyValue_IntValue{IntValue: n}
		case x.BoolValue != nil:
			v.Value = &commonpb.AnyValue_BoolValue{BoolValue: *x.BoolValue}
		case x.DoubleValue != nil:
			v.Value = &commonpb.AnyValue_DoubleValue{DoubleValue: *x.DoubleValue}
		}
		out = append(out, &commonpb.KeyValue{Key: kv.Key, Value: v})
	}
	return out
}

// metricLines prints data points one a line, sorted: the metric's name,
// its kind (histogram, counter) and unit, its attributes as key=value,
// sorted, then "value=" a counter's value or "count=" a histogram's count
// and "bounds=" its bucket boundaries, comma-separated.
func metricLines(points []metricPoint) string {
	var lines []string
	for _, p := range points {
		var attrs []string
		for _, kv := range p.attrs {
			attrs = append(attrs, kv.Key+"="+anyValue(kv.Value))
		}
		sort.Strings(attrs)
		line := fmt.Sprintf("%s %s %s %s", p.name, p.kind, p.unit, strings.Join(attrs, " "))
		if p.kind == "histogram" {
			bounds := make([]string, len(p.bounds))
			for i, b := range p.bounds {
				bounds[i] = strconv.FormatFloat(b, 'f', -1, 64)
			}
			line += " count=" + p.value + " bounds=" + strings.Join(bounds, ",")
		} else {
			line += " value=" + p.value
		}
		lines = append(lines, line+"\n")
	}
	sort.Strings(lines)
	return strings.Join(lines, "")
}
