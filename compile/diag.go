// Package compile checks agentc manifests and reports what is wrong with
// them as diagnostics: positioned, with a severity and a stable code.
package compile

import (
	"fmt"
	"path/filepath"
	"sort"

	"cuelang.org/go/cue/token"

	"agentc.dev/agentc/manifest"
)

// Severity says how much a diagnostic matters.
type Severity int

// Severities, most severe first.
const (
	Error Severity = iota
	Warning
	Note
)

var severityNames = [...]string{Error: "error", Warning: "warning", Note: "note"}

func (s Severity) String() string {
	if s >= 0 && int(s) < len(severityNames) {
		return severityNames[s]
	}
	return fmt.Sprintf("severity(%d)", int(s))
}

// Diagnostic is one finding about a manifest.
type Diagnostic struct {
	Pos      token.Pos
	Severity Severity
	Code     string
	Message  string
}

// Format renders d as file:line:col: severity: message [CODE], with the
// file name relative to dir when dir is not empty and the file lies below
// it.
func (d Diagnostic) Format(dir string) string {
	return fmt.Sprintf("%s: %s: %s [%s]", d.Position(dir), d.Severity, d.Message, d.Code)
}

// Position is d's place as Format writes it: file:line:col, the file
// relative to dir as there, or "-" for none.
func (d Diagnostic) Position(dir string) string { return posString(d.Pos, dir) }

func (d Diagnostic) String() string { return d.Format("") }

func posString(p token.Pos, dir string) string {
	if !p.IsValid() {
		return "-"
	}
	name := relPath(p.Filename(), dir)
	if p.Line() == 0 {
		return name
	}
	return fmt.Sprintf("%s:%d:%d", name, p.Line(), p.Column())
}

func relPath(name, dir string) string {
	if dir == "" || !filepath.IsAbs(name) {
		return name
	}
	if rel, err := filepath.Rel(dir, name); err == nil && filepath.IsLocal(rel) {
		return rel
	}
	return name
}

// JSON is the machine-readable form of a Diagnostic.
type JSON struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	Severity string `json:"severity"`
	Code     string `json:"code"`
	Message  string `json:"message"`
}

// JSON returns d in its machine-readable form, with the file name relative
// to dir as in Format.
func (d Diagnostic) JSON(dir string) JSON {
	j := JSON{Severity: d.Severity.String(), Code: d.Code, Message: d.Message}
	if d.Pos.IsValid() {
		j.File = relPath(d.Pos.Filename(), dir)
		j.Line, j.Column = d.Pos.Line(), d.Pos.Column()
	}
	return j
}

// Rule describes one diagnostic code: the severity every finding of it
// has, and whether a project may silence it (see Config).
type Rule struct {
	Code     string
	Severity Severity
	Summary  string
	// Refusal says what refuses an agent that breaks the rule: the rule
	// guards that refusal rather than give advice, so it cannot be
	// silenced. Empty for a rule a project may silence.
	Refusal string
}

// Why a rule cannot be silenced: what refuses an agent that breaks it.
const (
	refusedLoad     = "an agent that does not load has no plan to compile or run"
	refusedSchema   = "the runtime compiles every schema before a run and refuses one that does not compile"
	refusedObject   = "the runtime refuses a schema that does not compile, and only an object or a boolean compiles"
	refusedSize     = "the runtime refuses a plan with a schema past the size limit"
	refusedDepth    = "the runtime refuses a plan with a schema past the depth limit"
	refusedFile     = "the runtime reads every file input's declaration before a run and refuses one that does not read"
	refusedDigest   = "no digest, and so no plan, can be computed over such a number"
	refusedTool     = "the runtime refuses to build such a tool, before any call"
	refusedTemplate = "the runtime parses every template before a run and refuses one that does not parse"
	refusedName     = "the runtime refuses two tools of one name, and a tool named as the output tool"
	refusedFallback = "the runtime refuses a plan that does not hold every fallback the manifest names, compiled"
	refusedPin      = "a plan whose called agent's contract is not the one pinned is refused when it is sealed and when it is read"
	refusedEnforce  = "the agent demands that generation enforce the whole contract (output.enforce \"provider\"), which this provider cannot: a plan would promise what no run keeps"
	refusedMode     = "the provider's API refuses the request"
)

// Rules lists every diagnostic code agentc vet reports. A check reports a
// finding by its code alone, and the finding's severity is the one here,
// the loader's findings included. Codes are stable: a code is never reused
// for another meaning.
var Rules = []Rule{
	{manifest.CodeSyntax, Error, "the manifest does not parse as CUE, JSON or YAML", refusedLoad},
	{manifest.CodeUnknownField, Error, "a field the manifest schema does not declare", refusedLoad},
	{manifest.CodeMissingField, Error, "a required field is absent", refusedLoad},
	{manifest.CodeType, Error, "a value of the wrong type or outside its allowed values", refusedLoad},
	{manifest.CodeIncomplete, Error, "a value that is not concrete data (a CUE type or constraint left open)", refusedLoad},
	{manifest.CodeConflict, Error, "the manifest's own values contradict each other", refusedLoad},
	{manifest.CodeTooComplex, Error, "evaluating the manifest took longer or more memory than vet allows", refusedLoad},
	{manifest.CodeOutside, Error, "a file found in a directory is a symbolic link out of its project (of the directory given, in none), and is not read", refusedLoad},
	{manifest.CodeName, Error, "the agent name is not lower-case letters, digits and dashes", refusedLoad},
	{manifest.CodeToolName, Error, "a tool or output name is not a valid function name", refusedLoad},
	{manifest.CodeBudget, Error, "a budget is malformed or out of range", refusedLoad},
	{CodeSchemaNotObject, Error, "a schema is not a JSON object (true, false or another value)", refusedObject},
	{CodeSchemaEmpty, Error, "a schema is {}, which accepts anything", ""},
	{CodeSchemaUnconstrained, Error, "a schema holds only annotations or vacuous keywords and accepts anything", ""},
	{CodeSchemaNestedUnconstrained, Error, "a subschema describing part of the value accepts anything", ""},
	{CodeSchemaUnsatisfiable, Error, "no value satisfies a schema, or a required member's schema", ""},
	{CodeSchemaNoEffect, Warning, "an anyOf with an alternative that accepts anything, which has no effect", ""},
	{CodeSchemaInvalid, Error, "a schema does not compile as JSON Schema", refusedSchema},
	{CodeSchemaTooLarge, Error, "a schema holds more JSON values than agentc accepts (plan.MaxSchemaValues)", refusedSize},
	{CodeSchemaTooDeep, Error, "a schema's objects and arrays nest deeper than agentc accepts (plan.MaxSchemaDepth)", refusedDepth},
	{CodeSchemaUnknownKeyword, Warning, "a keyword JSON Schema does not know, ignored by validation", ""},
	{CodeSchemaUnknownFormat, Warning, "a format the validator does not know, which checks nothing", ""},
	{CodeSchemaUndecided, Warning, "a schema vet could not analyse whole: the agent's schemas spent the one second their analysis may spend matching patterns", ""},
	{CodeInputFile, Error, "a file input's declaration does not read: another encoding than base64, or no media type or one agentc does not recognise", refusedFile},
	{CodeInputFilePlace, Error, "content in base64 below the input's top level, where it is text, not a file", ""},
	{CodeInputFileProvider, Error, "the agent's provider or model does not take a media type a file input declares", ""},
	{CodeInputFileSize, Warning, "a file input allows files larger than the agent's provider takes of their media type", ""},
	{CodeModelSetting, Error, "a model setting the provider refuses for the model: a temperature out of its range or one the model takes none of, a reasoning level it does not take", ""},
	{CodeModelSettingIgnored, Warning, "a model setting that asks the provider for nothing: cache on Google (which caches on its own) or Bedrock (sent no cachePoint)", ""},
	{CodeModelFallback, Error, "a fallback model the agent cannot use: not PROVIDER:MODEL, the agent's own model or named twice, an unknown provider, or one its contract, files or settings do not fit", refusedFallback},
	{CodeBudgetReserve, Error, "answer_reserve is not below the token budget, or has nothing to reserve for", ""},
	{CodeBudgetMaxOutput, Error, "one call may produce more tokens than the whole run may spend", ""},
	{CodeBudgetAnswerRoom, Warning, "the token budget cannot hold a turn and an answering turn (what vet can see of their input, and their output), or answer_reserve is below one answering turn's output", ""},
	{CodeBudgetUnbounded, Warning, "neither a deadline nor a token budget bounds the run", ""},
	{CodeCostUnbounded, Warning, "nothing bounds what a run may cost (agentc estimate): a model without a price or context window, or agent tools without budgets.tools", ""},
	{CodeToolCollision, Error, "two tools, or a tool and the output tool, share a name", refusedName},
	{CodeToolInvalid, Error, "a tool's fields are inconsistent", refusedTool},
	{CodeToolConfined, Note, "what an exec tool's program or a stdio mcp server may reach, and the limits each of its processes has (its confine block)", ""},
	{CodeToolEnvProviderKey, Warning, "a tool's env passes it one of agentc's own keys (OPENAI_API_KEY, ANTHROPIC_API_KEY, TEMPORAL_API_KEY)", ""},
	{CodeTemplateSyntax, Error, "a template does not parse", refusedTemplate},
	{CodeTemplateRef, Error, "a template refers to a field its schema does not declare", ""},
	{CodeAgentPin, Error, "an agent tool's pin does not match the called agent's contract digest", refusedPin},
	{CodeAgentCompatible, Error, "an agent tool's compatible_with is not proved: the called agent's contract changed since that digest in a way not proved compatible, or the lock file does not hold that contract", ""},
	{CodeSchemaNumber, Warning, "a number in a schema more precise than a double: the digests see it rounded", ""},
	{CodeSchemaNumberRange, Error, "a number in a schema beyond what a double holds, which canonical JSON cannot write", refusedDigest},
	{CodeSchemaCount, Error, "a length, size or count keyword (minLength, maxItems, minContains, ...) above 2^53-1, which the validator reads wrapped", ""},
	{CodeProviderUnenforced, Note, "a constraint of the output schema, or of a tool's input schema, the provider cannot enforce during generation", ""},
	{CodeOutputEnforce, Error, "output.enforce is \"provider\", and the provider cannot enforce a constraint of the output schema during generation", refusedEnforce},
	{CodeOutputMode, Error, "an output mode the provider cannot serve for this schema", refusedMode},
	{CodeNotAgent, Note, "a file or package found in a directory is not an agent, and is skipped", ""},
	{CodeKeepsToolsNoTools, Warning, "output.keeps_tools is set but the agent has no tools", ""},
	{CodeTestInput, Error, "a test case's input fails the agent's input schema", ""},
	{CodeTestTool, Error, "a test case expects a call of a tool the agent does not have", ""},
	{CodeApproveTool, Error, "an mcp tool's approve_tools names a tool its allow list does not", ""},
	{CodeApproveIf, Error, "an approve_if constraint does not compile on its own (it refers to something outside itself)", ""},
	{CodeApproveIfUnused, Warning, "an approve_if of a tool whose approve is \"never\" or \"always\", which decides nothing", ""},
}

// rulesByCode indexes Rules.
var rulesByCode = func() map[string]Rule {
	m := make(map[string]Rule, len(Rules))
	for _, r := range Rules {
		m[r.Code] = r
	}
	return m
}()

// RuleOf returns the rule of a diagnostic code.
func RuleOf(code string) (Rule, bool) {
	r, ok := rulesByCode[code]
	return r, ok
}

// diag returns a finding of a code, with the code's severity. A code
// missing from Rules is a defect that TestRulesComplete catches; should
// one slip through, its findings are errors, never silently dropped.
func diag(pos token.Pos, code, msg string) Diagnostic {
	sev := Error
	if r, ok := rulesByCode[code]; ok {
		sev = r.Severity
	}
	return Diagnostic{Pos: pos, Severity: sev, Code: code, Message: msg}
}

// Codes of the checks this package runs; the loader's codes are in package
// manifest.
const (
	CodeSchemaNotObject           = "SCHEMA_NOT_OBJECT"
	CodeSchemaEmpty               = "SCHEMA_EMPTY"
	CodeSchemaUnconstrained       = "SCHEMA_UNCONSTRAINED"
	CodeSchemaNestedUnconstrained = "SCHEMA_NESTED_UNCONSTRAINED"
	CodeSchemaUnsatisfiable       = "SCHEMA_UNSATISFIABLE"
	CodeSchemaNoEffect            = "SCHEMA_NO_EFFECT"
	CodeSchemaInvalid             = "SCHEMA_INVALID"
	CodeSchemaTooLarge            = "SCHEMA_TOO_LARGE"
	CodeSchemaTooDeep             = "SCHEMA_TOO_DEEP"
	CodeSchemaUnknownKeyword      = "SCHEMA_UNKNOWN_KEYWORD"
	CodeSchemaUnknownFormat       = "SCHEMA_UNKNOWN_FORMAT"
	CodeSchemaUndecided           = "SCHEMA_UNDECIDED"
	CodeInputFile                 = "INPUT_FILE"
	CodeInputFilePlace            = "INPUT_FILE_PLACE"
	CodeInputFileProvider         = "INPUT_FILE_PROVIDER"
	CodeInputFileSize             = "INPUT_FILE_SIZE"
	CodeModelSetting              = "MODEL_SETTING"
	CodeModelSettingIgnored       = "MODEL_SETTING_IGNORED"
	CodeModelFallback             = "MODEL_FALLBACK"
	CodeBudgetReserve             = "BUDGET_RESERVE"
	CodeBudgetMaxOutput           = "BUDGET_MAX_OUTPUT"
	CodeBudgetAnswerRoom          = "BUDGET_ANSWER_ROOM"
	CodeNotAgent                  = "NOT_AN_AGENT"
	CodeBudgetUnbounded           = "BUDGET_UNBOUNDED"
	CodeCostUnbounded             = "COST_UNBOUNDED"
	CodeToolCollision             = "TOOL_NAME_COLLISION"
	CodeToolInvalid               = "TOOL_INVALID"
	CodeToolEnvProviderKey        = "TOOL_ENV_PROVIDER_KEY"
	CodeTemplateSyntax            = "TEMPLATE_SYNTAX"
	CodeTemplateRef               = "TEMPLATE_REF"
	CodeKeepsToolsNoTools         = "KEEPS_TOOLS_NO_TOOLS"
	CodeProviderUnenforced        = "PROVIDER_UNENFORCED"
	CodeToolConfined              = "TOOL_CONFINED"
	CodeOutputEnforce             = "OUTPUT_ENFORCE"
	CodeOutputMode                = "OUTPUT_MODE"
	CodeAgentPin                  = "AGENT_PIN"
	CodeAgentCompatible           = "AGENT_COMPATIBLE"
	CodeSchemaNumber              = "SCHEMA_NUMBER"
	CodeSchemaNumberRange         = "SCHEMA_NUMBER_RANGE"
	CodeSchemaCount               = "SCHEMA_COUNT"
	CodeTestInput                 = "TEST_INPUT"
	CodeTestTool                  = "TEST_TOOL"
	CodeApproveTool               = "APPROVE_TOOL"
	CodeApproveIf                 = "APPROVE_IF"
	CodeApproveIfUnused           = "APPROVE_IF_UNUSED"
)

// SortDiagnostics orders diagnostics by file, line and column, keeping the
// order of findings at one position.
func SortDiagnostics(ds []Diagnostic) {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i].Pos, ds[j].Pos
		if a.Filename() != b.Filename() {
			return a.Filename() < b.Filename()
		}
		if a.Line() != b.Line() {
			return a.Line() < b.Line()
		}
		return a.Column() < b.Column()
	})
}
