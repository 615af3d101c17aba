package runcmd

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
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
// anything runs: a mismatch is a usage error (exit 2). All of an input's
// files are checked before any is stored (filestore.Stage).

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

// existingStore is dir when it is a file store, else "": a directory that
// holds blobs named by their digests and nothing else (a directory of the
// person's own called files is no store, and a replay's files are not
// put in it).
func existingStore(dir string) string {
	d, err := os.Open(dir)
	if err != nil {
		return ""
	}
	defer d.Close()
	names, err := d.Readdirnames(256)
	if err != nil {
		return ""
	}
	blobs := 0
	for _, n := range names {
		switch {
		case filestore.CheckDigest(filestore.Prefix+n) == nil:
			blobs++
		case !strings.HasPrefix(n, "."):
			return ""
		}
	}
	if blobs == 0 {
		return ""
	}
	return dir
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
	fi := &fileInputs{fields: fields}
	// The agent's provider, after --model, bounds each file by its type:
	// a file it would refuse at its first call is refused before it is
	// stored. (Its own provider's bounds hold the schema's already; a
	// model retargeted to another provider may take less.)
	if limits, ok := plan.FileLimits[p.Agent.Model.Provider]; ok {
		fi.provider, fi.limits = p.Agent.Model.Provider, limits
	}
	return fi, nil
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
// names; else a temporary directory that done removes. A replay's
// temporary store reads what it does not hold from the store beside its
// journal where there is one (what --record made, FILE.files, or
// DIR/files, where a batch's and a server's journals keep theirs), so
// that an input naming its files by digest, as the journal and a served
// run's record do, finds them; the files the replay is given go to its
// own store, never beside the journal.
func storeFor(f Flags) (store *filestore.Store, done func(), err error) {
	beside := ""
	switch {
	case f.record != "" && f.batch != "":
		beside = filepath.Join(f.record, "files")
	case f.record != "":
		beside = f.record + ".files"
	case f.replay != "" && f.batch != "":
		beside = existingStore(filepath.Join(f.replay, "files"))
	case f.replay != "":
		beside = cmp.Or(existingStore(f.replay+".files"), existingStore(filepath.Join(filepath.Dir(f.replay), "files")))
	}
	if f.record != "" {
		// The store is named after what --record names: a link put at
		// its name, before the run or while it runs, would lead the
		// files a run is given, and those its tools return, elsewhere.
		s, err := filestore.OpenOwn(beside)
		if err != nil {
			return nil, nil, &ExitError{Code: ExitFindings, Err: err}
		}
		return s, func() { s.Close() }, nil
	}
	var under *filestore.Store
	if beside != "" {
		if under, err = filestore.Open(beside); err != nil {
			return nil, nil, &ExitError{Code: ExitFindings, Err: err}
		}
	}
	closeUnder := func() {
		if under != nil {
			under.Close()
		}
	}
	tmp, err := os.MkdirTemp("", "agentc-files-")
	if err != nil {
		closeUnder()
		return nil, nil, &ExitError{Code: ExitFindings, Err: err}
	}
	s, err := filestore.Open(tmp)
	if err != nil {
		os.RemoveAll(tmp)
		closeUnder()
		return nil, nil, &ExitError{Code: ExitFindings, Err: err}
	}
	if under != nil {
		s.Over(under)
	}
	return s, func() { s.Close(); os.RemoveAll(tmp); closeUnder() }, nil
}

// fileInputs resolves the files of one input.
type fileInputs struct {
	fields []plan.FileField
	store  *filestore.Store
	stdin  io.Reader // nil once read, or when the input came from it
	// provider takes files of each media type up to limits; nil limits
	// bound none but by their fields (the test model).
	provider string
	limits   map[string]int64
	// own are the files of the batch itself, which its lines may not
	// name: the batch file and what the run writes (see batchOwn).
	own *ownFiles
}

// ownFiles are a batch's own files: the batch file, its events file and
// standard output where they are files, and its --record directory,
// with everything beneath it (other items' journals and files).
type ownFiles struct {
	files []os.FileInfo
	dirs  []string // absolute, links resolved
}

// batchOwn returns the files a batch of the flags reads and writes, as
// they stand when it starts.
func batchOwn(f Flags) *ownFiles {
	o := &ownFiles{}
	for _, p := range []string{f.batch, f.events} {
		if p == "" || p == "-" {
			continue
		}
		if st, err := os.Stat(p); err == nil {
			o.files = append(o.files, st)
		}
	}
	if st, err := os.Stdout.Stat(); err == nil && st.Mode().IsRegular() {
		o.files = append(o.files, st)
	}
	if f.record != "" {
		if d, err := filepath.Abs(f.record); err == nil {
			if r, err := filepath.EvalSymlinks(d); err == nil {
				d = r
			}
			o.dirs = append(o.dirs, d)
		}
	}
	return o
}

// holds reports whether the file at path, opened as st, is one of the
// batch's own.
func (o *ownFiles) holds(path string, st os.FileInfo) bool {
	if o == nil {
		return false
	}
	for _, f := range o.files {
		if os.SameFile(f, st) {
			return true
		}
	}
	real, err := filepath.Abs(path)
	if err == nil {
		if r, err := filepath.EvalSymlinks(real); err == nil {
			real = r
		}
	}
	for _, d := range o.dirs {
		rel, err := filepath.Rel(d, real)
		if err != nil || !filepath.IsLocal(rel) {
			continue
		}
		// What the batch keeps there: its items' journals, its file
		// store and its lock; a directory the batch's own files share
		// with the person's (--record beside the batch file) keeps
		// those readable.
		first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		if first == "files" || first == "batch" || first == "batch.lock" || journalName.MatchString(first) {
			return true
		}
	}
	return false
}

// journalName is the name of a batch item's journal in its --record
// directory.
var journalName = regexp.MustCompile(`^[0-9]+-[0-9a-f]+\.jsonl$`)

// resolve returns input with each file it names by path, and each
// --input-file flag (given), put in the store and named by reference.
// Paths in the input are relative to base. What a file is refused for is
// an error naming the file; usage says it is the caller's mistake (exit 2)
// rather than the file system's. Every file is checked before any is put
// in the store: an input refused leaves nothing there.
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
		// null decodes to no map at all, which no file could be put in.
		if err := dec.Decode(&obj); err != nil || obj == nil {
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
	var staged []*filestore.Staged
	defer func() {
		for _, st := range staged {
			st.Discard() // nothing, once committed
		}
	}()
	var total int64
	take := func(f plan.FileField, st *filestore.Staged, name, what string) error {
		staged = append(staged, st)
		if total += st.Size; total > plan.DefaultMaxRunFileBytes {
			return UsageError("%s: the run's files come to more than the %s a run takes", what, userfile.Size(plan.DefaultMaxRunFileBytes))
		}
		// A name that is not a plain base name (a newline, an escape
		// in it) is left out rather than shown or sent.
		obj[f.Name] = agentrt.FileRef{Digest: st.Digest, FileName: agentrt.CleanFileName(name)}
		return nil
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
		what := "--input-file " + g
		st, base, err := fi.stagePath(f, path, what)
		if err != nil {
			return nil, err
		}
		if err := take(f, st, base, what); err != nil {
			return nil, err
		}
	}
	for _, f := range fi.fields {
		if _, ref := obj[f.Name].(map[string]any); ref && fi.own != nil {
			// A reference by digest names a file in the store, which
			// holds every item's files: a line gives its own.
			return nil, UsageError("input %s: a batch line gives a file as \"@PATH\" or its bytes in base64, never a stored file by its digest", f.Name)
		}
		s, ok := obj[f.Name].(string)
		if !ok || seen[f.Name] {
			continue
		}
		path, ok := strings.CutPrefix(s, "@")
		if !ok {
			// The file's bytes in base64, as the contract has it.
			what := "input " + f.Name
			st, err := fi.stageBase64(f, s, what)
			if err != nil {
				return nil, err
			}
			if err := take(f, st, "", what); err != nil {
				return nil, err
			}
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
		if base == "" {
			return nil, UsageError("input %s %q: a batch read from standard input or a device names no file by path: give the file's bytes in base64, or name the files' directory with --batch-files DIR", f.Name, s)
		}
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
			return nil, refused(f, what, err)
		}
		if fi.own != nil {
			if info, err := file.Stat(); err == nil && fi.own.holds(filepath.Join(base, path), info) {
				file.Close()
				return nil, UsageError("input %s %q: names a file of the batch itself (the batch file, its events, its results or what --record keeps), which a line may not give", f.Name, s)
			}
		}
		st, err := fi.stageOpen(f, file, what)
		if err != nil {
			return nil, err
		}
		if err := take(f, st, filepath.Base(path), what); err != nil {
			return nil, err
		}
	}
	for _, st := range staged {
		if err := st.Commit(); err != nil {
			return nil, &ExitError{Code: ExitFindings, Err: err}
		}
	}
	return json.Marshal(obj)
}

func baseName(base string) string {
	if base == "." {
		return "the working directory"
	}
	return base
}

// lines returns what makes a batch line's input (the batch of the flags),
// its files named beneath --batch-files or the batch file's directory put
// in the store; nil when the agent takes no files. Its errors are the
// line's.
func (fi *fileInputs) lines(f Flags) func(line []byte) ([]byte, error) {
	if len(fi.fields) == 0 {
		return nil
	}
	// A line names files beneath --batch-files, or beside the batch file,
	// never the batch's own; a batch from standard input or a device
	// (/dev/stdin, a pipe) has no directory of its own, and without
	// --batch-files its lines name no file by path.
	base := f.batchFiles
	if st, err := os.Stat(f.batch); base == "" && f.batch != "-" && err == nil && st.Mode().IsRegular() {
		base = filepath.Dir(f.batch)
	}
	own := batchOwn(f)
	return func(line []byte) ([]byte, error) {
		one := *fi
		one.stdin, one.own = nil, own
		in, err := one.resolve(line, nil, base)
		var ee *ExitError
		if errors.As(err, &ee) {
			err = ee.Err
		}
		return in, err
	}
}

// stagePath stages the file at path ("-": standard input) for field f,
// checked against f, and returns it with the base name its reference
// gives.
func (fi *fileInputs) stagePath(f plan.FileField, path, what string) (*filestore.Staged, string, error) {
	if path == "-" {
		if fi.stdin == nil {
			return nil, "", UsageError("%s: standard input is read already (by --input, or another file)", what)
		}
		in := fi.stdin
		fi.stdin = nil
		st, err := fi.stageReader(f, in, what)
		return st, "", err
	}
	file, err := userfile.Open(path)
	if err != nil {
		return nil, "", refused(f, what, err)
	}
	st, err := fi.stageOpen(f, file, what)
	return st, filepath.Base(path), err
}

// stageOpen stages the rest of file, and closes it, for field f, checked
// against f.
func (fi *fileInputs) stageOpen(f plan.FileField, file *os.File, what string) (*filestore.Staged, error) {
	defer file.Close()
	st, err := fi.store.StageOpen(file, f.MaxBytes)
	return fi.checked(f, st, what, err)
}

// stageReader stages what r holds for field f, checked against f.
func (fi *fileInputs) stageReader(f plan.FileField, r io.Reader, what string) (*filestore.Staged, error) {
	st, err := fi.store.Stage(r, f.MaxBytes)
	return fi.checked(f, st, what, err)
}

// stageBase64 stages the bytes text gives in base64 for field f, checked
// against f. The text is in memory already, within the input's bound, so
// it is decoded whole, and a fault is said at its own byte.
func (fi *fileInputs) stageBase64(f plan.FileField, text, what string) (*filestore.Staged, error) {
	// The bound is the file's, in bytes: the line breaks MIME writes
	// every 76 characters, which the decoder skips, carry none of it. A
	// wrapped file within the bound was refused as larger than it.
	chars := int64(len(text) - strings.Count(text, "\n") - strings.Count(text, "\r"))
	if chars/4*3 > f.MaxBytes+3 {
		return nil, refused(f, what, &filestore.TooLargeError{Limit: f.MaxBytes})
	}
	data, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		return nil, UsageError("%s: not base64 (%s), nor \"@PATH\" naming a file", what, agentrt.Base64Fault(text, err))
	}
	st, err := fi.store.Stage(bytes.NewReader(data), f.MaxBytes)
	return fi.checked(f, st, what, err)
}

// checked returns the file staged for field f, or, when staging it
// failed or it is not what f or the provider takes, the error that
// refuses it (having discarded it).
func (fi *fileInputs) checked(f plan.FileField, st *filestore.Staged, what string, err error) (*filestore.Staged, error) {
	if err != nil {
		return nil, refused(f, what, err)
	}
	if !f.Accepts(st.MediaType) {
		st.Discard()
		is := "of no media type agentc recognises"
		switch {
		case st.MediaType != "":
			is = st.MediaType
		case f.Accepts("text/plain"):
			is += " (text is UTF-8 throughout, with no control character, C0 or C1, but tab, line feed, carriage return and form feed)"
		}
		return nil, UsageError("%s: the file is %s, and input %s takes %s", what, is, f.Name, strings.Join(f.MediaTypes, " or "))
	}
	if fi.limits != nil {
		switch max, ok := fi.limits[st.MediaType]; {
		case !ok:
			st.Discard()
			return nil, UsageError("%s: the file is %s, and %s does not take %s", what, st.MediaType, fi.provider, st.MediaType)
		case st.Size > max:
			st.Discard()
			return nil, UsageError("%s: the file is %s of %s, and %s takes %s up to %s", what, st.MediaType, userfile.Size(st.Size), fi.provider, st.MediaType, userfile.Size(max))
		}
	}
	return st, nil
}

// refused is the error of a file for field f that could not be read or
// stored: usage where it is the caller's (too large, not a file, not
// there), else the file system's.
func refused(f plan.FileField, what string, err error) error {
	var tl *filestore.TooLargeError
	var nr *userfile.NotRegularError
	switch {
	case errors.As(err, &tl):
		return UsageError("%s: the file is larger than the %s input %s takes", what, userfile.Size(f.MaxBytes), f.Name)
	case errors.As(err, &nr), errors.Is(err, os.ErrNotExist):
		return UsageError("%s: %s", what, userfile.Reason(err))
	}
	return &ExitError{Code: ExitFindings, Err: fmt.Errorf("%s: %w", what, err)}
}
