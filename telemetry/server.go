package telemetry

import (
	"context"
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	agentrt "agentc.dev/agentc/runtime"
)

// knownMethods are the HTTP methods a span names as they are; any other
// is "_OTHER", as the HTTP conventions say, so that a client cannot make
// a span of every word.
var knownMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true, http.MethodPatch: true,
	http.MethodDelete: true, http.MethodConnect: true, http.MethodOptions: true, http.MethodTrace: true,
}

// Server wraps h, a server's handler (agentc serve --http), so that each
// request is a span of kind server, named by its method and its route
// (the pattern of the ServeMux that served it, such as
// /v1/agents/{name}/runs), with the HTTP conventions' attributes. A
// request that carries W3C trace context (traceparent) is a child of the
// caller's span; the runs it makes are recorded under it (Recorder with
// the request's context). A response of 500 or more marks the span
// failed.
func (t *Telemetry) Server(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method := r.Method
		if !knownMethods[method] {
			method = "_OTHER"
		}
		ctx := propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := t.tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(semconv.HTTPRequestMethodKey.String(method), semconv.URLScheme("http")))
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		// The ServeMuxes beneath set the request's Pattern as they route.
		rr := r.WithContext(ctx)
		h.ServeHTTP(sw, rr)
		attrs := []attribute.KeyValue{semconv.HTTPResponseStatusCode(sw.status)}
		if route := routeOf(rr); route != "" {
			attrs = append(attrs, semconv.HTTPRoute(route))
			span.SetName(method + " " + route)
		}
		span.SetAttributes(attrs...)
		if sw.status >= 500 {
			span.SetStatus(codes.Error, http.StatusText(sw.status))
		}
		span.End()
	})
}

// routeOf is the pattern the request was served by, without its method.
func routeOf(r *http.Request) string {
	p := r.Pattern
	if _, rest, ok := strings.Cut(p, " "); ok {
		p = rest
	}
	return p
}

// statusWriter keeps the status a handler wrote, and flushes as the
// writer it wraps does (a server-sent event stream).
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	w.wrote = true
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// RunEvents returns the events sink of one run a server makes, recorded
// under ctx's span (the request's): for serve.Runs.OnRun.
func (t *Telemetry) RunEvents(ctx context.Context) func(agentrt.Event) {
	return t.Recorder(ctx).Event
}
