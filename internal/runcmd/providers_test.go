package runcmd

import "testing"

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
