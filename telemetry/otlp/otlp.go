// Package otlp starts OpenTelemetry's SDK for agentc from the standard
// OTEL_* environment variables: traces and metrics exported over OTLP
// (HTTP/protobuf by default, or gRPC). When none of the variables is set,
// nothing is started.
package otlp

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr/funcr"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"agentc.dev/agentc/internal/leaf/textcut"
	"agentc.dev/agentc/runtime/redact"
	"agentc.dev/agentc/telemetry"
)

// Vars are the variables any one of which turns telemetry on.
var Vars = []string{
	"OTEL_EXPORTER_OTLP_ENDPOINT",
	"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
	"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
	"OTEL_EXPORTER_OTLP_PROTOCOL",
	"OTEL_SERVICE_NAME",
	"OTEL_TRACES_EXPORTER",
	"OTEL_METRICS_EXPORTER",
}

// FlushTimeout bounds the export of what is left when a program ends: an
// unreachable collector delays the exit by at most this.
const FlushTimeout = 5 * time.Second

// DefaultSampler is the sampler where OTEL_TRACES_SAMPLER is not set:
// every span, a child as its parent is, but under a parent from another
// process (a client's traceparent, which agentc serve --http reads before
// it knows whether the client holds a token) whatever that parent says.
// The SDK's default would take a client's "not sampled" as the server's
// decision, so a client could keep its requests and runs out of the
// operator's traces.
var DefaultSampler = sdktrace.ParentBased(sdktrace.AlwaysSample(), sdktrace.WithRemoteParentNotSampled(sdktrace.AlwaysSample()))

// DefaultValueLimit is the most bytes of a span attribute's value
// exported, where OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT and
// OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT are not set.
const DefaultValueLimit = 64 << 10

// oneLine writes a warning's line breaks as escapes.
var oneLine = strings.NewReplacer("\r", `\r`, "\n", `\n`, "\u2028", `\u2028`, "\u2029", `\u2029`, "\x85", `\u0085`)

// maxSaid bounds what a warning quotes of the SDK's errors and log: a
// collector's answer, quoted, may be megabytes.
const maxSaid = 2000

// ExporterSecrets returns the secrets the OTEL_* variables give the
// exporters to send: each header's value (as written and decoded, and the
// variable's whole value, which the SDK quotes when it cannot parse it),
// the credential a value gives after its scheme (Bearer's token, Basic's
// and what it decodes to), and the password of an endpoint's user
// information.
func ExporterSecrets(getenv func(string) string) []string {
	var out []string
	add := func(v string) {
		out = append(out, v)
		if u, err := url.QueryUnescape(v); err == nil && u != v {
			out = append(out, u)
			v = u
		}
		// A collector refusing a credential may quote it without its
		// scheme ("invalid token TOKEN"), and a redacted value's part is
		// not found in it.
		if _, cred, ok := strings.Cut(v, " "); ok {
			cred = strings.TrimSpace(cred)
			out = append(out, cred)
			if b, err := base64.StdEncoding.DecodeString(cred); err == nil {
				out = append(out, string(b))
				if _, pass, ok := strings.Cut(string(b), ":"); ok {
					out = append(out, pass)
				}
			}
		}
	}
	for _, signal := range []string{"", "TRACES_", "METRICS_", "LOGS_"} {
		if h := getenv("OTEL_EXPORTER_OTLP_" + signal + "HEADERS"); h != "" {
			add(strings.TrimSpace(h))
			for _, kv := range strings.Split(h, ",") {
				if _, v, ok := strings.Cut(kv, "="); ok {
					add(strings.TrimSpace(v))
				}
			}
		}
		// An endpoint the SDK cannot parse is quoted whole, so its user
		// information is found by hand: between the scheme and the host.
		e := getenv("OTEL_EXPORTER_OTLP_" + signal + "ENDPOINT")
		if _, rest, ok := strings.Cut(e, "://"); ok {
			if i := strings.IndexAny(rest, "/?#"); i >= 0 {
				rest = rest[:i]
			}
			if at := strings.LastIndexByte(rest, '@'); at >= 0 {
				user := rest[:at]
				add(user)
				if _, pass, ok := strings.Cut(user, ":"); ok {
					add(pass)
				}
			}
		}
	}
	return out
}

// Where no endpoint is set, the exporters send to the OpenTelemetry
// specification's default, plain HTTP or gRPC on loopback, where the Go
// SDK's own default is TLS there, which a local collector seldom speaks.
// Variables so that a test can stand a collector in.
var (
	DefaultHTTP = "http://localhost:4318"
	DefaultGRPC = "localhost:4317"
)

// plainDefault reports whether signal's exporter goes to the default
// endpoint: no endpoint variable is set for it, and no INSECURE variable
// says how to reach one.
func plainDefault(getenv func(string) string, signal string) bool {
	for _, v := range []string{"ENDPOINT", signal + "_ENDPOINT", "INSECURE", signal + "_INSECURE"} {
		if getenv("OTEL_EXPORTER_OTLP_"+v) != "" {
			return false
		}
	}
	return true
}

// ConfigError reports an OTEL_* variable with a value agentc cannot use.
type ConfigError struct{ Var, Value, Want string }

func (e *ConfigError) Error() string {
	return fmt.Sprintf("%s=%q: agentc supports %s", e.Var, e.Value, e.Want)
}

// Session is the SDK started for one program: the Telemetry that records
// runs, and the providers it exports through.
type Session struct {
	*telemetry.Telemetry
	shutdown []signalShutdown
	warn     func(error)   // says, once, that an export failed
	flush    time.Duration // FlushTimeout; shorter in tests
}

// signalShutdown stops one signal's provider, named for the warning.
type signalShutdown struct {
	signal string
	stop   func(context.Context) error
}

// FromEnv is Start with the process's environment, for a command line
// (internal/runcmd's Env.Telemetry): it returns nil when telemetry is
// off, and the function that exports what is left, reporting a failure on
// warn.
func FromEnv(ctx context.Context, warn io.Writer, secrets *redact.Set) (*telemetry.Telemetry, func(), error) {
	s, err := Start(ctx, os.Getenv, warn, secrets)
	if err != nil || s == nil {
		return nil, func() {}, err
	}
	return s.Telemetry, func() {
		if err := s.Shutdown(); err != nil {
			s.warn(err)
		}
	}, nil
}

// Start reads the environment through getenv and, when any of Vars is set
// (and OTEL_SDK_DISABLED is not "true"), starts the SDK's tracer and meter
// providers with OTLP exporters, which read the rest of the OTEL_*
// variables (endpoints, headers, timeouts, resource attributes, sampler)
// themselves. It returns nil when telemetry is off. Export failures are
// reported once on warn, and never fail a run. Content is recorded when
// telemetry.CaptureVar is "true", with secrets redacted.
func Start(ctx context.Context, getenv func(string) string, warn io.Writer, secrets *redact.Set) (*Session, error) {
	on := false
	for _, v := range Vars {
		on = on || getenv(v) != ""
	}
	if !on || strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return nil, nil
	}
	traces, err := exporterKind(getenv, "OTEL_TRACES_EXPORTER")
	if err != nil {
		return nil, err
	}
	metrics, err := exporterKind(getenv, "OTEL_METRICS_EXPORTER")
	if err != nil {
		return nil, err
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName("agentc")),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
	)
	if err != nil && res == nil {
		return nil, fmt.Errorf("telemetry: the resource: %w", err)
	}
	// What the exporters send a collector to be let in (the headers'
	// values, an endpoint's password) is the person's secret: the SDK
	// quotes a variable it cannot read, and a collector or a proxy may
	// echo a request's headers in an error.
	secrets.Add(ExporterSecrets(getenv)...)
	s := &Session{flush: FlushTimeout}
	var once sync.Once
	s.warn = func(err error) {
		once.Do(func() {
			// On one line: a collector's text (its error's body) holding
			// line breaks could otherwise write lines that read as agentc's.
			// (The program's standard error escapes the rest.)
			fmt.Fprintf(warn, "agentc: warning: telemetry could not be exported (the run goes on): %s\n", oneLine.Replace(textcut.Prefix(secrets.Error(err).Error(), maxSaid)))
		})
	}
	otel.SetErrorHandler(otel.ErrorHandlerFunc(s.warn))
	// The SDK's own log (a variable it cannot parse, say) goes where the
	// warnings go, secrets replaced and cut, rather than to the process's
	// standard error as it is.
	otel.SetLogger(funcr.New(func(prefix, args string) {
		fmt.Fprintf(warn, "agentc: telemetry: %s\n", oneLine.Replace(textcut.Prefix(secrets.String(strings.TrimSpace(prefix+" "+args)), maxSaid)))
	}, funcr.Options{}))
	valueLimit := 0 // no traces, no values
	var tracerProvider trace.TracerProvider = tracenoop.NewTracerProvider()
	var meterProvider metric.MeterProvider = metricnoop.NewMeterProvider()
	if traces {
		proto, err := protocol(getenv, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
		if err != nil {
			return nil, err
		}
		var exp sdktrace.SpanExporter
		// No retries: a program flushes at its end, where a collector
		// that does not answer must not hold it up.
		if proto == "grpc" {
			opts := []otlptracegrpc.Option{otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false})}
			if plainDefault(getenv, "TRACES") {
				opts = append(opts, otlptracegrpc.WithEndpoint(DefaultGRPC), otlptracegrpc.WithInsecure())
			}
			exp, err = otlptracegrpc.New(ctx, opts...)
		} else {
			opts := []otlptracehttp.Option{otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false})}
			if plainDefault(getenv, "TRACES") {
				opts = append(opts, otlptracehttp.WithEndpointURL(DefaultHTTP+"/v1/traces"))
			}
			exp, err = otlptracehttp.New(ctx, opts...)
		}
		if err != nil {
			return nil, fmt.Errorf("telemetry: the trace exporter: %w", err)
		}
		limits := sdktrace.NewSpanLimits() // the OTEL_*_LIMIT variables
		if getenv("OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT") == "" && getenv("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT") == "" {
			// Recorded content is a whole conversation on every chat
			// span, and the exporter queues up to 2,048 spans while a
			// collector does not answer: each value is cut, unless the
			// person set a limit of their own.
			limits.AttributeValueLengthLimit = DefaultValueLimit
		}
		valueLimit = limits.AttributeValueLengthLimit
		topts := append(TracerOptions(sdktrace.NewBatchSpanProcessor(exp)), sdktrace.WithResource(res), sdktrace.WithSpanLimits(limits))
		if getenv("OTEL_TRACES_SAMPLER") == "" {
			topts = append(topts, sdktrace.WithSampler(DefaultSampler))
		}
		p := sdktrace.NewTracerProvider(topts...)
		tracerProvider, s.shutdown = p, append(s.shutdown, signalShutdown{"traces", p.Shutdown})
	}
	if metrics {
		proto, err := protocol(getenv, "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL")
		if err != nil {
			return nil, err
		}
		var exp sdkmetric.Exporter
		if proto == "grpc" {
			opts := []otlpmetricgrpc.Option{otlpmetricgrpc.WithRetry(otlpmetricgrpc.RetryConfig{Enabled: false})}
			if plainDefault(getenv, "METRICS") {
				opts = append(opts, otlpmetricgrpc.WithEndpoint(DefaultGRPC), otlpmetricgrpc.WithInsecure())
			}
			exp, err = otlpmetricgrpc.New(ctx, opts...)
		} else {
			opts := []otlpmetrichttp.Option{otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: false})}
			if plainDefault(getenv, "METRICS") {
				opts = append(opts, otlpmetrichttp.WithEndpointURL(DefaultHTTP+"/v1/metrics"))
			}
			exp, err = otlpmetrichttp.New(ctx, opts...)
		}
		if err != nil {
			return nil, fmt.Errorf("telemetry: the metric exporter: %w", err)
		}
		p := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithResource(res))
		meterProvider, s.shutdown = p, append(s.shutdown, signalShutdown{"metrics", p.Shutdown})
	}
	s.Telemetry, err = telemetry.New(tracerProvider, meterProvider, telemetry.Options{
		Content: getenv(telemetry.CaptureVar) == "true",
		Secrets: secrets,
		// The SDK cuts attributes' values; a status and an event's
		// message are cut by the recorder, at the same limit.
		ValueLimit: valueLimit,
	})
	if err != nil {
		_ = s.Shutdown()
		return nil, err
	}
	return s, nil
}

// Shutdown exports what is left and stops the providers, within
// FlushTimeout whatever the collector does. A nil Session has nothing to
// do.
func (s *Session) Shutdown() error {
	if s == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.flush)
	defer cancel()
	// Each signal's failure is named, on one line: the SDK's errors alone
	// say "context deadline exceeded", once a signal, joined by a line break.
	var said []string
	for _, sd := range s.shutdown {
		err := sd.stop(ctx)
		switch {
		case err == nil:
		case errors.Is(err, context.DeadlineExceeded):
			said = append(said, fmt.Sprintf("%s: the collector did not take them within %s", sd.signal, s.flush))
		default:
			said = append(said, sd.signal+": "+err.Error())
		}
	}
	if len(said) == 0 {
		return nil
	}
	return errors.New(strings.Join(said, "; "))
}

// exporterKind reads OTEL_TRACES_EXPORTER or OTEL_METRICS_EXPORTER: on
// for "otlp" or unset, off for "none".
func exporterKind(getenv func(string) string, name string) (bool, error) {
	switch v := getenv(name); v {
	case "", "otlp":
		return true, nil
	case "none":
		return false, nil
	default:
		return false, &ConfigError{name, v, `"otlp" or "none"`}
	}
}

// protocol reads the signal's OTLP protocol, else the general one:
// "http/protobuf" (the default) or "grpc".
func protocol(getenv func(string) string, signal string) (string, error) {
	name, v := signal, getenv(signal)
	if v == "" {
		name, v = "OTEL_EXPORTER_OTLP_PROTOCOL", getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch v {
	case "", "http/protobuf":
		return "http/protobuf", nil
	case "grpc":
		return "grpc", nil
	}
	return "", &ConfigError{name, v, `"http/protobuf" or "grpc"`}
}
