// Package files reads the files a request carries for the providers that
// send them, within each provider's bounds, and says clearly, before any
// call, what a provider does not take.
package files

import (
	"fmt"

	"agentc.dev/agentc/internal/leaf/userfile"
	agentrt "agentc.dev/agentc/runtime"
)

// Limits are what a provider takes, by media type: the largest file of
// each, in bytes; a media type it does not list it does not take.
type Limits map[string]int64

// Check fails when the provider does not take f, or not at its size. The
// error names the provider in its text but does not begin with it: the
// provider's own errors do.
func (l Limits) Check(provider string, f *agentrt.File) error {
	max, ok := l[f.MediaType]
	if !ok {
		return fmt.Errorf("file %s: %s does not take %s", f.Name, provider, f.MediaType)
	}
	if f.Size > max {
		return fmt.Errorf("file %s: %s is larger than the %s %s takes in one %s", f.Name, userfile.Size(f.Size), userfile.Size(max), provider, f.MediaType)
	}
	return nil
}
