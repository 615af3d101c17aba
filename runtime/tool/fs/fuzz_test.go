package fs

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"agentc.dev/agentc/plan"
)

// FuzzCall calls the tool with any path and op over a tree whose links
// reach outside the root, and checks that no call panics or returns
// anything from outside: not the secret beside the root, not a host path.
func FuzzCall(f *testing.F) {
	for _, seed := range [][2]string{
		{"a.txt", "read"}, {".", "list"}, {"sub/deep/c.txt", "read"},
		{"esc-file", "read"}, {"esc-dir/secret.txt", "read"}, {"esc-dir", "list"},
		{"esc-chain-sub", "read"}, {"esc-abs-dir/secret.txt", "read"},
		{"link-dir-in/../../outside/secret.txt", "read"}, {"../outside/secret.txt", "read"},
		{"sub/up", "read"}, {"/etc/passwd", "read"}, {"a.txt\x00", "read"}, {"", "list"},
	} {
		f.Add(seed[0], seed[1])
	}
	dir := tree(f, f.TempDir())
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		f.Fatal(err)
	}
	tool := newTool(f, dir, plan.Tool{MaxBytes: 4096})
	f.Fuzz(func(t *testing.T, path, op string) {
		args, err := json.Marshal(map[string]string{"op": op, "path": path})
		if err != nil {
			t.Fatal(err)
		}
		res, err := tool.Call(context.Background(), args)
		out := res.Content
		if err != nil {
			out = err.Error()
		}
		if strings.Contains(out, secret) {
			t.Fatalf("%s %q shows the secret from outside the root: %q", op, path, out)
		}
		// An error repeats the path as given, so a path that names the
		// host directory itself is exempt from the host path check.
		if !strings.Contains(path, dir) && !strings.Contains(path, realDir) {
			checkClean(t, dir, out)
		}
		if err == nil && op != "read" && op != "list" {
			t.Fatalf("op %q succeeded", op)
		}
	})
}

// FuzzArgs feeds the tool raw argument bytes: malformed JSON, odd shapes
// and escapes must all end in an error or a result, never a panic or the
// secret.
func FuzzArgs(f *testing.F) {
	for _, seed := range []string{
		`{"op":"read","path":"a.txt"}`, `{"op":"list","path":"."}`, `{"op":"read"}`, `null`, `[]`, ``,
		`{"op":"read","path":"esc-file"}`, `{"op":"read","path":"a.txt","x":1}`, `{"op":"read","path":"a.txt"} 1`,
		`{"OP":"read","path":"a.txt"}`, `{"op":"read","path":"\u0000"}`,
	} {
		f.Add([]byte(seed))
	}
	dir := tree(f, f.TempDir())
	tool := newTool(f, dir, plan.Tool{MaxBytes: 4096})
	f.Fuzz(func(t *testing.T, args []byte) {
		res, err := tool.Call(context.Background(), args)
		out := res.Content
		if err != nil {
			out = err.Error()
		}
		if strings.Contains(out, secret) {
			t.Fatalf("%q shows the secret from outside the root: %q", args, out)
		}
		if err == nil && !json.Valid(args) {
			t.Fatalf("invalid JSON %q was accepted", args)
		}
	})
}
