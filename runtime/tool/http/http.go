// Package http is the http tool kind: it lets a model make one HTTP request
// whose method, URL, headers and body the manifest declares as templates
// over the tool's arguments, to URLs under the prefixes the manifest allows
// and nowhere else.
//
// The URL is rendered, then checked before any connection is made: it
// must be well formed as written (RFC 3986; a space, quote, backslash or
// non-ASCII character is refused rather than encoded, so a template should
// encode what it inserts, e.g. with urlquery), and it must be under an
// allowed prefix. Matching is on parsed components, never on the string:
// the same scheme, the same host (ASCII only, case-insensitive, exact: no
// subdomains, no trailing dot, an IP literal only where the prefix names
// that address), the same port (default ports normalised) and a path
// under the prefix's path at a segment boundary. User information
// ("user@") is refused outright, and so are "." and ".." path segments,
// also percent-encoded (once or more), written with backslashes or
// followed by ";". Percent-encoding is normalised before paths are
// compared, and an encoded "/" never counts as a separator. Redirects are
// followed up to five times, and every target is checked the same way
// before it is requested; redirects keep Go's rules for methods and
// headers (a 303, and a 301 or 302 after anything but GET, becomes a GET),
// but for credentials: Authorization and Cookie headers are dropped once
// a redirect leaves the origin of the call (another scheme, host, port or
// subdomain), where Go keeps them for a subdomain or another port; other
// declared headers go on to every allowed target.
//
// The method is the declared one; the model cannot choose it. Header
// names are fixed by the manifest and their values are templates; a
// header whose value renders empty is not sent, and one that renders a
// control character (a line break) fails the call. The tool sends a
// User-Agent of "agentc" and, with a body, a Content-Type of
// application/json when the body is valid JSON (text/plain otherwise),
// unless the manifest declares them. Arguments must be a JSON object;
// numbers render as written, and a missing argument is an error rather
// than "<no value>". It reads only the environment variables its env
// lists (for its headers' values), uses no proxy and keeps no cookies.
//
// The timeout covers the whole call, redirects and reading the body
// included. The response body is read up to max_bytes and cut there with
// a note "[response cut at N bytes]". The result is the status line, a
// blank line and the body; a body that is not UTF-8 text (or holds NUL
// bytes) is described by its content type and size instead. A status
// outside 2xx is a result marked as an error, carrying the same text.
// Refusals, timeouts and transport failures are errors. Request headers
// never appear in a result or an error. What else of the server's a
// result or an error shows (the status line's reason, the content type of
// a binary body, a redirect's target, a transport error's text) is cut at
// maxNoted bytes, so a result is at most max_bytes and a small fixed
// amount besides, whatever the server's headers hold.
package http

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	nethttp "net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/redact"
	"agentc.dev/agentc/runtime/tool/internal/proc"
	"agentc.dev/agentc/runtime/tool/internal/toolio"
)

// Defaults, the same as the manifest schema's.
const (
	DefaultTimeout  = 30 * time.Second
	DefaultMaxBytes = 1 << 20
)

// MaxRenderedBytes is the most each of the URL's, a header's and the
// body's template renders from one call's arguments: 1 MiB, what Go's
// servers take of a request's line and headers (http.DefaultMaxHeaderBytes),
// and more than a model writes in one call's arguments.
const MaxRenderedBytes = 1 << 20

// maxRedirects is how many redirects one call follows.
const maxRedirects = 5

// maxNoted is the most of one piece of the server's text outside the
// body that a result or an error shows: the status line, a content type,
// a redirect's target, a transport error. Go reads up to 1 MiB of
// headers, which max_bytes does not bound.
const maxNoted = 512

// noted cuts a piece of the server's text to maxNoted bytes, saying so,
// the secrets replaced first, so that the cut never shows part of one: a
// server may echo a header that holds one (in its reason phrase, a
// redirect's target), and the model chooses where the cut falls by the
// length of the arguments it echoes before it.
func (t *Tool) noted(s string) string {
	if len(s) <= maxNoted {
		return s // a secret in it is whole, and replaced with the rest
	}
	kept, _ := t.secrets.Prefix(s, maxNoted)
	return fmt.Sprintf("%s… (%d bytes in all)", kept, len(s))
}

// methods are the methods a tool may declare.
var methods = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}

// Option configures a Tool.
type Option func(*options)

type options struct {
	transport nethttp.RoundTripper
	secrets   *redact.Set
}

// WithSecrets gives the secrets to replace in a response before it is
// cut at max_bytes, so that a cut never shows part of one (the run
// replaces them in what is not cut).
func WithSecrets(s *redact.Set) Option {
	return func(o *options) { o.secrets = s }
}

// WithTransport makes the tool send its requests through rt instead of a
// transport of its own. Tests use it; every request still passes the
// allow list first, redirects included.
func WithTransport(rt nethttp.RoundTripper) Option {
	return func(o *options) { o.transport = rt }
}

// Tool is an http tool: a runtime.Tool that makes one request per call.
// It is safe for concurrent use.
type Tool struct {
	spec     runtime.ToolSpec
	method   string
	url      *plan.Template
	body     *plan.Template // nil without a body
	headers  []header       // sorted by name
	allow    allowlist
	timeout  time.Duration
	maxBytes int
	client   *nethttp.Client
	own      *nethttp.Transport // the client's, where the tool made it; nil for WithTransport's
	secrets  *redact.Set
	// env holds the values of the variables the tool's env lists that are
	// set, read when the tool is made: its header values' env NAME.
	env      map[string]string
	envNames []string
}

type header struct {
	name  string // canonical form
	value *plan.Template
}

var _ runtime.Tool = (*Tool)(nil)

// New returns the http tool called name that t declares. Empty t.Method
// means GET, empty t.Timeout 30s and t.MaxBytes 0 DefaultMaxBytes. New
// fails on a template that does not parse, an allow entry that is not an
// http or https URL prefix, a header the tool sets itself, or an env entry
// that is not a variable name (proc.EnvName).
func New(name string, t plan.Tool, opts ...Option) (*Tool, error) {
	fail := func(format string, args ...any) (*Tool, error) {
		return nil, fmt.Errorf("http tool %q: "+format, append([]any{name}, args...)...)
	}
	if t.Kind != "" && t.Kind != "http" {
		return fail("kind is %q, not http", t.Kind)
	}
	if t.Input == nil || len(t.Input.Schema) == 0 {
		return fail("no input schema")
	}
	if t.URL == "" {
		return fail("no url")
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	tool := &Tool{
		spec:     runtime.ToolSpec{Name: name, Description: t.Description, Schema: bytes.Clone(t.Input.Schema)},
		method:   cmp.Or(t.Method, "GET"),
		timeout:  DefaultTimeout,
		maxBytes: cmp.Or(t.MaxBytes, DefaultMaxBytes),
	}
	if !slices.Contains(methods, tool.method) {
		return fail("method %q is not one of %s", t.Method, strings.Join(methods, ", "))
	}
	if t.MaxBytes < 0 {
		return fail("max_bytes is %d; it must be positive", t.MaxBytes)
	}
	if t.Timeout != "" {
		d, err := time.ParseDuration(t.Timeout)
		if err != nil || d <= 0 {
			return fail("timeout %q is not a positive duration (write e.g. \"30s\")", t.Timeout)
		}
		tool.timeout = d
	}
	// The variables its header values may read (env NAME), as they are
	// now: the run has added their values to its secrets (tool.Build).
	tool.env, tool.envNames = map[string]string{}, slices.Clone(t.Env)
	for _, name := range t.Env {
		if !proc.EnvName(name) {
			return fail("env: %q is not a variable name", name)
		}
		if v := os.Getenv(name); v != "" { // empty is no credential
			tool.env[name] = v
		}
	}
	var err error
	if tool.allow, err = parseAllow(t.Allow); err != nil {
		return fail("%v", err)
	}
	if tool.url, err = parseTemplate("url", t.URL, MaxRenderedBytes); err != nil {
		return fail("%v", err)
	}
	if t.Body != "" {
		if tool.body, err = parseTemplate("body", t.Body, MaxRenderedBytes); err != nil {
			return fail("%v", err)
		}
	}
	for k, v := range t.Headers {
		if err := plan.CheckHeaderName(k); err != nil {
			return fail("header %v", err)
		}
		k = nethttp.CanonicalHeaderKey(k)
		tmpl, err := parseTemplate("header "+k, v, MaxRenderedBytes)
		if err != nil {
			return fail("%v", err)
		}
		tool.headers = append(tool.headers, header{k, tmpl})
	}
	slices.SortFunc(tool.headers, func(a, b header) int { return cmp.Compare(a.name, b.name) })
	for i := 1; i < len(tool.headers); i++ {
		if tool.headers[i].name == tool.headers[i-1].name {
			return fail("header %q is declared twice (header names are case-insensitive)", tool.headers[i].name)
		}
	}

	tool.secrets = o.secrets
	rt := o.transport
	if rt == nil {
		tool.own = newTransport(tool.timeout)
		rt = tool.own
	}
	tool.client = &nethttp.Client{
		Transport:     rt,
		CheckRedirect: tool.checkRedirect,
		Timeout:       tool.timeout,
	}
	return tool, nil
}

// parseTemplate parses a manifest template that renders at most max
// bytes. A missing argument is an error, not "<no value>" in a URL.
func parseTemplate(name, text string, max int) (*plan.Template, error) {
	tmpl, err := plan.ParseTemplate(name, text)
	if err != nil {
		return nil, err
	}
	return tmpl.MissingKeyError().Bounded(max), nil
}

// newTransport is the default transport: direct connections only (no
// proxy from the environment), with the call's timeout on dialing too.
func newTransport(timeout time.Duration) *nethttp.Transport {
	return &nethttp.Transport{
		Proxy:                  nil,
		DialContext:            (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           16,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    min(timeout, 10*time.Second),
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 1 << 20,
	}
}

// Close closes the connections the tool's own transport keeps open for
// its next call, which would otherwise stay open, each with its
// goroutines, until the transport's idle timeout. A transport given with
// WithTransport is its giver's to close. A call after Close connects anew.
func (t *Tool) Close() error {
	if t.own != nil {
		t.own.CloseIdleConnections()
	}
	return nil
}

// Spec describes the tool to a model: the declared description and input
// schema.
func (t *Tool) Spec() runtime.ToolSpec {
	s := t.spec
	s.Schema = bytes.Clone(s.Schema)
	return s
}

// redirectError is what checkRedirect refuses a redirect with.
type redirectError struct {
	from   string // the status of the response that redirected
	target string // the URL it redirected to, without a password
	why    string
}

func (e *redirectError) Error() string {
	return fmt.Sprintf("the server answered %s with a redirect to %s, which is refused: %s", e.from, e.target, e.why)
}

// checkRedirect gates every redirect through the allow list before the
// client requests it.
func (t *Tool) checkRedirect(req *nethttp.Request, via []*nethttp.Request) error {
	from := "a redirect"
	if req.Response != nil {
		from = req.Response.Status
	}
	from, target := t.noted(from), t.noted(req.URL.Redacted())
	if len(via) > maxRedirects {
		return &redirectError{from, target, fmt.Sprintf("this tool follows at most %d redirects", maxRedirects)}
	}
	if err := t.allow.check(req.URL); err != nil {
		return &redirectError{from, target, t.noted(err.Error())}
	}
	// Credentials are for the origin the call was made to. Go's client
	// keeps them for a subdomain and for another port or scheme of the
	// same host (plain http even); once the chain has left the origin
	// they are dropped for the rest of it, as Go drops them.
	for _, r := range append(via[1:], req) {
		if !sameOrigin(via[0].URL, r.URL) {
			for _, h := range credentialHeaders {
				req.Header.Del(h)
			}
			break
		}
	}
	// Go's client tells the next host the URL it came from, query and
	// all (what the model wrote into it); the manifest's own Referer, if
	// it declares one, is what goes.
	if !t.declares("Referer") {
		req.Header.Del("Referer")
	}
	return nil
}

// credentialHeaders are the headers a redirect to another origin is not
// sent: the ones Go's client drops when the host changes.
var credentialHeaders = []string{"Authorization", "Www-Authenticate", "Cookie", "Cookie2", "Proxy-Authorization", "Proxy-Authenticate"}

// sameOrigin reports whether a and b have the same scheme, host and port
// (the default port written or not), as the allow list compares them.
func sameOrigin(a, b *url.URL) bool {
	p, errA := plan.URLPrefixOf(a)
	q, errB := plan.URLPrefixOf(b)
	return errA == nil && errB == nil && p.Scheme == q.Scheme && p.SameHost(q) && p.Port == q.Port
}

// declares reports whether the manifest declares the header name.
func (t *Tool) declares(name string) bool {
	for _, h := range t.headers {
		if strings.EqualFold(h.name, name) {
			return true
		}
	}
	return false
}

// Call renders the request from the arguments, checks its URL against the
// allow list and sends it. Its errors are meant for the model.
func (t *Tool) Call(ctx context.Context, args json.RawMessage) (runtime.ToolResult, error) {
	if err := ctx.Err(); err != nil {
		return runtime.ToolResult{}, err
	}
	data, err := parseArgs(args)
	if err != nil {
		return runtime.ToolResult{}, err
	}
	// Render everything first: a template error sends nothing.
	rawURL, err := render(ctx, t.url, data, nil)
	if err != nil {
		return runtime.ToolResult{}, err
	}
	var body io.Reader
	var bodyText string
	if t.body != nil {
		if bodyText, err = render(ctx, t.body, data, nil); err != nil {
			return runtime.ToolResult{}, err
		}
		body = strings.NewReader(bodyText)
	}
	values := make([]string, len(t.headers))
	for i, h := range t.headers {
		if values[i], err = render(ctx, h.value, data, t.envValue); err != nil {
			return runtime.ToolResult{}, err
		}
		if strings.ContainsFunc(values[i], func(r rune) bool { return r != '\t' && (r < 0x20 || r == 0x7f) }) {
			return runtime.ToolResult{}, fmt.Errorf("header %s: its value has a control character (such as a line break) after rendering", h.name)
		}
	}

	refused := func(format string, args ...any) (runtime.ToolResult, error) {
		return runtime.ToolResult{}, fmt.Errorf("%s %s refused: "+format, append([]any{t.method, rawURL}, args...)...)
	}
	u, err := t.allow.target(rawURL)
	if err != nil {
		if u != nil && u.User != nil {
			rawURL = u.Redacted()
		}
		return refused("%v", err)
	}
	callCtx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	req, err := nethttp.NewRequestWithContext(callCtx, t.method, rawURL, body)
	if err != nil {
		return refused("%v", err)
	}
	req.URL = u // what was checked is what is sent

	req.Header.Set("User-Agent", "agentc")
	if t.body != nil {
		ct := "text/plain; charset=utf-8"
		if json.Valid([]byte(bodyText)) {
			ct = "application/json"
		}
		req.Header.Set("Content-Type", ct)
	}
	for i, h := range t.headers {
		if values[i] != "" {
			req.Header.Set(h.name, values[i])
		}
	}

	resp, err := t.client.Do(req)
	if err != nil {
		return runtime.ToolResult{}, t.failed(ctx, rawURL, err)
	}
	defer resp.Body.Close()
	// Past the cap, as much more as a secret's longest form, so that one
	// starting before the cap is replaced whole.
	b, err := io.ReadAll(io.LimitReader(resp.Body, int64(t.maxBytes+t.secrets.Lookahead())+1))
	if err != nil {
		if ctx.Err() == nil && callCtx.Err() != nil {
			return runtime.ToolResult{}, fmt.Errorf("%s %s: the response was not complete within %s (the tool's timeout)", t.method, rawURL, t.timeout)
		}
		return runtime.ToolResult{}, t.failed(ctx, rawURL, fmt.Errorf("reading the response: %w", err))
	}
	var out strings.Builder
	fmt.Fprintf(&out, "%s %s\n", resp.Proto, t.noted(resp.Status))
	if resp.Request != nil && resp.Request.URL.String() != req.URL.String() {
		fmt.Fprintf(&out, "[redirected to %s]\n", t.noted(resp.Request.URL.Redacted()))
	}
	out.WriteString("\n")
	out.WriteString(t.describeBody(b, resp))
	return runtime.ToolResult{
		Content: out.String(),
		IsError: resp.StatusCode < 200 || resp.StatusCode > 299,
	}, nil
}

// failed turns an error from sending a request into one for the model. A
// cancelled or expired ctx is returned as such, so the run sees its own
// deadline.
func (t *Tool) failed(ctx context.Context, rawURL string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("%s %s: %w", t.method, rawURL, ctxErr)
	}
	var re *redirectError
	if errors.As(err, &re) {
		return fmt.Errorf("%s %s: %w", t.method, rawURL, re)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() || errors.Is(ue.Err, context.DeadlineExceeded) {
			return fmt.Errorf("%s %s: no complete response within %s (the tool's timeout)", t.method, rawURL, t.timeout)
		}
		err = ue.Err // url.Error repeats the method and URL
	}
	return fmt.Errorf("%s %s failed: %s", t.method, rawURL, t.noted(err.Error()))
}

// describeBody renders a body read past maxBytes: as text, cut at
// maxBytes with a note (the secrets replaced first, so that the cut never
// shows part of one), or, when it is not UTF-8 text, as a line naming its
// content type and size.
func (t *Tool) describeBody(b []byte, resp *nethttp.Response) string {
	cut := len(b) > t.maxBytes
	s := string(b)
	if cut {
		s, _ = t.secrets.Prefix(s, t.maxBytes)
	}
	if len(s) == 0 && !cut {
		return "(empty body)\n"
	}
	if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
		ct := t.noted(resp.Header.Get("Content-Type"))
		if ct == "" {
			ct = "no content type"
		}
		size := fmt.Sprintf("%d bytes", len(b))
		switch {
		case cut && resp.ContentLength > 0:
			size = fmt.Sprintf("%d bytes", resp.ContentLength)
		case cut:
			size = fmt.Sprintf("more than %d bytes", t.maxBytes)
		}
		return fmt.Sprintf("[binary response (%s, %s); not shown: this tool returns only UTF-8 text]\n", ct, size)
	}
	if cut {
		if !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
		s += fmt.Sprintf("[response cut at %d bytes]\n", t.maxBytes)
	}
	return s
}

// parseArgs decodes the arguments.
func parseArgs(raw json.RawMessage) (map[string]any, error) { return toolio.Arguments(raw) }

// envValue is env NAME in a header's value: the value of a variable the
// tool's env lists. Its errors name the variable, never a value. A name
// the env does not list is quoted: a plan's template may give any string
// (compile allows only a listed name), even the model's (env .name).
func (t *Tool) envValue(name string) (string, error) {
	v, ok := t.env[name]
	switch {
	case !slices.Contains(t.envNames, name):
		return "", fmt.Errorf("the tool's env does not list %q", name)
	case !ok:
		return "", fmt.Errorf("$%s is not set, or empty, where agentc runs (the tool's env lists it)", name)
	}
	return v, nil
}

// render executes a template over the arguments, env NAME giving what env
// returns (nil: env is an error, as anywhere but a header's value).
func render(ctx context.Context, tmpl *plan.Template, data map[string]any, env func(name string) (string, error)) (string, error) {
	var b strings.Builder
	if err := tmpl.WithContext(ctx).ExecuteEnv(&b, data, env); err != nil {
		return "", fmt.Errorf("rendering the %s: %v", tmpl.Name(), err)
	}
	return b.String(), nil
}
