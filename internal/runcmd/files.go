package runcmd

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"agentc.dev/agentc/internal/leaf/userfile"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/filestore"
)

// A run's files: an agent whose input schema declares files (see
// plan.FileFields) is given each one by path, with --input-file NAME=PATH
// (PATH - for standard input), or as "@PATH" in the input's JSON at the
// file's property (a batch line's paths are relative to the batch file).
// Each file is put in the run's file store — beside the journal with
// --record (FILE.files, or DIR/files for a batch), else a temporary one —
// and the input names it there by digest. A file's media type, sniffed
// from its bytes, and its size are checked against its declaration before
// anything runs: a mismatch is a usage error (exit 2).

// FilesVar names the directory of the file store a run elsewhere (on
// Temporal) puts its files in, and its workers read them from.
const FilesVar = "AGENTC_FILES"

// remoteStore opens the store a run elsewhere of agent p, which takes
// files, puts them in, for its workers to read: the directory FilesVar
// names.
func remoteStore(p *plan.Plan) (*filestore.Store, error) {
	dir := os.Getenv(FilesVar)
	if dir == "" {
		return nil, UsageError("agent %s takes files: a run elsewhere puts them in the store its workers read, and $%s names none (a directory every worker reads, as agentc worker --files)", p.Agent.Name, FilesVar)
	}
	s, err := filestore.Open(dir)
	if err != nil {
		return nil, UsageError("$%s: %v", FilesVar, err)
	}
	return s, nil
}

// inputFileFields reads the file inputs the agent declares.
func inputFileFields(p *plan.Plan, f Flags) (*fileInputs, error) {
	if p.Agent.Input == nil {
		return &fileInputs{}, nil
	}
	fields, err := plan.FileFields(p.Agent.Input.Schema)
	if err != nil {
		return nil, &ExitError{Code: ExitFindings, Err: fmt.Errorf("agent %s: input schema: %w", p.Agent.Name, err)}
	}
	return &fileInputs{fields: fields}, nil
}

// takesToolFiles reports whether the agent has a tool whose results may
// carry files (an mcp server's images, an exec tool's output files), which
// need the run's store.
func takesToolFiles(p *plan.Plan) bool {
	for _, t := range p.Agent.Capabilities.Tools {
		if t.Kind == "mcp" || len(t.OutputFiles) > 0 {
			return true
		}
	}
	return false
}

// storeFor opens the file store of a run or a batch: beside what --record
// names, else a temporary directory that done removes.
func storeFor(f Flags) (store *filestore.Store, done func(), err error) {
	dir := ""
	switch {
	case f.record != "" && f.batch != "":
		dir = filepath.Join(f.record, "files")
	case f.record != "":
		dir = f.record + ".files"
	}
	if dir != "" {
		s, err := filestore.Open(dir)
		if err != nil {
			return nil, nil, &ExitError{Code: ExitFindings, Err: err}
		}
		return s, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "agentc-files-")
	if err != nil {
		return nil, nil, &ExitError{Code: ExitFindings, Err: err}
	}
	s, err := filestore.Open(tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, nil, &ExitError{Code: ExitFindings, Err: err}
	}
	return s, func() { os.RemoveAll(tmp) }, nil
}

// fileInputs resolves the files of one input.
type fileInputs struct {
	fields []plan.FileField
	store  *filestore.Store
	stdin  io.Reader // nil once read, or when the input came from it
}

// resolve returns input with each file it names by path, and each
// --input-file flag (given), put in the store and named by reference.
// Paths in the input are relative to base. What a file is refused for is
// an error naming the file; usage says it is the caller's mistake (exit 2)
// rather than the file system's.
func (fi *fileInputs) resolve(input json.RawMessage, given []string, base string) (json.RawMessage, error) {
	if len(fi.fields) == 0 {
		if len(given) > 0 {
			return nil, UsageError("--input-file: the agent declares no file input (a property of its input schema with contentEncoding base64 and a contentMediaType)")
		}
		return input, nil
	}
	obj := map[string]any{}
	if len(bytes.TrimSpace(input)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(input))
		dec.UseNumber()
		if err := dec.Decode(&obj); err != nil {
			return input, nil // not an object: the run says what is wrong with it
		}
	}
	field := func(name string) (plan.FileField, bool) {
		i := slices.IndexFunc(fi.fields, func(f plan.FileField) bool { return f.Name == name })
		if i < 0 {
			return plan.FileField{}, false
		}
		return fi.fields[i], true
	}
	names := func() string {
		var n []string
		for _, f := range fi.fields {
			n = append(n, f.Name)
		}
		return strings.Join(n, ", ")
	}
	seen := map[string]bool{}
	for _, g := range given {
		name, path, ok := strings.Cut(g, "=")
		if !ok || name == "" || path == "" {
			return nil, UsageError("--input-file %q: give NAME=PATH, NAME a file input of the agent (%s)", g, names())
		}
		f, ok := field(name)
		if !ok {
			return nil, UsageError("--input-file %s: the agent has no file input %q (it has %s)", g, name, names())
		}
		if seen[name] {
			return nil, UsageError("--input-file: %s is given twice", name)
		}
		seen[name] = true
		ref, err := fi.put(f, path, "--input-file "+g)
		if err != nil {
			return nil, err
		}
		obj[name] = ref
	}
	for _, f := range fi.fields {
		s, ok := obj[f.Name].(string)
		if !ok || seen[f.Name] {
			continue
		}
		path, ok := strings.CutPrefix(s, "@")
		if !ok {
			// The file's bytes in base64, as the contract has it.
			ref, err := fi.putReader(f, base64.NewDecoder(base64.StdEncoding, strings.NewReader(s)), "", "input "+f.Name)
			if err != nil {
				return nil, err
			}
			obj[f.Name] = ref
			continue
		}
		if path == "" {
			return nil, UsageError("input %s: \"@\" names no file", f.Name)
		}
		// A path in the input names a file beneath the input's own
		// directory (the batch file's, or the working directory): input
		// written by someone else, a caller's request turned into a
		// batch line, must not reach the rest of the machine's files.
		// --input-file, which the person running types, takes any path.
		if path == "-" || filepath.IsAbs(path) {
			return nil, UsageError("input %s %q: a file named in the input is a path relative to %s, beneath it; give another with --input-file %s=PATH", f.Name, s, baseName(base), f.Name)
		}
		// The file is opened through the directory (userfile.OpenBeneath),
		// so a link swapped in after the path was checked cannot lead the
		// read out of it.
		what := "input " + f.Name + " " + s
		file, err := userfile.OpenBeneath(base, path)
		var out *userfile.OutsideError
		if errors.As(err, &out) {
			return nil, UsageError("input %s %q: a file named in the input lies beneath %s, and this one does not (its links followed); give it with --input-file %s=PATH", f.Name, s, baseName(base), f.Name)
		}
		if err != nil {
			_, err = fi.check(f, filestore.Blob{}, "", what, err)
			return nil, err
		}
		b, err := fi.store.PutOpen(file, f.MaxBytes)
		file.Close()
		ref, err := fi.check(f, b, filepath.Base(path), what, err)
		if err != nil {
			return nil, err
		}
		obj[f.Name] = ref
	}
	return json.Marshal(obj)
}

func baseName(base string) string {
	if base == "." {
		return "the working directory"
	}
	return base
}

// lines returns what makes a batch line's input, its files named beside
// the batch file (batchFile, "-" for standard input) put in the store;
// nil when the agent takes no files. Its errors are the line's.
func (fi *fileInputs) lines(batchFile string) func(line []byte) ([]byte, error) {
	if len(fi.fields) == 0 {
		return nil
	}
	base := "."
	if batchFile != "-" {
		base = filepath.Dir(batchFile)
	}
	return func(line []byte) ([]byte, error) {
		one := *fi
		one.stdin = nil
		in, err := one.resolve(line, nil, base)
		var ee *ExitError
		if errors.As(err, &ee) {
			err = ee.Err
		}
		return in, err
	}
}

// put stores the file at path ("-": standard input) for field f and
// checks it against f.
func (fi *fileInputs) put(f plan.FileField, path, what string) (agentrt.FileRef, error) {
	if path == "-" {
		if fi.stdin == nil {
			return agentrt.FileRef{}, UsageError("%s: standard input is read already (by --input, or another file)", what)
		}
		in := fi.stdin
		fi.stdin = nil
		return fi.putReader(f, in, "", what)
	}
	b, err := fi.store.PutFile(path, f.MaxBytes)
	return fi.check(f, b, filepath.Base(path), what, err)
}

// putReader stores what r holds for field f and checks it against f.
func (fi *fileInputs) putReader(f plan.FileField, r io.Reader, name, what string) (agentrt.FileRef, error) {
	b, err := fi.store.Put(r, f.MaxBytes)
	var ce base64.CorruptInputError
	if errors.As(err, &ce) {
		return agentrt.FileRef{}, UsageError("%s: not base64 (at byte %d), nor \"@PATH\" naming a file", what, int64(ce))
	}
	return fi.check(f, b, name, what, err)
}

// check turns what storing a file for field f gave into its reference,
// or the error that refuses it.
func (fi *fileInputs) check(f plan.FileField, b filestore.Blob, name, what string, err error) (agentrt.FileRef, error) {
	var tl *filestore.TooLargeError
	var nr *userfile.NotRegularError
	switch {
	case errors.As(err, &tl):
		return agentrt.FileRef{}, UsageError("%s: the file is larger than the %s input %s takes", what, userfile.Size(f.MaxBytes), f.Name)
	case errors.As(err, &nr), errors.Is(err, os.ErrNotExist):
		return agentrt.FileRef{}, UsageError("%s: %s", what, userfile.Reason(err))
	case err != nil:
		return agentrt.FileRef{}, &ExitError{Code: ExitFindings, Err: fmt.Errorf("%s: %w", what, err)}
	}
	if !f.Accepts(b.MediaType) {
		is := "of no media type agentc recognises"
		if b.MediaType != "" {
			is = "a " + b.MediaType + " file"
		}
		return agentrt.FileRef{}, UsageError("%s: the file is %s, and input %s takes %s", what, is, f.Name, strings.Join(f.MediaTypes, " or "))
	}
	return agentrt.FileRef{Digest: b.Digest, FileName: name}, nil
}
