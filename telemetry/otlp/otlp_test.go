package otlp

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/redact"
)

func TestExporterSecrets(t *testing.T) {
	env := map[string]string{
		"OTEL_EXPORTER_OTLP_HEADERS":          "x-api-key=HDRSECRET-abcdef0123, tenant = a%2Fb-tenant-0123",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS":   "Authorization: Bearer TRACESECRET-0123",
		"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "https://agentc:PWSECRET123456@collector.example:4318/v1/metrics",
		"OTEL_EXPORTER_OTLP_ENDPOINT":         "http://user:PW%21SECRET99@127.0.0.1:29318x",
		"OTEL_EXPORTER_OTLP_LOGS_HEADERS":     "authorization=Bearer%20BEARERSECRET-0123,proxy-authorization=Basic%20YWdlbnRjOkJBU0lDU0VDUkVULTAxMjM=",
	}
	got := ExporterSecrets(func(k string) string { return env[k] })
	for _, want := range []string{
		"HDRSECRET-abcdef0123", "a%2Fb-tenant-0123", "a/b-tenant-0123",
		"Authorization: Bearer TRACESECRET-0123",
		"PWSECRET123456", "agentc:PWSECRET123456",
		"PW%21SECRET99", "PW!SECRET99",
		// A credential without its scheme, Basic's decoded too.
		"BEARERSECRET-0123", "YWdlbnRjOkJBU0lDU0VDUkVULTAxMjM=", "agentc:BASICSECRET-0123", "BASICSECRET-0123",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("%q is not among the secrets %q", want, got)
		}
	}
	if slices.Contains(got, "collector.example:4318") || slices.Contains(got, "x-api-key") {
		t.Errorf("a host or a header's name taken for a secret: %q", got)
	}
}

// TestSDKLogHeld: the SDK's log of a variable it cannot read quotes the
// variable whole; it goes where agentc's warnings go, with the header's
// value and the endpoint's password replaced, never to the process's
// standard error as it is.
func TestSDKLogHeld(t *testing.T) {
	env := map[string]string{
		// A header written as HTTP writes it, which the SDK cannot parse.
		"OTEL_EXPORTER_OTLP_HEADERS":         "Authorization: Bearer HDRSECRET-abcdef0123",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://user:PWSECRET123456@127.0.0.1:29318x",
		"OTEL_METRICS_EXPORTER":              "none",
	}
	for k, v := range env {
		t.Setenv(k, v) // the exporters read the process's environment
	}
	var warn bytes.Buffer
	s, err := Start(context.Background(), os.Getenv, &warn, &redact.Set{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	said := warn.String()
	if !strings.Contains(said, "agentc: telemetry: ") || !strings.Contains(said, redact.Marker) {
		t.Errorf("the SDK's log said %q, want it said with the secrets replaced", said)
	}
	for _, secret := range []string{"HDRSECRET", "PWSECRET"} {
		if strings.Contains(said, secret) {
			t.Errorf("the SDK's log said %q, holding %s", said, secret)
		}
	}
}

// TestRemoteNotSampled: a request whose traceparent says "not sampled" is
// recorded all the same, as a child of the caller's span: the client does
// not decide what the operator's traces see. A local parent's decision
// still holds for its children.
func TestRemoteNotSampled(t *testing.T) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(DefaultSampler))
	defer tp.Shutdown(context.Background())
	tracer := tp.Tracer("test")
	h := http.Header{}
	h.Set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00")
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.HeaderCarrier(h))
	_, span := tracer.Start(ctx, "POST /v1/agents/{name}/runs", trace.WithSpanKind(trace.SpanKindServer))
	defer span.End()
	sc := span.SpanContext()
	if !sc.IsSampled() || !span.IsRecording() || sc.TraceID().String() != "0af7651916cd43dd8448eb211c80319c" {
		t.Errorf("a request whose caller says not sampled: sampled %v, recording %v, trace %s", sc.IsSampled(), span.IsRecording(), sc.TraceID())
	}
	local := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: sc.TraceID(), SpanID: sc.SpanID(), TraceFlags: 0}))
	if _, child := tracer.Start(local, "child"); child.SpanContext().IsSampled() {
		t.Error("a child of a local parent not sampled was sampled")
	}
}

// TestShutdownSaysWhich: a collector that takes nothing before the flush
// ends is named in one line, signal by signal, not as the SDK's bare
// "context deadline exceeded" twice over a line break.
func TestShutdownSaysWhich(t *testing.T) {
	release := make(chan struct{})
	asked := make(chan struct{}, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked <- struct{}{}
		<-release
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: the handlers return
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	var warn bytes.Buffer
	s, err := Start(context.Background(), os.Getenv, &warn, &redact.Set{})
	if err != nil {
		t.Fatal(err)
	}
	s.flush = 200 * time.Millisecond
	_, end := s.RemoteRun(context.Background(), "label")
	end(nil, nil)
	err = s.Shutdown()
	want := "traces: the collector did not take them within 200ms; metrics: the collector did not take them within 200ms"
	if err == nil || err.Error() != want {
		t.Errorf("Shutdown: %v, want %q", err, want)
	}
	if len(asked) == 0 {
		t.Error("nothing was sent to the collector")
	}
}

// TestDefaultEndpointPlain: with no endpoint set (telemetry turned on by
// OTEL_SERVICE_NAME alone), the exporters reach the specification's
// default in plain HTTP, and in gRPC without TLS, where the SDK's own
// default would have spoken TLS to a local collector that does not.
func TestDefaultEndpointPlain(t *testing.T) {
	for _, v := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
		"OTEL_EXPORTER_OTLP_INSECURE", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	t.Setenv("OTEL_SERVICE_NAME", "label-service")
	oldHTTP, oldGRPC := DefaultHTTP, DefaultGRPC
	t.Cleanup(func() { DefaultHTTP, DefaultGRPC = oldHTTP, oldGRPC })

	t.Run("http", func(t *testing.T) {
		var mu sync.Mutex
		var paths []string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			paths = append(paths, r.Method+" "+r.URL.Path)
			mu.Unlock()
		}))
		t.Cleanup(srv.Close)
		DefaultHTTP = srv.URL
		s, err := Start(context.Background(), os.Getenv, io.Discard, &redact.Set{})
		if err != nil || s == nil {
			t.Fatalf("Start: %v, %v", s, err)
		}
		_, end := s.RemoteRun(context.Background(), "label")
		end(nil, nil)
		if err := s.Shutdown(); err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		if !slices.Contains(paths, "POST /v1/traces") || !slices.Contains(paths, "POST /v1/metrics") {
			t.Errorf("the collector was sent %v, want the traces and the metrics", paths)
		}
	})

	t.Run("grpc", func(t *testing.T) {
		t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		first := make(chan []byte, 1)
		go func() {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			b := make([]byte, len(http2Preface))
			io.ReadFull(c, b)
			first <- b
		}()
		DefaultGRPC = ln.Addr().String()
		s, err := Start(context.Background(), os.Getenv, io.Discard, &redact.Set{})
		if err != nil || s == nil {
			ln.Close()
			t.Fatalf("Start: %v, %v", s, err)
		}
		s.flush = 5 * time.Second // the fake answers nothing: a bound, not a wait
		_, end := s.RemoteRun(context.Background(), "label")
		end(nil, nil)
		done := make(chan struct{})
		go func() { s.Shutdown(); close(done) }()
		// Shutdown sends within its flush bound; a connection that never
		// comes is one made elsewhere.
		select {
		case b := <-first:
			if string(b) != http2Preface {
				t.Errorf("the exporter's first bytes are %q, want HTTP/2's preface in the clear", b)
			}
		case <-done:
			t.Error("the exporter sent nothing to the default endpoint")
		}
		ln.Close()
		<-done
	})
}

const http2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// TestContentBounded: with content recorded, the text the SDK's value
// limit does not reach, a span's error status and its events' messages
// (a failed tool's output, a run's error, a decision's reason), is cut at
// the same limit. A failed call's megabyte of output went whole into the
// status, so a collector that did not answer left up to 2,048 such spans
// queued, and one that did was sent a request past what it takes (gRPC's
// 4 MiB) and refused the spans beside it too.
func TestContentBounded(t *testing.T) {
	var mu sync.Mutex
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		body = append(body, b...)
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_METRICS_EXPORTER", "none")
	t.Setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
	s, err := Start(context.Background(), os.Getenv, io.Discard, &redact.Set{})
	if err != nil || s == nil {
		t.Fatalf("Start: %v, %v", s, err)
	}
	big := strings.Repeat("x", 1<<20)
	rec := s.Recorder(context.Background())
	now := time.Now()
	for _, ev := range []agentrt.Event{
		{Type: agentrt.EventRunStart, Name: "label", Provider: "test", Model: "m"},
		{Type: agentrt.EventToolCall, Round: 1, Tool: "fetch", CallID: "c1"},
		{Type: agentrt.EventToolResult, Round: 1, Tool: "fetch", CallID: "c1", IsError: true, Message: big},
		{Type: agentrt.EventApproval, Round: 1, Tool: "fetch", CallID: "c2", Message: big},
		{Type: agentrt.EventRunEnd, Outcome: agentrt.OutcomeError, Message: big},
	} {
		ev.Time = now
		rec.Event(ev)
	}
	if err := s.Shutdown(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(body) == 0 {
		t.Fatal("nothing was exported")
	}
	longest := 0
	for _, run := range regexp.MustCompile(`x+`).FindAll(body, -1) {
		longest = max(longest, len(run))
	}
	if longest > DefaultValueLimit {
		t.Errorf("a text of %d bytes was exported, past the %d bytes of the value limit (%d bytes sent in all)", longest, DefaultValueLimit, len(body))
	}
	if longest < DefaultValueLimit/2 {
		t.Errorf("the longest text exported is %d bytes: the content was not recorded", longest)
	}
}
