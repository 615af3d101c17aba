package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/load"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"
	cuejson "cuelang.org/go/encoding/json"
	cueyaml "cuelang.org/go/encoding/yaml"

	"agentc.dev/agentc/internal/leaf/project"
	"agentc.dev/agentc/internal/leaf/userfile"
	"agentc.dev/agentc/plan"
)

// Instance is one agent as loaded: a CUE file, a CUE package, a JSON or YAML
// file, or standard input.
type Instance struct {
	// Source names where the agent came from, as the caller spelled it: a
	// file, a directory (for a package) or "-" for standard input.
	Source string
	// Files are the files the agent was read from.
	Files []string
	// Value is the manifest as written, before unification with #Manifest.
	// It does not exist when the files could not be parsed.
	Value cue.Value
	// Unified is Value unified with #Manifest: defaults applied.
	Unified cue.Value
	// Manifest is the decoded agent; nil when Errors is not empty.
	Manifest *Manifest
	// Errors are the problems that kept the manifest from loading.
	Errors []*Error
	// NotAgent says a file or package found by expanding a directory is
	// not an agent (see IsAgent): it has no Errors and is skipped.
	NotAgent bool
	// Tests are the manifest's test cases, by name, decoded apart from
	// Manifest: their constraints are CUE as written, not data.
	// ConstraintSources says where each constraint, a test's or a
	// tool's approve_if, was written, by manifest path (see decodeTests
	// and decodeApprovals).
	Tests             map[string]plan.Test
	ConstraintSources map[string]token.Pos

	// refused says the files were refused before a value was built (a
	// link out of the module, an @extern): found by expanding a
	// directory, they are judged an agent by what they declare.
	refused bool
}

// agentFields are the manifest's required top-level fields; a value that
// declares two of them is an agent, even one that misses the third.
var agentFields = []cue.Path{cue.MakePath(cue.Str("name")), cue.MakePath(cue.Str("model")), cue.MakePath(cue.Str("instructions"))}

// IsAgent says whether a loaded value is meant as an agent manifest: it
// declares at least two of the manifest's required top-level fields (name,
// model, instructions). Files and packages found by expanding a directory
// that are not, such as CUE packages of definitions, other configuration
// or compiled plans (which digest reads as plans), are skipped; a path
// named on its own is always checked.
func IsAgent(v cue.Value) bool {
	if !v.Exists() {
		return true // it did not parse: report that
	}
	n := 0
	for _, f := range agentFields {
		if v.LookupPath(f).Exists() {
			n++
		}
	}
	return n >= 2
}

// declaresAgent says whether CUE files, as written, declare at least two
// of the manifest's required top-level fields, as IsAgent asks of a
// value: for files whose value did not load. A file that does not read or
// parse declares nothing here (its load said what is wrong).
func declaresAgent(files []string) bool {
	seen := map[string]bool{}
	for _, name := range files {
		if filepath.Ext(name) != ".cue" {
			continue
		}
		data, err := userfile.Read(name, plan.MaxManifestBytes, "a manifest")
		if err != nil || tooDeep(name, data) != nil {
			continue
		}
		f, err := parser.ParseFile(name, data)
		if err != nil {
			continue
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.Field)
			if !ok {
				continue
			}
			if label, _, err := ast.LabelName(fd.Label); err == nil {
				seen[label] = true
			}
		}
	}
	n := 0
	for _, f := range agentFields {
		if seen[f.Selectors()[0].Unquoted()] {
			n++
		}
	}
	return n >= 2
}

// onlySyntax says whether every error is one of reading or parsing.
func onlySyntax(errs []*Error) bool {
	for _, e := range errs {
		if e.Code != CodeSyntax {
			return false
		}
	}
	return true
}

// agentKey is one of the manifest's required top-level fields written as
// a key, in CUE, JSON or YAML, quoted or not, at any depth.
var agentKey = regexp.MustCompile(`(?:^|[^\w$-])["']?(name|model|instructions)["']?[?!]?\s*:`)

// mentionsAgent says whether the text of files that did not parse names at
// least two of the manifest's required fields as keys anywhere. Every file
// that declares two of them at its top level does, so no agent is passed
// over that declaresAgent would keep; a file that does not read may be one.
func mentionsAgent(files []string) bool {
	seen := map[string]bool{}
	for _, name := range files {
		data, err := userfile.Read(name, plan.MaxManifestBytes, "a manifest")
		if err != nil {
			return true
		}
		for _, m := range agentKey.FindAllSubmatch(data, -1) {
			seen[string(m[1])] = true
		}
	}
	return len(seen) >= 2
}

// Loader loads manifests. One Loader may load any number of manifests; it
// is not safe for concurrent use.
type Loader struct {
	ctx    *cue.Context
	schema cue.Value
	top    cue.Value       // _, to instantiate pattern and required fields of the schema
	built  int             // agents built in ctx
	module map[string]bool // whether a directory lies in a CUE module, by directory
	// Stdin is read for the path "-"; nil means os.Stdin.
	Stdin io.Reader
	// EvalTimeout bounds the time one agent's loading may take, CUE's
	// evaluation included; 0 means DefaultEvalTimeout and a negative
	// value no bound. An agent past it is reported as CodeTooComplex.
	EvalTimeout time.Duration
	// EvalMemory bounds the Go heap, in bytes, while an agent is loaded;
	// 0 means DefaultEvalMemory. It applies only with a time bound.
	EvalMemory uint64
	abandoned  int // evaluations given up on, still running
	// abandonedSource is the first agent given up on, which later agents
	// are not loaded for.
	abandonedSource string
}

// agentsPerContext is how many agents the loader builds in one CUE context
// before it starts a fresh one. A cue.Context keeps every instance built in
// it for as long as it lives, so one context for a whole directory would
// hold every agent to the end: memory would grow with the number of
// manifests. A fresh context lets the agents of the last one go (those a
// caller still holds keep theirs) and costs compiling #Manifest again,
// under a millisecond, shared by this many agents.
const agentsPerContext = 64

// NewLoader returns a Loader; it compiles the embedded #Manifest schema
// when it first loads an agent (a compiler that only reads a project's
// configuration, as a run does, never needs it).
func NewLoader() *Loader { return &Loader{} }

// renew gives the loader a fresh CUE context with #Manifest compiled in
// it; values of different contexts are never combined.
func (l *Loader) renew() {
	ctx := cuecontext.New()
	// Parsed without its comments, which nothing reads, and parsed anew
	// for each context: a syntax tree built twice grows.
	f, err := parser.ParseFile(SchemaFile, SchemaSource)
	var v cue.Value
	if err == nil {
		v = ctx.BuildFile(f)
		err = v.Err()
	}
	if err != nil {
		// The schema is embedded and covered by tests; failing to compile it
		// is a build defect, not an input error.
		panic(fmt.Sprintf("agentc: embedded manifest schema does not compile: %v", err))
	}
	l.ctx, l.schema, l.top, l.built = ctx, v.LookupPath(cue.MakePath(cue.Def("Manifest"))), ctx.CompileString("_"), 0
}

// ArgError reports a path argument that names nothing loadable. Callers
// treat it as a usage error.
type ArgError struct {
	Arg string
	Err error
}

func (e *ArgError) Error() string { return fmt.Sprintf("%s: %v", e.Arg, e.Err) }
func (e *ArgError) Unwrap() error { return e.Err }

// ConfigFile is the name of a project's agentc configuration (read by
// package compile): it is never an agent, and expanding a directory
// leaves it out.
const ConfigFile = "agentc.yaml"

// manifestExts are the file name extensions a manifest may have.
var manifestExts = map[string]bool{".cue": true, ".json": true, ".yaml": true, ".yml": true}

// Load loads every agent the arguments name. An argument is a manifest file
// (.cue, .json, .yaml, .yml), "-" for CUE or JSON on standard input, a
// directory, or a directory followed by "/..." for it and every directory
// below it. In a directory, the .cue files of one package form one agent;
// every .cue file without a package clause and every JSON or YAML file is an
// agent of its own.
//
// Problems in a manifest are reported in its Instance's Errors; the error
// result is only for arguments that name nothing loadable (an *ArgError).
func (l *Loader) Load(args []string) ([]*Instance, error) {
	var out []*Instance
	err := l.Each(args, func(inst *Instance) { out = append(out, inst) })
	return out, err
}

// Each loads the agents the arguments name, as Load does, and hands each
// to fn as soon as it is loaded, so a caller that is done with one need
// not hold them all. Every argument is expanded before any agent is
// loaded: an argument that names nothing loadable fails the call first.
func (l *Loader) Each(args []string, fn func(*Instance)) error { return l.EachExcept(args, nil, fn) }

// EachExcept is Each without the agents skip says to leave out, given the
// agent's source and files before it is loaded: they are not loaded at
// all. A nil skip leaves out none.
func (l *Loader) EachExcept(args []string, skip func(source string, files []string) bool, fn func(*Instance)) error {
	var units []unit
	for _, arg := range args {
		us, err := l.expand(arg)
		if err != nil {
			return err
		}
		units = append(units, us...)
	}
	for _, u := range units {
		if skip != nil && skip(u.source, u.files) {
			continue
		}
		if u.outside != "" {
			fn(&Instance{Source: u.source, Files: u.files, Errors: []*Error{{Code: CodeOutside, Pos: filePos(u.outside),
				Msg: fmt.Sprintf("a symbolic link out of the project (to %s): not read; name the file itself to check it", u.target)}}})
			continue
		}
		if u.err != nil {
			fn(&Instance{Source: u.source, Files: u.files, Errors: []*Error{{Code: CodeSyntax, Pos: filePos(u.files[0]), Msg: unwrapPathError(u.err).Error()}}})
			continue
		}
		inst := l.bounded(u.source, u.files, func(w *Loader) *Instance { return w.loadUnit(u) })
		// A unit that failed to load is skipped only when its files do
		// not declare an agent either: one whose value the failure left
		// empty (a file attribute or a package clause CUE refuses) is
		// still an agent that does not load, not a file to pass over.
		if u.found && (inst.refused || !IsAgent(inst.Value)) && (len(inst.Errors) == 0 || !declaresAgent(u.files)) {
			inst.NotAgent, inst.Errors = true, nil
		}
		// One that did not even parse (a tsconfig.json with comments, a
		// Helm template) is judged by its text: a broken agent still
		// names its fields there.
		if u.found && !inst.refused && !inst.Value.Exists() && onlySyntax(inst.Errors) && !mentionsAgent(u.files) {
			inst.NotAgent, inst.Errors = true, nil
		}
		fn(inst)
	}
	return nil
}

// unit is one agent's files before loading.
type unit struct {
	source string
	files  []string
	stdin  bool
	found  bool // by expanding a directory, not named
	// outside, for a unit found by expanding a directory, is a file of
	// it that is a symbolic link leading out of the directory given, and
	// where it leads: not read.
	outside, target string
	// err is why its one file did not read as its package was looked for
	// (too large, not a regular file): not read again.
	err error
}

func (l *Loader) expand(arg string) ([]unit, error) {
	if arg == "-" {
		return []unit{{source: "-", files: []string{"-"}, stdin: true}}, nil
	}
	if dir, ok := strings.CutSuffix(arg, "/..."); ok || arg == "..." {
		if arg == "..." {
			dir = "."
		}
		return expandTree(arg, dir)
	}
	fi, err := os.Stat(arg)
	if err != nil {
		return nil, &ArgError{Arg: arg, Err: unwrapPathError(err)}
	}
	if fi.IsDir() {
		units, err := expandDir(arg, boundOf(arg))
		if err != nil {
			return nil, &ArgError{Arg: arg, Err: err}
		}
		for i := range units {
			units[i].found = true
		}
		if len(units) == 0 {
			return nil, &ArgError{Arg: arg, Err: fmt.Errorf("no manifest files (.cue, .json, .yaml) in directory")}
		}
		return units, nil
	}
	if !manifestExts[strings.ToLower(filepath.Ext(arg))] {
		return nil, &ArgError{Arg: arg, Err: fmt.Errorf("not a manifest file: want .cue, .json, .yaml or .yml")}
	}
	return []unit{{source: arg, files: []string{arg}}}, nil
}

func unwrapPathError(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	return err
}

func expandTree(arg, root string) ([]unit, error) {
	var units []unit
	bound := boundOf(root)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "cue.mod" || name == "testdata") {
			return filepath.SkipDir
		}
		us, err := expandDir(path, bound)
		for _, u := range us {
			u.found = true
			units = append(units, u)
		}
		return err
	})
	if err != nil {
		return nil, &ArgError{Arg: arg, Err: unwrapPathError(err)}
	}
	if len(units) == 0 {
		return nil, &ArgError{Arg: arg, Err: fmt.Errorf("no manifest files (.cue, .json, .yaml) below directory")}
	}
	return units, nil
}

// bound is what the links found by expanding a directory may lead into:
// its project's root resolved, else the directory given's; "" where it
// does not resolve.
type bound string

// boundOf returns the bound of the directory given, root: the project it
// is in (internal/leaf/project), or itself when it is in none.
func boundOf(root string) bound {
	b := root
	if abs, err := filepath.Abs(root); err == nil {
		if dirs := project.Dirs(abs); project.IsRoot(dirs[len(dirs)-1]) {
			b = dirs[len(dirs)-1]
		}
	}
	real, err := filepath.EvalSymlinks(b)
	if err == nil {
		real, err = filepath.Abs(real)
	}
	if err != nil {
		return ""
	}
	return bound(real)
}

// expandDir groups the manifest files of one directory into units. A
// file that is a symbolic link leading out of b (the project of the
// directory given, or that directory) marks its unit outside: a tree
// someone else wrote (a pull request) could otherwise have vet read, and
// quote, any file the user can.
func expandDir(dir string, b bound) ([]unit, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	outside := func(path string) string {
		abs, err := filepath.Abs(path)
		if err != nil || b == "" {
			return ""
		}
		t, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return "" // dangling: the load says it is missing
		}
		if rel, err := filepath.Rel(string(b), t); err == nil && filepath.IsLocal(rel) {
			return ""
		}
		if link, err := os.Readlink(abs); err == nil {
			return link // as written, which the person can find
		}
		return t
	}
	var units []unit
	pkgs := map[string]*unit{}
	var pkgOrder []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == ConfigFile {
			continue
		}
		ext := strings.ToLower(filepath.Ext(name))
		if !manifestExts[ext] {
			continue
		}
		path := filepath.Join(dir, name)
		target := ""
		if e.Type()&fs.ModeSymlink != 0 {
			target = outside(path)
		}
		if target != "" || ext != ".cue" {
			u := unit{source: path, files: []string{path}, target: target}
			if target != "" {
				u.outside = path
			}
			units = append(units, u)
			continue
		}
		pkg, err := packageName(path)
		if pkg == "" {
			units = append(units, unit{source: path, files: []string{path}, err: err})
			continue
		}
		u, ok := pkgs[pkg]
		if !ok {
			u = &unit{source: dir}
			pkgs[pkg] = u
			pkgOrder = append(pkgOrder, pkg)
		}
		u.files = append(u.files, path)
	}
	for _, p := range pkgOrder {
		u := *pkgs[p]
		if len(pkgOrder) > 1 {
			// Several packages share the directory: name each.
			u.source = dir + ":" + p
		}
		units = append(units, u)
	}
	sort.SliceStable(units, func(i, j int) bool { return units[i].source < units[j].source })
	return units, nil
}

// packageName returns the package clause of a CUE file, or "" when it has
// none or cannot be parsed far enough to tell (the full load reports why).
// The file is read as a manifest is, within its bound and from a regular
// file only (a 3 GB sparse file was read whole, and a FIFO waited on, to
// find a package clause); one that does not read is the error.
func packageName(path string) (string, error) {
	data, err := userfile.Read(path, plan.MaxManifestBytes, "a manifest")
	if err != nil {
		return "", err
	}
	f, err := parser.ParseFile(path, data, parser.PackageClauseOnly)
	if err != nil || f == nil {
		return "", nil
	}
	return f.PackageName(), nil
}

func (l *Loader) loadUnit(u unit) *Instance {
	if u.stdin {
		r := l.Stdin
		if r == nil {
			r = os.Stdin
		}
		data, err := userfile.ReadFrom(r, plan.MaxManifestBytes, "standard input", "a manifest")
		if err != nil {
			inst := &Instance{Source: "-", Files: []string{"-"}}
			inst.Errors = append(inst.Errors, &Error{Code: CodeSyntax, Pos: filePos("-"), Msg: fmt.Sprintf("reading standard input: %v", err)})
			return inst
		}
		return l.loadBytes("-", data)
	}
	if len(u.files) == 1 {
		ext := strings.ToLower(filepath.Ext(u.files[0]))
		if filepath.Ext(u.files[0]) == ".cue" {
			// One file that imports nothing outside the standard library,
			// outside any CUE module, needs no module or package
			// resolution: building it directly spares cue/load's work,
			// which a directory of manifests pays once a file. Positions
			// name it as cue/load would, by its absolute path.
			abs, err := filepath.Abs(u.files[0])
			if err == nil && !l.inModule(filepath.Dir(abs)) {
				if data, err := userfile.Read(abs, plan.MaxManifestBytes, "a manifest"); err == nil && selfContained(abs, data) {
					inst := l.loadBytes(abs, data)
					inst.Source, inst.Files = u.source, u.files
					return inst
				}
			}
		}
		if ext == ".json" || ext == ".yaml" || ext == ".yml" {
			data, err := userfile.Read(u.files[0], plan.MaxManifestBytes, "a manifest")
			if err != nil {
				inst := &Instance{Source: u.source, Files: u.files}
				inst.Errors = append(inst.Errors, &Error{Code: CodeSyntax, Pos: filePos(u.files[0]), Msg: unwrapPathError(err).Error()})
				return inst
			}
			inst := l.loadBytes(u.files[0], data)
			inst.Source = u.source
			return inst
		}
	}
	inst := &Instance{Source: u.source, Files: u.files}
	cfg, files, err := loadConfig(u.files)
	if err != nil {
		inst.Errors = append(inst.Errors, err)
		return inst
	}
	bis := load.Instances(files, cfg)
	fsys := cfg.FS.(*userfile.FS)
	var overlay map[string]load.Source
	if fsys.Refused() == nil {
		// Only the module CUE finds from the working directory, whose
		// root the FS holds the loader to, is loaded from the host.
		if root, ok := legacyModule(u.files[0]); ok && userfile.Resolve(root) == fsys.Within {
			var err *Error
			if overlay, err = legacyOverlay(fsys, root); err != nil {
				inst.Errors, inst.refused = append(inst.Errors, err), err.Code == CodeOutside
				return inst
			}
			bis = load.Instances(u.files, &load.Config{Overlay: overlay})
		}
	}
	if len(bis) != 1 {
		inst.Errors = append(inst.Errors, &Error{Code: CodeSyntax, Pos: filePos(u.files[0]), Msg: fmt.Sprintf("expected one CUE instance, found %d", len(bis))})
		return inst
	}
	if errs := checkLoaded(bis[0], fsys.Within, overlay); len(errs) > 0 {
		sortErrors(errs)
		inst.Errors, inst.refused = append(inst.Errors, errs...), true
		return inst
	}
	// A file refused fails the load, even where CUE's loader takes the
	// failure to read it for the file's absence (cue.mod/module.cue).
	refused := fsys.Refused()
	var deep *Error
	if errors.As(refused, &deep) {
		inst.Errors = append(inst.Errors, deep)
		return inst
	}
	code := CodeSyntax
	var oe *userfile.OutsideError
	if errors.As(refused, &oe) {
		code, inst.refused = CodeOutside, true
	}
	if refused != nil && (bis[0].Err == nil || !strings.Contains(bis[0].Err.Error(), refused.Error())) {
		inst.Errors = append(inst.Errors, &Error{Code: code, Pos: filePos(refusedPath(refused)), Msg: refused.Error()})
		return inst
	}
	if refused != nil {
		// CUE's own error says where the refused file was asked for (an
		// import); its code says why.
		for _, e := range errorsFrom(bis[0].Err, CodeSyntax) {
			if strings.Contains(e.Msg, refused.Error()) {
				e.Code = code
			}
			inst.Errors = append(inst.Errors, e)
		}
		return inst
	}
	l.buildInstance(inst, bis[0])
	if bis[0].Err != nil {
		if hint := elsewhereModule(u.files[0]); hint != "" {
			for _, e := range inst.Errors {
				if strings.HasPrefix(e.Msg, "import failed") {
					e.Msg += hint
				}
			}
		}
	}
	return inst
}

// elsewhereModule says, for a manifest whose imports failed, where its CUE
// module is when that is not the working directory's: CUE resolves
// imports from the working directory's module, so vet run from a
// repository's root fails on a manifest of a module below it, and CUE's
// own message ("no cue.mod/module.cue file") does not say why.
func elsewhereModule(file string) string {
	abs, err := filepath.Abs(file)
	if err != nil {
		return ""
	}
	mod, ok := moduleRoot(filepath.Dir(abs))
	if !ok {
		return ""
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	if at, ok := moduleRoot(wd); ok && userfile.Resolve(at) == userfile.Resolve(mod) {
		return ""
	}
	rel, err := filepath.Rel(wd, mod)
	if err != nil {
		rel = mod
	}
	return fmt.Sprintf(" (the manifest's CUE module is %s; imports resolve from the working directory's: run agentc from inside %s, as the cue command)", rel, rel)
}

// moduleRoot returns the root of the CUE module dir lies in, as CUE finds
// it: the nearest directory up holding cue.mod.
func moduleRoot(dir string) (string, bool) {
	for {
		if _, err := os.Stat(filepath.Join(dir, "cue.mod")); err == nil {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir || filepath.Base(parent) == "cue.mod" {
			return "", false
		}
		dir = parent
	}
}

// loadConfig returns the configuration under which CUE's loader loads the
// files named, and their names as it is to be given them. The loader
// reads every file it opens through a userfile.FS rooted at the host's
// root: the files named, read here first so that one that does not read
// is reported as before, and every file it finds on its own (the
// module's cue.mod/module.cue, the packages a manifest imports from the
// module or cue.mod/pkg), each a regular file within MaxManifestBytes and
// all together within MaxLoadBytes. The root is the host's, not the
// module's, so that every name the loader shows is the host path it
// would show reading the host itself.
func loadConfig(names []string) (*load.Config, []string, *Error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, nil, &Error{Code: CodeSyntax, Pos: filePos(names[0]), Msg: err.Error()}
	}
	fsys := &userfile.FS{Root: userfile.RootOf(wd), PerFile: plan.MaxManifestBytes, Total: plan.MaxLoadBytes, What: "a manifest", Files: map[string][]byte{}, Kept: map[string][]byte{}, Check: checkCUE}
	dir, ok := fsys.FSPath(wd)
	if !ok {
		return nil, nil, &Error{Code: CodeSyntax, Pos: filePos(names[0]), Msg: fmt.Sprintf("the working directory %s cannot be read through the loader", wd)}
	}
	fsys.Within = loadRoot(wd, names[0])
	files := make([]string, len(names))
	for i, f := range names {
		data, err := userfile.Read(f, plan.MaxManifestBytes, "a manifest")
		if err != nil {
			return nil, nil, &Error{Code: CodeSyntax, Pos: filePos(f), Msg: unwrapPathError(err).Error()}
		}
		if e := checkCUE(f, data); e != nil {
			return nil, nil, e.(*Error)
		}
		abs, err := filepath.Abs(f)
		if err == nil {
			files[i], ok = fsys.FSPath(abs)
		}
		if err != nil || !ok {
			return nil, nil, &Error{Code: CodeSyntax, Pos: filePos(f), Msg: fmt.Sprintf("%s is on another volume than the working directory: load it from there", f)}
		}
		fsys.Files[abs] = data
	}
	return &load.Config{FS: fsys, Dir: dir, FromFSPath: fsys.HostPath}, files, nil
}

// loadRoot returns the directory, its links resolved, whose files CUE's
// loader may read for an agent (userfile.FS.Within): the root of the CUE
// module it finds from the working directory (as CUE finds it: the
// nearest directory up holding cue.mod), else the directory of the
// agent's first file. Nothing the loader finds by itself (an imported
// package, a file it embeds, cue.mod/module.cue) is read from outside
// it, so a link in a pull request's module cannot have vet read a file
// of the machine that checks it.
func loadRoot(wd, file string) string {
	if root, ok := moduleRoot(wd); ok {
		return userfile.Resolve(root)
	}
	return userfile.Resolve(filepath.Dir(file))
}

// refusedPath is the path of the file a userfile.FS refused.
func refusedPath(err error) string {
	var nr *userfile.NotRegularError
	var tl *userfile.TooLargeError
	var be *userfile.BudgetError
	var oe *userfile.OutsideError
	switch {
	case errors.As(err, &oe):
		return oe.Name
	case errors.As(err, &nr):
		return nr.Path
	case errors.As(err, &tl):
		return tl.Name
	case errors.As(err, &be):
		return be.Name
	}
	return ""
}

// legacyDirs are the directories of cue.mod that hold packages by their
// import path, as CUE's modules did before registries.
var legacyDirs = []string{"pkg", "usr", "gen"}

// legacyModule returns the root of the CUE module a file lies in, when
// its cue.mod holds packages in legacyDirs. CUE v0.17.1 cannot load those
// from a Config.FS (it asks their file system for a host directory, which
// only the host's own has), so such a module is loaded from the host with
// an overlay of every file read within the bounds (see legacyOverlay).
func legacyModule(file string) (string, bool) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return "", false
	}
	for dir := filepath.Dir(abs); ; {
		if fi, err := os.Stat(filepath.Join(dir, "cue.mod")); err == nil && fi.IsDir() {
			for _, d := range legacyDirs {
				if fi, err := os.Stat(filepath.Join(dir, "cue.mod", d)); err == nil && fi.IsDir() {
					return dir, true
				}
			}
			return "", false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// legacyOverlay returns, for loading from the host, the contents of every
// file the load through fsys read (the files named, and the module's
// packages they import), of cue.mod/module.cue, and of each .cue file in
// the module's legacyDirs, each read through fsys and so within its
// bounds and within its root: the loader finds every file it reads in
// the overlay. A directory linked into them is walked where it leads
// inside the root, once; a link leading out of it fails the load.
func legacyOverlay(fsys *userfile.FS, root string) (map[string]load.Source, *Error) {
	fail := func(path string, err error) *Error {
		var deep *Error
		if errors.As(err, &deep) {
			return deep
		}
		code := CodeSyntax
		var oe *userfile.OutsideError
		if errors.As(err, &oe) {
			code = CodeOutside
		}
		return &Error{Code: code, Pos: filePos(path), Msg: unwrapPathError(err).Error()}
	}
	name := func(path string) (string, bool) {
		n, ok := fsys.FSPath(path)
		return strings.TrimPrefix(n, "/"), ok
	}
	read := func(path string) *Error {
		if n, ok := name(path); ok {
			if _, err := fsys.ReadFile(n); err != nil {
				return fail(path, err)
			}
		}
		return nil
	}
	if err := read(filepath.Join(root, "cue.mod", "module.cue")); err != nil {
		return nil, err
	}
	walked := map[string]bool{}
	var walk func(dir string) *Error
	walk = func(dir string) *Error {
		n, ok := name(dir)
		if real := userfile.Resolve(dir); !ok || walked[real] {
			return nil
		} else {
			walked[real] = true
		}
		entries, err := fsys.ReadDir(n)
		if err != nil {
			var oe *userfile.OutsideError
			if errors.As(err, &oe) {
				return fail(dir, err)
			}
			return nil // not there: nothing to read
		}
		for _, e := range entries {
			path := filepath.Join(dir, e.Name())
			isDir := e.IsDir()
			if e.Type()&fs.ModeSymlink != 0 {
				n, _ := name(path)
				fi, err := fsys.Stat(n)
				var oe *userfile.OutsideError
				if errors.As(err, &oe) {
					return fail(path, err)
				}
				isDir = err == nil && fi.IsDir()
			}
			var err *Error
			switch {
			case isDir:
				err = walk(path)
			case filepath.Ext(path) == ".cue":
				err = read(path)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	for _, d := range legacyDirs {
		if err := walk(filepath.Join(root, "cue.mod", d)); err != nil {
			return nil, err
		}
	}
	overlay := map[string]load.Source{}
	for path, data := range fsys.Files {
		overlay[path] = load.FromBytes(data)
	}
	for path, data := range fsys.Kept {
		overlay[path] = load.FromBytes(data)
	}
	return overlay, nil
}

// checkLoaded refuses, before an agent is built, what its files and the
// packages it imports would have CUE read or quote from outside them:
//
//   - a file-level @extern attribute. @extern(embed) turns on @embed,
//     which reads a file beside the package's (a link in a pull request
//     to /proc/self/environ, and the CI job's environment was quoted in
//     an error). A manifest needs none, and without @extern its file
//     CUE injects nothing, so refusing it in every file built refuses
//     every injection.
//   - a file that lies outside root, its links followed: one CUE's
//     loader read from the host by itself, past the overlay (a file of
//     the module's own packages only a vendored package imports). It
//     may not parse, and CUE's errors would quote it.
//
// Every instance reachable from b is checked, b's errors aside.
func checkLoaded(b *build.Instance, root string, overlay map[string]load.Source) []*Error {
	var out []*Error
	outside := func(name string) *Error {
		if _, ok := overlay[name]; ok || overlay == nil || root == "" || !filepath.IsAbs(name) {
			return nil
		}
		if rel, err := filepath.Rel(root, userfile.Resolve(name)); err == nil && filepath.IsLocal(rel) {
			return nil
		}
		return &Error{Code: CodeOutside, Pos: filePos(name), Msg: (&userfile.OutsideError{Root: root, Name: name, What: "a file CUE's loader found"}).Error()}
	}
	seen := map[*build.Instance]bool{}
	var check func(b *build.Instance)
	check = func(b *build.Instance) {
		if b == nil || seen[b] {
			return
		}
		seen[b] = true
		for _, f := range b.Files {
			if err := outside(f.Filename); err != nil {
				out = append(out, err)
				continue
			}
			out = append(out, externs(f)...)
		}
		for _, files := range [][]*build.File{b.OrphanedFiles, b.InvalidFiles, b.IgnoredFiles, b.UnknownFiles} {
			for _, f := range files {
				if err := outside(f.Filename); err != nil {
					out = append(out, err)
				}
			}
		}
		for _, imp := range b.Imports {
			check(imp)
		}
	}
	check(b)
	return out
}

// externs returns an error for each file-level @extern attribute of f
// (see checkLoaded).
func externs(f *ast.File) []*Error {
	var out []*Error
	for _, d := range f.Decls {
		if a, ok := d.(*ast.Attribute); ok && a.Name() == "extern" {
			out = append(out, &Error{Code: CodeSyntax, Pos: a.Pos(),
				Msg: fmt.Sprintf("%s: agentc does not let a manifest's CUE take values from outside its files (@extern, @embed): write the value in a .cue file", a.Text)})
		}
	}
	return out
}

func (l *Loader) buildInstance(inst *Instance, bi *build.Instance) {
	if bi.Err != nil {
		inst.Errors = append(inst.Errors, errorsFrom(bi.Err, CodeSyntax)...)
		return
	}
	l.finish(inst, l.ctx.BuildInstance(bi))
}

// LoadBytes loads one manifest held in memory. The name's extension picks
// the format (.json, .yaml and .yml; anything else is CUE, which also reads
// JSON); it also names the file in positions. Loading is bounded as
// Load's is (see Loader.EvalTimeout).
func (l *Loader) LoadBytes(name string, data []byte) *Instance {
	return l.bounded(name, []string{name}, func(w *Loader) *Instance { return w.loadBytes(name, data) })
}

func (l *Loader) loadBytes(name string, data []byte) *Instance {
	inst := &Instance{Source: name, Files: []string{name}}
	var v cue.Value
	switch strings.ToLower(filepath.Ext(name)) {
	case ".json":
		expr, err := cuejson.Extract(name, data)
		if err != nil {
			inst.Errors = append(inst.Errors, contentErrors(err, name, data)...)
			return inst
		}
		if st, ok := expr.(*ast.StructLit); ok {
			st.Elts = dropSchemaField(st.Elts)
		}
		v = l.ctx.BuildExpr(expr)
	case ".yaml", ".yml":
		f, err := cueyaml.Extract(name, data)
		if err != nil {
			inst.Errors = append(inst.Errors, contentErrors(err, name, data)...)
			return inst
		}
		f.Decls = dropSchemaField(f.Decls)
		v = l.ctx.BuildFile(f)
	default:
		if len(bytes.TrimSpace(data)) == 0 {
			inst.Errors = append(inst.Errors, &Error{Code: CodeSyntax, Pos: filePos(name), Msg: "empty manifest"})
			return inst
		}
		if e := tooDeep(name, data); e != nil {
			inst.Errors = append(inst.Errors, e)
			return inst
		}
		f, err := parser.ParseFile(name, data, parser.ParseComments)
		if err != nil {
			inst.Errors = append(inst.Errors, contentErrors(err, name, data)...)
			return inst
		}
		if errs := externs(f); len(errs) > 0 {
			inst.Errors, inst.refused = append(inst.Errors, errs...), true
			return inst
		}
		for imp := range f.ImportSpecs() {
			if p := importPath(imp); p != "" && strings.Contains(strings.SplitN(p, "/", 2)[0], ".") {
				inst.Errors = append(inst.Errors, &Error{Code: CodeSyntax, Pos: imp.Pos(), Msg: fmt.Sprintf("import %q: a manifest read from memory or standard input may import only the standard library; load it from a file", p)})
				return inst
			}
		}
		v = l.ctx.BuildFile(f)
	}
	l.finish(inst, v)
	return inst
}

// selfContained reports whether a CUE file can be built on its own just as
// cue/load would build it: it parses, holds valid UTF-8 and something
// besides white space, has no file-level attribute (a build constraint
// such as @if, or an @extern or @embed, which only cue/load honours), and
// imports only the standard library. Anything else goes through cue/load,
// which reports it.
func selfContained(name string, data []byte) bool {
	if !utf8.Valid(data) || len(bytes.TrimSpace(data)) == 0 {
		return false
	}
	f, err := parser.ParseFile(name, data, parser.ImportsOnly)
	if err != nil {
		return false
	}
	for _, d := range f.Decls {
		if _, ok := d.(*ast.Attribute); ok {
			return false
		}
	}
	for imp := range f.ImportSpecs() {
		if p := importPath(imp); p == "" || strings.Contains(strings.SplitN(p, "/", 2)[0], ".") {
			return false
		}
	}
	return true
}

// maxInteger is the largest integer a manifest may hold outside its JSON
// Schemas: the largest a double, and so canonical JSON, keeps exact.
const maxInteger = 1<<53 - 1

// bigIntegers reports the integers of a manifest, outside its JSON Schemas
// (vet checks numbers there), too large to count with: a budget of 10^21
// tokens is a mistake, and would not survive the plan's canonical JSON.
func bigIntegers(v cue.Value, path []cue.Selector) []*Error {
	if isSchemaPath(path) || isConstraintPath(path) {
		return nil
	}
	switch v.IncompleteKind() {
	case cue.IntKind:
		if n, err := v.Int64(); err != nil || n > maxInteger || n < -maxInteger {
			ps := pathString(path)
			return []*Error{{Pos: v.Pos(), Path: ps, Code: CodeType,
				Msg: fmt.Sprintf("%s: %v is too large (at most %d)", ps, v, int64(maxInteger))}}
		}
	case cue.StructKind:
		var out []*Error
		it, err := v.Fields()
		if err != nil {
			return nil
		}
		for it.Next() {
			out = append(out, bigIntegers(it.Value(), appendPath(path, it.Selector()))...)
		}
		return out
	case cue.ListKind:
		var out []*Error
		it, err := v.List()
		if err != nil {
			return nil
		}
		for i := 0; it.Next(); i++ {
			out = append(out, bigIntegers(it.Value(), appendPath(path, cue.Index(i)))...)
		}
		return out
	}
	return nil
}

// inModule reports whether a directory lies in a CUE module: it or one
// above it holds cue.mod. Answers are kept for the directories asked.
func (l *Loader) inModule(dir string) bool {
	if in, ok := l.module[dir]; ok {
		return in
	}
	in := false
	if fi, err := os.Stat(filepath.Join(dir, "cue.mod")); err == nil && fi.IsDir() {
		in = true
	} else if parent := filepath.Dir(dir); parent != dir {
		in = l.inModule(parent)
	}
	if l.module == nil {
		l.module = map[string]bool{}
	}
	l.module[dir] = in
	return in
}

func importPath(imp *ast.ImportSpec) string {
	if imp.Path == nil {
		return ""
	}
	return strings.Trim(imp.Path.Value, "\"")
}

// finish checks a built value against #Manifest and decodes it.
func (l *Loader) finish(inst *Instance, v cue.Value) {
	inst.Value = v
	if err := v.Err(); err != nil && !HasFields(v) {
		inst.Errors = append(inst.Errors, l.classify(v, err)...)
		return
	}
	if k := v.IncompleteKind(); k != cue.StructKind && v.Err() == nil {
		inst.Errors = append(inst.Errors, &Error{Code: CodeType, Pos: startPos(v, inst.Files), Msg: fmt.Sprintf("a manifest must be a struct of fields (an object in JSON, a mapping in YAML), not a %v", k)})
		return
	}
	u := l.schema.Unify(v)
	inst.Unified = u
	inst.Errors = append(inst.Errors, l.validate(u, v)...)
	if err := v.Err(); err != nil && len(inst.Errors) == 0 {
		inst.Errors = append(inst.Errors, l.classify(v, err)...)
	}
	if len(inst.Errors) > 0 {
		for _, e := range inst.Errors {
			if !e.Pos.IsValid() {
				e.Pos = startPos(v, inst.Files)
			}
		}
		sortErrors(inst.Errors)
		return
	}
	if errs := bigIntegers(v, nil); len(errs) > 0 {
		inst.Errors = append(inst.Errors, errs...)
		return
	}
	var m Manifest
	if err := u.Decode(&m); err != nil {
		inst.Errors = append(inst.Errors, l.classify(v, err)...)
		return
	}
	if m.Capabilities.Tools == nil {
		m.Capabilities.Tools = map[string]Tool{}
	}
	tests, at, err := decodeTests(u, v)
	if err != nil {
		inst.Errors = append(inst.Errors, l.classify(v, err)...)
		return
	}
	if ap := decodeApprovals(m.Capabilities.Tools, v); len(ap) > 0 {
		if at == nil {
			at = ap
		} else {
			maps.Copy(at, ap)
		}
	}
	inst.Tests, inst.ConstraintSources = tests, at
	inst.Manifest = &m
}

// HasFields reports whether an erroneous value is a struct whose fields
// are there to check one by one: a manifest that unifies the imported
// #Manifest itself is in error as a whole when any field is, and its
// fields say each what is wrong, as they do without the import.
func HasFields(v cue.Value) bool {
	it, err := v.Fields(cue.Optional(true))
	return err == nil && it.Next()
}

func startPos(v cue.Value, files []string) token.Pos {
	if p := v.Pos(); p.IsValid() {
		return p
	}
	if len(files) > 0 {
		return filePos(files[0])
	}
	return token.NoPos
}

// Pos is where the agent starts: its value's position, or, for files that
// did not parse, the start of the first.
func (inst *Instance) Pos() token.Pos {
	if p := inst.Value.Pos(); p.IsValid() || len(inst.Files) == 0 {
		return p
	}
	return filePos(inst.Files[0])
}

// filePos is the position of the start of a file, for problems that belong
// to a file as a whole.
func filePos(name string) token.Pos {
	f := token.NewFile(name, -1, 1)
	return f.Pos(0, token.NoRelPos)
}

func sortErrors(errs []*Error) {
	sort.SliceStable(errs, func(i, j int) bool {
		a, b := errs[i].Pos, errs[j].Pos
		if a.Filename() != b.Filename() {
			return a.Filename() < b.Filename()
		}
		if a.Line() != b.Line() {
			return a.Line() < b.Line()
		}
		return a.Column() < b.Column()
	})
}

// errorsFrom turns CUE errors that carry their own positions (parse and
// load errors) into Errors.
func errorsFrom(err error, code string) []*Error {
	var out []*Error
	for _, e := range cueerrors.Errors(err) {
		format, args := e.Msg()
		msg := fmt.Sprintf(format, args...)
		if msg == "" {
			msg = e.Error()
		}
		if cause := errors.Unwrap(e); cause != nil && !strings.Contains(msg, cause.Error()) {
			msg = strings.TrimSuffix(msg, fmt.Sprintf(" for file %q", e.Position().Filename())) + ": " + cause.Error()
		}
		out = append(out, &Error{Code: code, Pos: e.Position(), Msg: msg})
	}
	if len(out) == 0 {
		out = append(out, &Error{Code: code, Msg: err.Error()})
	}
	return out
}

// lineMsg matches the "file:line[:col]: message" form some decoders give
// their errors in place of a position.
var lineMsg = regexp.MustCompile(`^(.*?):(\d+)(?::(\d+))?: (.*)$`)

// contentErrors turns the errors of parsing a file held in memory into
// Errors, recovering a position from the message where the error carries
// none.
func contentErrors(err error, name string, data []byte) []*Error {
	errs := errorsFrom(err, CodeSyntax)
	for _, e := range errs {
		if e.Pos.IsValid() && e.Msg != "" {
			continue
		}
		e.Pos = filePos(name)
		m := lineMsg.FindStringSubmatch(e.Msg)
		if m == nil || m[1] != name {
			continue
		}
		line, _ := strconv.Atoi(m[2])
		col, _ := strconv.Atoi(m[3])
		if isYAML(name) {
			// The YAML decoder counts lines from zero.
			line++
		}
		e.Pos = posAt(name, data, line, max(col, 1))
		e.Msg = m[4]
	}
	return errs
}

func isYAML(name string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	return ext == ".yaml" || ext == ".yml"
}

// posAt returns the position of a line and column in a file's content.
func posAt(name string, data []byte, line, col int) token.Pos {
	f := token.NewFile(name, -1, len(data))
	f.SetLinesForContent(data)
	lines := f.Lines()
	if line < 1 || line > len(lines) {
		return filePos(name)
	}
	return f.Pos(min(lines[line-1]+col-1, len(data)), token.NoRelPos)
}
