// Package fs is the fs tool kind: it lets a model read text files and list
// directories under one root directory that the manifest declares, and
// nothing outside it.
//
// Every file is opened through an [os.Root], so "..", absolute paths and
// symbolic links that leave the root are refused by the operating system,
// component by component, not by string matching. Paths are also checked
// up front, for clearer messages. A symbolic link is followed while it
// stays inside the root: it must be relative, and its target must never
// step out of the root, even on the way back in ("../root/a.txt" is
// refused). os.Root does not guard against hard links or mount points
// placed under the root; whoever writes the manifest owns what the root
// contains.
//
// A read returns a file's text whole or not at all: a file over max_bytes
// is refused, never truncated, and so is content that is not UTF-8 or
// that contains NUL bytes. A list returns a directory's entries sorted,
// one per line, cut at 1000 entries or max_bytes with a note. Errors name
// the path as the model gave it, never a path on the host.
package fs

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/tool/internal/toolio"
)

// DefaultMaxBytes is the cap on one read when the plan sets none; the
// manifest schema has the same default.
const DefaultMaxBytes = 1 << 20

const (
	// maxEntries caps the lines of one listing.
	maxEntries = 1000
	// maxScan caps the entries read from one directory before sorting, so
	// a huge directory costs bounded memory.
	maxScan = 100000
)

// operation is one op a tool may declare.
type operation struct {
	name    string
	summary string // for the description the model sees
	run     func(t *Tool, ctx context.Context, r *os.Root, name, given string) (string, error)
}

// operations are the ops of the fs kind, in the order specs list them.
var operations = []operation{
	{"read", "read returns a file's text", (*Tool).read},
	{"list", "list returns a directory's entries", (*Tool).list},
}

// Tool is an fs tool: a runtime.Tool that reads and lists under its root.
// It holds its root open from New to Close, so that the directory it
// reads is the one New was given whatever becomes of its name (another
// tool that may write beside it could put a link to elsewhere there); a
// root removed and made again in its place is taken anew. It is safe for
// concurrent use.
type Tool struct {
	mu         sync.Mutex
	root       *heldRoot // never named in a result or error
	real       string    // where the root is, its links resolved at New
	closed     bool
	ops        []operation // allowed, in the order of operations
	maxBytes   int
	maxEntries int
	maxScan    int
	spec       runtime.ToolSpec
}

var _ runtime.Tool = (*Tool)(nil)

// isOp reports whether name is an op of the fs kind.
func isOp(name string) bool {
	return slices.ContainsFunc(operations, func(o operation) bool { return o.name == name })
}

// allows reports whether the tool declares the op name.
func (t *Tool) allows(name string) bool {
	return slices.ContainsFunc(t.ops, func(o operation) bool { return o.name == name })
}

// New returns the fs tool called name that t declares. A relative t.Root
// is resolved against baseDir, the directory of the agent's manifest or
// plan. Empty t.Ops allows every op (the plan omits an empty list, so the
// two cannot be told apart), and t.MaxBytes 0 means DefaultMaxBytes. New
// fails if the root is not an existing directory, and opens it: Close
// closes it.
func New(name string, t plan.Tool, baseDir string) (*Tool, error) {
	fail := func(format string, args ...any) (*Tool, error) {
		return nil, fmt.Errorf("fs tool %q: "+format, append([]any{name}, args...)...)
	}
	if t.Kind != "" && t.Kind != "fs" {
		return fail("kind is %q, not fs", t.Kind)
	}
	if t.Root == "" {
		return fail("no root")
	}
	if t.MaxBytes < 0 {
		return fail("max_bytes is %d; it must be positive", t.MaxBytes)
	}
	tool := &Tool{maxBytes: t.MaxBytes, maxEntries: maxEntries, maxScan: maxScan}
	if tool.maxBytes == 0 {
		tool.maxBytes = DefaultMaxBytes
	}
	for _, op := range operations {
		if len(t.Ops) == 0 || slices.Contains(t.Ops, op.name) {
			tool.ops = append(tool.ops, op)
		}
	}
	for _, op := range t.Ops {
		if !isOp(op) {
			return fail("unknown op %q; ops are read and list", op)
		}
	}

	root := filepath.FromSlash(t.Root)
	if !filepath.IsAbs(root) {
		root = filepath.Join(baseDir, root)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return fail("root %q: %v", t.Root, err)
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fail("root %q (%s) does not exist", t.Root, abs)
	case err != nil:
		return fail("root %q: %v", t.Root, err)
	case !fi.IsDir():
		return fail("root %q (%s) is not a directory", t.Root, abs)
	}
	tool.spec, err = tool.makeSpec(name, t.Description)
	if err != nil {
		return fail("%v", err)
	}
	if tool.real, err = filepath.EvalSymlinks(abs); err != nil {
		return fail("root %q: %v", t.Root, err)
	}
	r, err := os.OpenRoot(tool.real)
	if err != nil {
		return fail("root %q: %v", t.Root, err)
	}
	tool.root = &heldRoot{r: r}
	return tool, nil
}

// Close closes the tool's root; a call after it fails.
func (t *Tool) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed {
		t.closed = true
		t.root.retire()
	}
	return nil
}

// heldRoot is a root the tool holds, and the calls reading it.
type heldRoot struct {
	r     *os.Root
	users int
	gone  bool // replaced, or the tool closed: closed when its last call ends
}

// errClosed is a call's error after Close.
var errClosed = errors.New("the tool is closed")

// current returns the root a call reads, and the function the call runs
// when it is done with it: the one held, or, where that was removed and a
// directory made again in its place, found by a lookup that follows no
// link (renewRoot), that directory, held from then on. A root replaced is
// closed once the calls reading it are done.
func (t *Tool) current() (*os.Root, func(), error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, nil, errClosed
	}
	if r := renewRoot(t.root.r, t.real); r != nil {
		t.root.retire()
		t.root = &heldRoot{r: r}
	}
	h := t.root
	h.users++
	return h.r, func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		h.users--
		if h.gone && h.users == 0 {
			h.r.Close()
		}
	}, nil
}

// retire marks h replaced, closing it if no call reads it; t.mu is held.
func (h *heldRoot) retire() {
	h.gone = true
	if h.users == 0 {
		h.r.Close()
	}
}

// Spec describes the tool to a model. It is the same, byte for byte, for
// the same name and plan.Tool.
func (t *Tool) Spec() runtime.ToolSpec {
	s := t.spec
	s.Schema = bytes.Clone(s.Schema)
	return s
}

// schemaProperty and argsSchema fix the order of the schema's keys.
type schemaProperty struct {
	Type        string   `json:"type"`
	Enum        []string `json:"enum,omitempty"`
	Description string   `json:"description"`
}

type argsSchema struct {
	Type       string `json:"type"`
	Properties struct {
		Op   schemaProperty `json:"op"`
		Path schemaProperty `json:"path"`
	} `json:"properties"`
	Required             []string `json:"required"`
	AdditionalProperties bool     `json:"additionalProperties"`
}

func (t *Tool) makeSpec(name, description string) (runtime.ToolSpec, error) {
	var names, summaries []string
	for _, op := range t.ops {
		names = append(names, op.name)
		summaries = append(summaries, op.summary)
	}
	desc := strings.TrimSpace(description)
	if desc != "" && !strings.ContainsAny(desc[len(desc)-1:], ".!?") {
		desc += "."
	}
	desc += fmt.Sprintf(" Operations: %s. Paths are relative to the tool's root directory (\".\" is the root itself); absolute paths and \"..\" are refused.",
		strings.Join(summaries, "; "))

	var s argsSchema
	s.Type = "object"
	s.Properties.Op = schemaProperty{Type: "string", Enum: names, Description: "The operation."}
	s.Properties.Path = schemaProperty{Type: "string", Description: `Slash-separated path relative to the tool's root, e.g. "docs/intro.md"; "." is the root.`}
	s.Required = []string{"op", "path"}
	schema, err := json.Marshal(s)
	if err != nil {
		return runtime.ToolSpec{}, err
	}
	return runtime.ToolSpec{Name: name, Description: strings.TrimSpace(desc), Schema: schema}, nil
}

// Call runs one operation. Its errors are meant for the model: they name
// the path as given and say what to do instead.
func (t *Tool) Call(ctx context.Context, args json.RawMessage) (runtime.ToolResult, error) {
	if err := ctx.Err(); err != nil {
		return runtime.ToolResult{}, err
	}
	a, err := parseArgs(args)
	if err != nil {
		return runtime.ToolResult{}, err
	}
	op, err := t.op(a.op)
	if err != nil {
		return runtime.ToolResult{}, err
	}
	name, err := cleanPath(a.path)
	if err != nil {
		return runtime.ToolResult{}, fmt.Errorf("%s %q: %w", op.name, a.path, err)
	}
	root, done, err := t.current()
	if err != nil {
		return runtime.ToolResult{}, fmt.Errorf("%s %q: %w", op.name, a.path, err)
	}
	defer done()
	out, err := op.run(t, ctx, root, name, a.path)
	if err != nil {
		return runtime.ToolResult{}, err
	}
	return runtime.ToolResult{Content: out}, nil
}

// argShape is the shape every argument error repeats, so a model can
// correct its call.
const argShape = `want {"op": string, "path": string}`

type arguments struct{ op, path string }

// parseArgs decodes the arguments strictly: one JSON object with exactly
// the keys op and path, both strings. encoding/json alone would match keys
// case-insensitively and accept trailing data.
func parseArgs(raw json.RawMessage) (arguments, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var fields map[string]json.RawMessage
	if err := dec.Decode(&fields); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te):
			return arguments{}, fmt.Errorf("arguments must be a JSON object, not %s; %s", te.Value, argShape)
		case errors.Is(err, io.EOF):
			return arguments{}, fmt.Errorf("arguments are empty; %s", argShape)
		}
		return arguments{}, fmt.Errorf("arguments are not valid JSON (%v); %s", err, argShape)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return arguments{}, fmt.Errorf("arguments have data after the JSON object; %s", argShape)
	}
	if fields == nil {
		return arguments{}, fmt.Errorf("arguments must be a JSON object, not null; %s", argShape)
	}
	var unknown []string
	for k := range fields {
		if k != "op" && k != "path" {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return arguments{}, fmt.Errorf("unknown argument %q; %s", unknown[0], argShape)
	}
	var a arguments
	for _, f := range []struct {
		key string
		dst *string
	}{{"op", &a.op}, {"path", &a.path}} {
		v, ok := fields[f.key]
		if !ok || string(v) == "null" {
			return arguments{}, fmt.Errorf("missing argument %q; %s", f.key, argShape)
		}
		if err := json.Unmarshal(v, f.dst); err != nil {
			return arguments{}, fmt.Errorf("argument %q must be a string; %s", f.key, argShape)
		}
	}
	return a, nil
}

func (t *Tool) op(name string) (operation, error) {
	var allowed []string
	for _, op := range t.ops {
		if op.name == name {
			return op, nil
		}
		allowed = append(allowed, fmt.Sprintf("%q", op.name))
	}
	if isOp(name) {
		return operation{}, fmt.Errorf("op %q is not allowed for this tool; it allows %s", name, strings.Join(allowed, " and "))
	}
	return operation{}, fmt.Errorf("unknown op %q; this tool allows %s", name, strings.Join(allowed, " and "))
}

// cleanPath checks a path the model gave and returns it in host form,
// relative to the root. os.Root would refuse escapes anyway; checking
// first gives the model a message it can act on.
func cleanPath(p string) (string, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", errors.New("the path contains a NUL byte")
	}
	if p == "" {
		return ".", nil
	}
	if strings.HasPrefix(p, "/") || filepath.IsAbs(p) || filepath.VolumeName(p) != "" ||
		(os.PathSeparator == '\\' && strings.HasPrefix(p, `\`)) {
		return "", errors.New(`absolute paths are refused; give a path relative to the tool's root ("." is the root)`)
	}
	isSep := func(r rune) bool { return r == '/' || r == os.PathSeparator }
	if slices.Contains(strings.FieldsFunc(p, isSep), "..") {
		return "", errors.New(`".." is refused; paths stay under the tool's root`)
	}
	return filepath.FromSlash(path.Clean(filepath.ToSlash(p))), nil
}

// reason says why a file operation failed without the path: errors from
// files opened through an os.Root carry the absolute host path.
func reason(err error) string {
	if toolio.Cause(err).Error() == "path escapes from parent" { // os.Root's unexported errPathEscapes
		return `the path leaves the tool's root (through ".." or a symbolic link)`
	}
	return toolio.Reason(err)
}

// open opens name under r without blocking on a FIFO or device.
func open(r *os.Root, name string) (*os.File, os.FileInfo, error) {
	f, err := r.OpenFile(name, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// read returns the text of a regular file of at most maxBytes. A larger
// file is refused rather than truncated: half a file read as if whole
// misleads more than an error that names the size.
func (t *Tool) read(_ context.Context, r *os.Root, name, given string) (string, error) {
	fail := func(format string, args ...any) (string, error) {
		return "", fmt.Errorf("read %q: "+format, append([]any{given}, args...)...)
	}
	// Stat before opening, so a FIFO or device is never opened; open
	// checks again in case the file changed in between.
	fi, err := r.Stat(name)
	if err == nil {
		if msg := t.notRegular(fi); msg != "" {
			return fail("%s", msg)
		}
	}
	f, fi, err := open(r, name)
	if err != nil {
		return fail("%s", reason(err))
	}
	defer f.Close()
	if msg := t.notRegular(fi); msg != "" {
		return fail("%s", msg)
	}
	if fi.Size() > int64(t.maxBytes) {
		return fail("the file is %d bytes, over this tool's cap of %d bytes (max_bytes)", fi.Size(), t.maxBytes)
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(t.maxBytes)+1))
	if err != nil {
		return fail("%s", reason(err))
	}
	if len(b) > t.maxBytes {
		return fail("the file grew past this tool's cap of %d bytes (max_bytes) while being read", t.maxBytes)
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return fail("the file is binary (a NUL byte at offset %d); this tool reads only UTF-8 text", i)
	}
	if !utf8.Valid(b) {
		return fail("the file is not UTF-8 text (invalid byte at offset %d); this tool reads only UTF-8 text", invalidOffset(b))
	}
	return string(b), nil
}

// notRegular says why fi cannot be read, or "" if it can.
func (t *Tool) notRegular(fi os.FileInfo) string {
	switch {
	case fi.IsDir():
		if t.allows("list") {
			return "is a directory: use list"
		}
		return "is a directory"
	case !fi.Mode().IsRegular():
		return "is not a regular file"
	}
	return ""
}

func invalidOffset(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// list returns a directory's entries sorted by name, one per line:
// directories end in "/", files carry their size. It stops at maxEntries
// lines or maxBytes of output and says so in a last line.
func (t *Tool) list(ctx context.Context, r *os.Root, name, given string) (string, error) {
	fail := func(format string, args ...any) (string, error) {
		return "", fmt.Errorf("list %q: "+format, append([]any{given}, args...)...)
	}
	f, fi, err := open(r, name)
	if err != nil {
		return fail("%s", reason(err))
	}
	defer f.Close()
	if !fi.IsDir() {
		if fi.Mode().IsRegular() && t.allows("read") {
			return fail("is a file, not a directory: use read")
		}
		return fail("is not a directory")
	}
	var entries []os.DirEntry
	scanCut := false
	for {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		// Read one past maxScan, to know whether there are more.
		batch, err := f.ReadDir(min(256, t.maxScan+1-len(entries)))
		entries = append(entries, batch...)
		if len(entries) > t.maxScan {
			entries, scanCut = entries[:t.maxScan], true
			break
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fail("%s", reason(err))
		}
	}
	if len(entries) == 0 {
		return "(empty directory)\n", nil
	}
	slices.SortFunc(entries, func(a, b os.DirEntry) int { return cmp.Compare(a.Name(), b.Name()) })

	var out strings.Builder
	shown := 0
	for _, e := range entries {
		line := t.describe(r, name, e) + "\n"
		if shown == t.maxEntries || out.Len()+len(line) > t.maxBytes {
			break
		}
		out.WriteString(line)
		shown++
	}
	switch {
	case scanCut:
		fmt.Fprintf(&out, "[listing cut: %d entries shown; the directory has more than %d, and only the first %d read were sorted]\n", shown, t.maxScan, t.maxScan)
	case shown < len(entries):
		fmt.Fprintf(&out, "[listing cut: %d of %d entries shown]\n", shown, len(entries))
	}
	return out.String(), nil
}

// describe renders one entry. Sizes come from the root, not from
// DirEntry.Info, which stats by host path.
func (t *Tool) describe(r *os.Root, dir string, e os.DirEntry) string {
	name := displayName(e.Name())
	full := filepath.Join(dir, e.Name())
	switch typ := e.Type(); {
	case typ.IsDir():
		return name + "/"
	case typ.IsRegular():
		fi, err := r.Lstat(full)
		if err != nil {
			return name + " (unreadable)"
		}
		return fmt.Sprintf("%s (%d bytes)", name, fi.Size())
	case typ&os.ModeSymlink != 0:
		fi, err := r.Stat(full)
		switch {
		case err != nil:
			return name + " (symbolic link that is broken or leaves the root)"
		case fi.IsDir():
			return name + "/ (symbolic link)"
		case fi.Mode().IsRegular():
			return fmt.Sprintf("%s (%d bytes, symbolic link)", name, fi.Size())
		}
	}
	return name + " (not a regular file)"
}

// displayName quotes a name that would not read back as itself on a line
// of its own: control characters, bytes that are not UTF-8, surrounding
// spaces, or a leading quote.
func displayName(name string) string {
	plain := utf8.ValidString(name) && strings.TrimSpace(name) == name && !strings.HasPrefix(name, `"`) &&
		!strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) })
	if plain {
		return name
	}
	return fmt.Sprintf("%q", name)
}
