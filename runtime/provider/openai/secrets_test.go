package openai

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"agentc.dev/agentc/runtime/provider/internal/echotest"
	"agentc.dev/agentc/runtime/redact"
)

// TestCredentialJoinsSecrets: the credential a Model sends — the API key,
// or an Azure resource's key or Microsoft Entra ID token — joins the
// run's secrets (Config.Secrets) when the Model is made, so that a server
// that echoes it, in the answer or in an error, shows it in nothing the
// run writes, wherever the key came from.
func TestCredentialJoinsSecrets(t *testing.T) {
	echo := func(r *http.Request) string {
		if k := r.Header.Get("Api-Key"); k != "" {
			return k
		}
		return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	}
	answer := func(w http.ResponseWriter, r *http.Request) {
		note, _ := json.Marshal(map[string]string{"note": "seen " + echo(r)})
		msg, _ := json.Marshal(map[string]any{"role": "assistant", "content": string(note), "refusal": nil})
		completion(string(msg), "stop", "")(w, r)
	}
	failed := func(w http.ResponseWriter, r *http.Request) {
		apiError(400, "invalid_request_error", "", "Incorrect API key provided: "+echo(r))(w, r)
	}
	for _, c := range []struct {
		name, secret string
		cfg          func(url string) Config
	}{
		{"key", "sk-proj-echoed-key-0123456789", func(url string) Config { return Config{APIKey: "sk-proj-echoed-key-0123456789", BaseURL: url} }},
		{"azure key", "az-echoed-key-0123456789", func(url string) Config {
			return Config{Azure: &Azure{Endpoint: url, APIVersion: "2024-10-21", Deployment: "gpt-test", APIKey: "az-echoed-key-0123456789"}}
		}},
		{"azure token", "eyJ0eXAiOiJKV1Qi.echoed-entra-token", func(url string) Config {
			return Config{Azure: &Azure{Endpoint: url, APIVersion: "2024-10-21", Deployment: "gpt-test", Token: "eyJ0eXAiOiJKV1Qi.echoed-entra-token"}}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var url string
			if strings.HasPrefix(c.name, "azure") {
				f := newAzureFake(t, answer, failed)
				url = f.srv.URL
			} else {
				f := newFake(t, answer, failed)
				url = f.srv.URL
			}
			secrets := &redact.Set{}
			cfg := c.cfg(url)
			cfg.Retry, cfg.Secrets = (&attempts{}).policy(), secrets
			m, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			p := echotest.Plan(t, "openai", "gpt-test")
			ok := echotest.Run(t, p, m, secrets)
			if ok.Rep.Outcome != "ok" || string(ok.Rep.Answer) != `{"note":"seen [redacted]"}` {
				t.Errorf("outcome %s (%s), answer %s", ok.Rep.Outcome, ok.Rep.Error, ok.Rep.Answer)
			}
			bad := echotest.Run(t, p, m, secrets)
			if bad.Rep.Outcome != "error" || !strings.Contains(bad.Rep.Error, "Incorrect API key provided: [redacted]") {
				t.Errorf("outcome %s, error %q", bad.Rep.Outcome, bad.Rep.Error)
			}
			ok.NoneShows(t, c.secret)
			bad.NoneShows(t, c.secret)
		})
	}
}
