package main

import (
	"fmt"
	"io"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
	metricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	v1 "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver starts, for a testscript, a collector on loopback that
// takes OTLP over HTTP (protobuf) and points OTEL_EXPORTER_OTLP_ENDPOINT
// at itself. It writes the spans it received to otlp-spans.txt, one a
// line: the name, "<" and the parent's name (or "-"), then the
// attributes as key=value, sorted (newlines in values as \n); span events follow as "  event NAME".
// The names of the metrics go to otlp-metrics.txt, one a line.
func otlpReceiver(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: otlpreceiver")
	}
	spansFile, metricsFile := ts.MkAbs("otlp-spans.txt"), ts.MkAbs("otlp-metrics.txt")
	var mu sync.Mutex
	var spans []*v1.Span
	metrics := map[string]bool{}
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil || r.Header.Get("Content-Type") != "application/x-protobuf" {
			nethttp.Error(w, "not OTLP protobuf", nethttp.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Path {
		case "/v1/traces":
			var req tracepb.ExportTraceServiceRequest
			if err := proto.Unmarshal(body, &req); err != nil {
				nethttp.Error(w, err.Error(), nethttp.StatusBadRequest)
				return
			}
			for _, rs := range req.ResourceSpans {
				for _, ss := range rs.ScopeSpans {
					spans = append(spans, ss.Spans...)
				}
			}
			_ = os.WriteFile(spansFile, []byte(spanLines(spans)), 0o644)
			out, _ := proto.Marshal(&tracepb.ExportTraceServiceResponse{})
			w.Header().Set("Content-Type", "application/x-protobuf")
			_, _ = w.Write(out)
		case "/v1/metrics":
			var req metricpb.ExportMetricsServiceRequest
			if err := proto.Unmarshal(body, &req); err != nil {
				nethttp.Error(w, err.Error(), nethttp.StatusBadRequest)
				return
			}
			for _, rm := range req.ResourceMetrics {
				for _, sm := range rm.ScopeMetrics {
					for _, m := range sm.Metrics {
						metrics[m.Name] = true
					}
				}
			}
			var names []string
			for n := range metrics {
				names = append(names, n+"\n")
			}
			sort.Strings(names)
			_ = os.WriteFile(metricsFile, []byte(strings.Join(names, "")), 0o644)
			out, _ := proto.Marshal(&metricpb.ExportMetricsServiceResponse{})
			w.Header().Set("Content-Type", "application/x-protobuf")
			_, _ = w.Write(out)
		default:
			nethttp.NotFound(w, r)
		}
	}))
	ts.Defer(srv.Close)
	ts.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
}

func spanLines(spans []*v1.Span) string {
	names := map[string]string{}
	for _, s := range spans {
		names[string(s.SpanId)] = s.Name
	}
	var b strings.Builder
	for _, s := range spans {
		parent := "-"
		if len(s.ParentSpanId) > 0 {
			parent = names[string(s.ParentSpanId)]
		}
		var attrs []string
		for _, kv := range s.Attributes {
			attrs = append(attrs, kv.Key+"="+anyValue(kv.Value))
		}
		sort.Strings(attrs)
		fmt.Fprintf(&b, "%s < %s %s\n", s.Name, parent, strings.Join(attrs, " "))
		for _, e := range s.Events {
			fmt.Fprintf(&b, "  event %s\n", e.Name)
		}
	}
	return b.String()
}

func anyValue(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return strings.ReplaceAll(x.StringValue, "\n", `\n`) // one span a line
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	case *commonpb.AnyValue_DoubleValue:
		return fmt.Sprint(x.DoubleValue)
	}
	return v.String()
}
