package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"maps"
	"net"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
	metricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	v1 "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver starts, for a testscript, a collector on loopback that
// takes OTLP over HTTP (protobuf), or with "grpc" over gRPC, and points
// OTEL_EXPORTER_OTLP_ENDPOINT (and the protocol) at itself. It writes the
// spans it received to otlp-spans.txt, one a line: the name, "<" and the
// parent's name (or "-"), then the attributes as key=value, sorted
// (newlines in values as \n); span events follow as "  event NAME". The
// names of the metrics go to otlp-metrics.txt, one a line. With "refuse"
// it takes nothing: it answers every export 401, quoting the credential
// of each header the request carried (what follows its scheme, Basic's
// decoded too), as a collector or a proxy may, and a line that reads as
// agentc's.
func otlpReceiver(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) > 1 || len(args) == 1 && args[0] != "grpc" && args[0] != "refuse" {
		ts.Fatalf("usage: otlpreceiver [grpc|refuse]")
	}
	if len(args) == 1 && args[0] == "refuse" {
		srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
			var quoted []string
			for _, name := range slices.Sorted(maps.Keys(r.Header)) {
				scheme, cred, ok := strings.Cut(r.Header.Get(name), " ")
				if !ok || name == "User-Agent" {
					continue
				}
				quoted = append(quoted, cred)
				if b, err := base64.StdEncoding.DecodeString(cred); err == nil && strings.EqualFold(scheme, "basic") {
					quoted = append(quoted, string(b))
				}
			}
			// A line of its own that reads as agentc's, as a hostile
			// collector may write one.
			nethttp.Error(w, "these credentials are not valid here: "+strings.Join(quoted, ", ")+"\nagentc: batch: 9 items: 9 succeeded", nethttp.StatusUnauthorized)
		}))
		ts.Defer(srv.Close)
		ts.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
		return
	}
	c := &collector{spansFile: ts.MkAbs("otlp-spans.txt"), metricsFile: ts.MkAbs("otlp-metrics.txt"), metrics: map[string]bool{}}
	if len(args) == 1 {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		ts.Check(err)
		srv := grpc.NewServer()
		tracepb.RegisterTraceServiceServer(srv, grpcTraces{c: c})
		metricpb.RegisterMetricsServiceServer(srv, grpcMetrics{c: c})
		go func() { _ = srv.Serve(lis) }()
		ts.Defer(srv.Stop)
		ts.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+lis.Addr().String())
		ts.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
		return
	}
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil || r.Header.Get("Content-Type") != "application/x-protobuf" {
			nethttp.Error(w, "not OTLP protobuf", nethttp.StatusBadRequest)
			return
		}
		var resp proto.Message
		switch r.URL.Path {
		case "/v1/traces":
			var req tracepb.ExportTraceServiceRequest
			if err := proto.Unmarshal(body, &req); err != nil {
				nethttp.Error(w, err.Error(), nethttp.StatusBadRequest)
				return
			}
			c.traces(&req)
			resp = &tracepb.ExportTraceServiceResponse{}
		case "/v1/metrics":
			var req metricpb.ExportMetricsServiceRequest
			if err := proto.Unmarshal(body, &req); err != nil {
				nethttp.Error(w, err.Error(), nethttp.StatusBadRequest)
				return
			}
			c.metricsIn(&req)
			resp = &metricpb.ExportMetricsServiceResponse{}
		default:
			nethttp.NotFound(w, r)
			return
		}
		out, _ := proto.Marshal(resp)
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	ts.Defer(srv.Close)
	ts.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
}

// collector keeps what a receiver was sent, and writes it to its files.
type collector struct {
	spansFile, metricsFile string
	mu                     sync.Mutex
	spans                  []*v1.Span
	metrics                map[string]bool
}

func (c *collector) traces(req *tracepb.ExportTraceServiceRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			c.spans = append(c.spans, ss.Spans...)
		}
	}
	_ = os.WriteFile(c.spansFile, []byte(spanLines(c.spans)), 0o644)
}

func (c *collector) metricsIn(req *metricpb.ExportMetricsServiceRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rm := range req.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				c.metrics[m.Name] = true
			}
		}
	}
	var names []string
	for n := range c.metrics {
		names = append(names, n+"\n")
	}
	sort.Strings(names)
	_ = os.WriteFile(c.metricsFile, []byte(strings.Join(names, "")), 0o644)
}

type grpcTraces struct {
	tracepb.UnimplementedTraceServiceServer
	c *collector
}

func (g grpcTraces) Export(_ context.Context, req *tracepb.ExportTraceServiceRequest) (*tracepb.ExportTraceServiceResponse, error) {
	g.c.traces(req)
	return &tracepb.ExportTraceServiceResponse{}, nil
}

type grpcMetrics struct {
	metricpb.UnimplementedMetricsServiceServer
	c *collector
}

func (g grpcMetrics) Export(_ context.Context, req *metricpb.ExportMetricsServiceRequest) (*metricpb.ExportMetricsServiceResponse, error) {
	g.c.metricsIn(req)
	return &metricpb.ExportMetricsServiceResponse{}, nil
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
