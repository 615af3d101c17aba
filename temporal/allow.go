package temporal

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	sdktemporal "go.temporal.io/sdk/temporal"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/runtime/redact"
)

// A client that can start a workflow on a worker's task queue hands the
// worker a plan, and the plan names the programs the worker runs, as the
// worker's user, in the worker's environment. So a worker runs only the
// plans its operator allowed: it reads the plan itself (plan.Read
// recomputes the digests from its content), and refuses one whose plan
// digest is not on its list before any effect, in the workflow and again
// in each activity. A caller's plan digest covers the plans of the agents
// it calls, which plan.Read verifies against theirs, so allowing a plan
// allows the agents it calls as they are in it, and nothing else.
//
// Even an allowed plan never gets the worker's own keys: a tool whose env
// names one of agentc's key variables (plan.KeyVars), or a variable whose
// value on the worker is one of the worker's secrets, is refused. Those
// keys are the worker's, for its providers; a client never asks for them.

// checkPlan says whether the worker runs p, as read from a workflow's
// input: an error, never retried, that names what it refuses and how the
// operator allows it.
func (w *Worker) checkPlan(p *plan.Plan) error {
	if !w.opts.AllowAnyPlan && !w.allowed[p.Digests.Plan] {
		return sdktemporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"this worker does not run plan %s (agent %q): its operator allows a plan by starting the worker with it (agentc worker --allow %s, or --allow naming the plan file or a lock file that holds it)",
			p.Digests.Plan, p.Agent.Name, p.Digests.Plan), ErrRefused, nil)
	}
	if err := w.checkEnv(p, ""); err != nil {
		return sdktemporal.NewNonRetryableApplicationError(err.Error(), ErrRefused, nil)
	}
	return nil
}

// checkEnv refuses a plan whose tools, or the tools of an agent it calls,
// are given one of the worker's keys through their env. path names the
// agent in the plan ("" for its own, "a/b" for b called by a).
func (w *Worker) checkEnv(p *plan.Plan, path string) error {
	agent := fmt.Sprintf("agent %q", p.Agent.Name)
	if path != "" {
		agent = fmt.Sprintf("agent %q (called as %s)", p.Agent.Name, path)
	}
	keys := plan.KeyVars()
	secrets := redact.Of(w.opts.Secrets...)
	for _, name := range slices.Sorted(maps.Keys(p.Agent.Capabilities.Tools)) {
		for _, v := range p.Agent.Capabilities.Tools[name].Env {
			why := ""
			switch {
			case slices.Contains(keys, v):
				why = "one of agentc's own keys"
			default:
				// The same key under another name is still the worker's.
				if val, ok := os.LookupEnv(v); ok && secrets.Len() > 0 && secrets.String(val) != val {
					why = "a variable whose value on this worker holds one of its keys"
				}
			}
			if why != "" {
				return fmt.Errorf("%s, tool %q: its env names %s, %s: a worker never passes its keys (%s) to a tool; give the tool a key of its own, in a variable of its own",
					agent, name, v, why, strings.Join(keys, ", "))
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(p.Callees)) {
		c := p.Callees[name]
		if c.Plan == nil {
			continue
		}
		if err := w.checkEnv(c.Plan, strings.TrimPrefix(path+"/"+name, "/")); err != nil {
			return err
		}
	}
	return nil
}

// allowSet is the set of plan digests a worker runs.
func allowSet(ds []digest.Digest) map[digest.Digest]bool {
	m := make(map[digest.Digest]bool, len(ds))
	for _, d := range ds {
		m[d] = true
	}
	return m
}

// ReadAllowed returns the plan digests arg names, as agentc worker's
// --allow takes it: a plan digest (blake3:…), a plan file (the digest it
// is sealed with, its content verified), or a lock file (agentc.sum: the
// plan digest of every agent it holds). A file is read as agentc reads
// plans and locks elsewhere: a regular file (a FIFO or a device, such as
// /dev/zero behind a link, is refused unread), a plan at most
// plan.MaxPlanBytes, a lock at most plan.MaxLockBytes.
func ReadAllowed(arg string) ([]digest.Digest, error) {
	if strings.HasPrefix(arg, digest.Prefix) {
		d, err := digest.Parse(arg)
		if err != nil {
			return nil, err
		}
		return []digest.Digest{d}, nil
	}
	data, err := plan.ReadPlanOrLock(arg)
	if err != nil {
		return nil, err
	}
	if plan.IsPlan(data) {
		p, err := plan.Read(arg, data)
		if err != nil {
			return nil, err
		}
		return []digest.Digest{p.Digests.Plan}, nil
	}
	l, err := digest.ParseLock(arg, data)
	if err != nil {
		return nil, fmt.Errorf("%w (a plan digest, plan file or lock file was expected)", err)
	}
	if len(l.Entries) == 0 {
		return nil, errors.New(arg + ": the lock file holds no agent: write it with agentc digest --write")
	}
	var out []digest.Digest
	for _, name := range slices.Sorted(maps.Keys(l.Entries)) {
		out = append(out, l.Entries[name].Plan)
	}
	return out, nil
}
