package runtime

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"agentc.dev/agentc/internal/leaf/userfile"
	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/runtime/filestore"
)

// FileRef is how a run's input names a file the store holds, at a file
// input's property (see plan.FileFields): {"digest": "blake3:…",
// "file_name": "invoice.pdf"}. A property may instead hold the file's
// bytes in base64, as the contract says, which the run puts in the store
// first. Either way the bytes are checked before any call: their media
// type, sniffed, must be one the property declares, and their size within
// its bound and, with the run's other files, within the run's.
type FileRef struct {
	Digest   string `json:"digest"`
	FileName string `json:"file_name,omitempty"`
}

type filesKey struct{}

// FileStore is the file store of the run a tool is called by, for the
// files its result carries (ToolResult.Files); nil when the run has none.
func FileStore(ctx context.Context) *filestore.Store {
	s, _ := ctx.Value(filesKey{}).(*filestore.Store)
	return s
}

// WithFileStore returns ctx carrying a file store for the tools called
// with it (FileStore); a run gives its tools its own (Options.Files).
func WithFileStore(ctx context.Context, s *filestore.Store) context.Context {
	return context.WithValue(ctx, filesKey{}, s)
}

type inputFilesKey struct{}

// InputFilePath is the path an exec tool gives its program for the run's
// file input name: the file's blob in the run's store, read-only. A name
// that is no file the run was given is an error.
func InputFilePath(ctx context.Context, name string) (string, error) {
	files, _ := ctx.Value(inputFilesKey{}).(map[string]File)
	f, ok := files[name]
	if !ok {
		return "", fmt.Errorf("the run was given no file %q", name)
	}
	store := FileStore(ctx)
	if store == nil {
		return "", fmt.Errorf("file %q: the run has no file store", name)
	}
	return store.Path(f.Digest)
}

// withInputFiles returns ctx carrying the files of the run's input, for
// its tools (InputFilePath).
func withInputFiles(ctx context.Context, user Message) context.Context {
	files := map[string]File{}
	for _, p := range user.Parts {
		if p.File != nil {
			files[p.File.Name] = *p.File
		}
	}
	if len(files) == 0 {
		return ctx
	}
	return context.WithValue(ctx, inputFilesKey{}, files)
}

// usesInputFiles reports whether a tool's argv may give its program a
// run's file (an exec tool's {{file "NAME"}}; an argument that merely
// holds the word counts too): what decides whether a host that makes the
// call elsewhere is told the run's files.
func usesInputFiles(t plan.Tool) bool {
	if t.Kind != "exec" {
		return false
	}
	for _, a := range t.Argv {
		if strings.Contains(a, "file") {
			return true
		}
	}
	return false
}

// fileParts are a tool result's files as the parts of its message.
func fileParts(files []File) []Part {
	var parts []Part
	for i := range files {
		f := files[i]
		parts = append(parts, Part{File: &f})
	}
	return parts
}

// schemaWithoutFiles is the input schema with each file property's schema
// made true: the runtime checks files itself, from their bytes, and the
// value at a file property is a reference, not the base64 text the
// contract describes.
func schemaWithoutFiles(schema json.RawMessage, files []plan.FileField) (json.RawMessage, error) {
	var doc map[string]any
	if err := json.Unmarshal(schema, &doc); err != nil {
		return nil, err
	}
	props, _ := doc["properties"].(map[string]any)
	for _, f := range files {
		props[f.Name] = true
	}
	return json.Marshal(doc)
}

// inputFiles reads the file inputs of an input value: it replaces each
// file property's value in data by a plan.TemplateFile and returns the
// files, in the order of the properties' names.
func (r *Runner) inputFiles(data any) ([]File, error) {
	if len(r.files) == 0 {
		return nil, nil
	}
	obj, ok := data.(map[string]any)
	if !ok {
		return nil, nil // the schema's type check says what is wrong
	}
	limit := r.opts.MaxFileBytes
	if limit <= 0 {
		limit = plan.DefaultMaxRunFileBytes
	}
	var out []File
	var total int64
	for _, f := range r.files {
		v, ok := obj[f.Name]
		if !ok {
			continue
		}
		if r.opts.Files == nil {
			return nil, &ConfigError{"runtime: the input holds a file, and the run has no file store (Options.Files)"}
		}
		file, err := inputFile(r.opts.Files, f, v)
		if err != nil {
			return nil, &InputError{fmt.Sprintf("file %s: %v", f.Name, err)}
		}
		if total += file.Size; total > limit {
			return nil, &InputError{fmt.Sprintf("file %s: the run's files come to more than the %s a run takes", f.Name, userfile.Size(limit))}
		}
		obj[f.Name] = plan.TemplateFile{Name: f.Name}
		out = append(out, file)
	}
	return out, nil
}

// StoreInputFiles puts the files an input gives in base64, at its file
// properties (fields), in store, and returns the input with each named by
// reference instead (FileRef): for a run elsewhere, whose workers read the
// store, so that the run's payloads name its files and do not carry them.
// Each file is checked as a run checks it (its size against its bound,
// its media type, sniffed, against its declaration, and the files
// together against limit, plan.DefaultMaxRunFileBytes when zero); a
// refused one is an *InputError. The input is checked against its
// contract first: StoreInputFiles takes only base64 text at a file
// property, never a reference, which would name a file someone else put
// in the store.
func StoreInputFiles(store *filestore.Store, fields []plan.FileField, input json.RawMessage, limit int64) (json.RawMessage, error) {
	if len(fields) == 0 || len(bytes.TrimSpace(input)) == 0 {
		return input, nil
	}
	if limit <= 0 {
		limit = plan.DefaultMaxRunFileBytes
	}
	obj := map[string]any{}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil {
		return nil, &InputError{fmt.Sprintf("the input is not a JSON object: %v", err)}
	}
	var total int64
	for _, f := range fields {
		v, ok := obj[f.Name]
		if !ok {
			continue
		}
		if _, text := v.(string); !text {
			return nil, &InputError{fmt.Sprintf("file %s: give the file's bytes in base64, as the contract says, not %s", f.Name, JSONKind(v))}
		}
		file, err := inputFile(store, f, v)
		if err != nil {
			return nil, &InputError{fmt.Sprintf("file %s: %v", f.Name, err)}
		}
		if total += file.Size; total > limit {
			return nil, &InputError{fmt.Sprintf("file %s: the run's files come to more than the %s a run takes", f.Name, userfile.Size(limit))}
		}
		obj[f.Name] = FileRef{Digest: file.Digest}
	}
	return json.Marshal(obj)
}

// inputFile puts the file v gives for field f in store, or finds the one
// it names there, and checks it against f.
func inputFile(store *filestore.Store, f plan.FileField, v any) (File, error) {
	var b filestore.Blob
	var name string
	switch v := v.(type) {
	case string:
		// The text is in memory already (within the input's bound), and
		// its bytes take less: they are checked before they are stored,
		// so that a file refused leaves nothing in the store.
		data, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return File{}, fmt.Errorf("not base64: %v", err)
		}
		if int64(len(data)) > f.MaxBytes {
			return File{}, fmt.Errorf("%v (the bound its schema's maxLength sets)", &filestore.TooLargeError{Limit: f.MaxBytes})
		}
		if t := plan.SniffMediaType(data[:min(len(data), plan.SniffLen)]); !f.Accepts(t) {
			return File{}, mediaTypeError(f, t)
		}
		if b, err = store.Put(bytes.NewReader(data), f.MaxBytes); err != nil {
			return File{}, err
		}
	case map[string]any:
		raw, _ := json.Marshal(v)
		var ref FileRef
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ref); err != nil {
			return File{}, fmt.Errorf("a file reference is {\"digest\": \"blake3:…\", \"file_name\": \"…\"}: %v", err)
		}
		if strings.ContainsAny(ref.FileName, "/\\\x00") {
			return File{}, fmt.Errorf("file_name %q is a base name, without a directory", ref.FileName)
		}
		var err error
		if b, err = store.Stat(ref.Digest); err != nil {
			return File{}, err
		}
		name = ref.FileName
	default:
		return File{}, fmt.Errorf("a file is its bytes in base64, or a reference {\"digest\": \"blake3:…\"}, not %s", JSONKind(v))
	}
	if b.Size > f.MaxBytes {
		return File{}, fmt.Errorf("%s is larger than the %s its schema allows", userfile.Size(b.Size), userfile.Size(f.MaxBytes))
	}
	if !f.Accepts(b.MediaType) {
		return File{}, mediaTypeError(f, b.MediaType)
	}
	return File{Name: f.Name, FileName: name, MediaType: b.MediaType, Size: b.Size, Digest: b.Digest}, nil
}

// mediaTypeError says a file of media type t is not one f declares.
func mediaTypeError(f plan.FileField, t string) error {
	if t == "" {
		t = "none agentc recognises"
	}
	return fmt.Errorf("its media type is %s, not %s", t, strings.Join(f.MediaTypes, " or "))
}

// JSONKind names the kind of a decoded JSON value, for messages: "a
// string", "an object", "null".
func JSONKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	case json.Number, float64:
		return "a number"
	}
	return fmt.Sprintf("a %T", v)
}

// userParts makes the first user message's parts: the prompt's text with
// each file where the prompt prints it, then the files it does not print.
func (r *Runner) userParts(data any, files []File) ([]Part, error) {
	byName := map[string]File{}
	for _, f := range files {
		byName[f.Name] = f
	}
	var parts []Part
	var text strings.Builder
	placed := map[string]bool{}
	flush := func() {
		if text.Len() > 0 {
			parts = append(parts, Part{Text: text.String()})
			text.Reset()
		}
	}
	if r.prompt != nil {
		err := r.prompt.ExecuteFiles(&text, data, func(name string) error {
			flush()
			f := byName[name]
			parts = append(parts, Part{File: &f})
			placed[name] = true
			return nil
		})
		if err != nil {
			return nil, &InputError{fmt.Sprintf("rendering the prompt: %v", err)}
		}
	} else {
		// The input as JSON, each file named in its place and attached
		// after it.
		obj, _ := data.(map[string]any)
		shown := map[string]any{}
		for k, v := range obj {
			if f, ok := v.(plan.TemplateFile); ok {
				v = "(the file attached as " + f.Name + ")"
			}
			shown[k] = v
		}
		b, err := json.Marshal(shown)
		if err != nil {
			return nil, &InputError{err.Error()}
		}
		text.Write(b)
	}
	flush()
	for _, f := range files {
		if !placed[f.Name] {
			parts = append(parts, Part{File: &f})
		}
	}
	return slices.Clip(parts), nil
}
