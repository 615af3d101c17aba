// Package origin holds the redirect policy of every client agentc sends
// what one server alone may see: a provider's (a credential in a header,
// the conversation) and an mcp tool's over HTTP (the model's arguments,
// the session). A request goes to the one origin — scheme, host and port
// — it was sent to, and a redirect to any other is refused rather than
// followed.
//
// Refused, not followed without the credential: a provider's request is a
// POST of the conversation, which is itself meant for that origin only;
// which headers are credentials depends on the provider and on what
// middleware adds, so stripping them could only be a list that misses
// one; and neither a provider's API nor a server the manifest names moves
// to another origin by redirect.
package origin

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// ErrRedirect is the error a refused redirect wraps.
var ErrRedirect = errors.New("agentc sends these requests only to the scheme, host and port they were sent to")

// Client returns a copy of c (http.DefaultClient's settings when nil)
// that follows a redirect only to the origin of the first request, and
// then as c's own CheckRedirect allows.
func Client(c *http.Client) *http.Client {
	var out http.Client
	if c != nil {
		out = *c
	}
	next := out.CheckRedirect
	out.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		first := via[0].URL
		if key(req.URL) != key(first) {
			return fmt.Errorf("%s redirected to %s: %w", first.Redacted(), req.URL.Redacted(), ErrRedirect)
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &out
}

// key returns u's origin with its default port made explicit.
func key(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}
