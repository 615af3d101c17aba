package runtime

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

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

// fileBound is the most bytes the files of one conversation may come to
// together: the run's given files and those its tools returned, every one
// of which each request carries again. Options.MaxFileBytes, else
// plan.DefaultMaxRunFileBytes: a bound of the run's options, never of
// the machine or a price table, so that a replay decides as its run did.
func (x *run) fileBound() int64 {
	if x.opts.MaxFileBytes > 0 {
		return x.opts.MaxFileBytes
	}
	return plan.DefaultMaxRunFileBytes
}

// filesIn sums the files msgs carry: how many, their bytes, and the bytes
// of those that are text (which a tokeniser counts as it counts a
// message's; an image's or a PDF's tokens are not known from its size).
func filesIn(msgs []Message) (n int, size, text int64) {
	for i := range msgs {
		for _, p := range msgs[i].Parts {
			if p.File == nil {
				continue
			}
			n++
			size += p.File.Size
			if p.File.MediaType == "text/plain" {
				text += p.File.Size
			}
		}
	}
	return n, size, text
}

// withinFileBound returns a tool's result as it joins the conversation:
// where its files would bring the conversation's past fileBound, without
// them, an error saying so, as a call past the conversation's bound of
// text is (pastBound). Applied to the result as recorded, so a replay
// decides the same.
func (x *run) withinFileBound(res ToolResult) ToolResult {
	var add int64
	for _, f := range res.Files {
		add += f.Size
	}
	if add == 0 || !x.fileBounds() {
		return res
	}
	_, held, _ := filesIn(x.msgs)
	bound := x.fileBound()
	if held+add <= bound {
		return res
	}
	if res.Content != "" && !strings.HasSuffix(res.Content, "\n") {
		res.Content += "\n"
	}
	res.Content += fmt.Sprintf("[the result's files (%d bytes) are not sent: the conversation holds %d bytes of files, and a conversation's files may come to %d bytes together]", add, held, bound)
	res.Files, res.IsError = nil, true
	return res
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
// files, in the order of the properties' names. Every file is checked
// before any is stored: an input refused leaves nothing in the store.
func (r *Runner) inputFiles(data any) ([]File, error) {
	if len(r.files) == 0 {
		return nil, nil
	}
	obj, ok := data.(map[string]any)
	if !ok {
		return nil, nil // the schema's type check says what is wrong
	}
	if r.opts.Files == nil && slices.ContainsFunc(r.files, func(f plan.FileField) bool { _, ok := obj[f.Name]; return ok }) {
		return nil, &ConfigError{"runtime: the input holds a file, and the run has no file store (Options.Files)"}
	}
	files, err := checkInputFiles(r.opts.Files, r.files, obj, r.opts.MaxFileBytes, true)
	if err != nil {
		return nil, err
	}
	if err := putInputFiles(r.opts.Files, files); err != nil {
		return nil, err
	}
	out := make([]File, len(files))
	for i, in := range files {
		obj[in.file.Name] = plan.TemplateFile{Name: in.file.Name}
		out[i] = in.file
	}
	return out, nil
}

// StoreInputFiles puts the files an input gives in base64, at its file
// properties (fields), in store, and returns the input with each named by
// reference instead (FileRef): for a run elsewhere, whose workers read the
// store, so that the run's payloads name its files and do not carry them;
// and for a served run, whose client gives a file's name beside its bytes.
// names, when not nil, holds the name a file was handed in under, by its
// property: each that CleanFileName keeps goes in the file's reference, as
// --input-file's base name does, and one it does not is left out.
// Each file is checked as a run checks it (its size against its bound,
// its media type, sniffed, against its declaration, and the files
// together against limit, plan.DefaultMaxRunFileBytes when zero), all of
// them before any is stored; a refused one is an *InputError, and leaves
// nothing in the store. The input is checked against its contract first:
// StoreInputFiles takes only base64 text at a file property, never a
// reference, which would name a file someone else put in the store. An
// input that is not a JSON object is returned as it is.
func StoreInputFiles(store *filestore.Store, fields []plan.FileField, input json.RawMessage, limit int64, names map[string]string) (json.RawMessage, error) {
	if len(fields) == 0 || len(bytes.TrimSpace(input)) == 0 {
		return input, nil
	}
	obj := map[string]any{}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil {
		return input, nil // not an object: the run says what is wrong with it
	}
	files, err := checkInputFiles(store, fields, obj, limit, false)
	if err != nil {
		return nil, err
	}
	if err := putInputFiles(store, files); err != nil {
		return nil, err
	}
	for _, in := range files {
		obj[in.file.Name] = FileRef{Digest: in.file.Digest, FileName: CleanFileName(names[in.file.Name])}
	}
	return json.Marshal(obj)
}

// MaxFileName bounds a file's name as a run keeps it: a file system's
// bound on one name.
const MaxFileName = 255

// CleanFileName returns name when it is a file's base name a run may
// keep, and pass to the model and the provider, as it is: valid UTF-8,
// at most MaxFileName bytes, no directory (no / or \), not . or .., and
// no control or format character (a newline, an escape, a bidirectional
// override) that would reach a terminal or a log from a name someone
// else chose. Otherwise "".
func CleanFileName(name string) string {
	if name == "" || name == "." || name == ".." || len(name) > MaxFileName || !utf8.ValidString(name) {
		return ""
	}
	for _, r := range name {
		if r == '/' || r == '\\' || unicode.IsControl(r) || unicode.In(r, unicode.Cf) {
			return ""
		}
	}
	return name
}

// inputFile is a file of an input, checked: the stored file a reference
// named, or the bytes given in base64, not yet stored (given).
type inputFile struct {
	file  File
	data  []byte
	given bool
}

// checkInputFiles checks the files obj gives at its file properties, in
// the order of fields: each one's size against its bound and media type
// against its declaration, and all of them together against limit
// (plan.DefaultMaxRunFileBytes when not above zero). A property holds the
// file's bytes in base64 or, where refs, a reference to a file the store
// holds. Nothing is stored; what is refused is an *InputError.
func checkInputFiles(store *filestore.Store, fields []plan.FileField, obj map[string]any, limit int64, refs bool) ([]inputFile, error) {
	if limit <= 0 {
		limit = plan.DefaultMaxRunFileBytes
	}
	var out []inputFile
	var total int64
	for _, f := range fields {
		v, ok := obj[f.Name]
		if !ok {
			continue
		}
		if _, text := v.(string); !text && !refs {
			return nil, &InputError{fmt.Sprintf("file %s: give the file's bytes in base64, as the contract says, not %s", f.Name, JSONKind(v))}
		}
		in, err := checkInputFile(store, f, v)
		if err != nil {
			return nil, &InputError{fmt.Sprintf("file %s: %v", f.Name, err)}
		}
		if total += in.file.Size; total > limit {
			return nil, &InputError{fmt.Sprintf("file %s: the run's files come to more than the %s a run takes", f.Name, userfile.Size(limit))}
		}
		out = append(out, in)
	}
	return out, nil
}

// putInputFiles stores the bytes of the files given in base64, and names
// each by its digest; what fails is the store's, not the input's.
func putInputFiles(store *filestore.Store, files []inputFile) error {
	for i := range files {
		in := &files[i]
		if !in.given {
			continue
		}
		b, err := store.Put(bytes.NewReader(in.data), int64(len(in.data)))
		if err != nil {
			return fmt.Errorf("file %s: %w", in.file.Name, err)
		}
		in.file.Digest, in.data = b.Digest, nil
	}
	return nil
}

// checkInputFile checks the file v gives for field f: its bytes in
// base64 (decoded, not yet stored: the text is in memory already, within
// the input's bound, and its bytes take less), or the one a reference
// names in store.
func checkInputFile(store *filestore.Store, f plan.FileField, v any) (inputFile, error) {
	switch v := v.(type) {
	case string:
		data, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return inputFile{}, fmt.Errorf("not base64 (%s)", Base64Fault(v, err))
		}
		if int64(len(data)) > f.MaxBytes {
			return inputFile{}, fmt.Errorf("%v (the bound its schema's maxLength sets)", &filestore.TooLargeError{Limit: f.MaxBytes})
		}
		t := plan.SniffMediaType(data)
		if !f.Accepts(t) {
			return inputFile{}, mediaTypeError(f, t)
		}
		return inputFile{file: File{Name: f.Name, MediaType: t, Size: int64(len(data))}, data: data, given: true}, nil
	case map[string]any:
		raw, _ := json.Marshal(v)
		var ref FileRef
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ref); err != nil {
			return inputFile{}, fmt.Errorf("a file reference is {\"digest\": \"blake3:…\", \"file_name\": \"…\"}: %v", err)
		}
		if ref.FileName != "" && CleanFileName(ref.FileName) == "" {
			return inputFile{}, fmt.Errorf("file_name %q is not a file's base name: no directory, no control character, at most %d bytes of UTF-8", ref.FileName, MaxFileName)
		}
		b, err := store.Stat(ref.Digest, f.MaxBytes)
		if tl := (*filestore.TooLargeError)(nil); errors.As(err, &tl) {
			return inputFile{}, fmt.Errorf("%s is larger than the %s its schema allows", userfile.Size(b.Size), userfile.Size(f.MaxBytes))
		}
		if err != nil {
			return inputFile{}, err
		}
		if !f.Accepts(b.MediaType) {
			return inputFile{}, mediaTypeError(f, b.MediaType)
		}
		return inputFile{file: File{Name: f.Name, FileName: ref.FileName, MediaType: b.MediaType, Size: b.Size, Digest: b.Digest}}, nil
	}
	return inputFile{}, fmt.Errorf("a file is its bytes in base64, or a reference {\"digest\": \"blake3:…\"}, not %s", JSONKind(v))
}

// Base64Fault says where text, which err (of base64.StdEncoding's
// DecodeString) says is not base64, goes wrong:
// its first byte outside the alphabet, else its end, part way through a
// group of four characters, else where the decoder stopped.
func Base64Fault(text string, err error) string {
	for i := 0; i < len(text); i++ {
		c := text[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '=' || c == '\r' || c == '\n') {
			return fmt.Sprintf("at byte %d", i)
		}
	}
	var ce base64.CorruptInputError
	if !errors.As(err, &ce) {
		return err.Error()
	}
	if n := len(text); n%4 != 0 && int(ce) >= n-n%4 {
		return "it ends part way through a group of four characters"
	}
	return fmt.Sprintf("at byte %d", int64(ce))
}

// mediaTypeError says a file of media type t is not one f declares.
func mediaTypeError(f plan.FileField, t string) error {
	if t == "" {
		t = "none agentc recognises"
		if f.Accepts("text/plain") {
			t += " (text is UTF-8 throughout, with no control character, C0 or C1, but tab, line feed, carriage return and form feed)"
		}
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
func (r *Runner) userParts(ctx context.Context, data any, files []File) ([]Part, error) {
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
		err := r.prompt.WithContext(ctx).ExecuteFiles(&text, data, func(name string) error {
			flush()
			f := byName[name]
			parts = append(parts, Part{File: &f})
			placed[name] = true
			return nil
		})
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil // stopped by the run's end, as userMessage says
			}
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
	if err := r.placedWithin(ctx, parts); err != nil {
		return nil, err
	}
	return slices.Clip(parts), nil
}

// placedWithin holds the files the first message places to the run's
// bound on a conversation's files (Options.MaxFileBytes, else
// plan.DefaultMaxRunFileBytes), as checkInputFiles holds the files given:
// a prompt may print a file more than once (twice, or in a range over the
// input, as many times as the input has items), and every request sends
// it each time. Not in a run started before that bound
// (WithPlacedFilesUnbounded, WithoutFileBounds).
func (r *Runner) placedWithin(ctx context.Context, parts []Part) error {
	if ctx.Value(placedFilesUnboundedKey{}) != nil || ctx.Value(fileBoundsOffKey{}) != nil {
		return nil
	}
	limit := r.opts.MaxFileBytes
	if limit <= 0 {
		limit = plan.DefaultMaxRunFileBytes
	}
	n, size, _ := filesIn([]Message{{Parts: parts}})
	if size <= limit {
		return nil
	}
	return &InputError{fmt.Sprintf("the prompt places the input's files %d times, %d bytes together, more than the %s a conversation's files may come to", n, size, userfile.Size(limit))}
}
