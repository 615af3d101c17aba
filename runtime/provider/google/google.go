// Package google is the `google` provider: a runtime.Model over Google's
// Gemini models, on the Gemini Developer API or on Vertex AI, through
// Google's official Go SDK (google.golang.org/genai). Each call is one
// generateContent request: the runtime does not stream yet. The runtime's
// retry policy owns retries; the SDK's own are off, and so is its automatic
// continuation of a cut response.
//
// New reads no environment variable itself. The SDK's client constructor
// still looks some up (GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GENAI_USE_ENTERPRISE,
// GOOGLE_API_KEY, GEMINI_API_KEY, GOOGLE_CLOUD_PROJECT, GOOGLE_CLOUD_LOCATION,
// GOOGLE_CLOUD_REGION, GOOGLE_GEMINI_BASE_URL, GOOGLE_VERTEX_BASE_URL), but
// New sets every value they would stand in for, so none changes what is
// sent or where; the SDK only logs a warning on stderr when both API key
// variables are set, or when one is set and Vertex AI is used. On Vertex AI
// with no Config.Credentials, the application-default credentials are
// found as Google's auth library finds them (GOOGLE_APPLICATION_CREDENTIALS,
// the gcloud configuration, the metadata server), and their quota project
// may come from GOOGLE_CLOUD_QUOTA_PROJECT.
package google

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"cloud.google.com/go/auth"
	"cloud.google.com/go/auth/credentials"
	"cloud.google.com/go/auth/httptransport"
	"google.golang.org/genai"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/internal/origin"
	"agentc.dev/agentc/runtime/internal/replylimit"
	"agentc.dev/agentc/runtime/provider/internal/failure"
	"agentc.dev/agentc/runtime/provider/internal/files"
	"agentc.dev/agentc/runtime/provider/internal/limit"
	"agentc.dev/agentc/runtime/provider/retry"
	"agentc.dev/agentc/runtime/redact"
)

// The backends a Config may name.
const (
	BackendGemini = "gemini" // the Gemini Developer API, with an API key
	BackendVertex = "vertex" // Vertex AI, with Google Cloud credentials or an express-mode API key
)

// ErrTruncated reports an answer cut at the output token limit.
var ErrTruncated = errors.New("the output was cut at the token limit")

// ErrRefused reports that the model declined to answer, or that the
// prompt or the answer was blocked (a safety filter, a blocklist,
// recitation, personal data).
var ErrRefused = errors.New("the model refused to answer")

// Config configures a Model.
type Config struct {
	// Backend is BackendGemini (the default when empty) or BackendVertex.
	Backend string
	// APIKey is the Gemini API key (required there), or a Vertex AI
	// express-mode key, which then stands in for Project, Location and
	// Credentials.
	APIKey string
	// Project and Location say where Vertex AI runs the model; Location
	// "" is "global".
	Project, Location string
	// Credentials authenticate to Vertex AI; nil means the
	// application-default credentials.
	Credentials *auth.Credentials
	// BaseURL replaces the backend's endpoint (tests, proxies). The API
	// version is appended to it: /v1beta for the Gemini API, /v1beta1 for
	// Vertex AI.
	BaseURL    string
	HTTPClient *http.Client // optional
	// Retry bounds the attempts of a call. Attempts zero means retry.Default
	// (keeping OnAttempt).
	Retry retry.Policy
	// Stall gives up an attempt when the server makes no progress for
	// this long: no response, no part of a streamed reply (keep-alives are
	// none), a whole body taking longer than this and a second per 16 KiB
	// (see retry.DefaultStall, the default when zero); negative waits for
	// ever. A given-up attempt is retried as the policy allows.
	Stall time.Duration
	// Secrets, when set, is the secret set of the runs the Model serves
	// (runtime.Options.Secrets): every credential the Model sends is
	// added to it before a request carries it — the API key, and each
	// Vertex AI access token as Credentials give it (each one a refresh
	// brings too) — so that what a server echoes of one is redacted
	// wherever the runs write it. The Model's errors are redacted with it.
	// Nil keeps them in a set of the Model's own, for its errors alone.
	Secrets *redact.Set
}

// Model is a runtime.Model over Gemini's generateContent. It is safe for
// concurrent use.
type Model struct {
	// models is the one service used, not the whole client: see the
	// openai package's Model for why that keeps agentc smaller.
	models *genai.Models
	key    *redact.Set // the credentials sent (Config.Secrets), for errors that echo them
	retry  retry.Policy
}

var _ agentrt.Model = (*Model)(nil)

// The API versions the SDK uses by default, set explicitly so that the
// paths are this package's to say.
const (
	geminiVersion = "v1beta"
	vertexVersion = "v1beta1"
)

// New returns a Model for cfg.
func New(cfg Config) (*Model, error) {
	secrets := cfg.Secrets
	if secrets == nil {
		secrets = &redact.Set{}
	}
	secrets.Add(cfg.APIKey)
	cc := &genai.ClientConfig{HTTPOptions: genai.HTTPOptions{BaseURL: cfg.BaseURL}}
	hc := origin.Client(cfg.HTTPClient)
	next := hc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	switch cfg.Backend {
	case "", BackendGemini:
		if cfg.APIKey == "" && cfg.BaseURL == "" {
			return nil, errors.New("google: no API key (the Gemini API takes one; a server named by a base URL may take none)")
		}
		if cfg.Project != "" || cfg.Location != "" || cfg.Credentials != nil {
			return nil, errors.New("google: a project, location or credentials are for the vertex backend, not gemini")
		}
		cc.Backend, cc.APIKey = genai.BackendGeminiAPI, cfg.APIKey
		if cfg.APIKey == "" {
			// The SDK insists on a key; a server that takes none (a
			// local gateway) is sent no key header at all.
			cc.APIKey = "none"
			next = keyless{next}
		}
		cc.HTTPOptions.APIVersion = geminiVersion
		if cc.HTTPOptions.BaseURL == "" {
			cc.HTTPOptions.BaseURL = "https://generativelanguage.googleapis.com/"
		}
	case BackendVertex:
		cc.Backend = genai.BackendVertexAI
		cc.HTTPOptions.APIVersion = vertexVersion
		if cfg.APIKey != "" {
			// Express mode: the key stands for project and credentials.
			if cfg.Project != "" || cfg.Location != "" || cfg.Credentials != nil {
				return nil, errors.New("google: a Vertex AI API key (express mode) goes without project, location or credentials")
			}
			cc.APIKey = cfg.APIKey
			if cc.HTTPOptions.BaseURL == "" {
				cc.HTTPOptions.BaseURL = "https://aiplatform.googleapis.com/"
			}
			break
		}
		if cfg.Project == "" {
			return nil, errors.New("google: Vertex AI needs a project (or an express-mode API key)")
		}
		cc.Project, cc.Location = cfg.Project, cfg.Location
		if cc.Location == "" {
			cc.Location = "global"
		}
		if cc.HTTPOptions.BaseURL == "" {
			cc.HTTPOptions.BaseURL = vertexEndpoint(cc.Location)
		}
		creds := cfg.Credentials
		if creds == nil {
			var err error
			creds, err = credentials.DetectDefault(&credentials.DetectOptions{
				Scopes: []string{"https://www.googleapis.com/auth/cloud-platform"},
			})
			if err != nil {
				return nil, fmt.Errorf("google: Vertex AI application-default credentials: %w", err)
			}
		}
		next = &bearer{creds: creds, next: next, secrets: secrets}
	default:
		return nil, fmt.Errorf("google: unknown backend %q (want %q or %q)", cfg.Backend, BackendGemini, BackendVertex)
	}
	// The key goes to the base URL's origin only (origin.Client refuses a
	// redirect elsewhere); what the server sends back is bounded.
	hc.Transport = &transport{next: next, limit: limit.Middleware("google", replylimit.MaxResponse), stall: limit.Stall("google", cfg.Stall)}
	cc.HTTPClient = hc
	client, err := genai.NewClient(context.Background(), cc)
	if err != nil {
		return nil, fmt.Errorf("google: %s", secrets.String(err.Error()))
	}
	p := cfg.Retry
	if p.Attempts == 0 {
		on := p.OnAttempt
		p = retry.Default
		p.OnAttempt = on
	}
	return &Model{models: client.Models, key: secrets, retry: p}, nil
}

// vertexEndpoint is Vertex AI's endpoint for a location, as the SDK
// would choose it.
func vertexEndpoint(location string) string {
	switch location {
	case "global":
		return "https://aiplatform.googleapis.com/"
	case "us", "eu":
		return "https://aiplatform." + location + ".rep.googleapis.com/"
	}
	return "https://" + location + "-aiplatform.googleapis.com/"
}

// bearer authenticates each request with a token from creds, which it
// adds to secrets first: a server that echoes it, in an error or in the
// answer, is redacted.
type bearer struct {
	creds   *auth.Credentials
	next    http.RoundTripper
	secrets *redact.Set
}

func (b *bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	tok, err := b.creds.Token(req.Context())
	if err != nil {
		return nil, &credentialError{err}
	}
	b.secrets.Add(tok.Value)
	req = req.Clone(req.Context())
	httptransport.SetAuthHeader(tok, req)
	if qp, err := b.creds.QuotaProjectID(req.Context()); err == nil && qp != "" {
		req.Header.Set("X-Goog-User-Project", qp)
	}
	return b.next.RoundTrip(req)
}

// credentialError is a failure to get a token: final, another attempt
// meets it again.
type credentialError struct{ err error }

func (e *credentialError) Error() string { return "getting a token for Vertex AI: " + e.err.Error() }
func (e *credentialError) Unwrap() error { return e.err }

// transport runs each request through the middlewares the other
// providers give their SDKs (the genai SDK takes none): the response
// limit, stall detection, and a call's file splice; and records the
// response's status and headers for the call to classify an error by.
type transport struct {
	next         http.RoundTripper
	limit, stall func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error)
}

// attempt is what one attempt's requests share with the transport,
// through their context.
type attempt struct {
	splice *files.Splice
	tokens int64 // the request's maxOutputTokens, which bound the JSON values of its response
	status int
	header http.Header
	// bound is a limit the response's body passed (failure.Bounded),
	// as its read met it: the SDK's scanner hands on the partial line
	// before the limit's error, and its JSON error (a body cut short, so
	// retried) would hide it.
	bound error
}

// boundBody records on its attempt a limit the body passes.
type boundBody struct {
	rc io.ReadCloser
	a  *attempt
}

func (b *boundBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil && err != io.EOF && b.a.bound == nil {
		if _, ok := failure.Bounded("google", err); ok {
			b.a.bound = err
		}
	}
	return n, err
}

func (b *boundBody) Close() error { return b.rc.Close() }

type attemptKey struct{}

// uncommented is a stream of server-sent events as the SDK reads one:
// without comment lines (a colon first), which the format has a reader
// pass over and a proxy may send as keep-alives, each line ended by \n
// and each event by one blank line. The SDK splits the stream at blank
// lines and takes what lies between for one data line: a comment, or
// the blank line a comment's removal would leave, was a chunk it could
// not read, and the stream failed.
type uncommented struct {
	rc      io.ReadCloser
	start   bool // the next byte begins a line
	comment bool // the line being read is a comment
	cr      bool // the last byte was \r, which a \n may complete
	inEvent bool // a line of the event being read was handed on
}

func (u *uncommented) Read(p []byte) (int, error) {
	for {
		n, err := u.rc.Read(p)
		w := 0 // never past the byte being read: the bytes shrink in place
		for i := 0; i < n; i++ {
			b := p[i]
			cr := u.cr
			u.cr = b == '\r'
			switch {
			case b == '\n' && cr:
				// The \r before it ended the line.
			case b == '\r' || b == '\n':
				switch {
				case u.comment:
					u.comment = false
				case !u.start:
					p[w], w = '\n', w+1
				case u.inEvent:
					// A blank line ends the event: one, whatever came before.
					p[w], w = '\n', w+1
					u.inEvent = false
				}
				u.start = true
			case u.start && b == ':':
				u.start, u.comment = false, true
			default:
				// The rest of the line at once.
				end := bytes.IndexAny(p[i:n], "\r\n")
				if end < 0 {
					end = n - i
				}
				if !u.comment {
					u.start, u.inEvent = false, true
					w += copy(p[w:], p[i:i+end])
				}
				i += end - 1
			}
		}
		// A read of comments alone is not handed on as an empty one.
		if w > 0 || n == 0 || err != nil {
			return w, err
		}
	}
}

func (u *uncommented) Close() error { return u.rc.Close() }

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	a, _ := req.Context().Value(attemptKey{}).(*attempt)
	// The middlewares change the request: a RoundTripper may not.
	req = req.Clone(req.Context())
	send := t.next.RoundTrip
	// A redirected request's body is the spliced one already. The
	// splice also bounds a body without files (files.MaxBody).
	if a != nil && a.splice != nil && req.Response == nil {
		inner := send
		send = func(r *http.Request) (*http.Response, error) { return a.splice.Middleware(r, inner) }
	}
	stalled := func(r *http.Request) (*http.Response, error) { return t.stall(r, send) }
	resp, err := t.limit(req, stalled)
	if a != nil && resp != nil {
		a.status, a.header = resp.StatusCode, resp.Header
		if resp.Body != nil {
			if resp.StatusCode/100 == 2 {
				// The SDK decodes a body, and each event of a stream, into
				// maps before any part is judged: their values are counted
				// as they pass, first (limit.Values).
				stream := strings.HasSuffix(req.URL.Path, ":streamGenerateContent")
				resp.Body = limit.Values(resp.Body, a.tokens, stream)
				if stream {
					resp.Body = &uncommented{rc: resp.Body, start: true}
				}
			}
			resp.Body = &boundBody{rc: resp.Body, a: a}
		}
	}
	return resp, err
}

// Complete sends req as one generateContent request, retrying under the
// Model's policy, and returns the assistant's message.
func (m *Model) Complete(ctx context.Context, req *agentrt.Request) (*agentrt.Response, error) {
	return failure.Tallied(ctx, func(ctx context.Context) (*agentrt.Response, error) { return m.complete(ctx, req) })
}

func (m *Model) complete(ctx context.Context, req *agentrt.Request) (*agentrt.Response, error) {
	if req == nil {
		return nil, errors.New("google: no request")
	}
	b, err := build(req)
	if err != nil {
		return nil, fmt.Errorf("google: %w", err)
	}
	var out *genai.GenerateContentResponse
	err = m.retry.Do(ctx, func(ctx context.Context, n int) error {
		a := &attempt{splice: b.splice, tokens: int64(b.config.MaxOutputTokens)}
		actx := context.WithValue(ctx, attemptKey{}, a)
		var resp *genai.GenerateContentResponse
		var err error
		if req.Stream != nil {
			if n > 1 {
				req.Stream(agentrt.Delta{Restart: true})
			}
			resp, err = m.stream(actx, req.Model, b, req.Stream, req.OutputTool)
		} else {
			resp, err = m.generate(limit.WithWhole(actx, int64(b.config.MaxOutputTokens)), req.Model, b)
		}
		if err != nil {
			return m.classify(ctx, err, a)
		}
		out = resp
		return nil
	})
	if err != nil {
		return nil, err
	}
	resp, err := parseResponse(out, len(req.Messages), m.redact)
	if err != nil {
		return nil, err
	}
	if err := agentrt.CheckReply(int64(b.config.MaxOutputTokens), &resp.Message); err != nil {
		return nil, fmt.Errorf("google: %w", err)
	}
	return resp, nil
}

// generate makes one request. The SDK reads a response through untyped
// maps with unchecked type assertions; a response of an unexpected shape
// is an error, not a panic.
func (m *Model) generate(ctx context.Context, model string, b *built) (resp *genai.GenerateContentResponse, err error) {
	defer func() {
		if r := recover(); r != nil {
			resp, err = nil, &shapeError{fmt.Sprint(r)}
		}
	}()
	// The SDK fills in the config as it sends it: each attempt gets its own.
	config := *b.config
	config.HTTPOptions = &genai.HTTPOptions{ExtrasRequestProvider: b.extras}
	return m.models.GenerateContent(ctx, model, b.contents, &config)
}

// stream makes one streamGenerateContent request and puts the response a
// plain request would have returned together from its chunks: their
// text joined, their other parts kept, the last chunk's finish reason,
// usage and model version. delta hears each piece of text, and each call
// of the output tool's arguments, as it arrives. A stream that ends
// before a finish reason is cut: a transport failure, tried again. A
// stream whose parts pass what the request's maxOutputTokens can make is
// cut there (limit.Reply), not read to its end.
func (m *Model) stream(ctx context.Context, model string, b *built, delta func(agentrt.Delta), outputTool string) (resp *genai.GenerateContentResponse, err error) {
	defer func() {
		if r := recover(); r != nil {
			resp, err = nil, &shapeError{fmt.Sprint(r)}
		}
	}()
	config := *b.config
	config.HTTPOptions = &genai.HTTPOptions{ExtrasRequestProvider: b.extras}
	var whole *genai.GenerateContentResponse
	var parts []*genai.Part
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			parts = append(parts, &genai.Part{Text: text.String()})
			text.Reset()
		}
	}
	ctx, meter := limit.NewReply(ctx, int64(config.MaxOutputTokens))
	for chunk, err := range m.models.GenerateContentStream(ctx, model, b.contents, &config) {
		if err != nil {
			return nil, err
		}
		if whole == nil {
			c := *chunk
			whole = &c
		}
		if chunk.UsageMetadata != nil {
			whole.UsageMetadata = chunk.UsageMetadata
		}
		if chunk.ModelVersion != "" {
			whole.ModelVersion = chunk.ModelVersion
		}
		if chunk.PromptFeedback != nil {
			whole.PromptFeedback = chunk.PromptFeedback
		}
		if len(chunk.Candidates) == 0 || chunk.Candidates[0] == nil {
			continue
		}
		c := chunk.Candidates[0]
		if len(whole.Candidates) == 0 || whole.Candidates[0] == nil {
			cc := *c
			whole.Candidates = []*genai.Candidate{&cc}
		}
		if c.FinishReason != "" {
			whole.Candidates[0].FinishReason, whole.Candidates[0].FinishMessage = c.FinishReason, c.FinishMessage
		}
		if c.Content == nil {
			continue
		}
		for _, p := range c.Content.Parts {
			// The parts kept: a text's bytes, any other part's JSON.
			n := 0
			switch {
			case p == nil:
			case p.Text != "" && !p.Thought && p.ThoughtSignature == nil:
				n = len(p.Text)
			default:
				j, _ := json.Marshal(p)
				if string(j) == "{}" {
					// An empty part carries nothing: not kept, and not
					// the stream's progress (limit.Stall), which a
					// server sending them for ever would otherwise be.
					continue
				}
				n = len(j)
				if p.FunctionCall != nil {
					n = max(n, replylimit.CallBytes)
				}
			}
			if err := meter.Add(n); err != nil {
				return nil, err
			}
			switch {
			case p == nil:
			case p.Text != "" && !p.Thought && p.ThoughtSignature == nil:
				text.WriteString(p.Text)
				delta(agentrt.Delta{Text: p.Text})
			default:
				flush()
				parts = append(parts, p)
				if fc := p.FunctionCall; fc != nil && outputTool != "" && fc.Name == outputTool && fc.Args != nil {
					if args, err := json.Marshal(fc.Args); err == nil {
						delta(agentrt.Delta{Answer: string(args)})
					}
				}
			}
		}
	}
	flush()
	if whole == nil || len(whole.Candidates) == 0 || whole.Candidates[0] == nil {
		if whole != nil && whole.PromptFeedback != nil && whole.PromptFeedback.BlockReason != "" {
			return whole, nil // a prompt blocked: parseResponse says so
		}
		return nil, fmt.Errorf("the stream ended before the response did: %w", io.ErrUnexpectedEOF)
	}
	if whole.Candidates[0].FinishReason == "" {
		return nil, fmt.Errorf("the stream ended before the response did: %w", io.ErrUnexpectedEOF)
	}
	whole.Candidates[0].Content = &genai.Content{Role: genai.RoleModel, Parts: parts}
	return whole, nil
}

// shapeError is a response the SDK could not read: not the shape of a
// GenerateContentResponse.
type shapeError struct{ what string }

func (e *shapeError) Error() string {
	return "the response is not a GenerateContentResponse: " + e.what
}

// Limits are the files Gemini takes inline (plan.FileLimits).
var Limits = files.Limits(plan.FileLimits["google"])

// built is a request in the SDK's terms.
type built struct {
	contents []*genai.Content
	config   *genai.GenerateContentConfig
	splice   *files.Splice
	// placeholders maps the base64 of each file's placeholder, which is
	// what the SDK writes for the bytes a part holds, to the placeholder,
	// which the splice replaces with the file.
	placeholders map[string]string
	// signed says to give function calls the signature Gemini 3 takes in
	// place of the model's own (see thoughtSignatures).
	signed bool
}

// extras puts each file's placeholder where the SDK wrote its base64, and
// the thought signatures in (see skipSignature), in the body just before
// it is encoded.
func (b *built) extras(body map[string]any) map[string]any {
	for _, c := range objects(body["contents"]) {
		for _, p := range objects(c["parts"]) {
			if d, ok := p["inlineData"].(map[string]any); ok {
				if s, ok := d["data"].(string); ok {
					if ph, ok := b.placeholders[s]; ok {
						d["data"] = ph
					}
				}
			}
			if _, ok := p["functionCall"]; ok && b.signed && c["role"] == genai.RoleModel {
				if _, has := p["thoughtSignature"]; !has {
					p["thoughtSignature"] = skipSignature
				}
			}
		}
	}
	return body
}

// objects are the objects of an array in the SDK's body, whichever of
// its two slice types holds them.
func objects(v any) []map[string]any {
	switch v := v.(type) {
	case []map[string]any:
		return v
	case []any:
		out := make([]map[string]any, 0, len(v))
		for _, e := range v {
			if m, ok := e.(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out
	}
	return nil
}

// skipSignature is the value Google documents for a function call whose
// thought signature was not kept (https://ai.google.dev/gemini-api/docs/thought-signatures):
// runtime messages cannot carry the model's own, and Gemini 3 refuses a
// history whose calls have none. The field is bytes in base64, which the
// API reads in either alphabet; the value is sent as written there, in
// the URL-safe one, which the SDK's []byte would not write.
const skipSignature = "skip_thought_signature_validator"

// idPrefix begins the IDs this package gives function calls that came
// without one; such an ID is not sent back (Gemini pairs a call and its
// response by their order and name).
const idPrefix = "gemini-call-"

func build(req *agentrt.Request) (*built, error) {
	b := &built{
		config:       &genai.GenerateContentConfig{AutomaticContinuation: genai.Ptr(false)},
		splice:       files.NewSplice(req.Files),
		placeholders: map[string]string{},
	}
	fam := familyOf(req.Model)
	b.signed = fam.signatures
	c := b.config
	if req.Temperature != nil {
		c.Temperature = genai.Ptr(float32(*req.Temperature))
	}
	if req.MaxOutputTokens > 0 {
		c.MaxOutputTokens = int32(min(req.MaxOutputTokens, 1<<31-1))
	}
	if req.Reasoning != "" {
		tc, err := fam.thinking(req.Reasoning)
		if err != nil {
			return nil, err
		}
		c.ThinkingConfig = tc
	}

	inline := func(f *agentrt.File) (*genai.Part, error) {
		if err := Limits.Check("google", f); err != nil {
			return nil, err
		}
		ph, err := b.splice.Base64(f)
		if err != nil {
			return nil, err
		}
		b.placeholders[base64.StdEncoding.EncodeToString([]byte(ph))] = ph
		return &genai.Part{InlineData: &genai.Blob{MIMEType: f.MediaType, Data: []byte(ph)}}, nil
	}

	names := map[string]string{} // tool call ID → tool name
	var returned []*genai.Part   // files tools returned, after the turn's results
	var sys []*genai.Part
	for i, msg := range req.Messages {
		var role string
		var parts []*genai.Part
		switch msg.Role {
		case agentrt.System:
			if msg.Content != "" {
				sys = append(sys, &genai.Part{Text: msg.Content})
			}
			continue
		case agentrt.User:
			role = genai.RoleUser
			if msg.Content != "" {
				parts = append(parts, &genai.Part{Text: msg.Content})
			}
			for _, p := range msg.Parts {
				if p.File == nil {
					if p.Text != "" {
						parts = append(parts, &genai.Part{Text: p.Text})
					}
					continue
				}
				ip, err := inline(p.File)
				if err != nil {
					return nil, fmt.Errorf("message %d: %w", i, err)
				}
				parts = append(parts, ip)
			}
		case agentrt.Assistant:
			role = genai.RoleModel
			if msg.Content != "" {
				parts = append(parts, &genai.Part{Text: msg.Content})
			}
			for _, tc := range msg.ToolCalls {
				args := map[string]any{}
				if len(tc.Arguments) > 0 {
					dec := json.NewDecoder(bytes.NewReader(tc.Arguments))
					dec.UseNumber()
					if err := dec.Decode(&args); err != nil {
						return nil, fmt.Errorf("message %d: tool call %q has arguments that are not a JSON object", i, tc.ID)
					}
				}
				names[tc.ID] = tc.Name
				parts = append(parts, &genai.Part{FunctionCall: &genai.FunctionCall{ID: wireID(tc.ID), Name: tc.Name, Args: args}})
			}
		case agentrt.ToolRole:
			role = genai.RoleUser
			name := msg.Name
			if name == "" {
				name = names[msg.ToolCallID]
			}
			if name == "" {
				return nil, fmt.Errorf("message %d: the result of call %q names no tool", i, msg.ToolCallID)
			}
			key := "content"
			if msg.IsError {
				key = "error"
			}
			parts = append(parts, &genai.Part{FunctionResponse: &genai.FunctionResponse{
				ID: wireID(msg.ToolCallID), Name: name, Response: map[string]any{key: msg.Content},
			}})
			// A file the API does not take inline is left to the text,
			// which names it.
			for _, p := range msg.Parts {
				if p.File == nil || Limits.Check("google", p.File) != nil {
					continue
				}
				ip, err := inline(p.File)
				if err != nil {
					return nil, fmt.Errorf("message %d: %w", i, err)
				}
				returned = append(returned, &genai.Part{Text: fmt.Sprintf("The tool %s returned this file (%s):", name, p.File.MediaType)}, ip)
			}
			if next := i + 1; next < len(req.Messages) && req.Messages[next].Role == agentrt.ToolRole {
				break
			}
			// The files follow every result of the turn: a response
			// part, Gemini reads in the order of the calls.
			parts, returned = append(parts, returned...), nil
		default:
			return nil, fmt.Errorf("message %d: unknown role %q", i, msg.Role)
		}
		if len(parts) == 0 {
			continue
		}
		// Consecutive messages of one role are one content: a turn's tool
		// results (and any user text after them) are one user turn.
		if n := len(b.contents); n > 0 && b.contents[n-1].Role == role {
			b.contents[n-1].Parts = append(b.contents[n-1].Parts, parts...)
			continue
		}
		b.contents = append(b.contents, &genai.Content{Role: role, Parts: parts})
	}
	if len(sys) > 0 {
		c.SystemInstruction = &genai.Content{Parts: sys}
	}

	if len(req.Tools) > 0 {
		var decls []*genai.FunctionDeclaration
		for _, t := range req.Tools {
			d := &genai.FunctionDeclaration{Name: t.Name, Description: t.Description}
			if len(t.Schema) > 0 {
				if !json.Valid(t.Schema) {
					return nil, fmt.Errorf("tool %q: the schema is not JSON", t.Name)
				}
				d.ParametersJsonSchema = json.RawMessage(t.Schema)
			}
			decls = append(decls, d)
		}
		c.Tools = []*genai.Tool{{FunctionDeclarations: decls}}
		fc := &genai.FunctionCallingConfig{}
		switch req.ToolChoice.Mode {
		case "":
			fc = nil
		case agentrt.ChooseAuto:
			fc.Mode = genai.FunctionCallingConfigModeAuto
		case agentrt.ChooseRequired:
			fc.Mode = genai.FunctionCallingConfigModeAny
		case agentrt.ChooseTool:
			if req.ToolChoice.Name == "" {
				return nil, errors.New(`tool choice "tool" names no tool`)
			}
			fc.Mode, fc.AllowedFunctionNames = genai.FunctionCallingConfigModeAny, []string{req.ToolChoice.Name}
		case "none":
			fc.Mode = genai.FunctionCallingConfigModeNone
		default:
			return nil, fmt.Errorf("unknown tool choice mode %q", req.ToolChoice.Mode)
		}
		if fc != nil {
			c.ToolConfig = &genai.ToolConfig{FunctionCallingConfig: fc}
		}
	}
	if a := req.Answer; a != nil && a.Mode == plan.ModeNative {
		if !json.Valid(a.Schema) {
			return nil, errors.New("the answer schema is not JSON")
		}
		c.ResponseMIMEType = "application/json"
		c.ResponseJsonSchema = json.RawMessage(a.Schema)
	}
	return b, nil
}

// wireID is the ID a call goes back to the API with: its own, or none
// for one this package made up.
func wireID(id string) string {
	if strings.HasPrefix(id, idPrefix) {
		return ""
	}
	return id
}

// family is what a model family takes: how it is told to think, and
// whether its function calls need thought signatures sent back.
type family struct {
	prefix string
	// budgets is the thinkingBudget for none, low, medium, high; nil
	// when the family takes thinkingLevel instead.
	budgets *[4]int32
	// levels is the thinkingLevel for none, low, medium, high.
	levels     [4]genai.ThinkingLevel
	noThinking bool // the family does not think: reasoning is not sent
	signatures bool
}

// families are the Gemini families by model name prefix, most specific
// first; a name that none matches is taken as a newer family, which
// thinks by level as Gemini 3 does. Gemini 2.5 Pro cannot stop thinking:
// its least budget is 128; Gemini 3 Pro's least level is LOW.
var families = []family{
	{prefix: "gemini-2.5-pro", budgets: &[4]int32{128, 1024, 8192, 32768}},
	{prefix: "gemini-2.5-", budgets: &[4]int32{0, 1024, 8192, 24576}},
	{prefix: "gemini-2.0-", noThinking: true},
	{prefix: "gemini-1.", noThinking: true},
	{prefix: "gemini-3-pro", levels: [4]genai.ThinkingLevel{genai.ThinkingLevelLow, genai.ThinkingLevelLow, genai.ThinkingLevelHigh, genai.ThinkingLevelHigh}, signatures: true},
	{prefix: "gemini-3.1-pro", levels: [4]genai.ThinkingLevel{genai.ThinkingLevelLow, genai.ThinkingLevelLow, genai.ThinkingLevelMedium, genai.ThinkingLevelHigh}, signatures: true},
	{prefix: "", levels: [4]genai.ThinkingLevel{genai.ThinkingLevelMinimal, genai.ThinkingLevelLow, genai.ThinkingLevelMedium, genai.ThinkingLevelHigh}, signatures: true},
}

// familyOf finds a model's family; a Vertex AI model may be named by its
// resource path.
func familyOf(model string) family {
	name := model[strings.LastIndex(model, "/")+1:]
	for _, f := range families {
		if strings.HasPrefix(name, f.prefix) {
			return f
		}
	}
	return families[len(families)-1]
}

func (f family) thinking(reasoning string) (*genai.ThinkingConfig, error) {
	i := map[string]int{"none": 0, "low": 1, "medium": 2, "high": 3}
	n, ok := i[reasoning]
	if !ok {
		return nil, fmt.Errorf("unknown reasoning %q (want none, low, medium or high)", reasoning)
	}
	switch {
	case f.noThinking:
		return nil, nil
	case f.budgets != nil:
		return &genai.ThinkingConfig{ThinkingBudget: genai.Ptr(f.budgets[n])}, nil
	}
	return &genai.ThinkingConfig{ThinkingLevel: f.levels[n]}, nil
}

// refusals are the finish reasons that say the answer was blocked.
var refusals = map[genai.FinishReason]bool{
	genai.FinishReasonSafety: true, genai.FinishReasonRecitation: true, genai.FinishReasonBlocklist: true,
	genai.FinishReasonProhibitedContent: true, genai.FinishReasonSPII: true, genai.FinishReasonImageSafety: true,
	genai.FinishReasonImageProhibitedContent: true, genai.FinishReasonImageRecitation: true,
}

// parseResponse reads the first candidate. turn (the request's message
// count) makes the IDs it gives calls that came without one differ from
// turn to turn when the response has no responseId.
//
// quote is how an error holds the server's own text (a block or finish
// reason, and its message): redacted and cut, as classify's are.
func parseResponse(r *genai.GenerateContentResponse, turn int, quote func(string) string) (*agentrt.Response, error) {
	if r == nil {
		return nil, errors.New("google: the response is empty")
	}
	if len(r.Candidates) == 0 || r.Candidates[0] == nil {
		if pf := r.PromptFeedback; pf != nil && pf.BlockReason != "" {
			return nil, fmt.Errorf("google: %w: the prompt was blocked (blockReason %s)%s", ErrRefused, quote(string(pf.BlockReason)), suffix(quote(pf.BlockReasonMessage)))
		}
		return nil, errors.New("google: the response has no candidates")
	}
	c := r.Candidates[0]
	msg := agentrt.Message{Role: agentrt.Assistant}
	var text []string
	var calls []*genai.FunctionCall
	if c.Content != nil {
		for _, p := range c.Content.Parts {
			switch {
			case p == nil || p.Thought:
			case p.FunctionCall != nil:
				calls = append(calls, p.FunctionCall)
			case p.Text != "":
				text = append(text, p.Text)
			}
		}
	}
	msg.Content = strings.Join(text, "")
	base := ""
	for i, fc := range calls {
		if fc.Name == "" {
			// Nothing can answer it, and the next request could not
			// send its result back (a result is paired by name).
			return nil, fmt.Errorf("google: function call %d has no name", i)
		}
		args := []byte("{}")
		if fc.Args != nil {
			var err error
			if args, err = digest.CanonicalValue(fc.Args); err != nil {
				return nil, fmt.Errorf("google: function call %d (%s): %w", i, fc.Name, err)
			}
		}
		id := fc.ID
		if id == "" {
			if base == "" {
				base = callBase(r, turn)
			}
			id = fmt.Sprintf("%s%s-%d", idPrefix, base, i)
		}
		msg.ToolCalls = append(msg.ToolCalls, agentrt.ToolCall{ID: id, Name: fc.Name, Arguments: args})
	}
	if fr := c.FinishReason; fr == genai.FinishReasonMaxTokens {
		// Whatever the turn holds: its last function call may be cut
		// short, and its args, an object, can still fit the tool's
		// schema (or the output's), so no call of it is made.
		return nil, fmt.Errorf("google: %w (finishReason %s)", ErrTruncated, fr)
	}
	if len(msg.ToolCalls) == 0 {
		switch fr := c.FinishReason; {
		case refusals[fr]:
			return nil, fmt.Errorf("google: %w (finishReason %s)%s", ErrRefused, quote(string(fr)), suffix(quote(c.FinishMessage)))
		case fr == genai.FinishReasonMalformedFunctionCall || fr == genai.FinishReasonUnexpectedToolCall || fr == genai.FinishReasonTooManyToolCalls:
			return nil, fmt.Errorf("google: the model made a function call the API refused (finishReason %s)%s", quote(string(fr)), suffix(quote(c.FinishMessage)))
		case msg.Content == "" && fr != "" && fr != genai.FinishReasonStop:
			return nil, fmt.Errorf("google: the response has no content (finishReason %s)%s", quote(string(fr)), suffix(quote(c.FinishMessage)))
		}
	}
	resp := &agentrt.Response{Message: msg, Model: r.ModelVersion}
	if u := r.UsageMetadata; u != nil {
		// promptTokenCount includes the cached tokens; the thoughts are
		// output the call paid for, outside candidatesTokenCount.
		resp.Usage = agentrt.Usage{
			Input:  int(u.PromptTokenCount) + int(u.ToolUsePromptTokenCount),
			Output: int(u.CandidatesTokenCount) + int(u.ThoughtsTokenCount),
			Cached: int(u.CachedContentTokenCount),
		}
	}
	return resp, nil
}

func suffix(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
}

// callBase names a response's calls that came without IDs: its
// responseId, or a digest of the calls and the turn.
func callBase(r *genai.GenerateContentResponse, turn int) string {
	if id := r.ResponseID; id != "" && len(id) <= 64 {
		return id
	}
	h := sha256.New()
	fmt.Fprintf(h, "%d\n", turn)
	if c := r.Candidates[0].Content; c != nil {
		b, _ := json.Marshal(c.Parts)
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// classify turns an attempt's error into one the retry policy can judge,
// with the key redacted from its message.
func (m *Model) classify(ctx context.Context, err error, a *attempt) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("google: %w", ctxErr)
	}
	if a.bound != nil {
		// Whatever the SDK made of the cut body: never retried.
		b, _ := failure.Bounded("google", a.bound)
		return b
	}
	var apiErr genai.APIError
	if errors.As(err, &apiErr) {
		status := apiErr.Code
		if a.status >= 400 {
			status = a.status
		}
		se := &StatusError{StatusCode: status, Status: m.redact(apiErr.Status), Message: strings.TrimSpace(m.redact(apiErr.Message))}
		if strings.HasPrefix(se.Status, fmt.Sprint(status)) {
			se.Status = "" // the SDK's "429 Too Many Requests" for a body that was not JSON
		}
		re := &retry.Error{Err: se, Retryable: retry.RetryableStatus(status), RetryAfter: retry.ParseRetryAfter(a.header, time.Now()), Status: status}
		if re.RetryAfter == 0 {
			re.RetryAfter = retryDelay(apiErr.Details)
		}
		return re
	}
	if b, ok := failure.Bounded("google", err); ok {
		return b
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var shape *shapeError
	var cred *credentialError
	switch {
	case errors.As(err, &syn) || errors.As(err, &typ):
		// The SDK's message holds the whole body; ours does not.
		w := failure.Wrap("google", "the response is not JSON of a GenerateContentResponse: "+m.redact(firstLine(errors.Unwrap(err), err)), err)
		if syn != nil && strings.Contains(syn.Error(), "unexpected end of JSON input") {
			// A body cut short, as a dropped connection leaves it:
			// another attempt may get it whole.
			return &retry.Error{Err: w, Retryable: true}
		}
		return w
	case errors.As(err, &shape):
		return failure.Wrap("google", m.redact(shape.Error()), err)
	case errors.As(err, &cred):
		return failure.Wrap("google", m.redact(cred.Error()), err)
	}
	wrapped := failure.Wrap("google", m.redact(err.Error()), err)
	if failure.Transient(err) {
		return &retry.Error{Err: wrapped, Retryable: true}
	}
	return wrapped
}

// firstLine is the first line of e's message (or of fallback's).
func firstLine(e, fallback error) string {
	if e == nil {
		e = fallback
	}
	s, _, _ := strings.Cut(e.Error(), "\n")
	return s
}

// retryDelay reads the wait a google.rpc.RetryInfo among an error's
// details asks for ("37s").
func retryDelay(details []map[string]any) time.Duration {
	for _, d := range details {
		if t, _ := d["@type"].(string); !strings.HasSuffix(t, "google.rpc.RetryInfo") {
			continue
		}
		if s, ok := d["retryDelay"].(string); ok {
			if v, err := time.ParseDuration(s); err == nil && v > 0 {
				return v
			}
		}
	}
	return 0
}

// redact is s, the server's text, as an error may quote it: the key
// replaced, and cut (failure.Quote).
func (m *Model) redact(s string) string { return failure.Quote(m.key, s) }

// StatusError is an error response of the API. It keeps the provider's
// own message, with the API key redacted should it echo it, and none of
// the request: no key, no headers.
type StatusError struct {
	StatusCode int
	Status     string // the API's status, such as "RESOURCE_EXHAUSTED"
	Message    string
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("google: %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Status != "" {
		s += " (" + e.Status + ")"
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// keyless sends requests without the API key header the SDK sets.
type keyless struct{ next http.RoundTripper }

func (k keyless) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Del("x-goog-api-key")
	return k.next.RoundTrip(r)
}

// FailureClass classifies the error for a model's fallbacks: an input
// past the model's context, else by status (retry.StatusClass; Gemini
// says RESOURCE_EXHAUSTED, 429, for rate limits and quotas alike, and it
// is retried as a rate limit).
func (e *StatusError) FailureClass() string {
	if e.StatusCode == http.StatusBadRequest && strings.Contains(e.Message, "exceeds the maximum number of tokens") {
		return "too_long"
	}
	return retry.StatusClass(e.StatusCode)
}
