package http

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"agentc.dev/agentc/plan"
)

// allowlist is the parsed allow list of one tool.
type allowlist []plan.URLPrefix

// parseAllow parses the allow list a manifest declares, each entry with
// plan.ParseURLPrefix, as vet does.
func parseAllow(entries []string) (allowlist, error) {
	if len(entries) == 0 {
		return nil, errors.New("no allow list; an http tool must list the URL prefixes it may reach")
	}
	var a allowlist
	for _, e := range entries {
		p, err := plan.ParseURLPrefix(e)
		if err != nil {
			return nil, fmt.Errorf("allow entry %q: %v", e, err)
		}
		a = append(a, p)
	}
	return a, nil
}

// String lists the prefixes, for messages.
func (a allowlist) String() string {
	var s []string
	for _, p := range a {
		s = append(s, p.Raw)
	}
	return strings.Join(s, ", ")
}

// target parses a rendered URL the way a request does and checks it. It
// returns the parsed URL, if it parses, also with an error.
func (a allowlist) target(raw string) (*url.URL, error) {
	if err := plan.CheckURLChars(raw); err != nil {
		return nil, fmt.Errorf("the URL is malformed: %v", err)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("the URL is malformed: %v", errors.Unwrap(err))
	}
	return u, a.check(u)
}

// check says why a request to u is refused, or returns nil if u is under
// one of the prefixes. It is the only gate between a URL and a
// connection: the first request and every redirect pass through it.
func (a allowlist) check(u *url.URL) error {
	r, err := plan.URLPrefixOf(u)
	if err != nil {
		return err
	}
	// Say which component matched no prefix, for a message the model can
	// act on.
	var hostOK, schemeOK, portOK bool
	for _, p := range a {
		if !p.SameHost(r) {
			continue
		}
		hostOK = true
		if p.Scheme != r.Scheme {
			continue
		}
		schemeOK = true
		if p.Port != r.Port {
			continue
		}
		portOK = true
		if p.CoversPath(r.Path) {
			return nil
		}
	}
	var why string
	switch {
	case !hostOK:
		why = fmt.Sprintf("the host %q is not allowed", u.Hostname())
	case !schemeOK:
		why = fmt.Sprintf("the scheme %q is not allowed for this host", u.Scheme)
	case !portOK:
		why = fmt.Sprintf("the port %d is not allowed for this host", r.Port)
	default:
		why = fmt.Sprintf("the path %q is not under an allowed prefix", u.EscapedPath())
	}
	return fmt.Errorf("%s; this tool may reach only %s", why, a)
}
