package compile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/token"
	cueyaml "cuelang.org/go/encoding/yaml"

	"agentc.dev/agentc/internal/leaf/project"
	"agentc.dev/agentc/internal/leaf/userfile"
	"agentc.dev/agentc/manifest"
	"agentc.dev/agentc/plan"
)

// Config is a project's choice of vet rules, read from the file
// agentc.yaml (manifest.ConfigFile) nearest an agent: in the agent's
// directory or one above it, up to the module root. Like buf's lint
// configuration, it can turn a rule off everywhere (except), leave paths
// unvetted (ignore), or turn a rule off for some paths (ignore_only):
//
//	vet:
//	  except: [SCHEMA_NUMBER]
//	  ignore: [drafts]
//	  ignore_only:
//	    BUDGET_UNBOUNDED: [agents/batch, agents/nightly.cue]
//
// Paths are relative to the file's directory; a directory covers every
// file below it. A rule with a Refusal cannot be silenced. The zero
// Config, and a nil one, silence nothing.
//
// Its diff section turns agentc diff's rules off the same way, by rule
// ID, everywhere (except) or for the agents of some paths (ignore_only):
//
//	diff:
//	  except: [OUTPUT_DESCRIPTION_CHANGED]
//	  ignore_only:
//	    ANNOTATION_CHANGED: [agents/triage.cue]
//
// Its rate_limits section paces agentc run's calls to a provider, or to
// one of its models, as --rate-limit does (which, like the environment,
// overrides it; package runtime/pace reads the limits):
//
//	rate_limits:
//	  openai:gpt-4o: 500rpm,30000tpm
//	  anthropic: 50rpm
type Config struct {
	// Path is the file the configuration was read from.
	Path       string
	dir        string              // absolute
	except     map[string]bool     // by code
	ignore     []string            // relative to dir, cleaned
	ignoreOnly map[string][]string // by code: paths relative to dir, cleaned

	diffExcept     map[string]bool     // by diff rule ID
	diffIgnoreOnly map[string][]string // by diff rule ID: paths as ignoreOnly's
	// diffRules is where each diff rule ID is named, to check against
	// the differ's rules (see Compiler.DiffRule).
	diffRules []namedRule
	name      string // the file, as the working directory sees it
	// RateLimits are the rate_limits section's entries, in order, as
	// written: agentc run reads them.
	RateLimits []RateLimit
}

// RateLimit is an entry of a configuration's rate_limits section: a
// provider, or PROVIDER:MODEL, and its limits as written, with the file,
// the line and column of the limits and the column of the key.
type RateLimit struct {
	Key, Value   string
	File         string
	Line, Column int
	KeyColumn    int
}

type namedRule struct {
	id, where string
	pos       token.Pos
}

// ConfigError is a problem in a configuration file, at a position in it.
type ConfigError struct {
	// File is named as the working directory sees it.
	File         string
	Line, Column int // zero when not known
	Msg          string
}

func (e *ConfigError) Error() string {
	switch {
	case e.Line == 0:
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	case e.Column == 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
}

// configErrorAt returns a ConfigError at pos, or about file as a whole
// when pos is not valid.
func configErrorAt(file string, pos token.Pos, msg string) *ConfigError {
	if !pos.IsValid() || pos.Line() == 0 {
		return &ConfigError{File: file, Msg: msg}
	}
	return &ConfigError{File: pos.Filename(), Line: pos.Line(), Column: pos.Column(), Msg: msg}
}

// configIn returns the configuration that applies to agents in dir (an
// absolute directory): the agentc.yaml of the nearest of project.Dirs(dir)
// that has one. nil means none. Answers are kept for every directory
// asked, and each file is read once.
func (cp *Compiler) configIn(dir string) (*Config, error) {
	if e, ok := cp.configs[dir]; ok {
		return e.cfg, e.err
	}
	var cfg *Config
	var err error
	for _, d := range project.Dirs(dir) {
		if cfg, err = cp.configAt(d); cfg != nil || err != nil {
			break
		}
	}
	cp.configs[dir] = configEntry{cfg, err}
	return cfg, err
}

// configAt returns the configuration file of dir itself, nil when it has
// none; read once.
func (cp *Compiler) configAt(dir string) (*Config, error) {
	key := filepath.Join(dir, manifest.ConfigFile)
	if e, ok := cp.configs[key]; ok {
		return e.cfg, e.err
	}
	cfg, err := readConfigIn(dir)
	if cfg != nil || err != nil {
		cp.noteRead(key)
	}
	if cfg != nil && err == nil && cp.DiffRules != nil {
		if err = cfg.CheckDiffRules(cp.DiffRules); err != nil {
			cfg = nil
		}
	}
	if cfg != nil && err == nil && cp.CheckRateLimit != nil {
		for _, r := range cfg.RateLimits {
			if ce := cp.CheckRateLimit(r); ce != nil {
				cfg, err = nil, ce
				break
			}
		}
	}
	cp.configs[key] = configEntry{cfg, err}
	return cfg, err
}

type configEntry struct {
	cfg *Config
	err error
}

// ConfigFor returns the configuration that applies to an agent read from
// files; standard input ("-") is an agent of the working directory. nil
// means none.
func (cp *Compiler) ConfigFor(files []string) (*Config, error) {
	name := "-"
	if len(files) > 0 {
		name = files[0]
	}
	dir := "."
	if name != "-" {
		dir = filepath.Dir(name)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	return cp.configIn(abs)
}

// readConfigIn reads dir's configuration file; nil when it has none. The
// file must lie beneath the project's root, its links followed: one that
// leads out (a pull request's link to a file of the machine checking it,
// which a finding would quote) is refused.
func readConfigIn(dir string) (*Config, error) {
	path := filepath.Join(dir, manifest.ConfigFile)
	root := project.Root(dir)
	data, err := userfile.ReadBeneath(root, path, plan.MaxConfigBytes, "a configuration file")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &ConfigError{File: displayName(path), Msg: userfile.Reason(err)}
	}
	return ParseConfig(path, data)
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// displayName names a file as the working directory sees it: relative
// when it lies below, absolute otherwise.
func displayName(path string) string {
	wd, err := os.Getwd()
	if err != nil {
		return path
	}
	if rel, err := filepath.Rel(wd, path); err == nil && filepath.IsLocal(rel) {
		return rel
	}
	return path
}

// ParseConfig reads a configuration file's content (YAML). path names the
// file; its directory is what the paths in it are relative to, and must
// hold every path named.
func ParseConfig(path string, data []byte) (*Config, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	name := displayName(abs)
	c := &Config{Path: abs, dir: filepath.Dir(abs), except: map[string]bool{}, ignoreOnly: map[string][]string{},
		diffExcept: map[string]bool{}, diffIgnoreOnly: map[string][]string{}, name: name}
	f, err := cueyaml.Extract(name, data)
	if err != nil {
		return nil, yamlError(name, err)
	}
	if len(f.Decls) == 0 {
		return c, nil // empty, or comments only
	}
	if e, ok := f.Decls[0].(*ast.EmbedDecl); ok && len(f.Decls) == 1 {
		// Documents come as a list of no position of its own, which a
		// list written in the file has.
		if l, ok := e.Expr.(*ast.ListLit); ok && !l.Pos().IsValid() && len(l.Elts) > 1 {
			return nil, configErrorAt(name, l.Elts[1].Pos(), fmt.Sprintf("the file holds %d YAML documents (separated by ---); want one", len(l.Elts)))
		}
	}
	if err := duplicateKey(name, f.Decls, ""); err != nil {
		return nil, err
	}
	v := cuecontext.New().BuildFile(f)
	fail := func(v cue.Value, format string, args ...any) error {
		return configErrorAt(name, v.Pos(), fmt.Sprintf(format, args...))
	}
	err = fields(v, "the file", []string{"vet", "diff", "rate_limits"}, fail, func(section string, vet cue.Value) error {
		switch section {
		case "diff":
			return c.parseDiff(vet, fail)
		case "rate_limits":
			return fields(vet, "rate_limits", nil, fail, func(key string, w cue.Value) error {
				s, err := w.String()
				if err != nil {
					what := map[cue.Kind]string{cue.StructKind: "a mapping", cue.ListKind: "a list", cue.IntKind: "a number", cue.FloatKind: "a number", cue.BoolKind: "a boolean", cue.NullKind: "null"}[w.Kind()]
					if what == "" {
						what = fmt.Sprint(w)
					}
					return fail(w, "rate_limits.%s: want a string of limits, as 500rpm,30000tpm, not %s", key, what)
				}
				r := RateLimit{Key: key, Value: s, File: name}
				pos := w.Pos()
				r.KeyColumn = pos.Column()
				src := w.Source()
				if f, ok := src.(*ast.Field); ok {
					src = f.Value
				}
				if lit, ok := src.(*ast.BasicLit); ok && lit.Pos().IsValid() {
					pos = lit.Pos() // the value's own, past the key
				}
				if pos.IsValid() {
					r.File, r.Line, r.Column = pos.Filename(), pos.Line(), pos.Column()
				}
				c.RateLimits = append(c.RateLimits, r)
				return nil
			})
		}
		return fields(vet, "vet", []string{"except", "ignore", "ignore_only"}, fail, func(key string, w cue.Value) error {
			switch key {
			case "except":
				return list(w, "vet.except", fail, func(e cue.Value, s string) error {
					if err := checkCode(e, s, "vet.except", fail); err != nil {
						return err
					}
					c.except[s] = true
					return nil
				})
			case "ignore":
				return list(w, "vet.ignore", fail, func(e cue.Value, s string) error {
					p, err := c.checkPath(e, s, "vet.ignore", fail)
					c.ignore = append(c.ignore, p)
					return err
				})
			default:
				return fields(w, "vet.ignore_only", nil, fail, func(code string, paths cue.Value) error {
					where := "vet.ignore_only." + code
					if err := checkCode(paths, code, "vet.ignore_only", fail); err != nil {
						return err
					}
					return list(paths, where, fail, func(e cue.Value, s string) error {
						p, err := c.checkPath(e, s, where, fail)
						c.ignoreOnly[code] = append(c.ignoreOnly[code], p)
						return err
					})
				})
			}
		})
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// parseDiff reads the diff section: rule IDs to turn off everywhere, or
// for paths. Whether agentc diff has such a rule is checked later (see
// CheckDiffRules): the differ is not this package's.
func (c *Config) parseDiff(v cue.Value, fail failFunc) error {
	rule := func(v cue.Value, id, where string) error {
		if !ruleForm.MatchString(id) {
			return fail(v, "%s: %q is not a rule ID (upper-case words joined by _)", where, id)
		}
		c.diffRules = append(c.diffRules, namedRule{id, where, v.Pos()})
		return nil
	}
	return fields(v, "diff", []string{"except", "ignore_only"}, fail, func(key string, w cue.Value) error {
		if key == "except" {
			return list(w, "diff.except", fail, func(e cue.Value, s string) error {
				c.diffExcept[s] = true
				return rule(e, s, "diff.except")
			})
		}
		return fields(w, "diff.ignore_only", nil, fail, func(id string, paths cue.Value) error {
			where := "diff.ignore_only." + id
			if err := rule(paths, id, "diff.ignore_only"); err != nil {
				return err
			}
			return list(paths, where, fail, func(e cue.Value, s string) error {
				p, err := c.checkPath(e, s, where, fail)
				c.diffIgnoreOnly[id] = append(c.diffIgnoreOnly[id], p)
				return err
			})
		})
	})
}

// ruleForm is the form of rule IDs and codes.
var ruleForm = regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$`)

// CheckDiffRules refuses a rule ID in the diff section that known, the
// differ's table, does not have, naming the nearest one it does.
func (c *Config) CheckDiffRules(known []string) error {
	if c == nil {
		return nil
	}
	for _, r := range c.diffRules {
		if slices.Contains(known, r.id) {
			continue
		}
		hint := ""
		if best := manifest.Closest(r.id, known); best != "" {
			hint = fmt.Sprintf(" (did you mean %s?)", best)
		}
		return configErrorAt(c.name, r.pos, fmt.Sprintf("%s: %q is not a rule agentc diff reports%s", r.where, r.id, hint))
	}
	return nil
}

// SilencesDiff reports whether the configuration turns off a finding of
// agentc diff's rule id about an agent read from files: the rule is
// excepted, or ignored for a path that covers one of them.
func (c *Config) SilencesDiff(id string, files []string) bool {
	if c == nil {
		return false
	}
	if c.diffExcept[id] {
		return true
	}
	return slices.ContainsFunc(files, func(f string) bool { return c.covers(c.diffIgnoreOnly[id], f) })
}

// duplicateKey finds a key written twice in one mapping, which YAML
// forbids and which would otherwise be merged, or refused with a message
// about values rather than keys.
func duplicateKey(name string, decls []ast.Decl, prefix string) error {
	seen := map[string]token.Pos{}
	for _, d := range decls {
		f, ok := d.(*ast.Field)
		if !ok {
			continue
		}
		key, _, err := ast.LabelName(f.Label)
		if err != nil {
			continue
		}
		path := key
		if prefix != "" {
			path = prefix + "." + key
		}
		if first, dup := seen[key]; dup {
			return configErrorAt(name, f.Pos(), fmt.Sprintf("%q is given twice (first on line %d): give each key once", path, first.Line()))
		}
		seen[key] = f.Pos()
		if sl, ok := f.Value.(*ast.StructLit); ok {
			if err := duplicateKey(name, sl.Elts, path); err != nil {
				return err
			}
		}
	}
	return nil
}

// yamlError positions an error of the YAML parser, which says
// "file:line: message" (or "file: message"), with no column.
func yamlError(name string, err error) *ConfigError {
	e := &ConfigError{File: name}
	msg := strings.TrimPrefix(err.Error(), name+":")
	if l, rest, ok := strings.Cut(msg, ":"); ok {
		if n, err := strconv.Atoi(l); err == nil {
			e.Line, msg = n, rest
		}
	}
	e.Msg = "not YAML: " + strings.TrimSpace(msg)
	return e
}

type failFunc func(v cue.Value, format string, args ...any) error

// fields calls fn for each field of a mapping, in order; keys, when not
// nil, are the fields allowed. A null value is an empty mapping.
func fields(v cue.Value, where string, keys []string, fail failFunc, fn func(key string, v cue.Value) error) error {
	if v.IsNull() {
		return nil
	}
	it, err := v.Fields()
	if err != nil || v.Kind() != cue.StructKind {
		return fail(v, "%s: want a mapping, not %v", where, v)
	}
	for it.Next() {
		key := it.Selector().Unquoted()
		if keys != nil && !slices.Contains(keys, key) {
			hint := ""
			if best := manifest.Closest(key, keys); best != "" {
				hint = fmt.Sprintf(" (did you mean %q?)", best)
			}
			return fail(it.Value(), "%s: unknown field %q%s; want %s", where, key, hint, strings.Join(keys, ", "))
		}
		if err := fn(key, it.Value()); err != nil {
			return err
		}
	}
	return nil
}

// list calls fn for each string of a sequence. A null value is empty.
func list(v cue.Value, where string, fail failFunc, fn func(e cue.Value, s string) error) error {
	if v.IsNull() {
		return nil
	}
	it, err := v.List()
	if err != nil {
		return fail(v, "%s: want a list, not %v", where, v)
	}
	for i := 0; it.Next(); i++ {
		s, err := it.Value().String()
		if err != nil {
			return fail(it.Value(), "%s[%d]: want a string, not %v", where, i, it.Value())
		}
		if err := fn(it.Value(), s); err != nil {
			return err
		}
	}
	return nil
}

// checkCode refuses a code vet does not report, and one that cannot be
// silenced.
func checkCode(v cue.Value, code, where string, fail failFunc) error {
	r, ok := RuleOf(code)
	if !ok {
		codes := make([]string, len(Rules))
		for i, r := range Rules {
			codes[i] = r.Code
		}
		hint := ""
		if best := manifest.Closest(code, codes); best != "" {
			hint = fmt.Sprintf(" (did you mean %s?)", best)
		}
		return fail(v, "%s: %q is not a code agentc vet reports%s", where, code, hint)
	}
	if r.Refusal != "" {
		return fail(v, "%s: %s cannot be silenced: %s", where, code, r.Refusal)
	}
	return nil
}

// checkPath refuses a path that is not relative, leaves the file's
// directory, or names nothing, and returns it cleaned.
func (c *Config) checkPath(v cue.Value, p, where string, fail failFunc) (string, error) {
	fp := filepath.Clean(filepath.FromSlash(p))
	switch {
	case p == "":
		return "", fail(v, "%s: an empty path", where)
	case filepath.IsAbs(fp) || strings.HasPrefix(p, "/"):
		return "", fail(v, "%s: %q is absolute; write it relative to the directory of %s", where, p, manifest.ConfigFile)
	case !filepath.IsLocal(fp) && fp != ".":
		return "", fail(v, "%s: %q leaves the directory of %s", where, p, manifest.ConfigFile)
	}
	if _, err := os.Stat(filepath.Join(c.dir, fp)); err != nil {
		return "", fail(v, "%s: %q: %v", where, p, unwrapPath(err))
	}
	return fp, nil
}

// covers reports whether one of paths is file or a directory above it.
func (c *Config) covers(paths []string, file string) bool {
	if file == "" || file == "-" || len(paths) == 0 {
		return false
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(c.dir, abs)
	if err != nil || !filepath.IsLocal(rel) {
		return false
	}
	for _, p := range paths {
		if p == "." || rel == p || strings.HasPrefix(rel, p+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// Ignores reports whether the configuration leaves an agent read from
// files unvetted: ignore covers every one of them.
func (c *Config) Ignores(files []string) bool {
	if c == nil || len(files) == 0 {
		return false
	}
	for _, f := range files {
		if !c.covers(c.ignore, f) {
			return false
		}
	}
	return true
}

// Silences reports whether the configuration turns a finding off: its
// rule is excepted, or ignored for a path that covers its file.
func (c *Config) Silences(d Diagnostic) bool {
	if c == nil {
		return false
	}
	if r, ok := RuleOf(d.Code); !ok || r.Refusal != "" {
		return false
	}
	return c.except[d.Code] || d.Pos.IsValid() && c.covers(c.ignoreOnly[d.Code], d.Pos.Filename())
}

// filter returns the findings the configuration leaves, and how many it
// silenced.
func (c *Config) filter(ds []Diagnostic) ([]Diagnostic, int) {
	if c == nil {
		return ds, 0
	}
	var kept []Diagnostic
	for _, d := range ds {
		if !c.Silences(d) {
			kept = append(kept, d)
		}
	}
	return kept, len(ds) - len(kept)
}
