package mcp

import (
	"fmt"
	"sort"
	"strings"
)

// A server's input schema passes the compiler's "non-empty schema" rule
// (package compile's checkSchema) in its essence: the runtime does not link
// the compiler, and these schemas arrive only when the server is started.
// Nested parts are not checked: a server's schema is its author's, and a
// model sees it as the server wrote it.

// constraintKeywords can reject a value. Every other keyword is an
// annotation (title, description, $comment, examples, default, deprecated,
// readOnly, writeOnly, ...) or unknown, and validators ignore both.
var constraintKeywords = set("type", "enum", "const", "$ref", "$dynamicRef",
	"allOf", "anyOf", "oneOf", "not", "if", "then", "else",
	"properties", "patternProperties", "additionalProperties", "propertyNames", "unevaluatedProperties",
	"required", "dependentRequired", "dependentSchemas", "dependencies", "minProperties", "maxProperties",
	"items", "prefixItems", "additionalItems", "contains", "minContains", "maxContains", "unevaluatedItems",
	"minItems", "maxItems", "uniqueItems",
	"minLength", "maxLength", "pattern", "format",
	"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// checkSchema says why an input schema is refused, or returns "". doc is
// the schema decoded into JSON values.
func checkSchema(doc any) string {
	m, ok := doc.(map[string]any)
	switch {
	case !ok:
		return fmt.Sprintf("is %s, not a JSON object that constrains the arguments", describe(doc))
	case len(m) == 0:
		return "is the empty schema {}, which accepts anything"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		if constraintKeywords[k] {
			return ""
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return fmt.Sprintf("has no keyword that constrains the arguments (only %s), so it accepts anything", strings.Join(keys, ", "))
}

func describe(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return fmt.Sprintf("the boolean %v", v)
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}
