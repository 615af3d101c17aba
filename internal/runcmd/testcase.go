package runcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"agentc.dev/agentc/internal/leaf/userfile"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/fault"
	"agentc.dev/agentc/runtime/redact"
	"agentc.dev/agentc/runtime/tool"

	"agentc.dev/agentc/runtime/provider/retry"
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
	// Fault, when set, names the fault (package fault) injected into a
	// play-back of the journal Replay names: the agent's provider client
	// talks to the fault layer's loopback server, in its wire format
	// (OpenAI's for the test provider); tools are answered from the
	// journal; nothing is recorded. A timeout run's deadline is at most
	// fault.HangDeadline, and made again longer where it passed before the
	// call the fault hangs (RunCase).
	Fault string
	// Script, with Fault, is the script of the journal Replay names, read
	// already (fault.Load); nil reads it. The fault layer only reads a
	// script, so the fault runs of one journal, made at once, share one
	// rather than each holding its own copy.
	Script *fault.Script
}

// RunCase makes one run of a compiled plan for a test case, with dir the
// directory its relative paths resolve against, and returns its report.
// Nothing of the run is printed; its keys are redacted from the report.
// The lock file is not consulted: a test runs the agent as it is now.
func RunCase(ctx context.Context, e Env, p *plan.Plan, dir string, c Case) (*agentrt.Report, error) {
	if c.Fault != fault.Timeout {
		return runCaseOnce(ctx, e, p, dir, c, 0)
	}
	// A timeout run's deadline counts from the run's start, and on a
	// loaded machine what comes before the first call (reading files,
	// loading a tokeniser) can take all of it: a run whose deadline passed
	// before the call the fault hangs is made again with twice the time,
	// up to the agent's own deadline.
	own, err := p.Agent.Budgets.DeadlineLimit()
	if err != nil || own <= 0 {
		own = maxHang
	}
	hang := min(fault.HangDeadline, own)
	for {
		rep, err := runCaseOnce(ctx, e, p, dir, c, hang)
		var early *beforeFault
		if !errors.As(err, &early) || !early.deadline || hang >= min(own, maxHang) || ctx.Err() != nil {
			return rep, err
		}
		hang = min(2*hang, own, maxHang)
	}
}

// maxHang is the longest deadline a timeout run is given again (RunCase).
const maxHang = 16 * time.Second

// beforeFault is a fault run the fault never reached; deadline says the
// run ended on its deadline.
type beforeFault struct {
	fault    string
	deadline bool
}

func (e *beforeFault) Error() string {
	return fmt.Sprintf("the fault %s was never injected: the run made no call it applies to, though its journal did", e.fault)
}

// runCaseOnce is runCase; tests of RunCase's policy stand in for it.
var runCaseOnce = runCase

// runCase is RunCase once; hang is a timeout run's deadline.
func runCase(ctx context.Context, e Env, p *plan.Plan, dir string, c Case, hang time.Duration) (*agentrt.Report, error) {
	// Every key agentc reads (plan.KeyVars), as agentc run redacts them:
	// a recording goes into the agent's testdata.
	secrets := redact.Of(ProviderSecrets()...)
	hosts, err := keyHosts(os.Getenv(KeyHostsVar))
	if err != nil {
		return nil, err
	}
	quiet := e
	quiet.Stdout, quiet.Stderr = io.Discard, io.Discard
	f := Flags{model: c.Model, replay: c.Replay, baseURL: c.BaseURL, stall: retry.DefaultStall}
	opts := agentrt.Options{}
	var fr *faultRun
	if c.Fault != "" {
		var err error
		if fr, err = startFault(p, c.Replay, c.Fault, c.Script); err != nil {
			return nil, err
		}
		defer fr.server.Close()
		f = Flags{model: fr.wire, baseURL: fr.server.URL, fault: fr, stall: retry.DefaultStall}
		if c.Fault == fault.Timeout {
			opts.Budgets.Deadline = &hang
		}
	}
	tmp := ""
	var into *os.Root
	if c.Record != "" {
		// The run records in a directory of its own (0700, under the
		// system's temporary directory): its journal, the journal's lock
		// and the files the run is given or a tool returns. Once the run
		// is over they are copied into the directory held open from the
		// start, which lies beneath dir when the journal's place does (a
		// test case's testdata), through it (os.Root): a link swapped in
		// meanwhile is not followed, and nothing is written by path
		// there. An interrupted recording leaves the last one.
		var err error
		if rel, rerr := filepath.Rel(dir, c.Record); rerr == nil && filepath.IsLocal(rel) {
			// Its directories are made through dir too, once the path
			// is seen to stay beneath it.
			if err := userfile.Beneath(dir, filepath.Dir(c.Record)); err != nil {
				return nil, err
			}
			if err := mkdirBeneath(dir, filepath.Dir(rel)); err != nil {
				return nil, err
			}
			into, err = userfile.OpenDirBeneath(dir, filepath.Dir(c.Record))
		} else {
			if err := os.MkdirAll(filepath.Dir(c.Record), 0o755); err != nil {
				return nil, err
			}
			into, err = os.OpenRoot(filepath.Dir(c.Record))
		}
		if err != nil {
			return nil, err
		}
		defer into.Close()
		own, err := os.MkdirTemp("", "agentc-record-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(own)
		tmp = filepath.Join(own, filepath.Base(c.Record))
		f.record = tmp
	}
	// A case's files are named as "@PATH" in its input, relative to the
	// agent's directory; a recording keeps them beside its journal.
	files, err := inputFileFields(p, f)
	if err != nil {
		return nil, err
	}
	input := c.Input
	if len(files.fields) > 0 || takesToolFiles(p) {
		sf := Flags{record: tmp}
		var done func()
		if files.store, done, err = storeFor(sf); err != nil {
			return nil, err
		}
		defer done()
		opts.Files = files.store
		if input, err = files.resolve(input, nil, dir); err != nil {
			var xe *ExitError
			if errors.As(err, &xe) && xe.Err != nil {
				err = xe.Err
			}
			return nil, err
		}
	}
	rep, _, err := runOne(ctx, session{e: quiet, dir: dir, f: f, hosts: hosts, secrets: secrets}, p, opts, input)
	if err != nil {
		var xe *ExitError
		if errors.As(err, &xe) && xe.Err != nil {
			err = xe.Err
		}
		return nil, secrets.Error(err)
	}
	if fr != nil && !rep.Interrupted && !fr.injected() {
		// A run the fault never reached is the run without it: its
		// verdict would say nothing of the fault.
		return nil, &beforeFault{fault: c.Fault, deadline: rep.Bound == agentrt.BoundDeadline}
	}
	if tmp != "" && !rep.Interrupted {
		// The files first: a journal is never there without them.
		name := filepath.Base(c.Record)
		if err := userfile.CopyDirInto(into, tmp+".files", name+".files"); err != nil {
			return nil, fmt.Errorf("recording %s's files: %w", c.Record, err)
		}
		if err := userfile.CopyInto(into, tmp, name); err != nil {
			return nil, fmt.Errorf("recording %s: %w", c.Record, err)
		}
	}
	return rep, nil
}

// faultRun is a play-back of a journal with a fault injected.
type faultRun struct {
	kind    fault.Kind
	script  *fault.Script
	servers map[string]tool.ServerRecord
	wire    string
	server  *fault.Server
	// toolInjected reports whether a tool fault was injected; nil until
	// the run's tools are made.
	toolInjected func() bool
}

// injected reports whether the fault was injected into a call of the run.
func (fr *faultRun) injected() bool {
	return fr.server.Injected() || (fr.toolInjected != nil && fr.toolInjected())
}

// startFault loads the journal, unless s is its script, and starts the
// fault layer's server.
func startFault(p *plan.Plan, journal, name string, s *fault.Script) (*faultRun, error) {
	k, ok := fault.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("unknown fault %q", name)
	}
	var err error
	if s == nil {
		if s, err = fault.Load(journal); err != nil {
			return nil, err
		}
	}
	fr := &faultRun{kind: k, script: s, wire: p.Agent.Model.Provider}
	if len(s.Servers) > 0 {
		var h headerTools
		if err := json.Unmarshal(s.Servers, &h); err != nil {
			return nil, fmt.Errorf("%s: the header's tools: %w", journal, err)
		}
		fr.servers = h.Servers
	}
	if fr.wire != fault.WireAnthropic && fr.wire != fault.WireGoogle && fr.wire != fault.WireBedrock {
		fr.wire = fault.WireOpenAI
	}
	if fr.server, err = fault.NewServer(fr.wire, s, k, p); err != nil {
		return nil, err
	}
	return fr, nil
}

// mkdirBeneath makes the directory rel, and those on its way, in dir,
// through it (os.Root): a link leading out of dir is not followed.
func mkdirBeneath(dir, rel string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	return root.MkdirAll(rel, 0o755)
}
