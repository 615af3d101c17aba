package cuecmd

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"agentc.dev/agentc/internal/cli"
)

// revisionSide returns the agents at path as they are at the git revision
// rev of the repository path is in, or none where path did not exist then.
// The repository's tree at rev is written to a temporary directory, so
// that a manifest reads the files beside it (and the CUE module above it)
// as they were.
func revisionSide(e cli.Env, rev, path string) ([]built, error) {
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(e.Dir, path)
	}
	abs, err := filepath.EvalSymlinks(abs) // git names the top directory without links
	if err != nil {
		return nil, cli.UsageError("diff --against: %v", err)
	}
	dir := abs
	if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
		dir = filepath.Dir(abs)
	}
	ctx := e.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	top, err := git(ctx, dir, nil, "rev-parse", "--show-toplevel")
	if err != nil {
		var notFound *exec.Error
		if errors.As(err, &notFound) {
			return nil, cli.UsageError("diff --against needs git: %v", err)
		}
		return nil, cli.UsageError("diff --against: %s is not in a git repository", path)
	}
	rel, err := filepath.Rel(top, abs)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
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
	// The archive streams into the directory, never whole in memory.
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := untar(pr, tmp)
		pr.CloseWithError(err) // git stops writing where the tree cannot be written
		done <- err
	}()
	_, err = git(ctx, top, pw, "archive", "--format=tar", commit)
	pw.CloseWithError(err)
	if uerr := <-done; uerr != nil {
		err = uerr // the cause, where git only saw its pipe closed
	}
	if err != nil {
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
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
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

// untar writes the files and links of a tar stream under dir, refusing a
// name that would leave it, and reads the stream to its end.
func untar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			_, err = io.Copy(io.Discard, r) // the padding after the end, so git exits
			return err
		}
		if err != nil {
			return err
		}
		name := filepath.FromSlash(strings.TrimSuffix(h.Name, "/"))
		if !filepath.IsLocal(name) {
			return fmt.Errorf("archive member %q is outside the tree", h.Name)
		}
		target := filepath.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(target, 0o755)
		case tar.TypeReg:
			err = writeFile(target, tr, os.FileMode(h.Mode).Perm())
		case tar.TypeSymlink:
			// Kept where the system lets a link be made (Windows may not);
			// a manifest that reads through a missing one says so.
			if err = os.MkdirAll(filepath.Dir(target), 0o755); err == nil {
				_ = os.Symlink(h.Linkname, target)
			}
		}
		if err != nil {
			return err
		}
	}
}

func writeFile(name string, r io.Reader, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode|0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
