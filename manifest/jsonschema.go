package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/encoding/jsonschema"
)

// JSONSchema returns the manifest schema as JSON Schema (draft 2020-12),
// indented. It is generated from the embedded #Manifest, so editors check
// YAML and JSON manifests against the definition vet checks them with;
// the one field it adds is "$schema", where a JSON or YAML manifest names
// the schema for its editor (the loader ignores it). What JSON Schema
// cannot say (the fields a tool's kind allows, say) vet still checks.
func JSONSchema() ([]byte, error) {
	ctx := cuecontext.New()
	f, err := parser.ParseFile(SchemaFile, SchemaSource, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	v := ctx.BuildFile(f)
	if err := v.Err(); err != nil {
		return nil, err
	}
	expr, err := jsonschema.Generate(v.LookupPath(cue.MakePath(cue.Def("Manifest"))), nil)
	if err != nil {
		return nil, fmt.Errorf("generating the manifest's JSON Schema: %w", err)
	}
	js := ctx.BuildExpr(expr).FillPath(cue.MakePath(cue.Str("properties"), cue.Str("$schema")), map[string]string{
		"type":        "string",
		"description": "$schema names this JSON Schema for editors; agentc ignores it.",
	})
	b, err := js.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("generating the manifest's JSON Schema: %w", err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// dropSchemaField removes a top-level "$schema" field, which names the
// JSON Schema an editor checks a JSON or YAML manifest with, from the
// fields of a manifest read from JSON or YAML.
func dropSchemaField(decls []ast.Decl) []ast.Decl {
	out := decls[:0:0]
	for _, d := range decls {
		if f, ok := d.(*ast.Field); ok {
			if name, _, err := ast.LabelName(f.Label); err == nil && name == "$schema" {
				continue
			}
		}
		out = append(out, d)
	}
	return out
}
