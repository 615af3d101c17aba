// Package providers holds the providers agentc links beyond the two every
// program of it carries (openai, anthropic): Google's Gemini and Amazon
// Bedrock, whose SDKs bring gRPC, Google's and AWS's credential chains
// and text/template, which agentc-runtime keeps out of its start-up and
// size. agentc passes them to its commands (runcmd.Env.Providers).
package providers

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go/logging"

	"agentc.dev/agentc/internal/runcmd"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/provider/bedrock"
	"agentc.dev/agentc/runtime/provider/google"
	"agentc.dev/agentc/runtime/redact"
)

// All are the providers of this package, by name.
func All() map[string]runcmd.ProviderFunc {
	return map[string]runcmd.ProviderFunc{"google": Google, "bedrock": Bedrock}
}

// The environment that sends the google provider's requests to Vertex AI
// rather than the Gemini API: the switch, as Google's tools name it
// ("true" or "1"), the project and location, and another endpoint.
// Credentials are the application-default ones, or, with no project, a
// Vertex AI express-mode key from the key variables.
const (
	VertexVar         = "GOOGLE_GENAI_USE_VERTEXAI"
	VertexProjectVar  = "GOOGLE_CLOUD_PROJECT"
	VertexLocationVar = "GOOGLE_CLOUD_LOCATION"
	VertexBaseVar     = "GOOGLE_VERTEX_BASE_URL"
)

// Google is Gemini: on the Gemini API with the key GEMINI_API_KEY (else
// GOOGLE_API_KEY), or on Vertex AI when VertexVar says so.
func Google(r runcmd.ModelRequest) (agentrt.Model, error) {
	p := r.Plan
	if v := strings.ToLower(r.Getenv(VertexVar)); v == "true" || v == "1" {
		return vertex(r)
	}
	// r.Key is GEMINI_API_KEY, else GOOGLE_API_KEY, as runcmd read them,
	// or none where a manifest's base_url was not to be sent one: neither
	// variable is read again here, which would undo that.
	key := r.Key
	if key == "" && r.BaseURL == "" {
		return nil, fmt.Errorf("agent %s: GEMINI_API_KEY (or %s) is not set (a server without a key needs a base URL), and %s does not ask for Vertex AI; or run with --model test", p.Agent.Name, plan.GoogleKeyVar, VertexVar)
	}
	return google.New(google.Config{APIKey: key, BaseURL: r.BaseURL, Retry: r.Retry, Stall: r.Stall, Secrets: r.Secrets})
}

// vertex is the google provider on Vertex AI. Its credentials go to
// Google's endpoint or to a base URL the person running gives, never to a
// manifest's base_url.
func vertex(r runcmd.ModelRequest) (agentrt.Model, error) {
	p := r.Plan
	base := r.FlagBaseURL
	if base == "" {
		// --base-url was checked where it was read; the variable is
		// read here, and held to what a client can send to before
		// any request.
		base = r.Getenv(VertexBaseVar)
		if err := runcmd.CheckBaseURL(VertexBaseVar, base); err != nil {
			return nil, err
		}
	}
	if base == "" && p.Agent.Model.BaseURL != "" {
		return nil, fmt.Errorf("agent %s: the manifest's base_url is not sent Vertex AI's credentials: leave %s unset to use the Gemini API there, or give the endpoint yourself (--base-url or %s)", p.Agent.Name, VertexVar, VertexBaseVar)
	}
	// Each access token the application-default credentials give joins
	// the run's secrets before a request carries it.
	cfg := google.Config{Backend: google.BackendVertex, Project: r.Getenv(VertexProjectVar), Location: r.Getenv(VertexLocationVar), BaseURL: base, Retry: r.Retry, Stall: r.Stall, Secrets: r.Secrets}
	if cfg.Project == "" {
		// Express mode: a key stands for the project and credentials.
		if cfg.APIKey = r.Getenv(plan.ProviderKeyVars["google"]); cfg.APIKey == "" {
			cfg.APIKey = r.Getenv(plan.GoogleKeyVar)
		}
		if cfg.APIKey == "" {
			return nil, fmt.Errorf("agent %s: Vertex AI needs %s (with the application-default credentials), or an express-mode key in GEMINI_API_KEY or %s", p.Agent.Name, VertexProjectVar, plan.GoogleKeyVar)
		}
		if cfg.Location != "" {
			return nil, fmt.Errorf("agent %s: %s is set without %s: an express-mode key names no location", p.Agent.Name, VertexLocationVar, VertexProjectVar)
		}
	}
	m, err := google.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", p.Agent.Name, err)
	}
	return m, nil
}

// placeholder signs requests to a server the person named when the AWS
// chain holds no credentials.
var placeholder = credentials.NewStaticCredentialsProvider("AKIDNONE", "none", "")

// sdkLog prints on w what the AWS SDK says while it finds credentials (a
// fallback to IMDSv1, say) as agentc's other lines are printed, its
// secrets redacted, rather than as the SDK's own logger would; nil w
// prints nothing.
func sdkLog(w io.Writer) logging.Logger {
	if w == nil {
		return logging.Nop{}
	}
	return logging.LoggerFunc(func(c logging.Classification, format string, v ...any) {
		level := "warning"
		if c == logging.Debug {
			level = "debug"
		}
		fmt.Fprintf(w, "agentc: AWS SDK: %s: %s\n", level, redact.Of(runcmd.ProviderSecrets()...).String(fmt.Sprintf(format, v...)))
	})
}

// BedrockBaseVar names another endpoint for Bedrock's runtime, as the AWS
// SDKs name it.
const BedrockBaseVar = "AWS_ENDPOINT_URL_BEDROCK_RUNTIME"

// Bedrock is Amazon Bedrock, with the credentials and region of the
// standard AWS chain (the environment, the shared files and their
// profiles, SSO, the machine's role), as the AWS CLI finds them. They go
// to Bedrock's endpoint for the region, or one the person running names
// (--base-url or BedrockBaseVar), never to a manifest's base_url; a
// server named so may take requests unsigned, when the chain holds no
// credentials.
func Bedrock(r runcmd.ModelRequest) (agentrt.Model, error) {
	p := r.Plan
	base := r.FlagBaseURL
	if base == "" {
		base = r.Getenv(BedrockBaseVar)
	}
	if base == "" && p.Agent.Model.BaseURL != "" {
		return nil, fmt.Errorf("agent %s: the manifest's base_url is not sent AWS credentials: give the endpoint yourself (--base-url or %s)", p.Agent.Name, BedrockBaseVar)
	}
	var ac aws.Config
	if r.FaultLayer {
		// agentc test's fault layer, in this process: the AWS chain (the
		// person's credentials, their files, the machine's metadata
		// service) is not consulted, and nothing real signs.
		ac = aws.Config{Region: "us-east-1", Credentials: placeholder}
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var err error
		if ac, err = config.LoadDefaultConfig(ctx, config.WithLogger(sdkLog(r.Log))); err != nil {
			return nil, fmt.Errorf("agent %s: the AWS configuration: %w", p.Agent.Name, err)
		}
		if base != "" {
			// A server the person names (a local gateway) may need no
			// AWS account: without credentials the requests are signed
			// with a placeholder that opens nothing, and the region only
			// scopes signatures.
			if ac.Credentials == nil {
				ac.Credentials = placeholder
			} else if _, err := ac.Credentials.Retrieve(ctx); err != nil {
				ac.Credentials = placeholder
			}
			if ac.Region == "" {
				ac.Region = "us-east-1"
			}
		}
		if ac.Region == "" {
			return nil, fmt.Errorf("agent %s: no AWS region: set AWS_REGION (or a profile's region)", p.Agent.Name)
		}
		if base == "" {
			// Bedrock's own endpoint takes signed requests only: a chain
			// that holds no credentials is said now, before the run
			// starts, as a missing key is for the other providers.
			if ac.Credentials == nil {
				return nil, fmt.Errorf("agent %s: no AWS credentials (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE); or run with --model test", p.Agent.Name)
			}
			if _, err := ac.Credentials.Retrieve(ctx); err != nil {
				return nil, fmt.Errorf("agent %s: could not get AWS credentials from the standard chain (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, single sign-on, the machine's role): %w; or run with --model test", p.Agent.Name, err)
			}
		}
	}
	cfg := bedrock.FromAWSConfig(ac)
	// The chain's credentials, wherever it found them (a profile's file,
	// single sign-on, a role) and each refresh of them, join the run's
	// secrets before a request is signed with them.
	cfg.BaseURL, cfg.Retry, cfg.Stall, cfg.Secrets = base, r.Retry, r.Stall, r.Secrets
	// Nor does a Bedrock API key go to the fault layer.
	cfg.SignedOnly = r.FaultLayer
	m, err := bedrock.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", p.Agent.Name, err)
	}
	return m, nil
}
