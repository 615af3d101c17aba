package bedrock

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"agentc.dev/agentc/runtime/provider/retry"
)

// The credentials the tests sign with; no error may show them.
const (
	testAKID   = "AKIAFAKE7EXAMPLE1234"
	testSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYfakeSECRET"
	testRegion = "eu-central-1"
)

// wireRequest is the body of a Converse request as the API reference
// writes it (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html
// and the types it links: Message, ContentBlock, ImageBlock,
// DocumentBlock, ToolUseBlock, ToolResultBlock, ReasoningContentBlock,
// InferenceConfiguration, ToolConfiguration, OutputConfig). Only the
// members this package may send are here: the fake decodes strictly, so
// any other member is a failure.
type wireRequest struct {
	AdditionalModelRequestFields json.RawMessage `json:"additionalModelRequestFields,omitempty"`
	InferenceConfig              *struct {
		MaxTokens   *int     `json:"maxTokens,omitempty"`
		Temperature *float64 `json:"temperature,omitempty"`
	} `json:"inferenceConfig,omitempty"`
	Messages []wireMessage `json:"messages"`
	System   []struct {
		Text string `json:"text"`
	} `json:"system,omitempty"`
	ToolConfig *struct {
		Tools []struct {
			ToolSpec struct {
				Name        string `json:"name"`
				Description string `json:"description,omitempty"`
				InputSchema struct {
					JSON json.RawMessage `json:"json"`
				} `json:"inputSchema"`
				Strict *bool `json:"strict,omitempty"`
			} `json:"toolSpec"`
		} `json:"tools"`
		ToolChoice *struct {
			Auto *struct{} `json:"auto,omitempty"`
			Any  *struct{} `json:"any,omitempty"`
			Tool *struct {
				Name string `json:"name"`
			} `json:"tool,omitempty"`
		} `json:"toolChoice,omitempty"`
	} `json:"toolConfig,omitempty"`
	OutputConfig *struct {
		TextFormat *struct {
			Type      string `json:"type"`
			Structure struct {
				JSONSchema struct {
					Schema      string `json:"schema"`
					Name        string `json:"name,omitempty"`
					Description string `json:"description,omitempty"`
				} `json:"jsonSchema"`
			} `json:"structure"`
		} `json:"textFormat,omitempty"`
	} `json:"outputConfig,omitempty"`
}

type wireMessage struct {
	Role    string      `json:"role"`
	Content []wireBlock `json:"content"`
}

type wireBlock struct {
	Text     *string    `json:"text,omitempty"`
	Image    *wireImage `json:"image,omitempty"`
	Document *wireDoc   `json:"document,omitempty"`
	ToolUse  *struct {
		ToolUseID string          `json:"toolUseId"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
	} `json:"toolUse,omitempty"`
	ToolResult *struct {
		ToolUseID string `json:"toolUseId"`
		Content   []struct {
			Text     *string    `json:"text,omitempty"`
			Image    *wireImage `json:"image,omitempty"`
			Document *wireDoc   `json:"document,omitempty"`
		} `json:"content"`
		Status string `json:"status,omitempty"`
	} `json:"toolResult,omitempty"`
	ReasoningContent *struct {
		ReasoningText *struct {
			Text      string `json:"text"`
			Signature string `json:"signature,omitempty"`
		} `json:"reasoningText,omitempty"`
		RedactedContent []byte `json:"redactedContent,omitempty"`
	} `json:"reasoningContent,omitempty"`
}

type wireImage struct {
	Format string `json:"format"`
	Source struct {
		Bytes []byte `json:"bytes"` // base64 on the wire
	} `json:"source"`
}

type wireDoc struct {
	Format string `json:"format"`
	Name   string `json:"name"`
	Source struct {
		Bytes []byte `json:"bytes"`
	} `json:"source"`
}

// reply is one scripted response.
type reply struct {
	status int
	header map[string]string
	body   string
	stream bool // body is an event stream (ConverseStream)
	hold   bool // after the body, the response keeps still until the request ends
}

// ok is a 200 with a Converse response body.
func ok(body string) reply { return reply{status: 200, body: body} }

// awsError is an error response as the service sends it: the code in
// X-Amzn-ErrorType, the message in the body.
func awsError(status int, code, message string) reply {
	return reply{status: status, header: map[string]string{"X-Amzn-ErrorType": code + ":http://internal.amazon.com/coral/com.amazon.bedrock/"},
		body: fmt.Sprintf(`{"message":%q}`, message)}
}

// received is a request the fake accepted.
type received struct {
	rawPath string
	body    wireRequest
}

// fake is Bedrock's runtime endpoint on loopback: it checks each request's
// signature and body, and answers with the replies in order (the last
// one again when they run out).
type fake struct {
	t       *testing.T
	srv     *httptest.Server
	mu      sync.Mutex
	replies []reply
	got     []received
	badSig  int
}

func newFake(t *testing.T, replies ...reply) *fake {
	t.Helper()
	f := &fake{t: t, replies: replies}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

var pathRE = regexp.MustCompile(`^/model/([^/]+)/converse(-stream)?$`)

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "read", 500)
		return
	}
	fail := func(status int, code, msg string) {
		w.Header().Set("X-Amzn-ErrorType", code)
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"message":%q}`, msg)
	}
	if r.Method != http.MethodPost || !pathRE.MatchString(r.URL.EscapedPath()) {
		f.t.Errorf("request %s %s", r.Method, r.URL.EscapedPath())
		fail(404, "UnknownOperationException", "no such operation")
		return
	}
	if err := verifySignature(r, body); err != nil {
		f.mu.Lock()
		f.badSig++
		f.mu.Unlock()
		fail(403, "InvalidSignatureException", err.Error())
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		f.t.Errorf("Content-Type %q", ct)
	}
	var wr wireRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&wr); err != nil {
		f.t.Errorf("the body is not a Converse request: %v\n%s", err, body)
		fail(400, "ValidationException", "malformed body")
		return
	}
	f.mu.Lock()
	f.got = append(f.got, received{rawPath: r.URL.EscapedPath(), body: wr})
	rep := f.replies[min(len(f.got), len(f.replies))-1]
	f.mu.Unlock()
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	if rep.stream {
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
	}
	w.Header().Set("X-Amzn-RequestId", "req-0001")
	w.WriteHeader(rep.status)
	io.WriteString(w, rep.body)
	if rep.hold {
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
}

func (f *fake) requests() []received {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]received(nil), f.got...)
}

var authRE = regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$`)

// verifySignature checks a request's Authorization header as Bedrock
// would: the scope is the test's key, the request's day, the region and
// the bedrock service; host and x-amz-date are signed; and the signature,
// computed again with the SDK's signer over the request as received,
// matches. A request changed on the way (its body, a signed header, its
// path) fails.
func verifySignature(r *http.Request, body []byte) error {
	m := authRE.FindStringSubmatch(r.Header.Get("Authorization"))
	if m == nil {
		return fmt.Errorf("the Authorization header is not AWS4-HMAC-SHA256: %q", r.Header.Get("Authorization"))
	}
	akid, day, region, service, signed := m[1], m[2], m[3], m[4], strings.Split(m[5], ";")
	if akid != testAKID || region != testRegion || service != "bedrock" {
		return fmt.Errorf("credential scope %s/%s/%s", akid, region, service)
	}
	has := map[string]bool{}
	for _, h := range signed {
		has[h] = true
	}
	if !has["host"] || !has["x-amz-date"] {
		return fmt.Errorf("signed headers %v lack host or x-amz-date", signed)
	}
	when, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil || when.Format("20060102") != day {
		return fmt.Errorf("x-amz-date %q, scope day %s", r.Header.Get("X-Amz-Date"), day)
	}
	u, err := url.Parse("http://" + r.Host + r.URL.RequestURI())
	if err != nil {
		return err
	}
	again, _ := http.NewRequest(r.Method, u.String(), nil)
	again.URL = u
	again.Host = r.Host
	for _, h := range signed {
		switch h {
		case "host":
		case "content-length":
			again.ContentLength = int64(len(body))
		default:
			again.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: testAKID, SecretAccessKey: testSecret}
	if err := v4.NewSigner().SignHTTP(r.Context(), creds, again, hex.EncodeToString(sum[:]), "bedrock", region, when); err != nil {
		return err
	}
	if want := authRE.FindStringSubmatch(again.Header.Get("Authorization")); want == nil || want[6] != m[6] || want[5] != m[5] {
		return fmt.Errorf("the signature does not match the request")
	}
	return nil
}

// waits records the waits the retry policy chose.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) on(_ int, _ error, d time.Duration) {
	w.mu.Lock()
	w.d = append(w.d, d)
	w.mu.Unlock()
}

// newModel is a Model on the fake, with tiny waits between attempts.
func newModel(t *testing.T, f *fake, attempts int, w *waits) *Model {
	t.Helper()
	p := retry.Policy{Attempts: attempts, Base: time.Millisecond, Max: 4 * time.Millisecond, RetryAfterCap: time.Second}
	if w != nil {
		p.OnAttempt = w.on
	}
	m, err := New(Config{
		Region:      testRegion,
		Credentials: staticCreds,
		BaseURL:     f.srv.URL,
		Retry:       p,
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// staticCreds are the test's credentials.
var staticCreds = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: testAKID, SecretAccessKey: testSecret, Source: "test"}, nil
})

// noSecret fails when s holds the credentials in any common form.
func noSecret(t *testing.T, s string) {
	t.Helper()
	for _, v := range []string{testAKID, testSecret, url.QueryEscape(testSecret), strings.ReplaceAll(testSecret, "/", `\/`)} {
		if strings.Contains(s, v) {
			t.Errorf("%q shows a credential", s)
		}
	}
}

// fastPolicy is a policy of tiny waits.
func fastPolicy(attempts int) retry.Policy {
	return retry.Policy{Attempts: attempts, Base: time.Millisecond, Max: 4 * time.Millisecond, RetryAfterCap: time.Second}
}
