package anthropic

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"agentc.dev/agentc/runtime/provider/internal/echotest"
	"agentc.dev/agentc/runtime/redact"
)

// TestKeyJoinsSecrets: the API key a Model sends joins the run's secrets
// (Config.Secrets) when the Model is made, so that a server that echoes
// it, in the answer or in an error, shows it in nothing the run writes,
// wherever the key came from.
func TestKeyJoinsSecrets(t *testing.T) {
	const key = "sk-ant-api03-echoed-key-0123456789"
	sent := func(r *http.Request) string {
		return r.Header.Get("X-Api-Key") + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	}
	answer := func(w http.ResponseWriter, r *http.Request) {
		note, _ := json.Marshal(map[string]string{"note": "seen " + sent(r)})
		content, _ := json.Marshal([]map[string]string{{"type": "text", "text": string(note)}})
		message(string(content), "end_turn", "")(w, r)
	}
	failed := func(w http.ResponseWriter, r *http.Request) {
		apiError(400, "invalid_request_error", "invalid x-api-key: "+sent(r))(w, r)
	}
	f := newFake(t, answer, failed)
	secrets := &redact.Set{}
	m, err := New(Config{APIKey: key, BaseURL: f.srv.URL, HTTPClient: f.srv.Client(), Retry: fastRetry, Secrets: secrets})
	if err != nil {
		t.Fatal(err)
	}
	p := echotest.Plan(t, "anthropic", "claude-sonnet-4-5")
	ok := echotest.Run(t, p, m, secrets)
	if ok.Rep.Outcome != "ok" || string(ok.Rep.Answer) != `{"note":"seen [redacted]"}` {
		t.Errorf("outcome %s (%s), answer %s", ok.Rep.Outcome, ok.Rep.Error, ok.Rep.Answer)
	}
	bad := echotest.Run(t, p, m, secrets)
	if bad.Rep.Outcome != "error" || !strings.Contains(bad.Rep.Error, "invalid x-api-key: [redacted]") {
		t.Errorf("outcome %s, error %q", bad.Rep.Outcome, bad.Rep.Error)
	}
	ok.NoneShows(t, key)
	bad.NoneShows(t, key)
}
