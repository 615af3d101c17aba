package compile

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"cuelang.org/go/cue"

	"agentc.dev/agentc/internal/leaf/jsonpointer"
	"agentc.dev/agentc/internal/leaf/userfile"
	"agentc.dev/agentc/plan"
)

// checkFiles checks the file inputs the input schema declares (see
// plan.FileFields): each declaration reads, files are top-level
// properties, and the agent's provider and model take every media type
// declared, at the size declared.
func (c *checker) checkFiles() {
	s := c.schemaOf("input.schema")
	if s == nil {
		return
	}
	root, ok := s.Doc.(map[string]any)
	if !ok {
		return
	}
	add := func(ptr, code, format string, args ...any) {
		c.add(s.Pos(ptr), code, "%s: %s", s.where(ptr), fmt.Sprintf(format, args...))
	}
	walkSchema(root, func(ptr, _ string, sub any) {
		m, ok := sub.(map[string]any)
		if !ok {
			return
		}
		if _, ok := m["contentEncoding"]; !ok {
			return
		}
		if parts := strings.Split(ptr, "/"); len(parts) != 3 || parts[1] != "properties" {
			add(ptr+"/contentEncoding", CodeInputFilePlace, "a file input is a property of the input's top level, where the prompt places it by name; here it would be taken as text")
		}
	})
	props, _ := root["properties"].(map[string]any)
	provider, _ := str(lookup(c.v, "model", "provider"))
	model, _ := str(lookup(c.v, "model", "name"))
	limits, known := plan.FileLimits[provider]
	for _, name := range slices.Sorted(maps.Keys(props)) {
		ptr := "/properties/" + jsonpointer.Escape(name)
		raw, err := json.Marshal(props[name])
		if err != nil {
			continue
		}
		f, ok, err := plan.ReadFileField(raw)
		if err != nil {
			add(ptr, CodeInputFile, "%v", err)
			continue
		}
		if !ok || !known {
			continue
		}
		if plan.TextOnly(provider, model) {
			add(ptr, CodeInputFileProvider, "%s model %s takes no file but text", provider, model)
			continue
		}
		for _, mt := range f.Expand() {
			max, ok := limits[mt]
			switch {
			case !ok:
				add(ptr, CodeInputFileProvider, "%s does not take %s files", provider, mt)
			case f.MaxBytes > max:
				add(ptr, CodeInputFileSize, "%s files of up to %s are allowed, and %s takes them up to %s: set maxLength to %d or less (base64 of %d bytes)", mt, userfile.Size(f.MaxBytes), provider, userfile.Size(max), max/3*4, max/3*3)
			}
		}
	}
}

// fileInputs are the names of the agent's file inputs.
func (c *checker) fileInputs() []string {
	s := c.schemaOf("input.schema")
	if s == nil {
		return nil
	}
	raw, err := json.Marshal(s.Doc)
	if err != nil {
		return nil
	}
	fs, _ := plan.FileFields(raw)
	var names []string
	for _, f := range fs {
		names = append(names, f.Name)
	}
	return names
}

// checkOutputFiles checks an exec tool's output_files (ov) and returns
// the names of those it declares, sorted.
func (c *checker) checkOutputFiles(path string, ov cue.Value) []string {
	var names []string
	it, err := ov.Fields()
	if err != nil {
		return nil
	}
	for it.Next() {
		name := it.Selector().Unquoted()
		names = append(names, name)
		var o plan.OutputFile
		if err := it.Value().Decode(&o); err != nil {
			continue // the manifest schema reports it
		}
		if err := plan.CheckOutputFile(name, o); err != nil {
			c.add(it.Value().Pos(), CodeToolInvalid, "%s.output_files: %v", path, err)
		}
	}
	slices.Sort(names)
	return names
}
