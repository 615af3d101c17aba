package cuecmd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"agentc.dev/agentc/internal/cli"
)

// revisionSide returns the agents at path as they are at the git revision
// rev of the repository path is in, or none where path did not exist then.
// The repository's tree at rev is written to a temporary directory, so
// that a manifest reads the files beside it (and the CUE module above it)
// as they were.
//
// The files under path are a pull request's, and git must not be led by
// them: git is told to take no bare repository it finds on its own
// (safe.bareRepository=explicit), and the repository it finds must keep
// its git directory outside its work tree or in its .git, so a directory
// of the pull request laid out as a repository (HEAD, config, objects) is
// never the one read, nor its config, which can name commands git runs.
// path is looked up at rev as written beneath the top of the work tree:
// a link the pull request put in its place is not followed to another
// directory's history.
func revisionSide(e cli.Env, rev, path string) ([]built, error) {
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(e.Dir, path)
	}
	abs = filepath.Clean(abs)
	if _, err := os.Stat(abs); err != nil {
		return nil, cli.UsageError("diff --against: %v", err)
	}
	// git starts from the directory holding path as written, itself when
	// it is a directory and not a link.
	dir := filepath.Dir(abs)
	if fi, err := os.Lstat(abs); err == nil && fi.IsDir() {
		dir = abs
	}
	ctx := e.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	where, err := git(ctx, dir, nil, "rev-parse", "--show-toplevel", "--absolute-git-dir")
	if err != nil {
		var notFound *exec.Error
		if errors.As(err, &notFound) {
			return nil, cli.UsageError("diff --against needs git: %v", err)
		}
		return nil, cli.UsageError("diff --against: %s is not in a git repository (%v)", path, err)
	}
	top, gitDir, _ := strings.Cut(where, "\n")
	if err := ownGitDir(top, gitDir); err != nil {
		return nil, cli.UsageError("diff --against: %s: %v", path, err)
	}
	rel, ok := beneath(top, abs)
	if !ok {
		return nil, cli.UsageError("diff --against: %s is not in the git repository at %s", path, top)
	}
	commit, err := git(ctx, top, nil, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil {
		return nil, cli.UsageError("diff --against: no revision %q in the git repository at %s", rev, top)
	}
	inTree := filepath.ToSlash(rel)
	if rel == "." {
		inTree = ""
	}
	if _, err := git(ctx, top, nil, "cat-file", "-e", commit+":"+inTree); err != nil {
		return nil, nil // not there at rev: the agent is new
	}
	tmp, err := os.MkdirTemp("", "agentc-diff-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if err := readTree(ctx, top, commit, tmp, e.Stderr, rev); err != nil {
		return nil, fmt.Errorf("diff --against: reading %s at %s: %w", path, rev, err)
	}
	// What is said of the old side names its files as git does, REV:path,
	// not by the temporary directory they were read from.
	names := strings.NewReplacer(tmp+string(filepath.Separator), rev+":")
	if real, err := filepath.EvalSymlinks(tmp); err == nil && real != tmp {
		names = strings.NewReplacer(real+string(filepath.Separator), rev+":", tmp+string(filepath.Separator), rev+":")
	}
	old := e
	old.Stderr = renamer{w: e.Stderr, r: names}
	bs, err := diffAgents(old, filepath.Join(tmp, rel))
	if err != nil {
		return nil, renamed(err, names)
	}
	return bs, nil
}

// ownGitDir refuses a repository whose git directory lies inside its
// work tree anywhere but in its .git: a directory of the work tree laid
// out as a repository, which git found first, or which a config in it
// names as its own work tree (core.worktree).
func ownGitDir(top, gitDir string) error {
	if top == "" || gitDir == "" {
		return errors.New("git names no work tree: a bare repository is not read")
	}
	rel, err := filepath.Rel(top, gitDir)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return nil // outside the work tree: a worktree's or a submodule's
	}
	if first, _, _ := strings.Cut(filepath.ToSlash(rel), "/"); first == ".git" {
		return nil
	}
	return fmt.Errorf("git found the repository %s inside the work tree %s; a directory of the work tree is not taken for a repository", gitDir, top)
}

// beneath returns abs relative to top as abs is written: the longest
// directory above abs (or abs itself) that resolves to top is where the
// rest begins, so a link inside the work tree is kept as a name, not
// followed. ok is false when no directory above abs resolves to top.
func beneath(top, abs string) (string, bool) {
	for p := abs; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil && r == top {
			rel, err := filepath.Rel(p, abs)
			return rel, err == nil && (rel == "." || filepath.IsLocal(rel))
		}
		if filepath.Dir(p) == p {
			return "", false
		}
	}
}

// renamer writes through r's replacements: what vet says of the old side
// comes a finding to a write.
type renamer struct {
	w io.Writer
	r *strings.Replacer
}

func (n renamer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(n.w, n.r.Replace(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// renamed is err with its text through r, its exit code kept.
func renamed(err error, r *strings.Replacer) error {
	var xe *cli.ExitError
	if errors.As(err, &xe) {
		if xe.Err == nil {
			return xe
		}
		return &cli.ExitError{Code: xe.Code, Err: errors.New(r.Replace(xe.Err.Error()))}
	}
	return errors.New(r.Replace(err.Error()))
}

// git runs git in dir and returns its output, trimmed, or writes it to
// out; its error says what git printed.
func git(ctx context.Context, dir string, out io.Writer, args ...string) (string, error) {
	cmd := gitCommand(ctx, dir, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if out != nil {
		cmd.Stdout = out
	}
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && stderr.Len() > 0 {
			return "", fmt.Errorf("git %s: %s", args[0], strings.TrimSpace(stderr.String()))
		}
		return "", err
	}
	return strings.TrimSpace(stdout.String()), nil
}

// gitCommand is git with args in dir, told to take no bare repository it
// finds by itself and to fetch nothing: reading a revision reads what the
// repository holds, never another host's.
func gitCommand(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "safe.bareRepository=explicit"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_NO_LAZY_FETCH=1", "GIT_TERMINAL_PROMPT=0")
	return cmd
}

// Bounds on the tree of a revision diff --against reads: the files it
// lists, the bytes of one file and of them all.
const (
	maxTreeEntries = 100_000
	maxTreeFile    = 64 << 20
	maxTreeBytes   = 512 << 20
)

// treeEntry is one file of a git tree, as git ls-tree -r -l lists it.
type treeEntry struct {
	mode, kind, oid string
	size            int64
	path            string // with /, from the top of the tree
}

// readTree writes the files of commit's tree under dir, read with git
// itself (ls-tree, then cat-file --batch), never by extracting an
// archive. Every name must stay inside the tree and appear once; files
// are created beneath dir through an os.Root, which no name or link can
// lead out of. A symbolic link in the tree is not followed and not made:
// it is left out, and said so on stderr (a manifest that reads through
// one says the file is missing). Submodules are left out too. The tree is
// bounded: maxTreeEntries files, maxTreeFile bytes each, maxTreeBytes in
// all.
func readTree(ctx context.Context, top, commit, dir string, stderr io.Writer, rev string) error {
	var list bytes.Buffer
	if _, err := git(ctx, top, &limitWriter{w: &list, n: maxTreeEntries * 4096}, "ls-tree", "-r", "-z", "-l", "--full-tree", commit); err != nil {
		return err
	}
	entries, err := parseTree(list.Bytes())
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	var blobs []treeEntry
	for _, en := range entries {
		switch en.mode {
		case "100644", "100755":
			blobs = append(blobs, en)
		case "120000":
			fmt.Fprintf(stderr, "agentc: diff --against: %s:%s is a symbolic link; links in a revision's tree are not followed, and it is left out\n", rev, en.path)
		}
	}
	if len(blobs) == 0 {
		return nil
	}
	cmd := gitCommand(ctx, top, "cat-file", "--batch")
	var in bytes.Buffer
	for _, b := range blobs {
		in.WriteString(b.oid + "\n")
	}
	cmd.Stdin = &in
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var errBuf bytes.Buffer
	cmd.Stderr = &errBuf
	if err := cmd.Start(); err != nil {
		return err
	}
	werr := writeBlobs(bufio.NewReader(out), root, blobs)
	if werr != nil {
		_ = cmd.Process.Kill()
	}
	if err := cmd.Wait(); werr == nil && err != nil {
		werr = fmt.Errorf("git cat-file: %v %s", err, strings.TrimSpace(errBuf.String()))
	}
	return werr
}

// parseTree reads git ls-tree -r -z -l output, refusing a tree that
// names a file outside itself, names one twice or as both a file and a
// directory, or passes the bounds.
func parseTree(data []byte) ([]treeEntry, error) {
	var entries []treeEntry
	seen := map[string]bool{}
	var total int64
	for rec := range bytes.SplitSeq(data, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		meta, name, ok := bytes.Cut(rec, []byte{'\t'})
		f := strings.Fields(string(meta))
		if !ok || len(f) != 4 {
			return nil, fmt.Errorf("git ls-tree: unexpected line %q", rec)
		}
		en := treeEntry{mode: f[0], kind: f[1], oid: f[2], path: string(name)}
		if !utf8.ValidString(en.path) || !filepath.IsLocal(filepath.FromSlash(en.path)) || path.Clean(en.path) != en.path || strings.Contains(en.path, "\\") {
			return nil, fmt.Errorf("the tree names a file outside itself: %q", en.path)
		}
		if en.kind == "blob" {
			n, err := strconv.ParseInt(f[3], 10, 64)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("git ls-tree: unexpected size %q", f[3])
			}
			if n > maxTreeFile {
				return nil, fmt.Errorf("%s is %d bytes, more than the %d a file of a revision may be", en.path, n, maxTreeFile)
			}
			if total += n; total > maxTreeBytes {
				return nil, fmt.Errorf("the tree holds more than the %d bytes a revision may", maxTreeBytes)
			}
			en.size = n
		}
		if seen[en.path] {
			return nil, fmt.Errorf("the tree names %s twice", en.path)
		}
		seen[en.path] = true
		if entries = append(entries, en); len(entries) > maxTreeEntries {
			return nil, fmt.Errorf("the tree holds more than the %d files a revision may", maxTreeEntries)
		}
	}
	for _, en := range entries {
		for d := path.Dir(en.path); d != "."; d = path.Dir(d) {
			if seen[d] {
				return nil, fmt.Errorf("the tree names %s both as a file and as a directory", d)
			}
		}
	}
	return entries, nil
}

// writeBlobs writes git cat-file --batch's answers for blobs, in order,
// as files beneath root.
func writeBlobs(r *bufio.Reader, root *os.Root, blobs []treeEntry) error {
	for _, b := range blobs {
		head, err := r.ReadString('\n')
		if err != nil {
			return fmt.Errorf("git cat-file: %v", err)
		}
		f := strings.Fields(head)
		if len(f) != 3 || f[0] != b.oid || f[1] != "blob" || f[2] != strconv.FormatInt(b.size, 10) {
			return fmt.Errorf("git cat-file: unexpected answer %q for %s", strings.TrimSpace(head), b.path)
		}
		name := filepath.FromSlash(b.path)
		if d := filepath.Dir(name); d != "." {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		mode := os.FileMode(0o644)
		if b.mode == "100755" {
			mode = 0o755
		}
		out, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if err != nil {
			return err
		}
		_, err = io.CopyN(out, r, b.size)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		if _, err := r.Discard(1); err != nil { // the newline after the content
			return err
		}
	}
	return nil
}

// limitWriter writes at most n bytes to w, and fails past them.
type limitWriter struct {
	w io.Writer
	n int64
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > l.n {
		return 0, errors.New("git ls-tree: the tree's listing is too long")
	}
	l.n -= int64(len(p))
	return l.w.Write(p)
}
