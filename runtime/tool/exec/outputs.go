package exec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"agentc.dev/agentc/internal/leaf/userfile"
	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/filestore"
)

// outputs are the output files of one call: a directory of the call's
// own, made when an argument first names one, and the names given.
type outputs struct {
	tool  *Tool
	dir   string   // "" until an argument names an output file
	names []string // in the order the arguments name them
}

// path is output_file NAME: the path of the output file NAME in the
// call's directory, named NAME and the extension of its first media type,
// for programs that choose a format by it.
func (o *outputs) path(name string) (string, error) {
	f, ok := o.tool.outputs[name]
	if !ok {
		return "", fmt.Errorf("the tool declares no output file %q", name)
	}
	if o.dir == "" {
		dir, err := os.MkdirTemp("", "agentc-out-")
		if err != nil {
			return "", fmt.Errorf("making the call's output directory: %s", reason(err))
		}
		o.dir = dir
	}
	if !slices.Contains(o.names, name) {
		o.names = append(o.names, name)
	}
	return filepath.Join(o.dir, name+f.Extension()), nil
}

// remove removes the call's directory, with all the program left in it.
// A directory in it the program made unreadable (chmod 0) keeps
// RemoveAll out, unless agentc runs as root: each is made 0700 again,
// through a Root, so that no link put in its place is followed out, and
// the removal is tried once more. What still stays (a chain of
// directories deeper than the open-file limit: RemoveAll holds a
// descriptor of each) is said on standard error, naming the path, so that
// the person can remove it.
func (o *outputs) remove() {
	if o.dir == "" {
		return
	}
	err := os.RemoveAll(o.dir)
	if err == nil {
		return
	}
	os.Chmod(o.dir, 0o700)
	if root, err := os.OpenRoot(o.dir); err == nil {
		fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
			switch {
			case err != nil || !d.IsDir():
			case strings.Count(p, "/") >= maxChmodDepth:
				// Each step opens p from the top: deeper, too slow.
				return fs.SkipDir
			default:
				// Before it is read, which the walk does next.
				root.Chmod(p, 0o700)
			}
			return nil
		})
		root.Close()
	}
	if err := os.RemoveAll(o.dir); err != nil {
		fmt.Fprintf(os.Stderr, "agentc: warning: tool %q: the output directory of a call, %s, could not be removed, with what the program left in it (%v); remove it by hand\n", o.tool.spec.Name, o.dir, err)
	}
}

// maxChmodDepth is how deep remove makes directories readable again.
const maxChmodDepth = 64

// collect reads the output files the program wrote into the run's file
// store and adds them to res, whose text says what each is, or why it is
// missing or was refused. A file that is not a regular file (a link, a
// FIFO, a directory), is larger than its bound, or is not of a declared
// media type is refused, and the result is an error: the program did not
// do what the tool declares.
func (o *outputs) collect(ctx context.Context, res runtime.ToolResult) (runtime.ToolResult, error) {
	store := runtime.FileStore(ctx)
	var notes []string
	var total int64
	for _, name := range o.names {
		f := o.tool.outputs[name]
		path := filepath.Join(o.dir, name+f.Extension())
		b, err := o.read(store, path, f, plan.DefaultMaxRunFileBytes-total)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			notes = append(notes, fmt.Sprintf("[output file %s: the program wrote none]", name))
			continue
		case errors.Is(err, errTogether):
			res.IsError = true
			notes = append(notes, fmt.Sprintf("[output file %s: the call's output files pass %s together]", name, userfile.Size(plan.DefaultMaxRunFileBytes)))
			continue
		case err != nil:
			res.IsError = true
			notes = append(notes, fmt.Sprintf("[output file %s: %s]", name, err))
			continue
		}
		total += b.Size
		res.Files = append(res.Files, runtime.File{Name: name, FileName: filepath.Base(path), MediaType: b.MediaType, Size: b.Size, Digest: b.Digest})
		notes = append(notes, fmt.Sprintf("[output file %s: %s, %d bytes]", name, b.MediaType, b.Size))
	}
	if res.Content == "(no output)" {
		res.Content = ""
	}
	if res.Content != "" && !strings.HasSuffix(res.Content, "\n") {
		res.Content += "\n"
	}
	res.Content += strings.Join(notes, "\n")
	return res, nil
}

// errTogether is read's error for a file that would take the call's
// output files past their bound together.
var errTogether = errors.New("the call's output files pass their bound together")

// read stores the file at path, if it is a regular file, not a link, of
// one of f's media types, at most f.MaxBytes and, as stored, at most
// room (errTogether).
func (o *outputs) read(store *filestore.Store, path string, f plan.FileField, room int64) (filestore.Blob, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return filestore.Blob{}, err
	}
	if !fi.Mode().IsRegular() {
		return filestore.Blob{}, fmt.Errorf("it is not a regular file (%s); the program must write the file itself", userfile.Kind(fi.Mode()))
	}
	if fi.Size() > f.MaxBytes {
		return filestore.Blob{}, fmt.Errorf("it is %d bytes, more than the %d the tool takes", fi.Size(), f.MaxBytes)
	}
	if store == nil {
		return filestore.Blob{}, fmt.Errorf("the run has no file store to keep it in")
	}
	file, err := userfile.Open(path)
	if err != nil {
		return filestore.Blob{}, fmt.Errorf("%s", reason(err))
	}
	defer file.Close()
	// What was opened is what was looked at: not a link put in its
	// place since.
	if now, err := file.Stat(); err != nil || !os.SameFile(fi, now) {
		return filestore.Blob{}, fmt.Errorf("it changed while it was read")
	}
	// Its type is known before it is stored: a file refused leaves
	// nothing in the store. The first bytes name it; text is text
	// throughout, which staging checks as it copies.
	head := make([]byte, plan.SniffLen)
	n, err := io.ReadFull(file, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return filestore.Blob{}, fmt.Errorf("%s", reason(err))
	}
	head = head[:n]
	sniff := &plan.Sniffer{}
	sniff.Write(head)
	mt := sniff.Head()
	switch {
	case mt == "":
		return filestore.Blob{}, fmt.Errorf("it is none of the media types agentc recognises, and the tool declares %s", strings.Join(f.MediaTypes, ", "))
	case !f.Accepts(mt):
		return filestore.Blob{}, fmt.Errorf("it is a %s file, and the tool declares %s", mt, strings.Join(f.MediaTypes, ", "))
	}
	var body io.Reader = io.MultiReader(bytes.NewReader(head), file)
	limit := f.MaxBytes
	if mt == "text/plain" && o.tool.secrets.Len() > 0 {
		// Text is redacted as the program's output is: a tool given a
		// secret must not pass it on through a file, to the model, the
		// journal's store, or a test's recording. (Other media types
		// go as they are: see docs/security.md.)
		text, err := io.ReadAll(io.LimitReader(body, f.MaxBytes+1))
		if err != nil {
			return filestore.Blob{}, fmt.Errorf("%s", reason(err))
		}
		if int64(len(text)) > f.MaxBytes {
			return filestore.Blob{}, fmt.Errorf("it is more than the %d bytes the tool takes", f.MaxBytes)
		}
		if at := notTextAt(text); at >= 0 {
			return filestore.Blob{}, fmt.Errorf("it is not text throughout: byte %d is a control character or not UTF-8", at)
		}
		red := o.tool.secrets.Bytes(text)
		if plan.SniffMediaType(red) != mt {
			return filestore.Blob{}, fmt.Errorf("it is no longer text once its secrets are replaced")
		}
		body = bytes.NewReader(red)
		// What replaced a secret may be longer than it: the file's
		// bound is on what the program wrote.
		limit = max(limit, int64(len(red)))
	}
	st, err := store.Stage(body, limit)
	var tl *filestore.TooLargeError
	switch {
	case errors.As(err, &tl):
		return filestore.Blob{}, fmt.Errorf("it is more than the %d bytes the tool takes", f.MaxBytes)
	case err != nil:
		return filestore.Blob{}, fmt.Errorf("storing it: %s", reason(err))
	}
	if st.MediaType != mt {
		st.Discard()
		return filestore.Blob{}, fmt.Errorf("it is not text throughout: past its start it holds a control character or a byte that is not UTF-8")
	}
	if st.Size > room {
		// Refused, so not kept: a refused file leaves nothing in the
		// store.
		st.Discard()
		return filestore.Blob{}, errTogether
	}
	if err := st.Commit(); err != nil {
		return filestore.Blob{}, fmt.Errorf("storing it: %s", reason(err))
	}
	return st.Blob, nil
}

// notTextAt is the offset of the first byte of b that is not text, or -1.
func notTextAt(b []byte) int64 {
	var s plan.Sniffer
	s.Write(b)
	return s.NotTextAt()
}
