package compile

import (
	"errors"
	"fmt"
	"maps"
	"net/textproto"
	neturl "net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/token"

	"agentc.dev/agentc/cost"
	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/inclusion"
	"agentc.dev/agentc/internal/leaf/project"
	"agentc.dev/agentc/internal/leaf/userfile"
	"agentc.dev/agentc/manifest"
	"agentc.dev/agentc/plan"
)

// Result is what vetting one agent found.
type Result struct {
	// Source names the agent as the caller spelled it: a file, a package
	// directory or "-".
	Source string
	// Diagnostics are the findings, but for those Config silenced.
	Diagnostics []Diagnostic
	// Config is the configuration file that applied to the agent, or ""
	// for none.
	Config string
	// Silenced counts the findings Config silenced.
	Silenced int
	// Ignored says Config leaves the agent unvetted: it was not loaded,
	// and has no findings.
	Ignored bool
	// NotAgent says the file or package, found by expanding a directory,
	// is not an agent: its one finding says so (a note).
	NotAgent bool
}

// Compiler checks and compiles agents. It compiles the agents that agent
// tools call, loading them through its Loader, once each, and honours the
// configuration (see Config) nearest each agent. Like the Loader, it is
// not safe for concurrent use.
type Compiler struct {
	loader  *manifest.Loader
	callees map[string]calleeInfo  // by absolute path
	configs map[string]configEntry // by absolute directory
	// compiling are the agents being checked, each calling the next: one
	// called again is a cycle.
	compiling []compilingAgent
	compiled  compiledSchemas
	locks     map[string]lockEntry // by absolute path
	// read are the files read besides the agents asked for: the called
	// agents' manifests and plans, configuration and lock files (Read).
	read map[string]bool

	// Prices bound what a run may cost, for COST_UNBOUNDED; nil is the
	// table embedded in package cost.
	Prices *cost.Table

	// CheckContract proves compatible_with pins: the changes from a
	// called agent's contract as the lock keeps it to the one it has now
	// that are not proved compatible. Package compile cannot link the
	// differ (contractdiff.Unproved is one), so the caller sets it;
	// without it, a compatible_with pin holds only when it is the called
	// agent's contract digest.
	CheckContract ContractCheck
	// DiffRules are the rule IDs of agentc diff (contractdiff.Rules),
	// which an agentc.yaml's diff section may name; nil leaves the
	// section's IDs unchecked.
	DiffRules []string
	// CheckRateLimit checks an entry of an agentc.yaml's rate_limits
	// section, which agentc run reads (package runtime/pace is not this
	// package's); nil leaves the entries unchecked.
	CheckRateLimit func(RateLimit) *ConfigError
}

// compilingAgent is an agent being checked: its key (agentKey), and its
// absolute path as it was reached, which messages name.
type compilingAgent struct{ key, abs string }

// ContractCheck returns, a line each, the changes from an old contract to
// an agent's that are not proved compatible (breaking or undecided).
type ContractCheck func(old, new *plan.Agent) (unproved []string, err error)

type lockEntry struct {
	lock *digest.Lock
	err  error
}

// New returns a Compiler that loads through l.
func New(l *manifest.Loader) *Compiler {
	return &Compiler{loader: l, callees: map[string]calleeInfo{}, configs: map[string]configEntry{}, locks: map[string]lockEntry{}, read: map[string]bool{}}
}

// Read returns the files the compiler has read besides the agents it was
// given, sorted: the manifests and plans of the agents they call, and the
// configuration and lock files it consulted. A command that writes a file
// refuses one of them as its output, as it refuses the agent's own.
func (cp *Compiler) Read() []string {
	return slices.Sorted(maps.Keys(cp.read))
}

// noteRead adds a file to those Read returns.
func (cp *Compiler) noteRead(path string) {
	if path == "" || path == "-" {
		return
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	cp.read[path] = true
}

// Loader returns the loader the compiler loads agents with.
func (cp *Compiler) Loader() *manifest.Loader { return cp.loader }

// Vet loads every agent the arguments name (see manifest.Loader.Load) and
// checks each, but for those its configuration ignores, and leaves out the
// findings the configuration silences. The error is for arguments that
// name nothing loadable (a *manifest.ArgError) and for a configuration
// file that does not read (a *ConfigError).
func (cp *Compiler) Vet(args []string) ([]Result, error) {
	var out []Result
	var cfgErr error
	skip := func(source string, files []string) bool {
		if cfgErr != nil {
			return true // the command fails; load nothing more
		}
		cfg, err := cp.ConfigFor(files)
		if err != nil {
			cfgErr = err
			return true
		}
		if cfg.Ignores(files) {
			out = append(out, Result{Source: source, Config: cfg.Path, Ignored: true})
			return true
		}
		return false
	}
	err := cp.loader.EachExcept(args, skip, func(inst *manifest.Instance) {
		cfg, _ := cp.ConfigFor(inst.Files) // read by skip
		r := Result{Source: inst.Source, NotAgent: inst.NotAgent}
		r.Diagnostics, r.Silenced = cfg.filter(cp.Check(inst))
		if cfg != nil {
			r.Config = cfg.Path
		}
		out = append(out, r)
	})
	if err == nil {
		err = cfgErr
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Check runs every check on a loaded agent: the loader's findings first,
// then the checks that still make sense on what loaded. It looks at the
// manifest as written, not only at the decoded Manifest, so that one pass
// reports as much as it can. It reports every finding: configuration is
// for Vet and Build.
func (cp *Compiler) Check(inst *manifest.Instance) []Diagnostic {
	return cp.check(inst).ds
}

func (cp *Compiler) check(inst *manifest.Instance) *checker {
	c := &checker{comp: cp, v: inst.Value, errPaths: map[string]bool{}, schemas: map[string]*Schema{}, callees: map[string]calleeInfo{}, patterns: plan.NewPatternBudget(patternTimeouts)}
	if inst.NotAgent {
		c.add(inst.Pos(), CodeNotAgent, "not an agent manifest (it declares fewer than two of name, model and instructions; a compiled plan is read by digest only): skipped; name it on its own to check it as one")
		return c
	}
	if inst.Source != "-" {
		if abs, err := filepath.Abs(inst.Source); err == nil {
			cp.compiling = append(cp.compiling, compilingAgent{key: agentKey(abs), abs: abs})
			defer func() { cp.compiling = cp.compiling[:len(cp.compiling)-1] }()
		}
	}
	for _, e := range inst.Errors {
		c.ds = append(c.ds, diag(e.Pos, e.Code, e.Msg))
		c.errPaths[e.Path] = true
	}
	// A manifest that unifies the imported #Manifest itself is in error
	// as a whole when a field is (the loader reported it); its other
	// fields are checked as they are without the import.
	if c.v.Exists() && (c.v.Err() == nil && c.v.IncompleteKind() == cue.StructKind || c.v.Err() != nil && manifest.HasFields(c.v)) {
		c.run()
		c.checkFallbacks(inst.Manifest)
		c.checkCost(inst.Manifest)
	}
	SortDiagnostics(c.ds)
	return c
}

type checker struct {
	comp     *Compiler
	v        cue.Value
	errPaths map[string]bool // paths the loader already reported
	ds       []Diagnostic
	schemas  map[string]*Schema    // the schemas that read, by manifest path
	lowering *plan.Lowering        // the output schema lowered to the provider's dialect
	callees  map[string]calleeInfo // the agents agent tools call, compiled, by tool name
	agents   int                   // the agents the callees' plans hold
	cycle    *cycleError           // a cycle an agent tool closes, if any
	// fallbacks are the model's fallbacks, compiled.
	fallbacks []plan.FallbackModel
	// patterns bounds the pattern matches of the manifest's own values
	// (its test cases' inputs) that may run out of time, all together.
	patterns *plan.PatternBudget
}

// patternTimeouts is how many matches of a manifest's values against
// its patterns may run out of time before the rest are undecided at once.
const patternTimeouts = 4

func (c *checker) add(pos token.Pos, code, format string, args ...any) {
	// A field the manifest leaves out has the position of the schema's
	// declaration, in the imported #Manifest of a CUE module: the finding
	// is the manifest's.
	if !pos.IsValid() || manifest.IsSchemaFile(pos.Filename()) {
		pos = c.v.Pos()
	}
	c.ds = append(c.ds, diag(pos, code, fmt.Sprintf(format, args...)))
}

// reported says whether the loader found a problem at or below a path; a
// check then stays silent about it rather than report it twice.
func (c *checker) reported(path string) bool {
	for p := range c.errPaths {
		if p == path || strings.HasPrefix(p, path+".") || strings.HasPrefix(p, path+"[") {
			return true
		}
	}
	return false
}

func (c *checker) run() {
	c.checkSchemas()
	c.checkBudgets()
	c.checkTools()
	c.checkPrompt()
	c.checkFiles()
	c.checkModelSettings()
	c.checkOutput()
	c.checkDialect()
	c.checkToolDialect()
	c.checkTests()
}

func lookup(v cue.Value, path ...string) cue.Value {
	sels := make([]cue.Selector, len(path))
	for i, p := range path {
		sels[i] = cue.Str(p)
	}
	return v.LookupPath(cue.MakePath(sels...))
}

func str(v cue.Value) (string, bool) {
	if !v.Exists() {
		return "", false
	}
	s, err := v.String()
	return s, err == nil
}

func integer(v cue.Value) (int64, bool) {
	if !v.Exists() {
		return 0, false
	}
	n, err := v.Int64()
	return n, err == nil
}

// elems returns the elements of a list value, or nil for anything else.
func elems(v cue.Value) []cue.Value {
	it, err := v.List()
	if err != nil {
		return nil
	}
	var out []cue.Value
	for it.Next() {
		out = append(out, it.Value())
	}
	return out
}

func (c *checker) toolNames() []string {
	var names []string
	it, err := lookup(c.v, "capabilities", "tools").Fields()
	if err != nil {
		return nil
	}
	for it.Next() {
		names = append(names, it.Selector().Unquoted())
	}
	return names
}

// readSchemaAt reads the schema at a manifest path, reporting a value that
// is not JSON; it returns nil when there is none or the loader already
// reported a problem with it.
func (c *checker) readSchemaAt(path ...string) *Schema {
	w := lookup(c.v, path...)
	p := strings.Join(path, ".")
	if !w.Exists() || c.reported(p) {
		return nil
	}
	s, d := readSchema(w, p)
	if d == nil {
		// Every later check of a schema, compiling it above all, takes
		// time that grows with its size: a schema past the limit is
		// reported and checked no further.
		d = checkSchemaSize(s)
	}
	if d != nil {
		c.ds = append(c.ds, *d)
		return nil
	}
	c.schemas[p] = s
	return s
}

// checkSchemas runs the schema rules on each of the agent's schemas. The
// inclusion engine's analyses of all of them share one budget for
// matching patterns (inclusion.MatchTime): one each let a manifest of 200
// tools, each an enum under backtracking patterns, hold vet for three
// minutes. Past it, what is left is not analysed, and said so.
func (c *checker) checkSchemas() {
	b := inclusion.NewBudget()
	if s := c.readSchemaAt("input", "schema"); s != nil {
		c.ds = append(c.ds, checkSchema(s, c.comp.compiled.compile, b)...)
	}
	if s := c.readSchemaAt("output", "schema"); s != nil {
		c.ds = append(c.ds, checkSchema(s, c.comp.compiled.compile, b)...)
	}
	for _, name := range c.toolNames() {
		if s := c.readSchemaAt("capabilities", "tools", name, "input", "schema"); s != nil {
			c.ds = append(c.ds, checkSchema(s, c.comp.compiled.compile, b)...)
		}
	}
}

func (c *checker) checkBudgets() {
	b := lookup(c.v, "budgets")
	deadline := lookup(b, "deadline")
	if s, ok := str(deadline); ok && !c.reported("budgets.deadline") {
		d, err := time.ParseDuration(s)
		switch {
		case err != nil:
			c.add(deadline.Pos(), manifest.CodeBudget, "budgets.deadline: %q is not a duration (write e.g. \"90s\", \"5m\" or \"1h30m\")", s)
		case d <= 0:
			c.add(deadline.Pos(), manifest.CodeBudget, "budgets.deadline: %q must be positive", s)
		}
	}
	tokensV, reserveV := lookup(b, "tokens"), lookup(b, "answer_reserve")
	tokens, hasTokens := integer(tokensV)
	reserve, hasReserve := integer(reserveV)
	switch {
	case hasReserve && !lookup(c.v, "output").Exists():
		c.add(reserveV.Pos(), CodeBudgetReserve, "budgets.answer_reserve: the agent has no output to reserve tokens for")
	case hasReserve && !hasTokens:
		c.add(reserveV.Pos(), CodeBudgetReserve, "budgets.answer_reserve: a reserve is a part of budgets.tokens, which is not set")
	case hasReserve && reserve >= tokens:
		c.add(reserveV.Pos(), CodeBudgetReserve, "budgets.answer_reserve: %d must be less than budgets.tokens (%d)", reserve, tokens)
	}
	maxOutV := lookup(c.v, "model", "max_output_tokens")
	maxOut, hasMaxOut := integer(maxOutV)
	hasOutput := lookup(c.v, "output").Exists()
	switch {
	case hasMaxOut && hasTokens && maxOut > tokens:
		c.add(maxOutV.Pos(), CodeBudgetMaxOutput, "model.max_output_tokens: one call may produce %d tokens, more than the run's budgets.tokens (%d)", maxOut, tokens)
	case hasMaxOut && hasReserve && hasOutput && reserve < maxOut && reserve < tokens:
		c.add(reserveV.Pos(), CodeBudgetAnswerRoom, "budgets.answer_reserve: %d tokens is less than one answering turn may produce (model.max_output_tokens, %d): the answer may be cut short", reserve, maxOut)
	case hasTokens && hasOutput && !hasReserve && tokens > 0:
		out := int64(plan.Budgets{}.Reserve(int(tokens), int(maxOut)))
		first, answer := c.turnFloors()
		if need := first + answer + 2*out; tokens < need {
			c.add(tokensV.Pos(), CodeBudgetAnswerRoom, "budgets.tokens: %d tokens cannot hold one turn and one answering turn, which need at least %d: about %d and %d tokens sent (what vet can see of them) and %d out each (%s); the run may be asked for its answer at once", tokens, need, first, answer, out, outFrom(maxOut, tokens))
		}
	}
	if !deadline.Exists() && !tokensV.Exists() && !c.reported("budgets") {
		pos := b.Pos()
		if !b.Exists() {
			pos = c.v.Pos()
		}
		c.add(pos, CodeBudgetUnbounded, "budgets: neither a deadline nor a token budget bounds a run of this agent; set budgets.deadline or budgets.tokens")
	}
}

// outFrom says where a turn's output figure (plan.Budgets.Reserve's)
// comes from.
func outFrom(maxOut, tokens int64) string {
	switch {
	case maxOut > 0 && maxOut < tokens:
		return "model.max_output_tokens"
	case maxOut > 0:
		return "half the budget, as model.max_output_tokens is not below it"
	}
	return "the default answer reserve's output"
}

// turnFloors is what vet can see of the input of a run's first turn and
// of an answering turn, in tokens at four bytes a token: the instructions,
// and the tools' names and descriptions (a first turn with tools) or the
// output's name, description and schema (an answering turn, and the
// first turn of an agent without tools). The run's input, the tools'
// argument schemas and their results are known only at run time, so
// these are floors; the runtime's estimate of the same turns is never
// below them.
func (c *checker) turnFloors() (first, answer int64) {
	instr, _ := str(lookup(c.v, "instructions"))
	name, ok := str(lookup(c.v, "output", "name"))
	if !ok {
		name = "answer"
	}
	desc, _ := str(lookup(c.v, "output", "description"))
	answer = int64(len(instr) + len(name) + len(desc))
	if schema, err := lookup(c.v, "output", "schema").MarshalJSON(); err == nil {
		answer += int64(len(schema))
	}
	first = answer
	if it, err := lookup(c.v, "capabilities", "tools").Fields(); err == nil {
		tools, some := int64(len(instr)), false
		for it.Next() {
			some = true
			d, _ := str(it.Value().LookupPath(cue.ParsePath("description")))
			tools += int64(len(it.Selector().Unquoted()) + len(d))
		}
		if some {
			first = tools
		}
	}
	return (first + 3) / 4, (answer + 3) / 4
}

// checkCost warns when nothing bounds what a run may cost: the worst
// case agentc estimate prints is unbounded. It needs the agent decoded
// and its callees compiled; where they are not, other findings say why.
func (c *checker) checkCost(m *manifest.Manifest) {
	if m == nil || hasError(c.ds) {
		return
	}
	a, err := toAgent(m)
	if err != nil {
		return
	}
	p := &plan.Plan{Agent: *a, Callees: map[string]plan.Callee{}}
	for name, t := range a.Capabilities.Tools {
		if t.Kind != "agent" {
			continue
		}
		ci, ok := c.callees[name]
		if !ok || ci.plan == nil {
			return
		}
		p.Callees[name] = plan.Callee{Path: t.Path, Plan: ci.plan}
	}
	prices := c.comp.Prices
	if prices == nil {
		prices = cost.Embedded()
	}
	e, err := cost.Worst(p, prices)
	if err == nil && !e.CostUnbounded() {
		return
	}
	pos := lookup(c.v, "budgets").Pos()
	if !lookup(c.v, "budgets").Exists() {
		pos = c.v.Pos()
	}
	if err != nil {
		// A worst case past what a number holds bounds nothing a user can rely on.
		c.add(pos, CodeCostUnbounded, "budgets: nothing bounds what a run of this agent may cost: %v", err)
		return
	}
	c.add(pos, CodeCostUnbounded, "budgets: nothing bounds what a run of this agent may cost: %s (agentc estimate shows the worst case)", strings.Join(e.Why(), "; "))
}

// outputName is the name the model sees for the output tool: output.name
// or its default.
func (c *checker) outputName() (string, bool) {
	out := lookup(c.v, "output")
	if !out.Exists() {
		return "", false
	}
	if n, ok := str(lookup(out, "name")); ok {
		return n, true
	}
	return "answer", true
}

func (c *checker) checkTools() {
	tools := lookup(c.v, "capabilities", "tools")
	// Every name the model will see, and which tool declares it.
	owner := map[string]string{}
	if name, ok := c.outputName(); ok {
		owner[name] = "the output tool"
	}
	claim := func(name, by string, pos token.Pos) {
		prev, taken := owner[name]
		switch {
		case !taken:
			owner[name] = by
		case prev == by:
			c.add(pos, CodeToolCollision, "%s is listed twice", by)
		case prev == "the output tool":
			c.add(pos, CodeToolCollision, "%s: the name %q is already taken by the output tool; rename the tool or the output (output.name)", by, name)
		default:
			c.add(pos, CodeToolCollision, "%s: the name %q is already taken by %s", by, name, prev)
		}
	}
	for _, name := range c.toolNames() {
		t := lookup(tools, name)
		path := "capabilities.tools." + name
		kind, _ := str(lookup(t, "kind"))
		if kind != "mcp" {
			claim(name, "tool "+quoteName(name), t.Pos())
		}
		if c.reported(path) {
			continue
		}
		c.checkTool(name, kind, t, claim)
		c.checkApproval(name, kind, t)
	}
}

func quoteName(n string) string { return fmt.Sprintf("%q", n) }

func (c *checker) checkTool(name, kind string, t cue.Value, claim func(name, by string, pos token.Pos)) {
	path := "capabilities.tools." + name
	for _, f := range []string{"timeout"} {
		fv := lookup(t, f)
		if s, ok := str(fv); ok {
			if d, err := time.ParseDuration(s); err != nil || d <= 0 {
				c.add(fv.Pos(), CodeToolInvalid, "%s.%s: %q is not a positive duration (write e.g. \"30s\")", path, f, s)
			}
		}
	}
	for i, ev := range elems(lookup(t, "env")) {
		if v, ok := str(ev); ok && slices.Contains(plan.KeyVars(), v) {
			c.add(ev.Pos(), CodeToolEnvProviderKey, "%s.env[%d]: %s is a key agentc reads for itself; the tool's program can read it and send it anywhere (what it prints is redacted, not what it sends), and a Temporal worker refuses the plan: give the tool a key of its own", path, i, v)
		}
	}
	var input any
	if s := c.schemaOf(path + ".input.schema"); s != nil {
		input = s.Doc
	}
	paths := &pathCalls{files: c.fileInputs()}
	for _, ev := range elems(lookup(t, "env")) {
		if v, ok := str(ev); ok {
			paths.envs = append(paths.envs, v)
		}
	}
	if kind == "exec" {
		paths.outputs = c.checkOutputFiles(path, lookup(t, "output_files"))
	}
	checkTmpl := func(field string, fv cue.Value) {
		text, ok := str(fv)
		if !ok {
			return
		}
		for _, p := range checkTemplate(path+"."+field, text, input, "tool input") {
			c.add(fv.Pos(), p.code, "%s", p.msg)
		}
		paths.exec = kind == "exec" && strings.HasPrefix(field, "argv")
		paths.header = kind == "http" && strings.HasPrefix(field, "headers.")
		for _, p := range checkFileCalls(path+"."+field, text, paths) {
			c.add(fv.Pos(), p.code, "%s", p.msg)
		}
	}
	switch kind {
	case "http":
		urlV := lookup(t, "url")
		checkTmpl("url", urlV)
		checkTmpl("body", lookup(t, "body"))
		if it, err := lookup(t, "headers").Fields(); err == nil {
			for it.Next() {
				checkTmpl("headers."+it.Selector().String(), it.Value())
			}
		}
		for i, av := range elems(lookup(t, "allow")) {
			if a, ok := str(av); ok {
				if _, err := plan.ParseURLPrefix(a); err != nil {
					c.add(av.Pos(), CodeToolInvalid, "%s.allow[%d]: %q is not a URL prefix the tool can match: %v", path, i, a, err)
				}
			}
		}
		c.checkHeaders(path, lookup(t, "headers"))
		if u, ok := str(urlV); ok {
			static, _, _ := strings.Cut(u, "{{")
			var allow []string
			for _, av := range elems(lookup(t, "allow")) {
				if a, ok := str(av); ok {
					allow = append(allow, a)
				}
			}
			if len(allow) > 0 && !anyPrefix(static, allow) {
				c.add(urlV.Pos(), CodeToolInvalid, "%s.url: %q can never be reached: it starts outside every allowed prefix (%s)", path, u, strings.Join(allow, ", "))
			}
		}
	case "exec":
		for i, av := range elems(lookup(t, "argv")) {
			a, _ := str(av)
			if i == 0 && strings.Contains(a, "{{") {
				c.add(av.Pos(), CodeToolInvalid, "%s.argv[0]: the program must be fixed, not a template", path)
				continue
			}
			if i == 0 && strings.IndexByte(a, 0) >= 0 {
				c.add(av.Pos(), CodeToolInvalid, "%s.argv[0]: the program contains a NUL byte, which no program name can hold", path)
				continue
			}
			checkTmpl(fmt.Sprintf("argv[%d]", i), av)
		}
		for _, n := range paths.outputs {
			if !paths.used[n] {
				ov := lookup(t, "output_files", n)
				c.add(ov.Pos(), CodeToolInvalid, "%s.output_files.%s: argv never gives the program its path ({{output_file %q}}), so it can never be written", path, n, n)
			}
		}
		c.checkConfine(path, t)
		dv := lookup(t, "dir")
		if d, ok := str(dv); ok {
			// The runtime refuses these before any call (runtime/tool/exec).
			switch fd := filepath.FromSlash(d); {
			case strings.IndexByte(d, 0) >= 0:
				c.add(dv.Pos(), CodeToolInvalid, "%s.dir: the directory contains a NUL byte, which no path can hold", path)
			case fd != "" && !filepath.IsAbs(fd) && !filepath.IsLocal(fd):
				c.add(dv.Pos(), CodeToolInvalid, "%s.dir: %q leaves the manifest's directory; a relative dir must stay under it (write an absolute path to run elsewhere)", path, d)
			}
		}
	case "mcp":
		cmd, url := lookup(t, "command").Exists(), lookup(t, "url").Exists()
		if cmd == url {
			c.add(t.Pos(), CodeToolInvalid, "%s: an mcp tool needs exactly one of command (a server over stdio) and url (streamable HTTP)", path)
		}
		for i, av := range elems(lookup(t, "command")) {
			if a, ok := str(av); ok && strings.IndexByte(a, 0) >= 0 {
				c.add(av.Pos(), CodeToolInvalid, "%s.command[%d]: contains a NUL byte, which no program or argument can hold", path, i)
			}
		}
		if cmd {
			c.checkConfine(path, t)
		} else if cv := lookup(t, "confine"); cv.Exists() && url {
			c.add(cv.Pos(), CodeToolInvalid, "%s.confine: a server reached over HTTP (url) runs elsewhere, where nothing of confine holds it; confine is for a server agentc starts (command): drop it", path)
		}
		uv := lookup(t, "url")
		if u, ok := str(uv); ok {
			if pu, err := neturl.Parse(u); err != nil || pu.Host == "" {
				c.add(uv.Pos(), CodeToolInvalid, "%s.url: %q is not an http or https URL with a host", path, u)
			}
		}
		for _, nv := range elems(lookup(t, "allow")) {
			if n, ok := str(nv); ok {
				claim(n, fmt.Sprintf("tool %q of mcp server %q", n, name), nv.Pos())
			}
		}
	case "fs":
		rv := lookup(t, "root")
		if r, ok := str(rv); ok && strings.IndexByte(r, 0) >= 0 {
			c.add(rv.Pos(), CodeToolInvalid, "%s.root: the directory contains a NUL byte, which no path can hold", path)
		}
	case "agent":
		pv := lookup(t, "path")
		if p, ok := str(pv); ok {
			full := p
			if !filepath.IsAbs(p) {
				full = filepath.Join(baseDir(pv.Pos().Filename()), p)
			}
			if self := pv.Pos().Filename(); self != "" && self != "-" && (filepath.Clean(full) == filepath.Clean(self) || filepath.Clean(full) == filepath.Dir(self)) {
				c.add(pv.Pos(), CodeToolInvalid, "%s.path: the agent calls itself; agents may not call each other in a cycle", path)
				return
			}
			if root, where := outsideProject(pv.Pos().Filename(), full); root != "" {
				c.add(pv.Pos(), CodeToolInvalid, "%s.path: the called agent %q lies outside the project at %s (it resolves to %s): an agent calls agents of its own project", path, p, root, where)
				return
			}
			callee, err := c.comp.callee(full)
			if err != nil {
				c.add(pv.Pos(), CodeToolInvalid, "%s.path: the called agent %q: %v", path, p, err)
				if ce := (*cycleError)(nil); errors.As(err, &ce) && c.cycle == nil {
					c.cycle = ce
				}
				return
			}
			found := callee.plan.Digests.Contract
			pinV := lookup(t, "pin")
			if pin, ok := str(pinV); ok && digest.Digest(pin) != found {
				c.add(pinV.Pos(), CodeAgentPin, "%s.pin: the called agent's contract moved: pinned %s, found %s; review the change, then update the pin", path, pin, found)
			}
			cwV := lookup(t, "compatible_with")
			if cw, ok := str(cwV); ok && digest.Digest(cw) != found {
				c.checkCompatible(cwV.Pos(), path, digest.Digest(cw), &callee.plan.Agent, found)
			}
			if in := callee.plan.Agent.Input; in != nil {
				if fs, err := plan.FileFields(in.Schema); err == nil && len(fs) > 0 {
					c.add(pv.Pos(), CodeToolInvalid, "%s.path: the called agent %q takes a file (input %s), which a model's arguments cannot hand it: call it from a program, or give it the file's text", path, p, fs[0].Name)
				}
			}
			depth, agents := plan.Nesting(callee.plan)
			c.agents += agents
			switch {
			case depth+1 > plan.MaxCalleeDepth:
				c.add(pv.Pos(), CodeToolInvalid, "%s.path: through the called agent %q, agents would call agents %d deep, more than the %d a plan may hold", path, p, depth+1, plan.MaxCalleeDepth)
			case 1+c.agents > plan.MaxAgents:
				c.add(pv.Pos(), CodeToolInvalid, "%s.path: with the called agent %q, this agent's plan would hold %d agents (callees of callees counted each time they are called), more than the %d a plan may hold", path, p, 1+c.agents, plan.MaxAgents)
			}
			c.callees[name] = callee
		}
	}
}

// checkCompatible checks an agent tool's compatible_with pin, cw, which is
// not the called agent's contract digest (found): the contract of cw, as
// the lock file nearest the caller keeps it, must have changed into the
// called agent's only compatibly.
func (c *checker) checkCompatible(pos token.Pos, path string, cw digest.Digest, callee *plan.Agent, found digest.Digest) {
	dir, err := filepath.Abs(baseDir(pos.Filename()))
	if err != nil {
		c.add(pos, CodeAgentCompatible, "%s.compatible_with: %v", path, err)
		return
	}
	lockPath := digest.FindLock(project.Dirs(dir)...)
	if lockPath == "" {
		c.add(pos, CodeAgentCompatible, "%s.compatible_with: the called agent's contract moved from %s to %s, and no lock file (%s) in the agent's project holds the old contract to compare; record it with agentc digest --write before the called agent changes, or review the change and pin %s", path, cw, found, digest.LockFile, found)
		return
	}
	lock, err := c.comp.lock(lockPath)
	if err != nil {
		c.add(pos, CodeAgentCompatible, "%s.compatible_with: %v", path, err)
		return
	}
	data, ok := lock.Contract(cw)
	if !ok {
		c.add(pos, CodeAgentCompatible, "%s.compatible_with: the called agent's contract moved from %s to %s, and the lock file %s does not hold the old contract to compare; run agentc digest --write before changing the called agent, or review the change and pin %s", path, cw, found, displayName(lockPath), found)
		return
	}
	if c.comp.CheckContract == nil {
		c.add(pos, CodeAgentCompatible, "%s.compatible_with: the called agent's contract moved from %s to %s, and this compiler has no contract differ to prove the change compatible", path, cw, found)
		return
	}
	old, err := plan.ContractAgent(data)
	if err == nil {
		var unproved []string
		if unproved, err = c.comp.CheckContract(old, callee); err == nil && len(unproved) > 0 {
			c.add(pos, CodeAgentCompatible, "%s.compatible_with: the called agent's contract changed since %s in ways not proved compatible: %s; review them (agentc diff), then pin the contract it has now, %s", path, cw, strings.Join(unproved, "; "), found)
		}
	}
	if err != nil {
		c.add(pos, CodeAgentCompatible, "%s.compatible_with: the contract %s in %s: %v", path, cw, displayName(lockPath), err)
	}
}

// lock reads a lock file once.
func (cp *Compiler) lock(path string) (*digest.Lock, error) {
	if e, ok := cp.locks[path]; ok {
		return e.lock, e.err
	}
	var e lockEntry
	// Found in the project (digest.FindLock): it must lie beneath its
	// root, as a configuration file must.
	root := path
	if abs, err := filepath.Abs(path); err == nil {
		root = project.Root(filepath.Dir(abs))
	}
	data, err := userfile.ReadBeneath(root, path, plan.MaxLockBytes, "a lock file")
	if err != nil {
		e.err = err
	} else {
		cp.noteRead(path)
		e.lock, e.err = digest.ParseLock(displayName(path), data)
	}
	cp.locks[path] = e
	return e.lock, e.err
}

// checkHeaders reports what the http tool refuses when it is built: a
// header name that is not an HTTP token, one the client sets itself, and
// one declared twice (names are case-insensitive).
func (c *checker) checkHeaders(path string, hv cue.Value) {
	it, err := hv.Fields()
	if err != nil {
		return
	}
	seen := map[string]string{}
	for it.Next() {
		name := it.Selector().Unquoted()
		pos := it.Value().Pos()
		canon := textproto.CanonicalMIMEHeaderKey(name)
		if err := plan.CheckHeaderName(name); err != nil {
			c.add(pos, CodeToolInvalid, "%s.headers: %v", path, err)
			continue
		}
		switch {
		case seen[canon] != "":
			c.add(pos, CodeToolInvalid, "%s.headers: %q and %q are the same header (names are case-insensitive)", path, seen[canon], name)
		default:
			seen[canon] = name
		}
	}
}

func anyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) || strings.HasPrefix(p, s) {
			return true
		}
	}
	return false
}

// baseDir is the directory relative paths in a manifest are resolved
// against: that of the file declaring them, or the working directory for
// standard input.
// outsideProject returns the root of the project the manifest file self
// is in, and where path resolves to, when path (links followed) lies
// outside that project: the files a manifest makes agentc read stay in
// its project, so that one written by someone else (a pull request)
// cannot have vet read, and quote, a file elsewhere on the machine. A
// manifest in no project (standard input, a directory with no cue.mod,
// go.mod or .git above it) is not held to one; nor is a path that does
// not resolve, which its load reports.
func outsideProject(self, path string) (root, where string) {
	if self == "" || self == "-" {
		return "", ""
	}
	dir, err := filepath.Abs(filepath.Dir(self))
	if err != nil {
		return "", ""
	}
	dirs := project.Dirs(dir)
	top := dirs[len(dirs)-1]
	if !project.IsRoot(top) {
		return "", ""
	}
	realTop, err1 := filepath.EvalSymlinks(top)
	real, err2 := filepath.Abs(path)
	if err1 != nil || err2 != nil {
		return "", ""
	}
	if real, err = filepath.EvalSymlinks(real); err != nil {
		return "", ""
	}
	if rel, err := filepath.Rel(realTop, real); err == nil && (rel == "." || filepath.IsLocal(rel)) {
		return "", ""
	}
	return top, real
}

func baseDir(name string) string {
	if name == "" || name == "-" {
		return "."
	}
	return filepath.Dir(name)
}

// schemaOf returns the schema at a path if it read as JSON.
func (c *checker) schemaOf(path string) *Schema { return c.schemas[path] }

func (c *checker) checkPrompt() {
	pv := lookup(c.v, "prompt")
	text, ok := str(pv)
	if !ok || c.reported("prompt") {
		return
	}
	var input any
	if s := c.schemaOf("input.schema"); s != nil {
		input = s.Doc
	} else if lookup(c.v, "input").Exists() {
		return // the input schema is broken and reported; nothing to check against
	}
	for _, p := range checkFileCalls("prompt", text, &pathCalls{}) {
		c.add(pv.Pos(), p.code, "%s", p.msg)
	}
	for _, p := range checkTemplate("prompt", text, input, "input") {
		c.add(pv.Pos(), p.code, "%s", p.msg)
	}
}

func (c *checker) checkOutput() {
	kv := lookup(c.v, "output", "keeps_tools")
	if keeps, err := kv.Bool(); err == nil && keeps && len(c.toolNames()) == 0 {
		c.add(kv.Pos(), CodeKeepsToolsNoTools, "output.keeps_tools: the agent has no tools to keep; drop keeps_tools or declare tools")
	}
}

// checkConfine says, as a note, what an exec tool's program or a stdio
// mcp server may reach (its confine block, or the default), and refuses a
// path no file system can hold.
func (c *checker) checkConfine(path string, t cue.Value) {
	cv := lookup(t, "confine")
	var read, write []string
	for _, l := range []struct {
		field string
		out   *[]string
	}{{"read", &read}, {"write", &write}} {
		for i, pv := range elems(lookup(cv, l.field)) {
			p, _ := str(pv)
			if strings.IndexByte(p, 0) >= 0 {
				c.add(pv.Pos(), CodeToolInvalid, "%s.confine.%s[%d]: the path contains a NUL byte, which no path can hold", path, l.field, i)
				continue
			}
			*l.out = append(*l.out, strconv.Quote(p))
		}
	}
	network, _ := lookup(cv, "network").Bool()
	enforce, _ := str(lookup(cv, "enforce"))
	pos := t.Pos()
	if cv.Exists() {
		pos = cv.Pos()
	}
	lv := lookup(cv, "limits")
	var limits []string
	if cpuV := lookup(lv, "cpu"); cpuV.Exists() {
		if s, ok := str(cpuV); ok {
			n, err := (plan.Limits{CPU: s}).CPUSeconds()
			if err != nil {
				c.add(cpuV.Pos(), CodeToolInvalid, "%s.%s", path, err)
			} else {
				limits = append(limits, fmt.Sprintf("%d s of CPU time", n))
			}
		}
	}
	for _, l := range []struct{ field, what string }{{"memory", "%s of memory"}, {"file_size", "files of %s"}} {
		if n, err := lookup(lv, l.field).Int64(); err == nil {
			limits = append(limits, fmt.Sprintf(l.what, userfile.Size(n)))
		}
	}
	if enforce == "off" {
		if lv.Exists() {
			c.add(lv.Pos(), CodeToolInvalid, "%s.confine.limits: confine.enforce is \"off\", which runs the program as it is, with no limits; drop enforce to bound it, or the limits", path)
		}
		c.add(pos, CodeToolConfined, "%s runs unconfined (confine.enforce is \"off\"): it reaches every file and host the user can", path)
		return
	}
	list := func(l []string) string {
		if len(l) == 0 {
			return "nothing"
		}
		return strings.Join(l, ", ")
	}
	net := "no network, no Unix socket or System V IPC of the host"
	if network {
		net = "the network, but no Unix socket or System V IPC of the host"
	}
	how := "where the system cannot confine it, it runs with a warning"
	if enforce == "require" {
		how = "where the system cannot confine it, it does not run"
	}
	reads := "only the system's programs and libraries"
	if len(read) > 0 {
		reads = "the system's programs and libraries and " + list(read)
	}
	bounds := ""
	if len(limits) > 0 {
		bounds = "; each of its processes is bounded to " + strings.Join(limits, ", ")
	}
	c.add(pos, CodeToolConfined, "%s runs confined: it reads %s, writes %s, and reaches %s%s; %s", path, reads, list(write), net, bounds, how)
}

// checkFallbacks compiles the model's fallbacks as --model would make a
// plan for each (Retarget), each finding at its entry: a fallback the
// agent's contract, files or settings do not fit is refused before any
// run needs it.
func (c *checker) checkFallbacks(m *manifest.Manifest) {
	fv := lookup(c.v, "model", "fallback", "models")
	if m == nil || m.Model.Fallback == nil || !fv.Exists() || c.reported("model.fallback") {
		return
	}
	a, err := toAgent(m)
	if err != nil {
		return // reported where durations are checked
	}
	base := &plan.Plan{Agent: *a, Output: c.lowering}
	if a.Output != nil && c.lowering == nil {
		return // the output's own findings come first
	}
	base.Agent.Model.Fallback = nil
	if s := c.schemaOf("output.schema"); s != nil && c.lowering != nil && (a.Output.Mode == "" || a.Output.Mode == plan.ModeAuto) &&
		mixedModes(c.lowering.Mode, a.Model.Fallback.Models, s.Doc) {
		// The run moves to a fallback mid-run, and every model of the
		// chain answers the same way: where output.mode auto would have
		// them answer differently (OpenAI natively, Anthropic by a tool),
		// all answer by the output tool, which every provider takes.
		l, err := lowerOutput(Profiles[a.Model.Provider], plan.ModeTool, s.Doc, c.comp.compiled.compile)
		if err != nil {
			return
		}
		out := *a.Output
		out.Mode = plan.ModeTool
		c.lowering, base.Output, base.Agent.Output = l, l, &out
	}
	if c.lowering != nil && c.lowering.Mode == plan.ModeTool && c.lowering.Tool == "" {
		l := *c.lowering
		var err error
		if l.Tool, err = plan.OutputToolName(a); err != nil {
			return
		}
		base.Output = &l
	}
	seen := map[string]bool{a.Model.Provider + ":" + a.Model.Name: true}
	for i, ref := range a.Model.Fallback.Models {
		pos := fv.LookupPath(cue.MakePath(cue.Index(i))).Pos()
		provider, model, _ := strings.Cut(ref, ":")
		switch {
		case i >= plan.MaxFallbacks:
			c.add(pos, CodeModelFallback, "model.fallback.models: at most %d fallbacks", plan.MaxFallbacks)
			return
		case seen[ref]:
			c.add(pos, CodeModelFallback, "model.fallback.models[%d]: %s is the agent's own model or named before", i, ref)
			continue
		case provider == "test":
			c.add(pos, CodeModelFallback, "model.fallback.models[%d]: the test model stands in for any model with --model test; it is no fallback", i)
			continue
		}
		seen[ref] = true
		q, err := Retarget(base, provider, model)
		if err != nil {
			c.add(pos, CodeModelFallback, "model.fallback.models[%d]: %v", i, err)
			continue
		}
		c.fallbacks = append(c.fallbacks, plan.FallbackModel{Model: q.Agent.Model, Output: q.Output, ToolInputs: q.ToolInputs})
		c.noteFallback(pos, i, q)
	}
}

// mixedModes reports whether a fallback named in refs would answer in
// another mode than own under output.mode auto.
func mixedModes(own string, refs []string, doc any) bool {
	for _, ref := range refs {
		provider, _, _ := strings.Cut(ref, ":")
		prof, ok := Profiles[provider]
		if !ok || provider == "test" {
			continue // refused below
		}
		if l, err := Lower(prof, plan.ModeAuto, doc); err == nil && l.Mode != own {
			return true
		}
	}
	return false
}

// checkModelSettings checks the model's settings against what its
// provider documents for the model (plan.CheckModelSettings), each
// finding at the setting: an error where the provider refuses it, a
// warning where it asks the provider for nothing.
func (c *checker) checkModelSettings() {
	var m plan.Model
	mv := lookup(c.v, "model")
	if err := mv.Decode(&m); err != nil {
		return // the manifest schema reports it
	}
	for _, p := range plan.CheckModelSettings(m) {
		code := CodeModelSetting
		if p.Warning {
			code = CodeModelSettingIgnored
		}
		c.add(lookup(mv, p.Field).Pos(), code, "model.%s: %s", p.Field, p.Msg)
	}
}
