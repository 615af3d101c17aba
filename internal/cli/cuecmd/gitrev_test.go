package cuecmd

import (
	"os"
	"path"
	"path/filepath"
	"testing"
)

// FuzzParseTree: whatever git ls-tree -r -z -l is made to print, the
// entries read name files inside the tree, each once, none both a file
// and a directory, within the bounds.
func FuzzParseTree(f *testing.F) {
	f.Add([]byte("100644 blob 0123 5\tagent.cue\x00120000 blob 4567 9\td\x00100644 blob 89ab 6\td/x\x00"))
	f.Add([]byte("100644 blob 0123 5\t..\x00"))
	f.Add([]byte("100644 blob 0123 67108865\thuge.bin\x00"))
	f.Add([]byte("160000 commit 0123 -\tsub\x00100755 blob 4567 1\ta/b/c\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := parseTree(data)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		var total int64
		for _, e := range entries {
			if !filepath.IsLocal(filepath.FromSlash(e.path)) || seen[e.path] || e.size > maxTreeFile || e.size < 0 {
				t.Fatalf("entry %+v read from %q", e, data)
			}
			seen[e.path] = true
			total += e.size
		}
		for _, e := range entries {
			for d := path.Dir(e.path); d != "."; d = path.Dir(d) {
				if seen[d] {
					t.Fatalf("%s is a file and a directory in %q", d, data)
				}
			}
		}
		if total > maxTreeBytes || len(entries) > maxTreeEntries {
			t.Fatalf("past the bounds: %d bytes, %d entries", total, len(entries))
		}
	})
}

// ownGitDir takes a repository whose git directory is its .git or outside
// its work tree, and refuses one inside the work tree anywhere else: what
// git older than safe.bareRepository finds in a pull request's directory
// laid out as a repository.
func TestOwnGitDir(t *testing.T) {
	for _, c := range []struct {
		top, gitDir string
		ok          bool
	}{
		{"/w/repo", "/w/repo/.git", true},
		{"/w/repo", "/w/repo/.git/worktrees/x", true},
		{"/w/wt", "/w/repo/.git/worktrees/wt", true},
		{"/w/repo/sub", "/w/repo/.git/modules/sub", true},
		{"/w/repo/agents", "/w/repo/agents", false},
		{"/w/repo", "/w/repo/agents", false},
		{"/w/repo", "/w/repo/a/.git", false},
		{"/w/repo", "/w/repo/.gitx", false},
		{"", "/w/repo.git", false},
	} {
		if err := ownGitDir(c.top, c.gitDir); (err == nil) != c.ok {
			t.Errorf("ownGitDir(%q, %q) = %v, want ok %v", c.top, c.gitDir, err, c.ok)
		}
	}
}

// beneath keeps a link inside the work tree as a name, and resolves the
// directories above the work tree's top.
func TestBeneath(t *testing.T) {
	w := t.TempDir()
	top := filepath.Join(w, "repo")
	for _, d := range []string{"repo/agents2", "elsewhere"} {
		if err := os.MkdirAll(filepath.Join(w, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"repo/agents": "agents2", "linkrepo": "repo", "repo/out": "../elsewhere"} {
		if err := os.Symlink(target, filepath.Join(w, link)); err != nil {
			t.Fatal(err)
		}
	}
	top, err := filepath.EvalSymlinks(top)
	if err != nil {
		t.Fatal(err)
	}
	for abs, want := range map[string]string{
		filepath.Join(w, "repo"):                 ".",
		filepath.Join(w, "repo", "agents"):       "agents",
		filepath.Join(w, "repo", "agents", "a"):  filepath.Join("agents", "a"),
		filepath.Join(w, "linkrepo", "agents"):   "agents",
		filepath.Join(w, "repo", "out", "x.cue"): filepath.Join("out", "x.cue"),
		filepath.Join(w, "elsewhere"):            "",
	} {
		got, ok := beneath(top, abs)
		if ok != (want != "") || got != want {
			t.Errorf("beneath(%s) = %q %v, want %q", abs, got, ok, want)
		}
	}
}
