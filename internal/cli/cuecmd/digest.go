package cuecmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"cuelang.org/go/cue"
	"github.com/spf13/cobra"

	"agentc.dev/agentc/contractdiff"
	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/internal/cli"
	"agentc.dev/agentc/internal/leaf/project"
	"agentc.dev/agentc/internal/leaf/userfile"
	"agentc.dev/agentc/manifest"
	"agentc.dev/agentc/plan"
)

func newDigestCmd(e cli.Env) *cobra.Command {
	var asJSON, write, check bool
	var lockPath, failOn string
	cmd := &cobra.Command{
		Use:   "digest [paths...]",
		Short: "Print, record or check the contract and plan digests of agents",
		Long: `Digest prints each agent's two digests: the contract digest, over what a
consumer depends on (capabilities.provides, the input schema, and the output's
name, description, schema and keeps_tools), and the plan digest, over
everything that drives behaviour. Neither depends on file names, field order,
comments, formatting or how the manifest is split over files.

--write records them in the lock file, one agent a line, sorted by name;
agents not named by the paths keep their lines, unless no manifest or plan in
the lock's tree (its directory and below) defines them any more. --check
compares them with the lock file and names each agent whose contract or plan
digest moved, that the lock lacks, or that the lock holds and the lock's tree
no longer defines (removed: AGENT_REMOVED, breaking; the rest of the tree is
read for the agents' names only when the paths do not cover it). Where a contract moved and the lock holds the old one (by its
digest: --write records the contracts), the change is classified as agentc
diff does, a line a finding, and the agent's verdict says whether it is
compatible (update the lock with --write), undecided or breaking. With
--fail-on CLASS (as diff's: breaking, undecided or compatible), --check fails
only on a contract change of that class or above, or one the lock cannot
classify (its old contract missing); a moved plan digest alone, or an agent
the lock lacks (AGENT_ADDED, compatible), is then reported without failing.
Without --fail-on, any moved digest, added or removed agent fails. With
--json, --check prints one JSON object a line for each agent it reports.
The lock file is agentc.sum: the nearest one in the working
directory or above it, else one at the module root (the nearest directory
above holding cue.mod, go.mod or .git); --lock names another.

Paths are as for vet, and may name plans written by agentc compile too: a
plan's recorded digests are used once its content is verified against them
(a plan edited after it was compiled, or cut short, is reported). A plan and
the manifest it was compiled from may be given together when their digests
agree: they are one agent, printed once (--json names each source). Agents with findings are reported on standard error and not digested;
findings agentc.yaml turns off (see vet's help) do not count.

Exit codes: 0 success; 1 findings, or --check found a moved digest (with
--fail-on: a contract change of that class or above, or one it cannot
classify); 2 usage error, or an agentc.yaml that does not read.`,
		Example: `  agentc digest examples/
  agentc digest --write examples/
  agentc digest --check ./...
  agentc digest --check --fail-on breaking ./...`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if write && check {
				return cli.UsageError("--write and --check exclude each other")
			}
			least := -1 // any move fails
			if cmd.Flags().Changed("fail-on") {
				if !check {
					return cli.UsageError("--fail-on goes with --check")
				}
				r, ok := classRank[contractdiff.Class(failOn)]
				if !ok {
					return cli.UsageError("--fail-on %q: want one of breaking, undecided, compatible", failOn)
				}
				least = r
			}
			if len(args) == 0 {
				args = []string{"."}
			}
			bs, err := buildAll(e, args, e.Stderr, true)
			if err != nil {
				return err
			}
			entries := map[string]digest.Entry{}
			agents := map[string]*built{}
			sources := map[string]string{}
			for _, b := range bs {
				name := b.plan.Agent.Name
				en := digest.Entry{Name: name, Contract: b.plan.Digests.Contract, Plan: b.plan.Digests.Plan}
				// A manifest and the plan compiled from it are one agent.
				if prev, dup := sources[name]; dup && entries[name] != en {
					return &cli.ExitError{Code: cli.ExitFindings, Err: fmt.Errorf("two agents are named %q (%s and %s); a lock file tells agents by name", name, prev, b.inst.Source)}
				}
				sources[name] = b.inst.Source
				entries[name] = en
				agents[name] = &b
			}
			if !write && !check {
				return printDigests(e, bs, asJSON)
			}
			what := "--lock"
			if lockPath == "" {
				lockPath, what = findLock(e.Dir), "the lock file"
			}
			if write {
				if err := lockIsNoInput(e, what, lockPath, bs); err != nil {
					return err
				}
			}
			lock, err := readLock(lockPath, relPath(lockPath, e.Dir), write, what != "--lock")
			if err != nil {
				return &cli.ExitError{Code: cli.ExitFindings, Err: err}
			}
			if write {
				removed, err := removedAgents(e, lock, lockPath, entries, agents)
				if err != nil {
					return err
				}
				for _, n := range removed {
					delete(lock.Entries, n)
				}
				for n, en := range entries {
					lock.Entries[n] = en
				}
				if err := keepContracts(lock, bs); err != nil {
					return err
				}
				return writeFileAtomic(lockPath, lock.Format())
			}
			return checkLock(e, lock, lockPath, entries, agents, least, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print digests as JSON objects, one per line; with --check, one per agent reported")
	cmd.Flags().BoolVar(&write, "write", false, "record the digests in the lock file")
	cmd.Flags().BoolVar(&check, "check", false, "fail if a digest differs from the lock file")
	cmd.Flags().StringVar(&failOn, "fail-on", "", "with --check, fail only on a contract change of this class or above: breaking, undecided or compatible (default: any moved digest fails)")
	cmd.Flags().StringVar(&lockPath, "lock", "", "the lock file (default: agentc.sum, found as described above)")
	return cmd
}

// lockIsNoInput refuses, before anything is written, a lock that is one
// of the files the agents were read from, by any name or link: a lock
// that does not parse is refused too, but only as it is read, and a file
// that happens to parse as a lock would be overwritten.
func lockIsNoInput(e cli.Env, what, lockPath string, bs []built) error {
	var ins []userfile.Named
	for _, b := range bs {
		for _, f := range b.inst.Files {
			ins = append(ins, userfile.Named{What: "the agent's file", Path: f, Shown: relPath(f, e.Dir)})
		}
	}
	if err := userfile.CheckOutputs([]userfile.Named{{What: what, Path: lockPath, Shown: relPath(lockPath, e.Dir)}}, ins); err != nil {
		return cli.UsageError("%v", err)
	}
	return nil
}

func printDigests(e cli.Env, bs []built, asJSON bool) error {
	enc := json.NewEncoder(e.Stdout)
	printed := map[string]bool{}
	for _, b := range bs {
		if asJSON {
			err := enc.Encode(map[string]string{
				"agent":    b.plan.Agent.Name,
				"source":   relPath(b.inst.Source, e.Dir),
				"contract": string(b.plan.Digests.Contract),
				"plan":     string(b.plan.Digests.Plan),
			})
			if err != nil {
				return err
			}
			continue
		}
		line := fmt.Sprintf("%s %s %s\n", b.plan.Agent.Name, b.plan.Digests.Contract, b.plan.Digests.Plan)
		// A manifest and the plan compiled from it are one agent, one
		// line; JSON names each source.
		if !printed[line] {
			printed[line] = true
			fmt.Fprint(e.Stdout, line)
		}
	}
	return nil
}

func relPath(p, dir string) string {
	if rel, err := filepath.Rel(dir, p); err == nil && filepath.IsLocal(rel) {
		return rel
	}
	return p
}

// readLock reads a lock file; a missing one is empty when it is about to
// be written, and an error when it is to be checked. One found in the
// project, not named by --lock, must lie beneath the project's root, its
// links followed: a pull request's link to a file of the machine checking
// it would have a line of that file quoted.
func readLock(path, name string, missingOK, found bool) (*digest.Lock, error) {
	var data []byte
	var err error
	if found {
		root := path
		if abs, aerr := filepath.Abs(path); aerr == nil {
			root = project.Root(filepath.Dir(abs))
		}
		data, err = userfile.ReadBeneath(root, path, plan.MaxLockBytes, "a lock file")
	} else {
		data, err = userfile.Read(path, plan.MaxLockBytes, "a lock file")
	}
	if errors.Is(err, fs.ErrNotExist) {
		if missingOK {
			return &digest.Lock{Entries: map[string]digest.Entry{}}, nil
		}
		return nil, fmt.Errorf("no lock file %s: record the digests first with agentc digest --write", path)
	}
	if err != nil {
		return nil, userfile.Rename(err, name)
	}
	return digest.ParseLock(name, data)
}

// checked is what --check says of one agent: with --json, one object a
// line, in this shape (docs/digests.md).
type checked struct {
	Agent string `json:"agent"`
	// Source is the file or directory the agent was read from, relative
	// to the working directory; none for a removed agent.
	Source string `json:"source,omitempty"`
	// Status is "moved" (a digest differs from the lock's), "added" (the
	// lock lacks the agent) or "removed" (the lock holds an agent found
	// nowhere in the tree).
	Status string        `json:"status"`
	Moved  []checkedMove `json:"moved,omitempty"`
	// Findings classify a moved contract, an added or a removed agent,
	// as agentc diff --json prints them.
	Findings []contractdiff.Finding `json:"findings,omitempty"`
	// Verdict is the worst class of the findings; none when no contract
	// change was classified (the plan alone moved, or the lock does not
	// hold the old contract: then Unclassified is true).
	Verdict      contractdiff.Class `json:"verdict,omitempty"`
	Unclassified bool               `json:"unclassified,omitempty"`
	// Fails says whether the agent fails the check (see --fail-on).
	Fails bool `json:"fails"`
}

type checkedMove struct {
	Digest string        `json:"digest"` // "contract" or "plan"
	Lock   digest.Digest `json:"lock"`
	Now    digest.Digest `json:"now"`
}

// checkLock compares the agents with the lock: each moved digest is
// named, and a moved contract whose old version the lock holds is
// classified by contractdiff; an agent the lock lacks is added, one the
// lock holds that is found nowhere (see removedAgents) removed. least is
// the rank of the least class that fails the check (--fail-on), or -1
// when any move fails it.
func checkLock(e cli.Env, lock *digest.Lock, lockPath string, entries map[string]digest.Entry, agents map[string]*built, least int, asJSON bool) error {
	lockName := relPath(lockPath, e.Dir)
	var out []checked
	silenced := silenceCount{}
	for _, name := range sortedNames(entries) {
		c := checked{Agent: name, Source: relPath(agents[name].inst.Source, e.Dir)}
		m, ok := lock.Compare(entries[name])
		if !ok {
			c.Status, c.Verdict = "added", contractdiff.Compatible
			c.Findings, _ = contractdiff.Compare(nil, &agents[name].plan.Agent)
			c.Fails = least < 0 || least <= classRank[contractdiff.Compatible]
			out = append(out, c)
			continue
		}
		if len(m) == 0 {
			continue
		}
		c.Status = "moved"
		for _, mv := range m {
			c.Moved = append(c.Moved, checkedMove{mv.Kind, mv.Locked, mv.Actual})
		}
		c.Fails = least < 0
		if m[0].Kind != digest.Contract.Name {
			out = append(out, c) // the plan alone: behaviour, not the contract
			continue
		}
		data, held := lock.Contract(m[0].Locked)
		if !held {
			c.Unclassified, c.Fails = true, true
			out = append(out, c)
			continue
		}
		old, err := plan.ContractAgent(data)
		if err != nil {
			return fmt.Errorf("%s: contract %s: %w", lockName, m[0].Locked, err)
		}
		fs, err := contractdiff.Compare(old, &agents[name].plan.Agent)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if fs, err = silenced.filter(e, fs, agents[name].inst.Files); err != nil {
			return err
		}
		c.Findings, c.Verdict = fs, contractdiff.Compatible
		for _, f := range fs {
			if classRank[f.Class] > classRank[c.Verdict] {
				c.Verdict = f.Class
			}
		}
		if least >= 0 && slices.ContainsFunc(fs, func(f contractdiff.Finding) bool { return failRank(f) >= least }) {
			c.Fails = true
		}
		out = append(out, c)
	}
	removed, err := removedAgents(e, lock, lockPath, entries, agents)
	if err != nil {
		return err
	}
	for _, name := range removed {
		c := checked{Agent: name, Status: "removed", Verdict: contractdiff.Breaking}
		c.Findings, _ = contractdiff.Compare(&plan.Agent{Name: name}, nil)
		c.Fails = least < 0 || least <= classRank[contractdiff.Breaking]
		out = append(out, c)
	}
	slices.SortStableFunc(out, func(a, b checked) int { return strings.Compare(a.Agent, b.Agent) })
	silenced.report(e)
	failed := false
	enc := json.NewEncoder(e.Stdout)
	for _, c := range out {
		failed = failed || c.Fails
		if asJSON {
			if err := enc.Encode(c); err != nil {
				return err
			}
			continue
		}
		printChecked(e, c, lockName)
	}
	if failed {
		return &cli.ExitError{Code: cli.ExitFindings}
	}
	return nil
}

// printChecked prints what --check says of one agent as text.
func printChecked(e cli.Env, c checked, lockName string) {
	switch c.Status {
	case "added":
		fmt.Fprintf(e.Stdout, "%s: not in %s\n", c.Agent, lockName)
		fmt.Fprintf(e.Stdout, "%s: agentc digest --write adds it once it is meant\n", c.Agent)
		return
	case "removed":
		fmt.Fprintf(e.Stdout, "%s: in %s, but no agent of that name was found\n", c.Agent, lockName)
	default:
		ms := make(digest.Moves, len(c.Moved))
		for i, m := range c.Moved {
			ms[i] = digest.Moved{Kind: m.Digest, Locked: m.Lock, Actual: m.Now}
		}
		fmt.Fprintf(e.Stdout, "%s: %s\n", c.Agent, ms)
	}
	if c.Unclassified {
		fmt.Fprintf(e.Stdout, "%s: the lock does not hold the old contract %s, so the change is not classified (digests compared only); agentc digest --write records the contracts\n", c.Agent, c.Moved[0].Lock)
		return
	}
	if c.Verdict == "" {
		if c.Status != "removed" {
			// The plan alone moved: what drives the agent changed, its
			// contract did not.
			fmt.Fprintf(e.Stdout, "%s: its contract did not move, so its consumers are unaffected, but it may behave otherwise; agentc digest --write records the change once it is meant\n", c.Agent)
		}
		return
	}
	for _, f := range c.Findings {
		fmt.Fprintf(e.Stdout, "  %s\n", findingLine(f))
	}
	if c.Status == "removed" {
		fmt.Fprintf(e.Stdout, "%s: %s\n", c.Agent, removedVerdict)
		return
	}
	fmt.Fprintf(e.Stdout, "%s: %s\n", c.Agent, verdicts[c.Verdict])
}

// removedVerdict says what a removed agent means for the lock.
const removedVerdict = "breaking: its callers and consumers may fail; agentc digest --write drops its line once the removal is meant"

// removedAgents returns, sorted, the agents the lock holds that are not
// among those given and that no manifest or plan of the lock's tree
// defines: deleted, or renamed. The tree is the lock's directory and
// every directory below it (as DIR/... expands), when the lock lies in
// the working directory or above it; else, for a lock kept elsewhere
// (--lock), the working directory's project (its root, or the working
// directory when it is in none). A check given every agent of the tree
// (./... from the root) reads nothing more; otherwise the rest of the
// tree is loaded, for the agents' names only. A manifest there whose name
// cannot be read (it does not parse) defines none.
func removedAgents(e cli.Env, lock *digest.Lock, lockPath string, entries map[string]digest.Entry, agents map[string]*built) ([]string, error) {
	var missing []string
	for name := range lock.Entries {
		if _, ok := entries[name]; !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	root := treeOf(e, lockPath)
	given := map[string]bool{}
	for _, b := range agents {
		for _, f := range b.inst.Files {
			if abs, err := filepath.Abs(f); err == nil {
				given[abs] = true
			}
		}
	}
	skip := func(_ string, files []string) bool {
		for _, f := range files {
			if abs, err := filepath.Abs(f); err != nil || !given[abs] {
				return false
			}
		}
		return true
	}
	found := map[string]bool{}
	l := manifest.NewLoader()
	err := l.EachExcept([]string{filepath.Join(root, "...")}, skip, func(inst *manifest.Instance) {
		if p, ok, err := readPlan(inst); ok {
			if err == nil {
				found[p.Agent.Name] = true
			}
			return
		}
		if inst.Manifest != nil {
			found[inst.Manifest.Name] = true
			return
		}
		if !inst.Value.Exists() {
			return
		}
		if n, err := inst.Value.LookupPath(cue.ParsePath("name")).String(); err == nil {
			found[n] = true
		}
	})
	var ae *manifest.ArgError
	if err != nil && !errors.As(err, &ae) {
		return nil, err
	}
	missing = slices.DeleteFunc(missing, func(n string) bool { return found[n] })
	slices.Sort(missing)
	return missing, nil
}

// treeOf returns the directory whose tree a lock governs (see
// removedAgents).
func treeOf(e cli.Env, lockPath string) string {
	dir, _ := filepath.Abs(filepath.Dir(lockPath))
	wd, _ := filepath.Abs(e.Dir)
	if rel, err := filepath.Rel(dir, wd); err == nil && filepath.IsLocal(rel) {
		return dir
	}
	dirs := project.Dirs(wd)
	if root := dirs[len(dirs)-1]; project.IsRoot(root) {
		return root
	}
	return wd
}

// verdicts say, by the worst class of its findings, what an agent whose
// contract moved means for the lock.
var verdicts = map[contractdiff.Class]string{
	contractdiff.Compatible: "compatible: update the lock with agentc digest --write",
	contractdiff.Undecided:  "undecided: review the undecided findings; agentc digest --write records the change",
	contractdiff.Breaking:   "breaking: consumers or callers may fail; agentc digest --write records the change once it is meant",
}

// keepContracts leaves in the lock the contracts a later check or pin may
// diff against: each entry's (the agents given, as they are now; the
// others', where the lock held them), and each one a compatible_with pin
// of the agents given, or of the agents they call, names (where the lock
// held it, or the called agent has it now). Others are dropped.
func keepContracts(lock *digest.Lock, bs []built) error {
	old := lock.Contracts
	lock.Contracts = map[digest.Digest][]byte{}
	keep := func(d digest.Digest) {
		if c, ok := old[d]; ok {
			lock.Contracts[d] = c
		}
	}
	for _, en := range lock.Entries {
		keep(en.Contract)
	}
	var walk func(p *plan.Plan) error
	walk = func(p *plan.Plan) error {
		for name, t := range p.Agent.Capabilities.Tools {
			if t.CompatibleWith == "" {
				continue
			}
			keep(digest.Digest(t.CompatibleWith))
			if c, ok := p.Callees[name]; ok && c.Plan != nil && string(c.Contract) == t.CompatibleWith {
				if err := addContract(lock, c.Plan); err != nil {
					return err
				}
			}
		}
		for _, c := range p.Callees {
			if err := walk(c.Plan); err != nil {
				return err
			}
		}
		return nil
	}
	for _, b := range bs {
		if err := addContract(lock, b.plan); err != nil {
			return err
		}
		if err := walk(b.plan); err != nil {
			return err
		}
	}
	return nil
}

// addContract records the contract of a plan's agent in the lock.
func addContract(lock *digest.Lock, p *plan.Plan) error {
	c, err := plan.ContractJSON(&p.Agent)
	if err != nil {
		return err
	}
	if d := lock.AddContract(c); d != p.Digests.Contract {
		return fmt.Errorf("agent %q: its contract digest is %s, its recorded one %s", p.Agent.Name, d, p.Digests.Contract)
	}
	return nil
}

func sortedNames(m map[string]digest.Entry) []string { return slices.Sorted(maps.Keys(m)) }

// findLock returns the lock file for a working directory: the nearest
// agentc.sum in its project (package internal/leaf/project), else agentc.sum
// at the project root, else in the directory itself.
func findLock(dir string) string {
	dirs := project.Dirs(dir)
	if path := digest.FindLock(dirs...); path != "" {
		return path
	}
	if root := dirs[len(dirs)-1]; project.IsRoot(root) {
		return filepath.Join(root, digest.LockFile)
	}
	return filepath.Join(dir, digest.LockFile)
}
