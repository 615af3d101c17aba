package runcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/redact"
)

// Case is one run of an agent's test case, as agentc test makes them.
type Case struct {
	Input json.RawMessage
	// Model is "test" for the offline test model, or "" for the agent's
	// own provider.
	Model string
	// Record journals the run into this file, which it writes whole or
	// not at all; Replay serves the run from this journal, offline. At
	// most one is set.
	Record, Replay string
	// BaseURL overrides the provider's base URL, as --base-url does.
	BaseURL string
}

// RunCase makes one run of a compiled plan for a test case, with dir the
// directory its relative paths resolve against, and returns its report.
// Nothing of the run is printed; its keys are redacted from the report.
// The lock file is not consulted: a test runs the agent as it is now.
func RunCase(ctx context.Context, e Env, p *plan.Plan, dir string, c Case) (*agentrt.Report, error) {
	secrets := &redact.Set{}
	for _, pr := range providers {
		secrets.Add(os.Getenv(pr.keyVar))
	}
	hosts, err := keyHosts(os.Getenv(KeyHostsVar))
	if err != nil {
		return nil, err
	}
	quiet := e
	quiet.Stdout, quiet.Stderr = io.Discard, io.Discard
	f := Flags{model: c.Model, replay: c.Replay, baseURL: c.BaseURL}
	tmp := ""
	if c.Record != "" {
		if err := os.MkdirAll(filepath.Dir(c.Record), 0o755); err != nil {
			return nil, err
		}
		// The journal is written beside its place and renamed there once
		// the run is over: an interrupted recording leaves the last one.
		tmp = fmt.Sprintf("%s.%s.tmp", c.Record, randomHex(4))
		f.record = tmp
		defer os.Remove(tmp)
	}
	rep, _, err := runOne(ctx, quiet, p, dir, f, agentrt.Options{}, hosts, secrets, c.Input)
	if err != nil {
		var xe *ExitError
		if errors.As(err, &xe) && xe.Err != nil {
			err = xe.Err
		}
		return nil, secrets.Error(err)
	}
	if tmp != "" && !rep.Interrupted {
		if err := os.Rename(tmp, c.Record); err != nil {
			return nil, err
		}
	}
	return rep, nil
}
