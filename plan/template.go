// Package plan defines what a compiled agent is made of at run time. It
// owns the template language of prompts and tool arguments, shared by the
// compiler, which checks templates, and the runtime, which renders them.
package plan

import (
	"encoding/json"
	"text/template"
)

// TemplateFuncs are the functions a manifest's templates may call beyond
// text/template's built-ins.
var TemplateFuncs = template.FuncMap{
	// json renders a value as compact JSON, for passing structured input
	// to a model verbatim.
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
}

// ParseTemplate parses a manifest template with agentc's functions.
func ParseTemplate(name, text string) (*template.Template, error) {
	return template.New(name).Funcs(TemplateFuncs).Parse(text)
}
