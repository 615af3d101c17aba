// Package cuecmd holds the verbs of agentc's command line that read CUE:
// vet, digest and compile, and the compiling of a manifest that run is
// given. The agentc program adds them to package cli's command line; the
// agentc-runtime program goes without them.
package cuecmd

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"agentc.dev/agentc/agenttest"
	"agentc.dev/agentc/approval"
	"agentc.dev/agentc/compile"
	"agentc.dev/agentc/contractdiff"
	"agentc.dev/agentc/internal/cli"
	"agentc.dev/agentc/internal/leaf/cueproc"
	"agentc.dev/agentc/internal/runcmd"
	"agentc.dev/agentc/manifest"
	"agentc.dev/agentc/plan"
)

// Compiler returns the compiler of the command line.
func Compiler() *cli.Compiler {
	return &cli.Compiler{
		Verbs: func(e cli.Env) []*cobra.Command {
			return []*cobra.Command{newVetCmd(e), newDigestCmd(e), newDiffCmd(e), newCompileCmd(e), newTestCmd(e), newEstimateCmd(e), newSchemaCmd(e), newEvalCmd(e)}
		},
		Load:         load,
		Agents:       agents,
		Retarget:     compile.Retarget,
		ConfigLimits: configLimits,
		// A bad agentc.yaml, like a bad argument, means the command did
		// not do what was asked: exit 2, not the 1 of findings.
		IsArgError: func(err error) bool {
			var ae *manifest.ArgError
			var ce *compile.ConfigError
			return errors.As(err, &ae) || errors.As(err, &ce)
		},
	}
}

// newEvalCmd is the hidden verb a child of agentc runs to evaluate CUE
// over a model's values (approve_if, a test's expect), bounded (package
// cueproc).
func newEvalCmd(e cli.Env) *cobra.Command {
	return &cobra.Command{
		Use:    cueproc.Verb,
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return cueproc.Serve(e.Stdin, e.Stdout, map[string]cueproc.Job{approval.Job: approval.Serve, agenttest.Job: agenttest.Serve})
		},
	}
}

// configLimits reads the rate_limits of the agentc.yaml that applies to
// the agent at path (a file, or a directory of one), as vet finds it.
func configLimits(path string) ([]runcmd.ConfigLimit, error) {
	file := path
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		file = filepath.Join(path, manifest.ConfigFile)
	}
	cfg, err := compile.New(manifest.NewLoader()).ConfigFor([]string{file})
	if err != nil || cfg == nil {
		return nil, err
	}
	var out []runcmd.ConfigLimit
	for _, r := range cfg.RateLimits {
		out = append(out, configLimit(r))
	}
	return out, nil
}

func configLimit(r compile.RateLimit) runcmd.ConfigLimit {
	return runcmd.ConfigLimit{Key: r.Key, Value: r.Value, File: r.File, Line: r.Line, Column: r.Column, KeyColumn: r.KeyColumn}
}

// newCompiler returns a compiler whose loader reads "-" from e's stdin.
func newCompiler(e cli.Env) *compile.Compiler {
	l := manifest.NewLoader()
	l.Stdin = e.Stdin
	c := compile.New(l)
	c.CheckContract = contractdiff.Unproved
	for _, r := range contractdiff.Rules {
		c.DiffRules = append(c.DiffRules, r.ID)
	}
	known := runcmd.KnownProviders(e.Providers)
	c.CheckRateLimit = func(r compile.RateLimit) *compile.ConfigError {
		_, _, err := runcmd.ParseConfigLimit(configLimit(r), known)
		if err == nil {
			return nil
		}
		return &compile.ConfigError{File: err.File, Line: err.Line, Column: err.Column, Msg: err.Msg}
	}
	return c
}

// agents expands each path that names a directory (dir, or dir/...) into
// the agents it holds, for agentc serve, which loads each: a manifest found
// there that does not compile is kept, so that loading it reports why and
// nothing is served. Other paths pass through unread.
func agents(e cli.Env, paths []string) ([]string, error) {
	var out []string
	for _, path := range paths {
		if !isDirArg(path) {
			out = append(out, path)
			continue
		}
		insts, err := newCompiler(e).Loader().Load([]string{path})
		if err != nil {
			return nil, err
		}
		for _, inst := range insts {
			if _, isPlan, _ := readPlan(inst); inst.NotAgent && !isPlan {
				continue
			}
			out = append(out, inst.Source)
		}
	}
	return out, nil
}

// isDirArg says whether a path argument names a directory of agents.
func isDirArg(path string) bool {
	if path == "..." || strings.HasSuffix(path, "/...") {
		return true
	}
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// load compiles the one agent at path for a run, its findings on
// e.Stderr; the directory its relative paths resolve against is its
// manifest's.
func load(e cli.Env, path, prices string) (*plan.Plan, string, error) {
	// The cost check reads the price table the run prices with: the
	// run's --prices, as AGENTC_PRICES when it has none.
	comp := newCompiler(e)
	var err error
	if comp.Prices, err = runcmd.LoadPrices(prices); err != nil {
		return nil, "", err
	}
	bs, err := buildWith(e, comp, []string{path}, e.Stderr, false)
	if err != nil {
		return nil, "", err
	}
	if len(bs) != 1 {
		return nil, "", cli.UsageError("an agent to run is one agent; %s holds %d", path, len(bs))
	}
	dir := "."
	if files := bs[0].inst.Files; len(files) > 0 && files[0] != "-" {
		dir = filepath.Dir(files[0])
	}
	return bs[0].plan, dir, nil
}
