package runcmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/provider/anthropic"
	"agentc.dev/agentc/runtime/provider/openai"
	"agentc.dev/agentc/runtime/provider/retry"
	"agentc.dev/agentc/runtime/testmodel"
)

// providerFlags are the command-line settings of providers; keys come only
// from the environment, never from manifests, plans or flags (which would
// leave them in shell histories).
type providerFlags struct {
	model   string // "test" runs every agent against the test model
	seed    int64
	baseURL string
}

// newModelFor returns the function that picks each agent's model: the
// test model, or a provider client configured from the environment. The
// base URL is the flag's, else the provider's environment variable, else
// the manifest's model.base_url.
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
		provider := p.Agent.Model.Provider
		if f.model != "" {
			provider = f.model
		}
		base := func(envVar string) string {
			switch {
			case f.baseURL != "":
				return f.baseURL
			case getenv(envVar) != "":
				return getenv(envVar)
			}
			return p.Agent.Model.BaseURL
		}
		switch provider {
		case "test":
			return &testmodel.Model{Seed: f.seed}, nil
		case "openai":
			cfg := openai.Config{APIKey: getenv("OPENAI_API_KEY"), BaseURL: base("OPENAI_BASE_URL"), Retry: policy}
			if cfg.APIKey == "" && cfg.BaseURL == "" {
				return nil, fmt.Errorf("agent %s: OPENAI_API_KEY is not set (an OpenAI-compatible server without a key needs a base URL); or run with --model test", p.Agent.Name)
			}
			return openai.New(cfg)
		case "anthropic":
			cfg := anthropic.Config{APIKey: getenv("ANTHROPIC_API_KEY"), BaseURL: base("ANTHROPIC_BASE_URL"), Retry: policy}
			if cfg.APIKey == "" {
				return nil, fmt.Errorf("agent %s: ANTHROPIC_API_KEY is not set; or run with --model test", p.Agent.Name)
			}
			return anthropic.New(cfg)
		}
		return nil, fmt.Errorf("agent %s: unknown provider %q", p.Agent.Name, provider)
	}
}
