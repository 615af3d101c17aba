package compile

import (
	"fmt"
	"sort"

	"agentc.dev/agentc/plan"
)

// Profile is what one provider's structured output can enforce while the
// model generates: the keywords it honours. Everything else in a contract
// schema is enforced only by agentc's local validation of the answer.
type Profile struct {
	Provider string
	// Supported lists the keywords the provider enforces; annotations are
	// always harmless and not listed.
	Supported map[string]bool
	// Formats lists the values of "format" it enforces, when it enforces
	// "format" at all.
	Formats map[string]bool
}

// Profiles are the providers' structured-output dialects, as documented
// by each (OpenAI: strict structured outputs; Anthropic: closed objects, no
// numeric or length constraints). The test model validates every value it
// makes, so it enforces everything.
var Profiles = map[string]Profile{
	"openai": {
		Provider: "openai",
		Supported: set("type", "properties", "required", "additionalProperties", "enum", "const",
			"anyOf", "$ref", "$defs", "definitions", "items", "pattern", "format",
			"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems"),
		Formats: set("date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"),
	},
	"anthropic": {
		Provider: "anthropic",
		Supported: set("type", "properties", "required", "additionalProperties", "enum", "const",
			"anyOf", "allOf", "$ref", "$defs", "definitions", "items", "format"),
		Formats: set("date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"),
	},
}

// unenforced lists, by JSON pointer, the keywords of a schema a profile
// cannot enforce, in a deterministic order.
func unenforced(s *Schema, prof Profile) []unenforcedKeyword {
	var out []unenforcedKeyword
	walkSchema(s.Doc, "", func(ptr, _ string, sub any) {
		m, ok := sub.(map[string]any)
		if !ok {
			return
		}
		for _, k := range sortedKeys(m) {
			if !plan.IsConstraintKeyword(k) {
				continue
			}
			switch {
			case !prof.Supported[k]:
				out = append(out, unenforcedKeyword{ptr + "/" + escapePtr(k), k, ""})
			case k == "format":
				if f, ok := m[k].(string); ok && !prof.Formats[f] {
					out = append(out, unenforcedKeyword{ptr + "/format", k, f})
				}
			}
		}
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].ptr < out[j].ptr })
	return out
}

type unenforcedKeyword struct {
	ptr, keyword, value string
}

// checkDialect reports each constraint of the output schema the agent's
// provider cannot enforce: a note (shown with --verbose), or an error when
// output.enforce is "provider".
func (c *checker) checkDialect() {
	s := c.schemaOf("output.schema")
	provider, _ := str(lookup(c.v, "model", "provider"))
	prof, ok := Profiles[provider]
	if s == nil || !ok {
		return
	}
	sev := Note
	if enforce, _ := str(lookup(c.v, "output", "enforce")); enforce == "provider" {
		sev = Error
	}
	for _, u := range unenforced(s, prof) {
		what := fmt.Sprintf("%q", u.keyword)
		if u.value != "" {
			what = fmt.Sprintf("format %q", u.value)
		}
		tail := "it is enforced only by local validation of the answer"
		if sev == Error {
			tail = `output.enforce is "provider", which demands that generation enforce the whole contract`
		}
		c.ds = append(c.ds, Diagnostic{Pos: s.Pos(u.ptr), Severity: sev, Code: CodeProviderUnenforced,
			Message: fmt.Sprintf("%s: %s cannot enforce %s; %s", s.where(u.ptr), prof.Provider, what, tail)})
	}
}
