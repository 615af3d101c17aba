package schemagen

import (
	"encoding/json"
	"fmt"
	"strings"
)

// SchemaKey is the draft a document declares.
func SchemaKey(root any) string {
	if m, ok := root.(map[string]any); ok {
		if s, ok := m["$schema"].(string); ok {
			return s
		}
	}
	return ""
}

// Draft4to7 reports a document of draft 4, 6 or 7, where a $ref hides the
// keywords beside it and definitions hold the shared schemas.
func Draft4to7(root any) bool {
	s := SchemaKey(root)
	return strings.Contains(s, "draft-04") || strings.Contains(s, "draft-06") || strings.Contains(s, "draft-07")
}

// Draft04 reports a document of draft 4, whose exclusive bounds are flags
// beside minimum and maximum and which has no const.
func Draft04(root any) bool { return strings.Contains(SchemaKey(root), "draft-04") }

// Combined is one document whose root is the conjunction of parts, each
// of them a document, with the others negated when neg says so: a schema
// for the test model's generator to find a counterexample with.
func Combined(draftOf any, parts []any, neg []bool) any {
	defsKey := "$defs"
	idKey := "$id"
	if Draft4to7(draftOf) {
		defsKey = "definitions"
	}
	if Draft04(draftOf) {
		idKey = "id"
	}
	defs := map[string]any{}
	var all []any
	for i, p := range parts {
		id := fmt.Sprintf("agentc:///part%d.json", i)
		var body any = p
		wrap := map[string]any{idKey: id}
		if m, ok := p.(map[string]any); ok {
			c := make(map[string]any, len(m))
			for k, v := range m {
				if k != "$schema" && k != "$id" && k != "id" {
					c[k] = v
				}
			}
			body = c
			for _, k := range []string{"definitions", "$defs"} {
				if v, ok := m[k]; ok {
					wrap[k] = v
				}
			}
		}
		wrap["allOf"] = []any{body}
		defs[fmt.Sprintf("part%d", i)] = wrap
		var ref any = map[string]any{"$ref": id}
		if neg[i] {
			ref = map[string]any{"not": ref}
		}
		all = append(all, ref)
	}
	out := map[string]any{defsKey: defs, "allOf": all}
	if s := SchemaKey(draftOf); s != "" {
		out["$schema"] = s
	}
	return out
}

// Mutations made of a schema, to ask whether it includes them or they it.
var (
	removableKeywords = []string{"type", "enum", "const", "required", "properties", "additionalProperties",
		"items", "prefixItems", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
		"minItems", "maxItems", "minProperties", "maxProperties", "pattern", "format", "allOf", "anyOf", "oneOf",
		"not", "if", "then", "else", "$ref", "contains", "uniqueItems", "multipleOf", "patternProperties",
		"propertyNames", "dependentRequired", "dependentSchemas", "dependencies", "unevaluatedProperties",
		"unevaluatedItems", "minContains", "maxContains"}
	addedKeywords = []map[string]any{
		{"minLength": json.Number("2")},
		{"maxItems": json.Number("1")},
		{"minimum": json.Number("1")},
		{"required": []any{"a"}},
		{"type": "object"},
		{"not": map[string]any{"type": "null"}},
		{"uniqueItems": true},
		{"maxProperties": json.Number("1")},
		{"multipleOf": json.Number("2")},
		{"additionalProperties": false},
	}
)

// Mutants are a schema with one keyword removed, and with one added; at
// most limit of them.
func Mutants(doc any, limit int) []any {
	m, ok := doc.(map[string]any)
	if !ok {
		return nil
	}
	var out []any
	for _, k := range removableKeywords {
		if _, has := m[k]; !has {
			continue
		}
		c := make(map[string]any, len(m))
		for kk, v := range m {
			if kk != k {
				c[kk] = v
			}
		}
		out = append(out, c)
	}
	for _, add := range addedKeywords {
		c := make(map[string]any, len(m)+1)
		for kk, v := range m {
			c[kk] = v
		}
		fresh := true
		for k, v := range add {
			if _, has := m[k]; has {
				fresh = false
			}
			c[k] = v
		}
		if fresh {
			out = append(out, c)
		}
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}
