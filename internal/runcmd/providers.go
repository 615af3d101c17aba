package runcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/pace"
	"agentc.dev/agentc/runtime/provider/anthropic"
	"agentc.dev/agentc/runtime/provider/openai"
	"agentc.dev/agentc/runtime/provider/retry"
	"agentc.dev/agentc/runtime/redact"
	"agentc.dev/agentc/runtime/testmodel"
)

// ModelRequest is what a provider a program links beyond runcmd's own
// (Env.Providers) makes its client from: the agent's plan; the key and
// base URL resolved as for every provider (the key from the provider's
// variable, withheld from a manifest's base URL the person did not
// allow); --base-url as given; the environment; and the retry policy and
// stall bound of the run.
type ModelRequest struct {
	Plan         *plan.Plan
	Key, BaseURL string
	FlagBaseURL  string
	Getenv       func(string) string
	Retry        retry.Policy
	Stall        time.Duration
	// FaultLayer says the server is agentc test's fault layer (BaseURL),
	// in this process: the client is given no credentials and looks none
	// up, neither in the environment (where Getenv finds nothing) nor in
	// a provider's own chain of files, single sign-on and the machine's
	// metadata service, which an offline run must not reach.
	FaultLayer bool
	// Log is where what a provider's SDK says while its client is made
	// (a credential chain's warnings) is printed, as the run's other
	// lines are; nil prints nothing.
	Log io.Writer
	// Secrets is the secret set of the runs the model serves: the
	// provider adds to it each credential it sends, those it obtains
	// while the runs go on (OAuth tokens, a credential chain's keys)
	// before a request carries them, so that everything the runs write
	// redacts them. Nil in a program that redacts nothing.
	Secrets *redact.Set
}

// ProviderFunc makes a provider's client for a run.
type ProviderFunc func(ModelRequest) (agentrt.Model, error)

// providerFlags are the command-line settings of providers; keys come only
// from the environment, never from manifests, plans or flags (which would
// leave them in shell histories).
type providerFlags struct {
	model   string // "test" runs every agent against the test model
	seed    int64
	baseURL string
	// baseFor is the provider baseURL is the server of: the agent's own
	// (after --model). A plan of another provider (a fallback, a called
	// agent, a batch item's model) goes to its own server. "" applies
	// baseURL to every provider (agentc test's fault layer).
	baseFor string
	// keyHosts are the hosts a manifest's base URL may name and still be
	// sent the key (KeyHostsVar).
	keyHosts []string
	// stall gives up a provider call's attempt when its server makes no
	// progress for so long (--stall-timeout); 0 never does.
	stall time.Duration
	// extra are the providers the program links beyond openai and
	// anthropic (Env.Providers).
	extra map[string]ProviderFunc
	// pace, when set, paces the providers' calls (package pace): the
	// limiters of the process, shared by all its runs.
	pace *pace.Set
	// faultLayer says baseURL is agentc test's fault layer (see
	// ModelRequest.FaultLayer).
	faultLayer bool
	// log is where a provider's SDK's lines go (ModelRequest.Log).
	log io.Writer
	// secrets is the runs' secret set, which providers add the
	// credentials they send to (ModelRequest.Secrets).
	secrets *redact.Set
}

// The environment that sends the openai provider's requests to an Azure
// OpenAI resource: its endpoint, the API version, and the deployment
// every request goes to (else the model's name); the credential is
// plan.AzureKeyVars'.
const (
	AzureEndpointVar   = "AZURE_OPENAI_ENDPOINT"
	AzureVersionVar    = "OPENAI_API_VERSION"
	AzureDeploymentVar = "AZURE_OPENAI_DEPLOYMENT"
)

// KeyHostsVar lists, comma-separated, the hosts a manifest's
// model.base_url may name and still be sent the provider key.
const KeyHostsVar = "AGENTC_KEY_HOSTS"

// provider is what agentc knows of each real provider: where its key and
// base URL come from, and its own API host, which gets the key whoever
// names it.
type provider struct {
	keyVar, baseVar, host string
}

var providers = map[string]provider{
	"openai":    {plan.ProviderKeyVars["openai"], "OPENAI_BASE_URL", "api.openai.com"},
	"anthropic": {plan.ProviderKeyVars["anthropic"], "ANTHROPIC_BASE_URL", "api.anthropic.com"},
	"google":    {plan.ProviderKeyVars["google"], "GOOGLE_GEMINI_BASE_URL", "generativelanguage.googleapis.com"},
	// Bedrock's credentials are the AWS chain's, read by its SDK.
	"bedrock": {"", "AWS_ENDPOINT_URL_BEDROCK_RUNTIME", ""},
}

// CheckBaseURL refuses a base URL (named by where, a flag or a variable)
// that no provider client could send a request to: one that does not
// parse, or is not http or https with a host. A manifest's base_url is
// held to http(s) by its schema; this is for what a person gives. The
// URL is shown without its password.
func CheckBaseURL(where, raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		if strings.Contains(raw, "@") {
			return UsageError("%s: not a URL: give the server's base URL, such as http://localhost:8080/v1", where) // it may hold a password
		}
		return UsageError("%s %q: not a URL: give the server's base URL, such as http://localhost:8080/v1", where, raw)
	}
	if s := strings.ToLower(u.Scheme); (s != "http" && s != "https") || u.Host == "" || u.Opaque != "" {
		shown := raw
		if _, ok := u.User.Password(); ok {
			shown = u.Redacted()
		}
		return UsageError("%s %q: not an http or https URL with a host: give the server's base URL, such as http://localhost:8080/v1", where, shown)
	}
	return nil
}

// keyHosts reads the hosts that may be sent a key from the value of
// KeyHostsVar: host names or addresses, with a port or without, separated
// by commas.
func keyHosts(list string) ([]string, error) {
	var out []string
	for _, h := range strings.Split(list, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if strings.ContainsAny(h, "/@?# ") {
			return nil, UsageError("%s: %q is not a host: give host names or addresses, with a port or without, separated by commas (e.g. localhost,gateway.internal:8443)", KeyHostsVar, h)
		}
		out = append(out, h)
	}
	return out, nil
}

// newModelFor returns the function that picks each agent's model: the
// test model, or a provider client configured from the environment. The
// base URL is the flag's, else the provider's environment variable, else
// the manifest's model.base_url. The key follows the person running, not
// the manifest: it goes to the provider's own endpoint and to a base URL
// the flag or the environment gives, and to a manifest's base URL only if
// its host is the provider's own or one that person named (keyHosts);
// otherwise the requests go without it, and an event says so.
func newModelFor(f providerFlags, getenv func(string) string, events func(agentrt.Event)) func(p *plan.Plan) (agentrt.Model, error) {
	return func(p *plan.Plan) (agentrt.Model, error) {
		// Every failed attempt of a provider call is an event.
		policy := retry.Default
		// A retry is an event; a failure that ends the call is another,
		// and a call cut off by an interrupt or the deadline a third.
		policy.OnAttempt = func(attempt int, err error, wait time.Duration) {
			if events == nil {
				return
			}
			ev := agentrt.Event{Time: time.Now(), Type: agentrt.EventModelRetry, Model: p.Agent.Model.Name}
			switch {
			case wait > 0:
				ev.Message = fmt.Sprintf("attempt %d failed: %v; retrying in %s", attempt, err, wait.Round(time.Millisecond))
			case errors.Is(err, context.Canceled):
				ev.Type, ev.Message = agentrt.EventModelCancelled, "the call was cancelled: the run was interrupted"
			case errors.Is(err, context.DeadlineExceeded):
				ev.Type, ev.Message = agentrt.EventModelCancelled, "the call was cut off: a deadline passed"
			default:
				ev.Type, ev.Message = agentrt.EventModelError, fmt.Sprintf("attempt %d failed: %v", attempt, err)
			}
			events(ev)
		}
		name := p.Agent.Model.Provider
		if f.model != "" {
			name = f.model
		}
		if name == "test" {
			return &testmodel.Model{Seed: f.seed}, nil
		}
		pr, ok := providers[name]
		if !ok {
			return nil, fmt.Errorf("agent %s: unknown provider %q", p.Agent.Name, name)
		}
		// The flag's base URL is the server of one provider, the agent's
		// own: a fallback, a called agent or a batch item of another goes
		// to its own provider's server, with its own key, never to the
		// server the flag names (which could make a call fail, to draw
		// the next provider's key to it).
		flagBase := f.baseURL
		if f.baseFor != "" && name != f.baseFor {
			flagBase = ""
		}
		if endpoint := getenv(AzureEndpointVar); name == "openai" && endpoint != "" {
			// The person running sends the requests to their Azure
			// OpenAI resource, whatever base URL the manifest names.
			if flagBase != "" || getenv(pr.baseVar) != "" {
				return nil, fmt.Errorf("agent %s: %s and a base URL (--base-url or %s) both name the server; give one", p.Agent.Name, AzureEndpointVar, pr.baseVar)
			}
			m, err := openai.New(openai.Config{API: p.Agent.Model.API, Retry: policy, Stall: stallConfig(f.stall), Azure: &openai.Azure{
				Endpoint: endpoint, APIVersion: getenv(AzureVersionVar), Deployment: getenv(AzureDeploymentVar),
				APIKey: getenv(plan.AzureKeyVars[0]), Token: getenv(plan.AzureKeyVars[1]),
			}, Secrets: f.secrets})
			if err != nil {
				return nil, fmt.Errorf("agent %s: %w (from %s, %s, and %s or %s)", p.Agent.Name, err, AzureEndpointVar, AzureVersionVar, plan.AzureKeyVars[0], plan.AzureKeyVars[1])
			}
			if f.pace != nil {
				return pace.Model(m, name, f.pace, events), nil
			}
			return m, nil
		}
		keyVar := pr.keyVar
		key, base := getenv(keyVar), flagBase
		if key == "" && name == "google" {
			keyVar = plan.GoogleKeyVar
			key = getenv(keyVar)
		}
		if base == "" {
			base = getenv(pr.baseVar)
			if err := CheckBaseURL(pr.baseVar, base); err != nil {
				return nil, err
			}
		}
		hint := ""
		if base == "" && p.Agent.Model.BaseURL != "" {
			base = p.Agent.Model.BaseURL
			if host, ok := keyAllowed(base, pr.host, f.keyHosts); key != "" && !ok {
				key = ""
				hint = withheldHint(keyVar, host)
				if events != nil {
					events(agentrt.Event{Time: time.Now(), Type: agentrt.EventKeyWithheld, Model: p.Agent.Model.Name,
						Message: fmt.Sprintf("%s (agent %s)", hint, p.Agent.Name)})
				}
			}
		}
		var m agentrt.Model
		var err error
		switch name {
		case "openai":
			if key == "" && base == "" {
				return nil, fmt.Errorf("agent %s: OPENAI_API_KEY is not set (an OpenAI-compatible server without a key needs a base URL); or run with --model test", p.Agent.Name)
			}
			m, err = openai.New(openai.Config{APIKey: key, BaseURL: base, API: p.Agent.Model.API, Retry: policy, Stall: stallConfig(f.stall), Secrets: f.secrets})
		case "anthropic":
			if key == "" && base == "" {
				return nil, fmt.Errorf("agent %s: ANTHROPIC_API_KEY is not set; or run with --model test", p.Agent.Name)
			}
			m, err = anthropic.New(anthropic.Config{APIKey: key, BaseURL: base, Retry: policy, Stall: stallConfig(f.stall), Secrets: f.secrets})
		default:
			make, linked := f.extra[name]
			if !linked {
				return nil, fmt.Errorf("agent %s: this program does not carry the %s provider (its SDK); run the agent with agentc", p.Agent.Name, name)
			}
			m, err = make(ModelRequest{Plan: p, Key: key, BaseURL: base, FlagBaseURL: flagBase, Getenv: getenv, Retry: policy, Stall: stallConfig(f.stall), FaultLayer: f.faultLayer, Log: f.log, Secrets: f.secrets})
		}
		if err != nil {
			return nil, err
		}
		if f.pace != nil {
			m = pace.Model(m, name, f.pace, events)
		}
		if hint == "" {
			return m, nil
		}
		return withheld{m, hint}, nil
	}
}

// stallConfig is --stall-timeout as the providers' Config.Stall: 0, for
// never, is negative there.
func stallConfig(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// keyAllowed reports whether a manifest's base URL may be sent the key:
// its host is the provider's own (over https), or one of hosts, which
// match the URL's host name, or its host and port. It returns the URL's
// host, for messages.
func keyAllowed(base, own string, hosts []string) (string, bool) {
	u, err := url.Parse(base)
	if err != nil || u.Hostname() == "" {
		return base, false
	}
	if u.Scheme == "https" && strings.EqualFold(u.Hostname(), own) && (u.Port() == "" || u.Port() == "443") {
		return u.Host, true
	}
	for _, h := range hosts {
		if strings.EqualFold(h, u.Hostname()) || strings.EqualFold(h, u.Host) || strings.EqualFold(strings.Trim(h, "[]"), u.Hostname()) {
			return u.Host, true
		}
	}
	return u.Host, false
}

func withheldHint(keyVar, host string) string {
	name := host
	if u, err := url.Parse("//" + host); err == nil && u.Hostname() != "" {
		name = u.Hostname()
	}
	return fmt.Sprintf("%s was not sent to %s, which the manifest's model.base_url names; to send it there, set %s=%s",
		keyVar, host, KeyHostsVar, name)
}

// withheld is the model of a server the key was withheld from: an
// authentication failure repeats how to send it.
type withheld struct {
	agentrt.Model
	hint string
}

func (m withheld) Complete(ctx context.Context, req *agentrt.Request) (*agentrt.Response, error) {
	resp, err := m.Model.Complete(ctx, req)
	if err != nil && unauthorized(err) {
		err = &hintError{err: err, hint: m.hint}
	}
	return resp, err
}

func unauthorized(err error) bool {
	var o *openai.StatusError
	var a *anthropic.StatusError
	return errors.As(err, &o) && o.StatusCode == 401 || errors.As(err, &a) && a.StatusCode == 401
}

type hintError struct {
	err  error
	hint string
}

func (e *hintError) Error() string { return e.err.Error() + " (" + e.hint + ")" }
func (e *hintError) Unwrap() error { return e.err }
