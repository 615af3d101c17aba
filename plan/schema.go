package plan

import (
	"bytes"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"agentc.dev/agentc/internal/leaf/jsonpointer"
	"agentc.dev/agentc/internal/leaf/pattern"
)

// SchemaURL is the base URL a schema is compiled under. It is never
// fetched: the loader refuses every URL.
const SchemaURL = "agentc:///schema.json"

// hermeticLoader refuses to load anything: an agent's schemas must be
// self-contained, so compiling one reads no file and makes no network call.
type hermeticLoader struct{}

func (hermeticLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("agentc loads no schema from outside the manifest (%s); put it under $defs and refer to it with \"#/$defs/...\"", u)
}

// CompileSchema compiles a schema document under JSON Schema 2020-12 (or
// the draft its $schema declares) with a loader that reads nothing, with
// format asserted (a contract that says "format": "date" means it), and
// with patterns read as ECMA-262 (package internal/leaf/pattern), the dialect
// JSON Schema names. The compiler and the runtime both compile schemas
// here, so a value is valid to one exactly when it is valid to the other.
func CompileSchema(doc any) (*jsonschema.Schema, error) {
	c, err := schemaCompiler(doc)
	if err != nil {
		return nil, err
	}
	return c.Compile(SchemaURL)
}

// PatternBudget bounds how many pattern matches may run out of time in
// the values validated against schemas compiled with it (see
// CompileSchemaIn); NewPatternBudget makes one.
type PatternBudget = pattern.Budget

// NewPatternBudget returns a budget that allows n matches to run out of
// time: a check of one manifest's values (vet's of its test cases) takes
// one, so that its backtracking patterns cost it a few timeouts in all,
// not one for every string.
func NewPatternBudget(n int) *PatternBudget { return pattern.NewBudget(n) }

// CompileSchemaIn is CompileSchema with the schema's patterns under
// budget b: past it, a match is undecided at once, and the value is
// rejected as for one that ran out of time.
func CompileSchemaIn(doc any, b *PatternBudget) (*jsonschema.Schema, error) {
	c, err := schemaCompiler(doc)
	if err != nil {
		return nil, err
	}
	c.UseRegexpEngine(func(s string) (jsonschema.Regexp, error) {
		re, err := pattern.CompileIn(s, b)
		if err != nil {
			return nil, err
		}
		return re, nil
	})
	return c.Compile(SchemaURL)
}

func schemaCompiler(doc any) (*jsonschema.Compiler, error) {
	c := newCompiler()
	c.AssertFormat()
	if err := c.AddResource(SchemaURL, doc); err != nil {
		return nil, err
	}
	return c, nil
}

// CompileSubschemas compiles a schema document as CompileSchema does, and
// returns what compiles the subschema at a JSON pointer of it, alone: the
// schema that validates a value in its place, with the same references.
// A non-nil budget b bounds its patterns' matches as CompileSchemaIn does.
func CompileSubschemas(doc any, b *PatternBudget) (func(ptr string) (*jsonschema.Schema, error), error) {
	c, err := schemaCompiler(doc)
	if err != nil {
		return nil, err
	}
	if b != nil {
		c.UseRegexpEngine(func(s string) (jsonschema.Regexp, error) {
			re, err := pattern.CompileIn(s, b)
			if err != nil {
				return nil, err
			}
			return re, nil
		})
	}
	if _, err := c.Compile(SchemaURL); err != nil {
		return nil, err
	}
	return func(ptr string) (*jsonschema.Schema, error) {
		if ptr == "" {
			return c.Compile(SchemaURL)
		}
		toks := strings.Split(ptr, "/")
		for i, tok := range toks {
			toks[i] = url.PathEscape(tok)
		}
		return c.Compile(SchemaURL + "#" + strings.Join(toks, "/"))
	}, nil
}

// newCompiler returns a compiler of 2020-12 by default, hermetic, that
// reads patterns as ECMA-262.
func newCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(hermeticLoader{})
	c.UseRegexpEngine(compilePattern)
	return c
}

func compilePattern(s string) (jsonschema.Regexp, error) {
	re, err := pattern.Compile(s)
	if err != nil {
		return nil, err
	}
	return re, nil
}

// freeMatches is how many pattern matches regexp2 makes a validation may
// leave to the validator alone: so few that they cost it a second at
// most however they backtrack. Past them every match is made once first
// (see Validate), the ones that then pass made again by the validator.
const freeMatches = 4

// Validate validates a value against a compiled schema, as every part of
// agentc that decides whether a value is valid does. A value is rejected
// with an *UndecidedError when a pattern could not be matched against one
// of its strings within pattern.Timeout while it was validated: an
// undecided match is no match, which under "not", in a oneOf or in
// patternProperties could otherwise accept the value.
func Validate(s *jsonschema.Schema, v any) error {
	matches, err := checkWork(s, v)
	if err != nil {
		return err
	}
	if len(matches) > freeMatches {
		// Each match is bounded in time, but not their number: a schema
		// of a thousand backtracking patterns (an MCP server's) held a
		// check of one argument past its run's deadline and its first
		// SIGTERM, a minute and more. The first match that runs out of
		// time rejects the value, so they are made first, each once,
		// and the first undecided one ends the check.
		for m := range matches {
			if m.re.Undecided(m.s) {
				if ue := undecidedIn(v, ""); ue != nil {
					return ue
				}
				return &UndecidedError{Pattern: m.re.String()}
			}
		}
	}
	before := pattern.Undecided()
	err = s.Validate(v)
	n := pattern.Undecided() - before
	if n == 0 {
		return err
	}
	if ue := undecidedIn(v, ""); ue != nil {
		return ue
	}
	if n > pattern.Recent {
		// So many undecided matches that the record of them may have
		// lost this value's: reject rather than risk accepting.
		return &UndecidedError{}
	}
	return err // another validation's undecided match
}

// undecidedIn finds a string of v (a value or a member name) whose match
// against a pattern recently could not be decided.
func undecidedIn(v any, at string) *UndecidedError {
	switch v := v.(type) {
	case string:
		if p, ok := pattern.UndecidedOn(v); ok {
			return &UndecidedError{At: at, Pattern: p}
		}
	case []any:
		for i, e := range v {
			if ue := undecidedIn(e, at+"/"+strconv.Itoa(i)); ue != nil {
				return ue
			}
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			member := at + "/" + jsonpointer.Escape(k)
			if p, ok := pattern.UndecidedOn(k); ok {
				return &UndecidedError{At: member, Pattern: p, Name: true}
			}
			if ue := undecidedIn(v[k], member); ue != nil {
				return ue
			}
		}
	}
	return nil
}

// UndecidedError rejects a value one of whose strings could not be matched
// against a pattern within pattern.Timeout.
type UndecidedError struct {
	At      string // JSON pointer of the string in the value
	Pattern string // "" when too many matches went undecided to tell which
	Name    bool   // the string is the member name at At, not its value
}

func (e *UndecidedError) Error() string {
	if e.Pattern == "" {
		return fmt.Sprintf("a pattern could not be matched against the value within %s (the bound on one match, against catastrophic backtracking), so the value is rejected", pattern.Timeout)
	}
	at, what := e.At, "the string"
	if at == "" {
		at = "/"
	}
	if e.Name {
		what = "the member name"
	}
	return fmt.Sprintf("at %s: %s could not be matched against pattern %q within %s (the bound on one match, against catastrophic backtracking), so the value is rejected", at, what, e.Pattern, pattern.Timeout)
}

// CompileSchemaJSON compiles a schema held as JSON text.
func CompileSchemaJSON(data []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("schema is not JSON: %w", err)
	}
	return CompileSchema(doc)
}

// UnmarshalJSONValue decodes JSON text into the value form CompileSchema's
// schemas validate (numbers kept exact).
func UnmarshalJSONValue(data []byte) (any, error) {
	return jsonschema.UnmarshalJSON(bytes.NewReader(data))
}

// Keyword tables of JSON Schema (2020-12, with the keywords of the older
// drafts the validator also reads). A keyword is either an annotation,
// which never rejects a value, or one that can.
var (
	// annotationKeywords never constrain a value.
	annotationKeywords = wordSet("title", "description", "$comment", "examples", "default", "deprecated",
		"readOnly", "writeOnly", "contentMediaType", "contentEncoding", "contentSchema",
		"$schema", "$id", "$anchor", "$dynamicAnchor", "$recursiveAnchor", "$vocabulary", "$defs", "definitions", "id")
	// constraintKeywords can reject a value.
	constraintKeywords = wordSet("type", "enum", "const", "$ref", "$dynamicRef", "$recursiveRef",
		"allOf", "anyOf", "oneOf", "not", "if", "then", "else",
		"properties", "patternProperties", "additionalProperties", "propertyNames", "unevaluatedProperties",
		"required", "dependentRequired", "dependentSchemas", "dependencies", "minProperties", "maxProperties",
		"items", "prefixItems", "additionalItems", "contains", "minContains", "maxContains", "unevaluatedItems",
		"minItems", "maxItems", "uniqueItems",
		"minLength", "maxLength", "pattern", "format",
		"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
)

func wordSet(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// IsKeyword reports whether JSON Schema knows a keyword; validators ignore
// the others.
func IsKeyword(k string) bool { return annotationKeywords[k] || constraintKeywords[k] }

// IsConstraintKeyword reports whether a keyword can reject a value.
func IsConstraintKeyword(k string) bool { return constraintKeywords[k] }

// ConstraintKeywords lists the keywords that can reject a value, sorted.
func ConstraintKeywords() []string {
	out := make([]string, 0, len(constraintKeywords))
	for k := range constraintKeywords {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
