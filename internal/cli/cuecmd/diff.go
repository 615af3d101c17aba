package cuecmd

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/token"

	"github.com/spf13/cobra"

	"agentc.dev/agentc/contractdiff"
	"agentc.dev/agentc/internal/cli"
	"agentc.dev/agentc/internal/leaf/jsonpointer"
	"agentc.dev/agentc/internal/leaf/textcut"
	"agentc.dev/agentc/internal/termtext"
	"agentc.dev/agentc/plan"
)

func newDiffCmd(e cli.Env) *cobra.Command {
	var (
		asJSON                  bool
		against, format, failOn string
	)
	cmd := &cobra.Command{
		Use:   "diff OLD NEW | diff --against REF [PATH]",
		Short: "Classify the changes between two versions of an agent's contract",
		Long: `Diff compares the contract of two versions of an agent, each a manifest or a
plan written by agentc compile, and prints one finding per change: where it is
(a JSON Pointer into the plan's agent), the rule that explains it, the old and
new value, and its class.

Where a side holds several agents (a directory, or dir/... as for vet), or both
are directories of one agent each, named differently, the agents are paired by
name: one only on the new side is added (AGENT_ADDED), one only on the old side
removed (AGENT_REMOVED, breaking), and each finding names its agent.

agentc.yaml's diff section turns rules off by ID (except, ignore_only), as its
vet section does vet's; silenced findings are counted on standard error.

With --against REF, the old version is PATH (the current directory by
default) as it is at the git revision REF of the repository PATH is in, and
the new version PATH as it is now. An agent that did not exist at REF is
reported as added.

The class follows the direction data flows. The output is produced by the
agent and read by consumers: a change that only narrows it is compatible, one
that widens it is breaking. The input is produced by callers: widening is
compatible, narrowing is breaking. A schema change is classified by the schema
inclusion engine, which proves compatibility, or names a value that shows the
break; where it can do neither (a changed pattern, say) the change is
undecided. Annotations (title, description, examples) are compatible, and
listed. See docs/diff.md for every rule.

--format chooses how findings are printed: text (the default), json (one
JSON object a line; --json is short for it) or github-actions (workflow
commands that annotate the new version's file on the line of the change:
breaking as an error, undecided as a warning, compatible as a notice).

--fail-on names the least class that fails the command: breaking (the
default), undecided (undecided or breaking) or compatible (any finding).

Exit codes: 0 no finding of the --fail-on class or above; 1 one, or an agent
that does not compile; 2 usage error (with --against: not a git repository,
no such revision; two agents of one name on one side; an agentc.yaml that does
not read).`,
		Example: `  agentc diff old/triage.cue triage.cue
  agentc diff --json triage.plan.json triage.cue
  agentc diff --against main triage.cue
  agentc diff v1/agents v2/agents
  agentc diff --against origin/main --format github-actions --fail-on undecided agents/triage`,
		Args: func(cmd *cobra.Command, args []string) error {
			if against != "" {
				if len(args) > 1 {
					return cli.UsageError("diff --against REF takes one path, the agent now; got %d", len(args))
				}
				return nil
			}
			return cobra.ExactArgs(2)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON {
				if cmd.Flags().Changed("format") && format != "json" {
					return cli.UsageError("--json is --format json; it excludes --format %s", format)
				}
				format = "json"
			}
			if !slices.Contains(diffFormats, format) {
				return cli.UsageError("--format %q: want one of %s", format, strings.Join(diffFormats, ", "))
			}
			least, ok := classRank[contractdiff.Class(failOn)]
			if !ok {
				return cli.UsageError("--fail-on %q: want one of breaking, undecided, compatible", failOn)
			}
			var olds, news []built
			var dirs bool // both sides are directories
			var err error
			if against != "" {
				path := "."
				if len(args) == 1 {
					path = args[0]
				}
				if news, err = diffAgents(e, path); err != nil {
					return err
				}
				if olds, err = revisionSide(e, against, path); err != nil {
					return err
				}
				dirs = isDir(e, path)
			} else {
				if olds, err = diffAgents(e, args[0]); err != nil {
					return err
				}
				if news, err = diffAgents(e, args[1]); err != nil {
					return err
				}
				dirs = isDir(e, args[0]) && isDir(e, args[1])
			}
			pairs, named, err := pairAgents(olds, news, dirs)
			if err != nil {
				return err
			}
			silenced := silenceCount{}
			failed := false
			for _, p := range pairs {
				fs, err := contractdiff.Compare(p.old.agent(), p.new.agent())
				if err != nil {
					return err
				}
				side := p.new
				if side == nil {
					side = p.old
				}
				if fs, err = silenced.filter(e, fs, side.inst.Files); err != nil {
					return err
				}
				agent := ""
				if named {
					agent = side.plan.Agent.Name
				}
				if err := printFindings(e, fs, format, p.new, agent); err != nil {
					return err
				}
				if slices.ContainsFunc(fs, func(f contractdiff.Finding) bool { return failRank(f) >= least }) {
					failed = true
				}
			}
			silenced.report(e)
			if failed {
				return &cli.ExitError{Code: cli.ExitFindings}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "how to print findings: "+strings.Join(diffFormats, ", "))
	cmd.Flags().BoolVar(&asJSON, "json", false, "print findings as JSON objects, one per line (--format json)")
	cmd.Flags().StringVar(&failOn, "fail-on", string(contractdiff.Breaking), "the least class of finding that exits 1: breaking, undecided or compatible")
	cmd.Flags().StringVar(&against, "against", "", "compare PATH with PATH as it is at this git revision")
	return cmd
}

// diffFormats are the ways diff prints its findings, by --format name.
var diffFormats = []string{"text", "json", "github-actions"}

// classRank orders the classes for --fail-on.
var classRank = map[contractdiff.Class]int{contractdiff.Compatible: 0, contractdiff.Undecided: 1, contractdiff.Breaking: 2}

// failRank is where a finding stands against --fail-on: its class's rank,
// but a change left unexamined (the comparison's work budget spent on the
// changes before it) ranks as breaking, which it may be. Whoever writes
// the new contract chooses what the budget is spent on: a pull request
// that added expensive changes to the input had its breaking output change
// left unexamined, a warning that passed the check.
func failRank(f contractdiff.Finding) int {
	if f.Unexamined {
		return classRank[contractdiff.Breaking]
	}
	return classRank[f.Class]
}

// diffAgents compiles, or reads, the agents at path: one, or, in a
// directory, each it holds.
func diffAgents(e cli.Env, path string) ([]built, error) {
	return buildAll(e, []string{path}, e.Stderr, true)
}

// isDir reports whether path names a directory (dir/... does).
func isDir(e cli.Env, path string) bool {
	if p, ok := strings.CutSuffix(filepath.ToSlash(path), "..."); ok && (p == "" || strings.HasSuffix(p, "/")) {
		return true
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(e.Dir, path)
	}
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// agentPair is an agent's old and new version; either may be nil (the
// agent added, or removed).
type agentPair struct{ old, new *built }

func (b *built) agent() *plan.Agent {
	if b == nil {
		return nil
	}
	return &b.plan.Agent
}

// pairAgents pairs the two sides' agents. One agent on each side (or
// none on the old, where --against found no path) is compared with the
// other whatever their names, unless both sides are directories and the
// names differ; otherwise agents are paired by name (named is true), and
// one on a side alone is added or removed.
func pairAgents(olds, news []built, dirs bool) (pairs []agentPair, named bool, err error) {
	if len(news) == 1 && len(olds) <= 1 {
		if len(olds) == 0 {
			return []agentPair{{nil, &news[0]}}, false, nil
		}
		if !dirs || olds[0].plan.Agent.Name == news[0].plan.Agent.Name {
			return []agentPair{{&olds[0], &news[0]}}, false, nil
		}
	}
	byName := map[string]*agentPair{}
	var names []string
	for i, side := range [][]built{olds, news} {
		for j := range side {
			b := &side[j]
			name := b.plan.Agent.Name
			p := byName[name]
			if p == nil {
				p = &agentPair{}
				byName[name] = p
				names = append(names, name)
			}
			slot := &p.old
			if i == 1 {
				slot = &p.new
			}
			if *slot != nil {
				// A manifest and the plan compiled from it are one agent.
				if (*slot).plan.Digests == b.plan.Digests {
					continue
				}
				return nil, false, cli.UsageError("two agents are named %q (%s and %s); diff pairs agents by name", name, (*slot).inst.Source, b.inst.Source)
			}
			*slot = b
		}
	}
	slices.Sort(names)
	for _, n := range names {
		pairs = append(pairs, *byName[n])
	}
	return pairs, true, nil
}

// silenceCount counts the findings each agentc.yaml silenced.
type silenceCount map[string]int

// filter leaves out the findings the agentc.yaml that applies to an agent
// read from files turns off (its diff section), and counts them.
func (sc silenceCount) filter(e cli.Env, fs []contractdiff.Finding, files []string) ([]contractdiff.Finding, error) {
	cfg, err := newCompiler(e).ConfigFor(files)
	if err != nil || cfg == nil {
		return fs, err
	}
	kept := slices.DeleteFunc(slices.Clone(fs), func(f contractdiff.Finding) bool { return cfg.SilencesDiff(f.Rule, files) })
	if n := len(fs) - len(kept); n > 0 {
		sc[cfg.Path] += n
	}
	return kept, nil
}

// report says on standard error how many findings each agentc.yaml
// silenced, as vet does.
func (sc silenceCount) report(e cli.Env) {
	for _, path := range slices.Sorted(maps.Keys(sc)) {
		n, s := sc[path], "s"
		if n == 1 {
			s = ""
		}
		fmt.Fprintf(e.Stderr, "agentc: %d finding%s silenced by %s\n", n, s, termtext.Escape(relPath(path, e.Dir)))
	}
}

// printFindings prints the findings in a format of diffFormats; new is
// the side whose files a github-actions annotation points at (nil for an
// agent removed). agent, when not "", names the agent of the findings,
// where diff compares several: a text line starts with it, a JSON object
// has it as "agent".
func printFindings(e cli.Env, fs []contractdiff.Finding, format string, new *built, agent string) error {
	enc := json.NewEncoder(e.Stdout)
	prefix := ""
	if agent != "" {
		prefix = agent + ": "
	}
	for _, f := range fs {
		var err error
		switch format {
		case "json":
			if agent == "" {
				err = enc.Encode(f)
			} else {
				// The finding's own members after the agent's: a struct
				// embedding Finding would take its MarshalJSON and lose
				// the agent.
				var name, body []byte
				if name, err = json.Marshal(agent); err == nil {
					if body, err = json.Marshal(f); err == nil {
						line := append([]byte(`{"agent":`), name...)
						if len(body) > 2 {
							line = append(append(line, ','), body[1:]...)
						} else {
							line = append(line, '}')
						}
						_, err = fmt.Fprintf(e.Stdout, "%s\n", line)
					}
				}
			}
		case "github-actions":
			err = writeFindingAction(e, f, new, prefix)
		default:
			_, err = fmt.Fprintln(e.Stdout, prefix+findingLine(f))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// findingLine is a finding as the text format prints it: its text and
// its rule's ID.
func findingLine(f contractdiff.Finding) string {
	return fmt.Sprintf("%s [%s]", findingText(f), f.Rule)
}

// findingText says a finding in a line: where, its class, what the rule
// says, the old and new value, and the example.
func findingText(f contractdiff.Finding) string {
	r, _ := contractdiff.RuleOf(f.Rule)
	// A pointer names the manifest's own keys, which a pull request
	// chooses: escaped as a terminal must not act on them.
	ptr := termtext.Escape(f.Pointer)
	if ptr == "" {
		ptr = "(root)" // the whole agent
	}
	line := fmt.Sprintf("%s: %s: %s", ptr, f.Class, r.Doc)
	if f.HasOld || f.HasNew {
		line += fmt.Sprintf(": %s -> %s", shown(f.Old, f.HasOld), shown(f.New, f.HasNew))
	}
	if f.HasExample {
		line += fmt.Sprintf(" (for instance %s)", clipped(shown(f.Example, true), maxShownExample))
	}
	if f.Unexamined {
		line += " (not examined: the comparison reached a bound on its work)"
	}
	return line
}

// classCommands are the GitHub Actions workflow commands that annotate
// a file with a finding of each class.
var classCommands = map[contractdiff.Class]string{contractdiff.Breaking: "error", contractdiff.Undecided: "warning", contractdiff.Compatible: "notice"}

// writeFindingAction prints a finding as vet's github-actions format
// does: ::error file=F,line=L,col=C,title=RULE::message, at the place in
// the new version's files that holds the changed value, or the nearest
// value around it written there. The file's name, which a pull request
// chooses, is escaped as text is (termtext), as vet's are.
func writeFindingAction(e cli.Env, f contractdiff.Finding, new *built, prefix string) error {
	var props []string
	if file, line, col := findingPos(e, f.Pointer, new); file != "" {
		props = append(props, "file="+escapeProperty(termtext.Escape(filepath.ToSlash(file))))
		if line > 0 {
			props = append(props, "line="+strconv.Itoa(line), "col="+strconv.Itoa(col))
		}
	}
	props = append(props, "title="+escapeProperty(f.Rule))
	_, err := fmt.Fprintf(e.Stdout, "::%s %s::%s\n", classCommands[f.Class], strings.Join(props, ","), escapeData(termtext.Lines(prefix+findingText(f))))
	return err
}

// findingPos is where the manifest of b wrote the value at ptr, a pointer
// into its agent: the value itself, or where it is gone or was not
// written (a default), the nearest value around it that was. In a plan
// file, the agent is its member "agent".
func findingPos(e cli.Env, ptr string, b *built) (file string, line, col int) {
	if b == nil || b.inst == nil || len(b.inst.Files) == 0 || b.inst.Files[0] == "-" {
		return "", 0, 0
	}
	file = b.inst.Files[0]
	v := b.inst.Value
	if b.isPlan {
		v = v.LookupPath(cue.MakePath(cue.Str("agent")))
	}
	var pos token.Pos
	if v.Exists() {
		var toks []string
		if ptr != "" {
			toks = strings.Split(ptr[1:], "/")
		}
		for _, tok := range toks {
			tok = jsonpointer.Unescape(tok)
			var next cue.Value
			if v.IncompleteKind() == cue.ListKind {
				i, err := strconv.Atoi(tok)
				if err != nil {
					break
				}
				next = v.LookupPath(cue.MakePath(cue.Index(i)))
			} else {
				next = v.LookupPath(cue.MakePath(cue.Str(tok)))
			}
			if !next.Exists() {
				break
			}
			v = next
			if p := v.Pos(); p.IsValid() {
				pos = p
			}
		}
	}
	if pos.IsValid() {
		file, line, col = pos.Filename(), pos.Line(), pos.Column()
	}
	if rel, err := filepath.Rel(e.Dir, file); err == nil && filepath.IsAbs(file) && filepath.IsLocal(rel) {
		file = rel
	}
	return file, line, col
}

// maxShownExample is the most of an example a line of text shows, in
// bytes; --json carries it whole.
const maxShownExample = 300

// clipped cuts s to at most max bytes, on a rune boundary, saying how
// long it was.
func clipped(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return fmt.Sprintf("%s… (%d bytes in all; --json shows it whole)", textcut.Prefix(s, max), len(s))
}

// shown writes a value of a finding as JSON (null as null), escaped as a
// terminal must not act on it (a pull request chooses its enum members and
// the example holds them: a right-to-left override turned a line round);
// an absent one as "none".
func shown(v any, present bool) string {
	if !present {
		return "none"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return termtext.Escape(fmt.Sprint(v))
	}
	return termtext.Escape(string(b))
}
