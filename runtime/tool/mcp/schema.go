package mcp

import (
	"fmt"
	"sort"
	"strings"

	"agentc.dev/agentc/inclusion"
)

// A server's input schema must not accept every value, by the verdict
// agentc vet gives a manifest's schemas (package inclusion): these schemas
// arrive only when the server is started.
// Nested parts are not checked: a server's schema is its author's, and a
// model sees it as the server wrote it.

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
	if inclusion.Vacuous(m) != inclusion.Yes {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
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
