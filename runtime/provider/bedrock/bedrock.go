// Package bedrock is a runtime.Model over Amazon Bedrock's Converse API,
// through the official AWS SDK for Go v2 (service/bedrockruntime). Each
// call is one Converse request, signed with AWS Signature Version 4: the
// runtime does not stream yet. The runtime's retry policy owns retries;
// the SDK's own are off.
//
// New reads no environment and no AWS configuration file: the region and
// the credentials are the caller's, who would load them with the SDK's
// config.LoadDefaultConfig (the standard chain: environment, shared
// files, SSO, web identity, container and instance roles) and pass them
// in, for instance through FromAWSConfig. The SDK's client reads one
// variable itself: AWS_BEARER_TOKEN_BEDROCK, a Bedrock API key, which,
// when set, authenticates each request as a bearer token in place of a
// signature.
//
// Files go in the request as bytes, in image and document blocks. The
// request is signed over a digest of its whole body, so its bytes must be
// known before it is sent: unlike the other providers, which splice files
// into the body as it is written, this one reads each file whole into
// memory (within Limits, checked before it is read) and the SDK holds it
// again in base64 while it encodes the body.
package bedrock

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/auth/bearer"
	smithydocument "github.com/aws/smithy-go/document"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/internal/leaf/textcut"
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

// Provider names this provider, in errors and in the state it gives
// assistant messages (runtime.ProviderState).
const Provider = "bedrock"

// DefaultMaxTokens is the maxTokens sent when a request sets no
// MaxOutputTokens: some models' own default is small, and Anthropic's
// models on Bedrock take none at all.
const DefaultMaxTokens = 4096

// ErrTruncated reports an answer cut at the output token limit.
var ErrTruncated = errors.New("the output was cut at the token limit")

// ErrRefused reports that a guardrail intervened or a content filter
// blocked the prompt or the answer.
var ErrRefused = errors.New("the model refused to answer")

// Config configures a Model.
type Config struct {
	// Region is the AWS region the model runs in ("us-east-1"); it
	// names the endpoint and is part of every signature.
	Region string
	// Credentials sign the requests; required. A caller takes them from
	// the standard chain with config.LoadDefaultConfig, tests give static
	// ones (credentials.NewStaticCredentialsProvider).
	Credentials aws.CredentialsProvider
	// BaseURL replaces the region's endpoint
	// (https://bedrock-runtime.REGION.amazonaws.com): tests, VPC
	// endpoints, proxies.
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
	// (runtime.Options.Secrets): the access key ID, secret access key
	// and session token of every credentials Credentials hand the signer
	// (those a refresh brings too) are added to it before a request is
	// signed with them, so that what a server echoes of them is redacted
	// wherever the runs write it. The Model's errors are redacted with it.
	// Nil keeps them in a set of the Model's own, for its errors alone.
	Secrets *redact.Set
	// SignedOnly keeps the client from sending a Bedrock API key it reads
	// from AWS_BEARER_TOKEN_BEDROCK by itself: every request is signed
	// with Credentials (agentc test's fault layer, which is sent no
	// credential of the person's).
	SignedOnly bool
}

// FromAWSConfig is a Config with the region and credentials of an
// aws.Config, as config.LoadDefaultConfig returns it.
func FromAWSConfig(c aws.Config) Config {
	return Config{Region: c.Region, Credentials: c.Credentials}
}

// Model is a runtime.Model over Bedrock's Converse API. It is safe for
// concurrent use.
type Model struct {
	client *bedrockruntime.Client
	// secrets hold the credentials handed to the signer
	// (Config.Secrets), for errors that echo them.
	secrets *redact.Set
	retry   retry.Policy
}

var _ agentrt.Model = (*Model)(nil)

// New returns a Model for cfg.
func New(cfg Config) (*Model, error) {
	if cfg.Region == "" {
		return nil, errors.New("bedrock: no region")
	}
	if cfg.Credentials == nil {
		return nil, errors.New("bedrock: no credentials (load them with the AWS SDK's config.LoadDefaultConfig)")
	}
	if cfg.BaseURL != "" {
		u, err := url.Parse(cfg.BaseURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, fmt.Errorf("bedrock: the base URL %q is not an http or https URL", cfg.BaseURL)
		}
	}
	secrets := cfg.Secrets
	if secrets == nil {
		secrets = &redact.Set{}
	}
	hc := origin.Client(cfg.HTTPClient)
	next := hc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	// The signed request goes to the endpoint's origin only (origin.Client
	// refuses a redirect elsewhere); what the server sends back is bounded.
	hc.Transport = &transport{next: next, limit: limit.Middleware(Provider, replylimit.MaxResponse), stall: limit.Stall(Provider, cfg.Stall)}
	opts := bedrockruntime.Options{
		Region:      cfg.Region,
		Credentials: &recorder{p: cfg.Credentials, secrets: secrets},
		HTTPClient:  hc,
		Retryer:     aws.NopRetryer{},
	}
	if cfg.BaseURL != "" {
		opts.BaseEndpoint = aws.String(strings.TrimRight(cfg.BaseURL, "/"))
	}
	p := cfg.Retry
	if p.Attempts == 0 {
		on := p.OnAttempt
		p = retry.Default
		p.OnAttempt = on
	}
	// The SDK's client reads a Bedrock API key from AWS_BEARER_TOKEN_BEDROCK
	// itself and then sends it, as a bearer token, in place of signing:
	// it is a credential too.
	client := bedrockruntime.New(opts, func(o *bedrockruntime.Options) {
		if cfg.SignedOnly {
			o.BearerAuthTokenProvider, o.AuthSchemePreference = nil, nil
		}
		if o.BearerAuthTokenProvider != nil {
			o.BearerAuthTokenProvider = &tokenRecorder{p: o.BearerAuthTokenProvider, secrets: secrets}
		}
	})
	return &Model{client: client, secrets: secrets, retry: p}, nil
}

// recorder hands the signer the caller's credentials and adds each it
// hands out to the secrets first, so that nothing the run writes shows
// them. It is asked before each request is signed: credentials the
// caller's provider refreshes pass here before they sign.
type recorder struct {
	p       aws.CredentialsProvider
	secrets *redact.Set
}

func (r *recorder) Retrieve(ctx context.Context) (aws.Credentials, error) {
	c, err := r.p.Retrieve(ctx)
	if err != nil {
		return c, &credentialError{err}
	}
	r.secrets.Add(c.AccessKeyID, c.SecretAccessKey, c.SessionToken)
	return c, nil
}

// tokenRecorder is recorder for a bearer token.
type tokenRecorder struct {
	p       bearer.TokenProvider
	secrets *redact.Set
}

func (r *tokenRecorder) RetrieveBearerToken(ctx context.Context) (bearer.Token, error) {
	t, err := r.p.RetrieveBearerToken(ctx)
	if err != nil {
		return t, &credentialError{err}
	}
	r.secrets.Add(t.Value)
	return t, nil
}

// credentialError is a failure to get credentials: final, another
// attempt meets it again.
type credentialError struct{ err error }

func (e *credentialError) Error() string { return "getting AWS credentials: " + e.err.Error() }
func (e *credentialError) Unwrap() error { return e.err }

// transport runs each request through the response limit and stall
// detection, and records the response's status and headers.
type transport struct {
	next         http.RoundTripper
	limit, stall func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error)
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	if req.Body != nil && req.Body != http.NoBody {
		req.Body = readOnly{req.Body}
	}
	stalled := func(r *http.Request) (*http.Response, error) { return t.stall(r, t.next.RoundTrip) }
	return t.limit(req, stalled)
}

// readOnly hands net/http the request body without its WriteTo. The
// SDK closes the body it built as soon as the response's head arrives,
// and its body's WriteTo then fails with io.EOF; net/http, having sent
// the declared length, copies the body once more to find any excess,
// through WriteTo when there is one, and took that io.EOF for a failed
// write: it closed the connection under the response being read. (A
// server that answered before that last copy, as a loopback one may,
// saw the call fail with "use of closed network connection" and be
// made again.) Read after the close ends in a plain io.EOF.
type readOnly struct{ rc io.ReadCloser }

func (b readOnly) Read(p []byte) (int, error) { return b.rc.Read(p) }
func (b readOnly) Close() error               { return b.rc.Close() }

// Complete sends req as one Converse request, retrying under the Model's
// policy, and returns the assistant's message.
func (m *Model) Complete(ctx context.Context, req *agentrt.Request) (*agentrt.Response, error) {
	return failure.Tallied(ctx, func(ctx context.Context) (*agentrt.Response, error) { return m.complete(ctx, req) })
}

func (m *Model) complete(ctx context.Context, req *agentrt.Request) (*agentrt.Response, error) {
	if req == nil {
		return nil, errors.New("bedrock: no request")
	}
	in, err := build(req)
	if err != nil {
		return nil, fmt.Errorf("bedrock: %w", err)
	}
	var out *bedrockruntime.ConverseOutput
	var streamed map[int][]byte
	err = m.retry.Do(ctx, func(ctx context.Context, attempt int) error {
		var o *bedrockruntime.ConverseOutput
		var err error
		if req.Stream != nil {
			if attempt > 1 {
				req.Stream(agentrt.Delta{Restart: true})
			}
			o, streamed, err = m.converseStream(ctx, in, req.Stream, req.OutputTool)
		} else {
			o, err = m.converse(limit.WithWhole(ctx, int64(aws.ToInt32(in.InferenceConfig.MaxTokens))), in)
		}
		if err != nil {
			return m.classify(ctx, err)
		}
		out = o
		return nil
	})
	if err != nil {
		return nil, err
	}
	resp, err := parseInputs(out, streamed)
	if err != nil {
		return nil, err
	}
	if err := agentrt.CheckReply(int64(aws.ToInt32(in.InferenceConfig.MaxTokens)), &resp.Message); err != nil {
		return nil, fmt.Errorf("bedrock: %w", err)
	}
	if req.MaxOutputTokens <= 0 {
		resp.MaxOutputTokens = int(aws.ToInt32(in.InferenceConfig.MaxTokens))
	}
	return resp, nil
}

// converse makes one request; the SDK gets a copy, as it may fill it in.
func (m *Model) converse(ctx context.Context, in *bedrockruntime.ConverseInput) (out *bedrockruntime.ConverseOutput, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, &shapeError{fmt.Sprint(r)}
		}
	}()
	c := *in
	return m.client.Converse(ctx, &c)
}

// converseStream makes one ConverseStream request and puts the output a
// Converse request would have returned together from its events: each
// content block's text, tool input and reasoning joined, the stop reason
// and usage. delta hears each piece of text, and of the output tool's
// input, as it arrives. A stream that ends before its messageStop is
// cut: a transport failure, tried again. A stream whose blocks pass what
// the request's maxTokens can make is cut there (limit.Reply), not read
// to its end.
func (m *Model) converseStream(ctx context.Context, in *bedrockruntime.ConverseInput, delta func(agentrt.Delta), outputTool string) (out *bedrockruntime.ConverseOutput, inputs map[int][]byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, inputs, err = nil, nil, &shapeError{fmt.Sprint(r)}
		}
	}()
	sin := &bedrockruntime.ConverseStreamInput{
		ModelId: in.ModelId, Messages: in.Messages, System: in.System, InferenceConfig: in.InferenceConfig,
		ToolConfig: in.ToolConfig, AdditionalModelRequestFields: in.AdditionalModelRequestFields, OutputConfig: in.OutputConfig,
	}
	ctx, meter := limit.NewReply(ctx, int64(aws.ToInt32(in.InferenceConfig.MaxTokens)))
	o, err := m.client.ConverseStream(ctx, sin)
	if err != nil {
		return nil, nil, err
	}
	st := o.GetStream()
	defer st.Close()
	type block struct {
		text, input, reasoning, signature strings.Builder
		redacted                          []byte
		toolID, name                      string
		tool, thought                     bool
	}
	var blocks []*block
	at := func(i *int32) *block {
		n := int(aws.ToInt32(i))
		if n < 0 || n > 1<<16 {
			panic(fmt.Sprintf("content block index %d", n))
		}
		for len(blocks) <= n {
			blocks = append(blocks, &block{})
		}
		return blocks[n]
	}
	out = &bedrockruntime.ConverseOutput{}
	stopped := false
	for ev := range st.Events() {
		switch e := ev.(type) {
		case *types.ConverseStreamOutputMemberContentBlockStart:
			b := at(e.Value.ContentBlockIndex)
			if t, ok := e.Value.Start.(*types.ContentBlockStartMemberToolUse); ok {
				b.tool, b.toolID, b.name = true, aws.ToString(t.Value.ToolUseId), aws.ToString(t.Value.Name)
				if err := meter.Add(max(len(b.toolID)+len(b.name), replylimit.CallBytes)); err != nil {
					return nil, nil, err
				}
			}
		case *types.ConverseStreamOutputMemberContentBlockDelta:
			b := at(e.Value.ContentBlockIndex)
			if err := meter.Add(deltaSize(e.Value.Delta)); err != nil {
				return nil, nil, err
			}
			switch d := e.Value.Delta.(type) {
			case *types.ContentBlockDeltaMemberText:
				b.text.WriteString(d.Value)
				delta(agentrt.Delta{Text: d.Value})
			case *types.ContentBlockDeltaMemberToolUse:
				piece := aws.ToString(d.Value.Input)
				b.input.WriteString(piece)
				if b.tool && outputTool != "" && b.name == outputTool {
					delta(agentrt.Delta{Answer: piece})
				}
			case *types.ContentBlockDeltaMemberReasoningContent:
				b.thought = true
				switch r := d.Value.(type) {
				case *types.ReasoningContentBlockDeltaMemberText:
					b.reasoning.WriteString(r.Value)
				case *types.ReasoningContentBlockDeltaMemberSignature:
					b.signature.WriteString(r.Value)
				case *types.ReasoningContentBlockDeltaMemberRedactedContent:
					b.redacted = append(b.redacted, r.Value...)
				}
			}
		case *types.ConverseStreamOutputMemberMessageStop:
			out.StopReason, stopped = e.Value.StopReason, true
		case *types.ConverseStreamOutputMemberMetadata:
			out.Usage = e.Value.Usage
		}
	}
	if err := st.Err(); err != nil {
		return nil, nil, err
	}
	if !stopped {
		return nil, nil, fmt.Errorf("the stream ended before the message did: %w", io.ErrUnexpectedEOF)
	}
	var content []types.ContentBlock
	inputs = map[int][]byte{}
	for _, b := range blocks {
		switch {
		case b.tool:
			in := strings.TrimSpace(b.input.String())
			if in == "" {
				in = "{}"
			}
			inputs[len(content)] = []byte(in)
			content = append(content, &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
				ToolUseId: aws.String(b.toolID), Name: aws.String(b.name)}})
		case b.thought && b.redacted != nil:
			content = append(content, &types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberRedactedContent{Value: b.redacted}})
		case b.thought:
			content = append(content, &types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberReasoningText{
				Value: types.ReasoningTextBlock{Text: aws.String(b.reasoning.String()), Signature: aws.String(b.signature.String())}}})
		case b.text.Len() > 0:
			content = append(content, &types.ContentBlockMemberText{Value: b.text.String()})
		}
	}
	out.Output = &types.ConverseOutputMemberMessage{Value: types.Message{Role: types.ConversationRoleAssistant, Content: content}}
	return out, inputs, nil
}

// deltaSize is the bytes of a content block's delta that a stream keeps.
func deltaSize(d types.ContentBlockDelta) int {
	switch d := d.(type) {
	case *types.ContentBlockDeltaMemberText:
		return len(d.Value)
	case *types.ContentBlockDeltaMemberToolUse:
		return len(aws.ToString(d.Value.Input))
	case *types.ContentBlockDeltaMemberReasoningContent:
		switch r := d.Value.(type) {
		case *types.ReasoningContentBlockDeltaMemberText:
			return len(r.Value)
		case *types.ReasoningContentBlockDeltaMemberSignature:
			return len(r.Value)
		case *types.ReasoningContentBlockDeltaMemberRedactedContent:
			return len(r.Value)
		}
	}
	return 0
}

// shapeError is a response the SDK could not read without a panic.
type shapeError struct{ what string }

func (e *shapeError) Error() string { return "the response is not a Converse response: " + e.what }

// Limits are the files Converse takes (plan.FileLimits).
var Limits = files.Limits(plan.FileLimits[Provider])

// imageFormats and docFormats are Converse's names of the media types.
var (
	imageFormats = map[string]types.ImageFormat{
		"image/png": types.ImageFormatPng, "image/jpeg": types.ImageFormatJpeg,
		"image/gif": types.ImageFormatGif, "image/webp": types.ImageFormatWebp,
	}
	docFormats = map[string]types.DocumentFormat{
		"application/pdf": types.DocumentFormatPdf, "text/plain": types.DocumentFormatTxt,
	}
)

// fileBlock is a file as an image or a document.
type fileBlock struct {
	image *types.ImageBlock
	doc   *types.DocumentBlock
}

// docName is a document's name as Converse takes it: letters, digits,
// single spaces, hyphens, parentheses and square brackets.
var notNameChar = regexp.MustCompile(`[^A-Za-z0-9 \-()\[\]]+`)

func docName(f *agentrt.File, used map[string]bool) string {
	base := f.FileName
	if base == "" {
		base = f.Name
	}
	if i := strings.LastIndex(base, "."); i > 0 {
		base = base[:i] // the format says the extension
	}
	base = strings.Join(strings.Fields(notNameChar.ReplaceAllString(base, " ")), " ")
	if len(base) > 200 {
		base = strings.TrimSpace(base[:200])
	}
	if base == "" {
		base = "file"
	}
	name := base
	for i := 2; used[name]; i++ {
		name = fmt.Sprintf("%s (%d)", base, i)
	}
	used[name] = true
	return name
}

func (b *builder) file(f *agentrt.File) (fileBlock, error) {
	if err := Limits.Check(Provider, f); err != nil {
		return fileBlock{}, err
	}
	data, err := files.Read(b.files, f)
	if err != nil {
		return fileBlock{}, err
	}
	if format, ok := imageFormats[f.MediaType]; ok {
		return fileBlock{image: &types.ImageBlock{Format: format, Source: &types.ImageSourceMemberBytes{Value: data}}}, nil
	}
	return fileBlock{doc: &types.DocumentBlock{
		Format: docFormats[f.MediaType],
		Name:   aws.String(docName(f, b.names)),
		Source: &types.DocumentSourceMemberBytes{Value: data},
	}}, nil
}

type builder struct {
	files agentrt.FileReader
	names map[string]bool // documents' names given
}

func build(req *agentrt.Request) (*bedrockruntime.ConverseInput, error) {
	if req.Model == "" {
		return nil, errors.New("no model")
	}
	in := &bedrockruntime.ConverseInput{ModelId: aws.String(req.Model)}
	b := &builder{files: req.Files, names: map[string]bool{}}
	fam := familyOf(req.Model)

	ic := &types.InferenceConfiguration{}
	maxTokens := DefaultMaxTokens
	if req.MaxOutputTokens > 0 {
		maxTokens = min(req.MaxOutputTokens, 1<<31-1)
	}
	var extra map[string]any
	thinking := false
	switch req.Reasoning {
	case "":
	case "none", "low", "medium", "high":
		fields, budget, err := fam.reasoning(req.Reasoning)
		if err != nil {
			return nil, err
		}
		extra = fields
		if budget > 0 {
			thinking = true
			if req.MaxOutputTokens == 0 {
				maxTokens = budget + DefaultMaxTokens
			} else if maxTokens <= budget {
				return nil, fmt.Errorf("reasoning %q gives %s a thinking budget of %d tokens, which the output limit of %d must exceed", req.Reasoning, req.Model, budget, maxTokens)
			}
		}
	default:
		return nil, fmt.Errorf("unknown reasoning %q (want none, low, medium or high)", req.Reasoning)
	}
	ic.MaxTokens = aws.Int32(int32(maxTokens))
	if req.Temperature != nil {
		if thinking {
			return nil, errors.New("a temperature cannot be set with reasoning on an Anthropic model (thinking takes none)")
		}
		ic.Temperature = aws.Float32(float32(*req.Temperature))
	}
	in.InferenceConfig = ic
	if extra != nil {
		in.AdditionalModelRequestFields = document.NewLazyDocument(extra)
	}

	type turn struct {
		role   types.ConversationRole
		blocks []types.ContentBlock
	}
	var turns []turn
	for i, msg := range req.Messages {
		var role types.ConversationRole
		var blocks []types.ContentBlock
		switch msg.Role {
		case agentrt.System:
			if msg.Content != "" {
				in.System = append(in.System, &types.SystemContentBlockMemberText{Value: msg.Content})
			}
			continue
		case agentrt.User:
			role = types.ConversationRoleUser
			if msg.Content != "" {
				blocks = append(blocks, &types.ContentBlockMemberText{Value: msg.Content})
			}
			for _, p := range msg.Parts {
				if p.File == nil {
					if p.Text != "" {
						blocks = append(blocks, &types.ContentBlockMemberText{Value: p.Text})
					}
					continue
				}
				fb, err := b.file(p.File)
				if err != nil {
					return nil, fmt.Errorf("message %d: %w", i, err)
				}
				if fb.image != nil {
					blocks = append(blocks, &types.ContentBlockMemberImage{Value: *fb.image})
				} else {
					blocks = append(blocks, &types.ContentBlockMemberDocument{Value: *fb.doc})
				}
			}
		case agentrt.Assistant:
			role = types.ConversationRoleAssistant
			if msg.State != nil && msg.State.Provider == Provider {
				rs, err := decodeState(msg.State.Data)
				if err != nil {
					return nil, fmt.Errorf("message %d: %w", i, err)
				}
				blocks = append(blocks, rs...)
			}
			if msg.Content != "" {
				blocks = append(blocks, &types.ContentBlockMemberText{Value: msg.Content})
			}
			for _, tc := range msg.ToolCalls {
				args, err := jsonObject(tc.Arguments)
				if err != nil {
					return nil, fmt.Errorf("message %d: tool call %q has arguments that are not a JSON object", i, tc.ID)
				}
				blocks = append(blocks, &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
					ToolUseId: aws.String(tc.ID), Name: aws.String(tc.Name), Input: document.NewLazyDocument(args),
				}})
			}
		case agentrt.ToolRole:
			role = types.ConversationRoleUser
			r := types.ToolResultBlock{ToolUseId: aws.String(msg.ToolCallID)}
			if msg.Content != "" || len(msg.Parts) == 0 {
				r.Content = append(r.Content, &types.ToolResultContentBlockMemberText{Value: msg.Content})
			}
			if msg.IsError {
				r.Status = types.ToolResultStatusError
			}
			// The files a tool returned go in its result; one Converse
			// does not take is left to the text, which names it.
			for _, p := range msg.Parts {
				if p.File == nil || Limits.Check(Provider, p.File) != nil {
					continue
				}
				fb, err := b.file(p.File)
				if err != nil {
					return nil, fmt.Errorf("message %d: %w", i, err)
				}
				if fb.image != nil {
					r.Content = append(r.Content, &types.ToolResultContentBlockMemberImage{Value: *fb.image})
				} else {
					r.Content = append(r.Content, &types.ToolResultContentBlockMemberDocument{Value: *fb.doc})
				}
			}
			blocks = append(blocks, &types.ContentBlockMemberToolResult{Value: r})
		default:
			return nil, fmt.Errorf("message %d: unknown role %q", i, msg.Role)
		}
		if len(blocks) == 0 {
			continue
		}
		// Consecutive messages of one role are one message: a turn's tool
		// results (and any user text after them) are one user turn.
		if n := len(turns); n > 0 && turns[n-1].role == role {
			turns[n-1].blocks = append(turns[n-1].blocks, blocks...)
			continue
		}
		turns = append(turns, turn{role, blocks})
	}
	for _, t := range turns {
		in.Messages = append(in.Messages, types.Message{Role: t.role, Content: t.blocks})
	}

	if len(req.Tools) > 0 {
		tc := &types.ToolConfiguration{}
		for _, t := range req.Tools {
			schema := map[string]any{"type": "object", "properties": map[string]any{}}
			if len(t.Schema) > 0 {
				var err error
				if schema, err = jsonObject(t.Schema); err != nil {
					return nil, fmt.Errorf("tool %q: the schema is not a JSON object", t.Name)
				}
			}
			spec := types.ToolSpecification{Name: aws.String(t.Name), InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(schema)}}
			if t.Description != "" {
				spec.Description = aws.String(t.Description)
			}
			if t.Strict {
				spec.Strict = aws.Bool(true)
			}
			tc.Tools = append(tc.Tools, &types.ToolMemberToolSpec{Value: spec})
		}
		switch req.ToolChoice.Mode {
		case "":
		case agentrt.ChooseAuto:
			tc.ToolChoice = &types.ToolChoiceMemberAuto{}
		case agentrt.ChooseRequired:
			tc.ToolChoice = &types.ToolChoiceMemberAny{}
		case agentrt.ChooseTool:
			if req.ToolChoice.Name == "" {
				return nil, errors.New(`tool choice "tool" names no tool`)
			}
			tc.ToolChoice = &types.ToolChoiceMemberTool{Value: types.SpecificToolChoice{Name: aws.String(req.ToolChoice.Name)}}
		default:
			return nil, fmt.Errorf("unknown tool choice mode %q", req.ToolChoice.Mode)
		}
		if thinking && (req.ToolChoice.Mode == agentrt.ChooseRequired || req.ToolChoice.Mode == agentrt.ChooseTool) {
			return nil, fmt.Errorf("reasoning on an Anthropic model cannot be combined with a forced tool choice (%q): thinking takes only auto", req.ToolChoice.Mode)
		}
		in.ToolConfig = tc
	}
	if a := req.Answer; a != nil && a.Mode == plan.ModeNative {
		if !json.Valid(a.Schema) {
			return nil, errors.New("the answer schema is not JSON")
		}
		def := types.JsonSchemaDefinition{Schema: aws.String(string(a.Schema))}
		if a.Name != "" {
			def.Name = aws.String(a.Name)
		}
		if a.Description != "" {
			def.Description = aws.String(a.Description)
		}
		in.OutputConfig = &types.OutputConfig{TextFormat: &types.OutputFormat{
			Type:      types.OutputFormatTypeJsonSchema,
			Structure: &types.OutputFormatStructureMemberJsonSchema{Value: def},
		}}
	}
	return in, nil
}

// jsonObject decodes a JSON object for a document, its numbers kept as
// written; empty is {}.
func jsonObject(raw json.RawMessage) (map[string]any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if v == nil || dec.More() {
		return nil, errors.New("not a JSON object")
	}
	return toDocument(v).(map[string]any), nil
}

// toDocument turns json.Number into the number type the SDK's document
// encoder writes as a number (it writes a json.Number as a string).
func toDocument(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = toDocument(e)
		}
		return v
	case []any:
		for i, e := range v {
			v[i] = toDocument(e)
		}
		return v
	case json.Number:
		return smithydocument.Number(v)
	}
	return v
}

// fromDocument turns the SDK's document numbers back into json.Number.
func fromDocument(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = fromDocument(e)
		}
		return v
	case []any:
		for i, e := range v {
			v[i] = fromDocument(e)
		}
		return v
	case smithydocument.Number:
		return json.Number(v)
	}
	return v
}

// family is what a model family takes for reasoning.
type family struct {
	name string
	// budgets are Anthropic's thinking budgets for low, medium, high;
	// efforts Nova 2's maxReasoningEffort.
	budgets *[3]int
	efforts bool
}

// familyOf reads a model ID: a base ID ("anthropic.claude-sonnet-4-5-…"),
// an inference profile ("us.anthropic.…", "global.…"), or an ARN, whose
// last segment is one of these.
func familyOf(model string) family {
	id := model
	if strings.HasPrefix(id, "arn:") {
		id = id[strings.LastIndex(id, "/")+1:]
	}
	switch {
	case strings.Contains(id, "anthropic.claude-3-7-") || strings.Contains(id, "anthropic.claude-") && !strings.Contains(id, "claude-3") && !strings.Contains(id, "claude-v2") && !strings.Contains(id, "claude-instant"):
		return family{name: "Anthropic", budgets: &[3]int{1024, 8192, 24576}}
	case strings.Contains(id, "amazon.nova-2-"):
		return family{name: "Amazon Nova 2", efforts: true}
	}
	return family{name: id}
}

// reasoning is the additionalModelRequestFields that ask for reasoning,
// and the thinking budget they give (Anthropic's, which maxTokens must
// exceed). None asks for nothing.
func (f family) reasoning(level string) (map[string]any, int, error) {
	i := map[string]int{"low": 0, "medium": 1, "high": 2}
	switch {
	case level == "none":
		return nil, 0, nil
	case f.budgets != nil:
		n := f.budgets[i[level]]
		return map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": n}}, n, nil
	case f.efforts:
		return map[string]any{"reasoningConfig": map[string]any{"type": "enabled", "maxReasoningEffort": level}}, 0, nil
	}
	return nil, 0, fmt.Errorf("reasoning %q: agentc does not know how %s takes a reasoning setting on Bedrock (it knows Anthropic Claude from 3.7 and Amazon Nova 2)", level, f.name)
}

// stateBlock is one reasoning block of an assistant message, kept to be
// sent back: its text and signature, or its redacted content.
type stateBlock struct {
	Text      string `json:"text,omitempty"`
	Signature string `json:"signature,omitempty"`
	Redacted  []byte `json:"redacted,omitempty"`
}

// maxStateBlocks bounds the reasoning blocks a state may hold.
const maxStateBlocks = 1024

// decodeState reads the reasoning blocks a state holds as content blocks.
func decodeState(data json.RawMessage) ([]types.ContentBlock, error) {
	var bs []stateBlock
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&bs); err != nil || dec.More() {
		return nil, errors.New("the assistant message's bedrock state is not a list of reasoning blocks")
	}
	if len(bs) > maxStateBlocks {
		return nil, fmt.Errorf("the assistant message's bedrock state holds %d reasoning blocks, more than %d", len(bs), maxStateBlocks)
	}
	var out []types.ContentBlock
	for i, b := range bs {
		switch {
		case len(b.Redacted) > 0 && b.Text == "" && b.Signature == "":
			out = append(out, &types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberRedactedContent{Value: b.Redacted}})
		case len(b.Redacted) == 0:
			t := types.ReasoningTextBlock{Text: aws.String(b.Text)}
			if b.Signature != "" {
				t.Signature = aws.String(b.Signature)
			}
			out = append(out, &types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberReasoningText{Value: t}})
		default:
			return nil, fmt.Errorf("the assistant message's bedrock state: reasoning block %d is both redacted and not", i)
		}
	}
	return out, nil
}

// shownName is a tool use's name as an error shows it: the model wrote it,
// at any length (a megabyte went into the error whole), so its start.
func shownName(name *string) string { return textcut.Marked(aws.ToString(name), 128) }

// parseOutput reads a Converse response.
func parseOutput(o *bedrockruntime.ConverseOutput) (*agentrt.Response, error) {
	return parseInputs(o, nil)
}

// parseInputs is parseOutput of a message whose tool uses' inputs came as
// JSON text, by content block (a stream's): streamed[i] stands for block
// i's Input.
func parseInputs(o *bedrockruntime.ConverseOutput, streamed map[int][]byte) (*agentrt.Response, error) {
	if o == nil {
		return nil, errors.New("bedrock: the response is empty")
	}
	msg := agentrt.Message{Role: agentrt.Assistant}
	var text []string
	var state []stateBlock
	if m, ok := o.Output.(*types.ConverseOutputMemberMessage); ok {
		for i, c := range m.Value.Content {
			switch c := c.(type) {
			case *types.ContentBlockMemberText:
				text = append(text, c.Value)
			case *types.ContentBlockMemberToolUse:
				args := []byte("{}")
				if raw, ok := streamed[i]; ok {
					var v any
					if err := json.Unmarshal(raw, &v); err != nil {
						return nil, fmt.Errorf("bedrock: tool use %d: the input is not JSON: %w", i, err)
					}
					if _, ok := v.(map[string]any); !ok {
						return nil, fmt.Errorf("bedrock: tool use %d (%s): the input is not a JSON object", i, shownName(c.Value.Name))
					}
					var err error
					if args, err = digest.CanonicalValue(v); err != nil {
						return nil, fmt.Errorf("bedrock: tool use %d (%s): %w", i, shownName(c.Value.Name), err)
					}
				} else if c.Value.Input != nil {
					var v any
					if err := c.Value.Input.UnmarshalSmithyDocument(&v); err != nil {
						return nil, fmt.Errorf("bedrock: tool use %d: the input is not JSON: %w", i, err)
					}
					if _, ok := v.(map[string]any); !ok && v != nil {
						return nil, fmt.Errorf("bedrock: tool use %d (%s): the input is not a JSON object", i, shownName(c.Value.Name))
					}
					if v != nil {
						var err error
						if args, err = digest.CanonicalValue(fromDocument(v)); err != nil {
							return nil, fmt.Errorf("bedrock: tool use %d (%s): %w", i, shownName(c.Value.Name), err)
						}
					}
				}
				id, name := aws.ToString(c.Value.ToolUseId), aws.ToString(c.Value.Name)
				if id == "" || name == "" {
					return nil, fmt.Errorf("bedrock: tool use %d has no toolUseId or no name", i)
				}
				msg.ToolCalls = append(msg.ToolCalls, agentrt.ToolCall{ID: id, Name: name, Arguments: args})
			case *types.ContentBlockMemberReasoningContent:
				switch r := c.Value.(type) {
				case *types.ReasoningContentBlockMemberReasoningText:
					state = append(state, stateBlock{Text: aws.ToString(r.Value.Text), Signature: aws.ToString(r.Value.Signature)})
				case *types.ReasoningContentBlockMemberRedactedContent:
					state = append(state, stateBlock{Redacted: r.Value})
				}
			}
		}
	} else if o.StopReason == "" {
		return nil, errors.New("bedrock: the response has no output message")
	}
	msg.Content = strings.Join(text, "")
	if len(state) > 0 {
		data, err := json.Marshal(state)
		if err != nil {
			return nil, fmt.Errorf("bedrock: %w", err)
		}
		msg.State = &agentrt.ProviderState{Provider: Provider, Data: data}
	}
	switch sr := o.StopReason; sr {
	case types.StopReasonMaxTokens, types.StopReasonModelContextWindowExceeded:
		// Whatever the turn holds: its last toolUse block may be cut
		// short, and its input, a document, can still fit the tool's
		// schema (or the output's), so no call of it is made.
		return nil, fmt.Errorf("bedrock: %w (stopReason %s)", ErrTruncated, sr)
	}
	if len(msg.ToolCalls) == 0 {
		switch sr := o.StopReason; sr {
		case types.StopReasonGuardrailIntervened, types.StopReasonContentFiltered:
			return nil, fmt.Errorf("bedrock: %w (stopReason %s)", ErrRefused, sr)
		case types.StopReasonMalformedModelOutput, types.StopReasonMalformedToolUse:
			return nil, fmt.Errorf("bedrock: the model's output was malformed (stopReason %s)", sr)
		}
	}
	resp := &agentrt.Response{Message: msg}
	if u := o.Usage; u != nil {
		// Converse's inputTokens leave out the tokens read from and
		// written to the cache, as Anthropic's API does.
		read, write := int(aws.ToInt32(u.CacheReadInputTokens)), int(aws.ToInt32(u.CacheWriteInputTokens))
		resp.Usage = agentrt.Usage{
			Input:      int(aws.ToInt32(u.InputTokens)) + read + write,
			Output:     int(aws.ToInt32(u.OutputTokens)),
			Cached:     read,
			CacheWrite: write,
		}
	}
	return resp, nil
}

// retryableCodes are the error codes worth another attempt whatever
// their status.
var retryableCodes = map[string]bool{
	"ThrottlingException": true, "ServiceUnavailableException": true, "ModelNotReadyException": true,
	"InternalServerException": true, "ModelTimeoutException": true, "ModelStreamErrorException": true,
}

// classify turns an attempt's error into one the retry policy can judge,
// with the credentials redacted from its message.
func (m *Model) classify(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("bedrock: %w", ctxErr)
	}
	var apiErr smithy.APIError
	var respErr *smithyhttp.ResponseError
	isAPI, isResp := errors.As(err, &apiErr), errors.As(err, &respErr)
	if isResp && !isAPI && respErr.Response != nil && respErr.HTTPStatusCode() >= 400 {
		// An error status whose body the SDK could not read (one cut at
		// limit.MaxErrorBody): its status and code still say what failed.
		status := respErr.HTTPStatusCode()
		code, _, _ := strings.Cut(respErr.Response.Header.Get("X-Amzn-ErrorType"), ":")
		se := &StatusError{StatusCode: status, Code: m.redact(code)}
		re := &retry.Error{Err: se, Retryable: retry.RetryableStatus(status) || retryableCodes[se.Code], Status: status}
		re.RetryAfter = retry.ParseRetryAfter(respErr.Response.Header, time.Now())
		return re
	}
	if isAPI && !isResp {
		// An exception frame in a stream, after the response's 200: no
		// status of its own, its code says whether another attempt may be
		// served (a StatusError of status 0, for FailureClass).
		se := &StatusError{Code: m.redact(apiErr.ErrorCode()), Message: strings.TrimSpace(m.redact(apiErr.ErrorMessage()))}
		if se.Message == se.Code {
			se.Message = ""
		}
		return &retry.Error{Err: se, Retryable: retryableCodes[se.Code]}
	}
	if isAPI && isResp {
		status := respErr.HTTPStatusCode()
		se := &StatusError{StatusCode: status, Code: m.redact(apiErr.ErrorCode()), Message: strings.TrimSpace(m.redact(apiErr.ErrorMessage()))}
		if se.Message == se.Code {
			se.Message = "" // the SDK's stand-in for a body without one
		}
		var awsErr *awshttp.ResponseError
		if errors.As(err, &awsErr) {
			se.RequestID = m.redact(awsErr.ServiceRequestID())
		}
		re := &retry.Error{Err: se, Retryable: retry.RetryableStatus(status) || retryableCodes[se.Code], Status: status}
		if respErr.Response != nil {
			re.RetryAfter = retry.ParseRetryAfter(respErr.Response.Header, time.Now())
		}
		return re
	}
	if b, ok := failure.Bounded(Provider, err); ok {
		return b
	}
	var cred *credentialError
	var shape *shapeError
	var deser *smithy.DeserializationError
	switch {
	case errors.As(err, &cred):
		return failure.Wrap(Provider, m.redact(cred.Error()), err)
	case errors.As(err, &shape):
		return failure.Wrap(Provider, m.redact(shape.Error()), err)
	case errors.As(err, &deser) && !failure.Transient(err):
		w := failure.Wrap(Provider, "the response is not JSON of a Converse response: "+m.redact(firstLine(deser.Err)), err)
		if cut := firstLine(deser.Err); strings.Contains(cut, "unexpected end of JSON input") || strings.Contains(cut, "unterminated") || strings.Contains(cut, "unexpected EOF") {
			// A body cut short, as a dropped connection leaves it:
			// another attempt may get it whole.
			return &retry.Error{Err: w, Retryable: true}
		}
		return w
	}
	wrapped := failure.Wrap(Provider, m.redact(err.Error()), err)
	if failure.Transient(err) {
		return &retry.Error{Err: wrapped, Retryable: true}
	}
	return wrapped
}

func firstLine(err error) string {
	if err == nil {
		return "unreadable"
	}
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// redact is s, the server's text, as an error may quote it: the
// credentials and any request signature replaced, and cut
// (failure.Quote).
func (m *Model) redact(s string) string {
	return failure.Quote(m.secrets, signatureRE.ReplaceAllString(s, "${1}[redacted]"))
}

// signatureRE finds a SigV4 signature, as the Authorization header or a
// presigned URL writes it. A server that echoes the header it was sent
// shows the signature, which a run's secrets do not hold (the key ID and
// session token beside it are): not a credential, but it authorizes its
// one request for some minutes.
var signatureRE = regexp.MustCompile(`(?i)(signature=)[0-9a-f]{64}`)

// StatusError is an error response of the service. It keeps the
// service's own message, with the credentials redacted should it echo
// them, and none of the request: no credentials, no signature.
type StatusError struct {
	StatusCode int    // 0 for an exception in a stream, which has none
	Code       string // the service's error code, such as "ThrottlingException"
	Message    string
	RequestID  string
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("bedrock: %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	switch {
	case e.StatusCode == 0:
		s = "bedrock: " + e.Code + " in the stream"
	case e.Code != "":
		s += " (" + e.Code + ")"
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if hint := hints[e.Code]; hint != "" {
		s += " — " + hint
	}
	if e.RequestID != "" {
		s += " (request id " + e.RequestID + ")"
	}
	return s
}

// hints say what a final error most often means.
var hints = map[string]string{
	"AccessDeniedException":     "the credentials may not call bedrock:InvokeModel on this model, or the model is not enabled for the account",
	"ResourceNotFoundException": "no such model in this region, or it needs an inference profile (us., eu., global.) as its ID",
}

// FailureClass classifies the error for a model's fallbacks: a service
// quota, an input past the model's context, credentials refused
// (UnrecognizedClientException, AccessDeniedException), else by status
// (retry.StatusClass).
func (e *StatusError) FailureClass() string {
	msg := strings.ToLower(e.Message)
	switch {
	case e.Code == "ServiceQuotaExceededException":
		return "quota"
	case e.Code == "ValidationException" && (strings.Contains(msg, "too long") || strings.Contains(msg, "too many input tokens")):
		return "too_long"
	case e.Code == "UnrecognizedClientException", e.Code == "AccessDeniedException":
		return "auth"
	case e.Code == "ResourceNotFoundException":
		return "not_found"
	case e.Code == "ModelNotReadyException", e.Code == "ServiceUnavailableException", e.Code == "ThrottlingException",
		e.Code == "InternalServerException", e.Code == "ModelStreamErrorException":
		return "unavailable"
	}
	return retry.StatusClass(e.StatusCode)
}
