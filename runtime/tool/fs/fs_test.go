package fs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"

	"agentc.dev/agentc/plan"
)

const secret = "TOP-SECRET-MARKER-7f3a"

// tree builds, under a fresh temporary directory, a root with files,
// directories and symbolic links that stay in or leave it, and a secret
// file beside the root. It returns the temporary directory; the root is
// its "root" child.
func tree(t testing.TB, dir string) string {
	t.Helper()
	root := filepath.Join(dir, "root")
	outside := filepath.Join(dir, "outside")
	files := map[string]string{
		"root/a.txt":          "alpha\n",
		"root/empty.txt":      "",
		"root/sub/b.txt":      "beta",
		"root/sub/deep/c.txt": "gamma",
		"root/bin.dat":        "\x7fELF\x00\x01",
		"root/latin1.txt":     "caf\xe9",
		"root/unicode.txt":    "naïve ☃\n",
		"outside/secret.txt":  secret,
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := []struct{ name, target string }{
		{"link-in", "a.txt"},
		{"link-dir-in", "sub"},
		{"link-dotdot-in", "sub/../a.txt"},
		{"link-chain-in", "link-in"},
		{"link-out-and-back", "../root/a.txt"},
		{"abs-in", filepath.Join(root, "a.txt")},
		{"esc-file", "../outside/secret.txt"},
		{"esc-dir", "../outside"},
		{"esc-chain", "esc-file"},
		{"sub/up", "../../outside/secret.txt"},
		{"esc-chain-sub", "sub/up"},
		{"esc-abs", filepath.Join(outside, "secret.txt")},
		{"esc-abs-dir", outside},
		{"broken", "nothing-here"},
		{"loop", "loop"},
	}
	for _, l := range links {
		if err := os.Symlink(l.target, filepath.Join(root, filepath.FromSlash(l.name))); err != nil {
			t.Skipf("symbolic links unavailable: %v", err)
		}
	}
	return dir
}

func newTool(t testing.TB, dir string, pt plan.Tool) *Tool {
	t.Helper()
	pt.Kind, pt.Description = "fs", "Read the project."
	if pt.Root == "" {
		pt.Root = "root"
	}
	tool, err := New("files", pt, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tool.Close() })
	return tool
}

func call(tool *Tool, op, path string) (string, error) {
	args, _ := json.Marshal(map[string]string{"op": op, "path": path})
	res, err := tool.Call(context.Background(), args)
	return res.Content, err
}

// checkClean fails if a result or error shows the secret or a host path.
func checkClean(t *testing.T, dir, s string) {
	t.Helper()
	if strings.Contains(s, secret) {
		t.Errorf("output shows the secret from outside the root: %q", s)
	}
	real, _ := filepath.EvalSymlinks(dir)
	for _, p := range []string{dir, real} {
		if p != "" && strings.Contains(s, p) {
			t.Errorf("output shows the host path %s: %q", p, s)
		}
	}
}

func TestCallWorks(t *testing.T) {
	dir := tree(t, t.TempDir())
	tool := newTool(t, dir, plan.Tool{})
	rootListing := `a.txt (6 bytes)
abs-in (symbolic link that is broken or leaves the root)
bin.dat (6 bytes)
broken (symbolic link that is broken or leaves the root)
empty.txt (0 bytes)
esc-abs (symbolic link that is broken or leaves the root)
esc-abs-dir (symbolic link that is broken or leaves the root)
esc-chain (symbolic link that is broken or leaves the root)
esc-chain-sub (symbolic link that is broken or leaves the root)
esc-dir (symbolic link that is broken or leaves the root)
esc-file (symbolic link that is broken or leaves the root)
latin1.txt (4 bytes)
link-chain-in (6 bytes, symbolic link)
link-dir-in/ (symbolic link)
link-dotdot-in (6 bytes, symbolic link)
link-in (6 bytes, symbolic link)
link-out-and-back (symbolic link that is broken or leaves the root)
loop (symbolic link that is broken or leaves the root)
sub/
unicode.txt (11 bytes)
`
	subListing := "b.txt (4 bytes)\ndeep/\nup (symbolic link that is broken or leaves the root)\n"
	tests := []struct {
		op, path, want string
	}{
		{"read", "a.txt", "alpha\n"},
		{"read", "./a.txt", "alpha\n"},
		{"read", "sub//b.txt", "beta"},
		{"read", "sub/deep/c.txt", "gamma"},
		{"read", "sub/deep/./c.txt", "gamma"},
		{"read", "unicode.txt", "naïve ☃\n"},
		{"read", "empty.txt", ""},
		{"list", ".", rootListing},
		{"list", "", rootListing},
		{"list", "./", rootListing},
		{"list", "sub", subListing},
		{"list", "sub/", subListing},
		{"list", "sub/deep", "c.txt (5 bytes)\n"},
		// Symbolic links that stay inside the root are followed.
		{"read", "link-in", "alpha\n"},
		{"read", "link-chain-in", "alpha\n"},
		{"read", "link-dotdot-in", "alpha\n"},
		{"read", "link-dir-in/b.txt", "beta"},
		{"list", "link-dir-in", subListing},
	}
	for _, tt := range tests {
		t.Run(tt.op+" "+tt.path, func(t *testing.T) {
			got, err := call(tool, tt.op, tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
			checkClean(t, dir, got)
		})
	}
}

func TestEmptyDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "root"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := call(newTool(t, dir, plan.Tool{}), "list", ".")
	if err != nil || got != "(empty directory)\n" {
		t.Errorf("got %q, %v", got, err)
	}
}

// TestEscapes lists attempts to reach outside the root; each must fail,
// with a message that names the path as given and shows nothing of the
// host.
func TestEscapes(t *testing.T) {
	dir := tree(t, t.TempDir())
	tool := newTool(t, dir, plan.Tool{})
	tests := []struct {
		path, want string
	}{
		{"..", `".." is refused`},
		{"../outside/secret.txt", `".." is refused`},
		{"../root/a.txt", `".." is refused`},
		{"a/../../outside/secret.txt", `".." is refused`},
		{"sub/..", `".." is refused`},
		{"sub/../a.txt", `".." is refused`},
		{"/etc/passwd", "absolute paths are refused"},
		{"/", "absolute paths are refused"},
		{filepath.Join(dir, "outside", "secret.txt"), "absolute paths are refused"},
		{"a.txt\x00", "NUL byte"},
		{"\x00../outside/secret.txt", "NUL byte"},
		// Symbolic links that leave the root, however they get there.
		{"esc-file", "leaves the tool's root"},
		{"esc-dir", "leaves the tool's root"},
		{"esc-dir/secret.txt", "leaves the tool's root"},
		{"esc-chain", "leaves the tool's root"},
		{"esc-chain-sub", "leaves the tool's root"},
		{"sub/up", "leaves the tool's root"},
		{"esc-abs", "leaves the tool's root"},
		{"esc-abs-dir", "leaves the tool's root"},
		{"esc-abs-dir/secret.txt", "leaves the tool's root"},
		// os.Root refuses every absolute link, and every link whose
		// target steps out of the root, even one that comes back in.
		{"abs-in", "leaves the tool's root"},
		{"link-out-and-back", "leaves the tool's root"},
	}
	for _, tt := range tests {
		for _, op := range []string{"read", "list"} {
			t.Run(op+" "+tt.path, func(t *testing.T) {
				got, err := call(tool, op, tt.path)
				if err == nil {
					t.Fatalf("escaped the root: got %q", got)
				}
				msg := err.Error()
				if !strings.Contains(msg, tt.want) {
					t.Errorf("error %q does not say %q", msg, tt.want)
				}
				if prefix := fmt.Sprintf("%s %q: ", op, tt.path); !strings.HasPrefix(msg, prefix) {
					t.Errorf("error %q does not start with %s", msg, prefix)
				}
				if tt.path != filepath.Join(dir, "outside", "secret.txt") {
					checkClean(t, dir, msg)
				}
			})
		}
	}
}

// TestCallErrors covers refusals other than escapes: bad arguments,
// undeclared ops, directories, binary content, missing files.
func TestCallErrors(t *testing.T) {
	dir := tree(t, t.TempDir())
	tests := []struct {
		name string
		ops  []string
		args string
		want string
	}{
		{"not JSON", nil, `{"op": "read",`, "arguments are not valid JSON"},
		{"empty", nil, ``, "arguments are empty"},
		{"null", nil, `null`, "must be a JSON object, not null"},
		{"array", nil, `["read", "a.txt"]`, "must be a JSON object, not array"},
		{"string", nil, `"a.txt"`, "must be a JSON object, not string"},
		{"trailing data", nil, `{"op":"read","path":"a.txt"} {}`, "data after the JSON object"},
		{"missing path", nil, `{"op":"read"}`, `missing argument "path"`},
		{"missing op", nil, `{"path":"a.txt"}`, `missing argument "op"`},
		{"null path", nil, `{"op":"read","path":null}`, `missing argument "path"`},
		{"unknown field", nil, `{"op":"read","path":"a.txt","mode":"x"}`, `unknown argument "mode"`},
		{"key case", nil, `{"op":"read","Path":"a.txt"}`, `unknown argument "Path"`},
		{"path number", nil, `{"op":"read","path":7}`, `argument "path" must be a string`},
		{"op array", nil, `{"op":["read"],"path":"a.txt"}`, `argument "op" must be a string`},
		{"unknown op", nil, `{"op":"write","path":"a.txt"}`, `unknown op "write"; this tool allows "read" and "list"`},
		{"list not declared", []string{"read"}, `{"op":"list","path":"."}`, `op "list" is not allowed for this tool; it allows "read"`},
		{"read not declared", []string{"list"}, `{"op":"read","path":"a.txt"}`, `op "read" is not allowed for this tool; it allows "list"`},
		{"read a directory", nil, `{"op":"read","path":"sub"}`, `read "sub": is a directory: use list`},
		{"read the root", nil, `{"op":"read","path":"."}`, `read ".": is a directory: use list`},
		{"read a directory, no list", []string{"read"}, `{"op":"read","path":"sub"}`, `read "sub": is a directory`},
		{"list a file", nil, `{"op":"list","path":"a.txt"}`, `list "a.txt": is a file, not a directory: use read`},
		{"binary", nil, `{"op":"read","path":"bin.dat"}`, `read "bin.dat": the file is binary (a NUL byte at offset 4)`},
		{"not UTF-8", nil, `{"op":"read","path":"latin1.txt"}`, `read "latin1.txt": the file is not UTF-8 text (invalid byte at offset 3)`},
		{"missing file", nil, `{"op":"read","path":"nope.txt"}`, `read "nope.txt": no such file or directory`},
		{"missing dir", nil, `{"op":"list","path":"nope"}`, `list "nope": no such file or directory`},
		{"file as dir", nil, `{"op":"read","path":"a.txt/x"}`, `read "a.txt/x": not a directory`},
		{"broken link", nil, `{"op":"read","path":"broken"}`, `read "broken": no such file or directory`},
		{"link loop", nil, `{"op":"read","path":"loop"}`, `read "loop": too many levels of symbolic links`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := newTool(t, dir, plan.Tool{Ops: tt.ops})
			res, err := tool.Call(context.Background(), json.RawMessage(tt.args))
			if err == nil {
				t.Fatalf("got %q, want an error", res.Content)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
			checkClean(t, dir, err.Error())
		})
	}
}

func TestSizeCap(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	const max = 16
	for name, n := range map[string]int{"at.txt": max, "over.txt": max + 1} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(strings.Repeat("x", n)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tool := newTool(t, dir, plan.Tool{MaxBytes: max})
	if got, err := call(tool, "read", "at.txt"); err != nil || got != strings.Repeat("x", max) {
		t.Errorf("a file of exactly max_bytes: got %q, %v", got, err)
	}
	_, err := call(tool, "read", "over.txt")
	if want := `read "over.txt": the file is 17 bytes, over this tool's cap of 16 bytes (max_bytes)`; err == nil || err.Error() != want {
		t.Errorf("a file over max_bytes: got %v, want %s", err, want)
	}
}

func TestListCut(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"e", "d", "c", "b", "a"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte("1"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name                string
		maxBytes, maxEnt, s int
		want                string
	}{
		{"entries", 0, 3, maxScan, "a (1 bytes)\nb (1 bytes)\nc (1 bytes)\n[listing cut: 3 of 5 entries shown]\n"},
		{"bytes", 25, maxEntries, maxScan, "a (1 bytes)\nb (1 bytes)\n[listing cut: 2 of 5 entries shown]\n"},
		{"scan", 0, maxEntries, 2, "a (1 bytes)\nb (1 bytes)\n" +
			"[listing cut: 2 entries shown; the directory has more than 2, and only the first 2 read were sorted]\n"},
		{"whole", 0, 5, maxScan, "a (1 bytes)\nb (1 bytes)\nc (1 bytes)\nd (1 bytes)\ne (1 bytes)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := newTool(t, dir, plan.Tool{MaxBytes: tt.maxBytes})
			tool.maxEntries, tool.maxScan = tt.maxEnt, tt.s
			got, err := call(tool, "list", ".")
			if tt.name == "scan" {
				// Which entries a partial scan sees depends on the file
				// system's order; only the shape is fixed.
				if err != nil || strings.Count(got, "\n") != 3 || !strings.HasSuffix(got, "only the first 2 read were sorted]\n") {
					t.Errorf("got %q, %v", got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got\n%s%v\nwant\n%s", got, err, tt.want)
			}
		})
	}
}

func TestDisplayName(t *testing.T) {
	tests := map[string]string{
		"plain.txt":  "plain.txt",
		"with space": "with space",
		"naïve":      "naïve",
		"a\nb":       `"a\nb"`,
		" lead":      `" lead"`,
		`"quoted"`:   `"\"quoted\""`,
		"bad\xff":    `"bad\xff"`,
		"tab\there":  `"tab\there"`,
	}
	for in, want := range tests {
		if got := displayName(in); got != want {
			t.Errorf("displayName(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestSpec(t *testing.T) {
	dir := tree(t, t.TempDir())
	tests := []struct {
		ops      []string
		enum     string
		descTail string
	}{
		{nil, `["read","list"]`, `Read the project. Operations: read returns a file's text; list returns a directory's entries. Paths are relative to the tool's root directory ("." is the root itself); absolute paths and ".." are refused.`},
		{[]string{"list", "read"}, `["read","list"]`, "Operations: read returns a file's text; list returns a directory's entries."},
		{[]string{"read"}, `["read"]`, "Operations: read returns a file's text. Paths"},
		{[]string{"list"}, `["list"]`, "Operations: list returns a directory's entries. Paths"},
	}
	for _, tt := range tests {
		tool := newTool(t, dir, plan.Tool{Ops: tt.ops})
		spec := tool.Spec()
		want := `{"type":"object","properties":{"op":{"type":"string","enum":` + tt.enum + `,"description":"The operation."},` +
			`"path":{"type":"string","description":"Slash-separated path relative to the tool's root, e.g. \"docs/intro.md\"; \".\" is the root."}},` +
			`"required":["op","path"],"additionalProperties":false}`
		if string(spec.Schema) != want {
			t.Errorf("ops %v: schema\n%s\nwant\n%s", tt.ops, spec.Schema, want)
		}
		if spec.Name != "files" || !strings.Contains(spec.Description, tt.descTail) {
			t.Errorf("ops %v: spec %q %q", tt.ops, spec.Name, spec.Description)
		}
		again := newTool(t, dir, plan.Tool{Ops: tt.ops}).Spec()
		if string(again.Schema) != string(spec.Schema) || again.Description != spec.Description {
			t.Errorf("ops %v: spec differs between two tools from the same plan", tt.ops)
		}
		spec.Schema[0] = 'X'
		if tool.Spec().Schema[0] != '{' {
			t.Errorf("Spec shares its schema bytes with callers")
		}
	}
}

func TestNew(t *testing.T) {
	dir := tree(t, t.TempDir())
	tests := []struct {
		name, base string
		tool       plan.Tool
		want       string // an error, or "" for success
	}{
		{"relative to base", dir, plan.Tool{Root: "root"}, ""},
		{"nested relative", filepath.Join(dir, "root"), plan.Tool{Root: "sub/deep"}, ""},
		{"absolute", "/nonexistent-base", plan.Tool{Root: filepath.Join(dir, "root")}, ""},
		{"root through a link", filepath.Join(dir, "root"), plan.Tool{Root: "link-dir-in"}, ""},
		{"missing root", dir, plan.Tool{Root: "nope"}, `fs tool "files": root "nope" (` + filepath.Join(dir, "nope") + `) does not exist`},
		{"root is a file", dir, plan.Tool{Root: "root/a.txt"}, `fs tool "files": root "root/a.txt" (` + filepath.Join(dir, "root", "a.txt") + `) is not a directory`},
		{"root is a broken link", dir, plan.Tool{Root: "root/broken"}, "does not exist"},
		{"no root", dir, plan.Tool{}, `fs tool "files": no root`},
		{"unknown op", dir, plan.Tool{Root: "root", Ops: []string{"read", "write"}}, `unknown op "write"`},
		{"negative max", dir, plan.Tool{Root: "root", MaxBytes: -1}, "max_bytes is -1"},
		{"other kind", dir, plan.Tool{Kind: "http", Root: "root"}, `kind is "http", not fs`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.tool.Kind == "" {
				tt.tool.Kind = "fs"
			}
			tool, err := New("files", tt.tool, tt.base)
			switch {
			case tt.want == "" && err != nil:
				t.Fatal(err)
			case tt.want != "" && err == nil:
				t.Fatalf("New succeeded, want %q", tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Fatalf("error %q does not say %q", err, tt.want)
			}
			if tool != nil && tool.maxBytes != DefaultMaxBytes {
				t.Errorf("max bytes %d, want the default", tool.maxBytes)
			}
		})
	}
	// The root is resolved when New is called, not at each call.
	tool := newTool(t, dir, plan.Tool{})
	t.Chdir(t.TempDir())
	if got, err := call(tool, "read", "a.txt"); err != nil || got != "alpha\n" {
		t.Errorf("after chdir: %q, %v", got, err)
	}
}

func TestRootRemoved(t *testing.T) {
	dir := tree(t, t.TempDir())
	tool := newTool(t, dir, plan.Tool{})
	if err := os.RemoveAll(filepath.Join(dir, "root")); err != nil {
		t.Fatal(err)
	}
	_, err := call(tool, "read", "a.txt")
	if err == nil || !strings.Contains(err.Error(), `read "a.txt": no such file or directory`) {
		t.Errorf("got %v", err)
	}
	if err != nil {
		checkClean(t, dir, err.Error())
	}
}

// TestRootMadeAgain: a root removed and made again in its place (an
// output directory cleaned) is the one the next call reads.
func TestRootMadeAgain(t *testing.T) {
	if goruntime.GOOS != "linux" {
		t.Skip("a root is renewed on Linux alone, where a lookup can refuse every link")
	}
	dir := tree(t, t.TempDir())
	tool := newTool(t, dir, plan.Tool{})
	root := filepath.Join(dir, "root")
	for i := range 2 {
		if err := os.RemoveAll(root); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(root, 0o755); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("made again %d", i)
		if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		if got, err := call(tool, "read", "a.txt"); err != nil || got != want {
			t.Errorf("after the root was made again: %q, %v", got, err)
		}
	}
}

// TestRootSwapped: the root New was given is the one read, whatever
// becomes of its name. Another tool that may write beside the root (an
// exec tool's confine.write) could put a link to elsewhere in its place;
// the fs tool must not follow the name there.
func TestRootSwapped(t *testing.T) {
	dir := tree(t, t.TempDir())
	tool := newTool(t, dir, plan.Tool{})
	root := filepath.Join(dir, "root")
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "outside"), root); err != nil {
		t.Skipf("symbolic links unavailable: %v", err)
	}
	for _, tc := range []struct{ op, path string }{{"read", "secret.txt"}, {"list", "."}} {
		got, err := call(tool, tc.op, tc.path)
		if strings.Contains(got, "secret") || err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("%s %q after the root was swapped for a link: %q, %v", tc.op, tc.path, got, err)
		}
	}
	if _, err := call(tool, "read", "secret.txt"); err == nil {
		t.Error("read of a file beside the swapped root's link succeeded")
	}
	// After Close, a call fails; it does not read by the name either.
	tool.Close()
	if got, err := call(tool, "read", "secret.txt"); err == nil || strings.Contains(got, secret) {
		t.Errorf("read after Close: %q, %v", got, err)
	}
}

func TestCanceled(t *testing.T) {
	dir := tree(t, t.TempDir())
	tool := newTool(t, dir, plan.Tool{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := tool.Call(ctx, json.RawMessage(`{"op":"read","path":"a.txt"}`))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

func TestConcurrentCalls(t *testing.T) {
	dir := tree(t, t.TempDir())
	tool := newTool(t, dir, plan.Tool{})
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			op, path, want := "read", "sub/b.txt", "beta"
			if i%2 == 1 {
				op, path, want = "list", "sub/deep", "c.txt (5 bytes)\n"
			}
			if got, err := call(tool, op, path); err != nil || got != want {
				t.Errorf("%s %s: %q, %v", op, path, got, err)
			}
		})
	}
	wg.Wait()
}
