package runcmd

import (
	"testing"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/redact"
	"agentc.dev/agentc/runtime/testmodel"
)

// TestKeyAllowed: which manifest base URLs get the provider key.
func TestKeyAllowed(t *testing.T) {
	for _, tc := range []struct {
		base  string
		hosts []string
		want  bool
	}{
		{"https://api.openai.com/v1", nil, true},
		{"https://API.OpenAI.com:443/v1", nil, true},
		{"http://api.openai.com/v1", nil, false},
		{"https://api.openai.com:8443/v1", nil, false},
		{"https://api.openai.com.evil.example/v1", nil, false},
		{"https://evil.example/api.openai.com/v1", nil, false},
		{"http://127.0.0.1:8080/v1", nil, false},
		{"http://127.0.0.1:8080/v1", []string{"127.0.0.1"}, true},
		{"http://127.0.0.1:8080/v1", []string{"127.0.0.1:8080"}, true},
		{"http://127.0.0.1:8080/v1", []string{"127.0.0.1:9090"}, false},
		{"http://127.0.0.1:8080/v1", []string{"localhost"}, false},
		{"https://Gateway.Internal/v1", []string{"gateway.internal"}, true},
		{"http://[::1]:8080/v1", []string{"::1"}, true},
		{"http://[::1]:8080/v1", []string{"[::1]:8080"}, true},
		{"http://[::1]:8080/v1", []string{"[::1]"}, true},
		{"not a url", []string{"not a url"}, false},
		{"/relative/path", []string{""}, false},
	} {
		if _, got := keyAllowed(tc.base, "api.openai.com", tc.hosts); got != tc.want {
			t.Errorf("keyAllowed(%q, %q) = %v, want %v", tc.base, tc.hosts, got, tc.want)
		}
	}
}

func TestKeyHosts(t *testing.T) {
	got, err := keyHosts(" localhost, gateway.internal:8443,,[::1] ")
	if err != nil || len(got) != 3 || got[0] != "localhost" || got[1] != "gateway.internal:8443" || got[2] != "[::1]" {
		t.Errorf("keyHosts = %q, %v", got, err)
	}
	for _, bad := range []string{"http://localhost:8080", "localhost/v1", "user@host"} {
		if _, err := keyHosts(bad); err == nil {
			t.Errorf("keyHosts(%q) took a value that is not a host", bad)
		}
	}
}

// TestModelsTakeRunSecrets: every provider's model is made with the run's
// secret set, which it adds the credentials it sends to: the keys given
// (openai, anthropic, Azure), and whatever a linked provider obtains
// while the run goes on (ModelRequest.Secrets).
func TestModelsTakeRunSecrets(t *testing.T) {
	env := map[string]string{
		"OPENAI_API_KEY": "sk-openai-run-secret-0123", "ANTHROPIC_API_KEY": "sk-ant-run-secret-0123",
	}
	getenv := func(k string) string { return env[k] }
	secrets := &redact.Set{}
	var linked *redact.Set
	f := providerFlags{secrets: secrets, extra: map[string]ProviderFunc{"google": func(r ModelRequest) (agentrt.Model, error) {
		linked = r.Secrets
		return &testmodel.Model{}, nil
	}}}
	for _, provider := range []string{"openai", "anthropic", "google"} {
		p := &plan.Plan{Agent: plan.Agent{Name: "a", Model: plan.Model{Provider: provider, Name: "m"}}}
		if _, err := newModelFor(f, getenv, nil)(p); err != nil {
			t.Fatalf("%s: %v", provider, err)
		}
	}
	if linked != secrets {
		t.Error("a linked provider was not given the run's secrets")
	}
	env = map[string]string{AzureEndpointVar: "https://res.openai.azure.com", AzureVersionVar: "2024-10-21", "AZURE_OPENAI_AD_TOKEN": "eyJ-azure-run-secret-0123"}
	p := &plan.Plan{Agent: plan.Agent{Name: "a", Model: plan.Model{Provider: "openai", Name: "m"}}}
	if _, err := newModelFor(f, getenv, nil)(p); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"sk-openai-run-secret-0123", "sk-ant-run-secret-0123", "eyJ-azure-run-secret-0123"} {
		if got := secrets.String(key); got != redact.Marker {
			t.Errorf("the run's secrets do not hold %s", key)
		}
	}
}
