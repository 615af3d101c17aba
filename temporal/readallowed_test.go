package temporal_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/temporal"
)

// TestReadAllowed: --allow takes a plan digest, a plan file (its content
// verified) or a lock file (every agent's plan digest); anything else, and
// a file past the bound (a link to a device that never ends too), is an
// error that says which.
func TestReadAllowed(t *testing.T) {
	dir := t.TempDir()
	good := labeller(t, labelSchema)
	d := digests(t, good)[0]
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	other := "blake3:" + strings.Repeat("ab", 32)
	lock := write("agentc.sum", "label blake3:"+strings.Repeat("cd", 32)+" "+string(d)+"\nother blake3:"+strings.Repeat("ef", 32)+" "+other+"\n")
	planFile := write("plan.json", string(good))
	damaged := write("damaged.json", strings.Replace(string(good), "Label the issue.", "Label the issues.", 1))
	empty := write("empty.sum", "# nothing yet\n")
	manifest := write("agent.cue", "name: \"x\"\nmodel: {provider: \"test\", name: \"t\"}\n")
	big := filepath.Join(dir, "big.sum")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(plan.MaxPlanBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	bigLock := write("big-lock.sum", strings.Repeat("#\n", plan.MaxLockBytes/2+1))
	zero := filepath.Join(dir, "zero.sum")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		arg  string
		want []digest.Digest
		err  string
	}{
		{arg: string(d), want: []digest.Digest{d}},
		{arg: planFile, want: []digest.Digest{d}},
		{arg: lock, want: []digest.Digest{d, digest.Digest(other)}},
		{arg: "blake3:1234", err: "is not a digest"},
		{arg: filepath.Join(dir, "none.sum"), err: "no such file"},
		{arg: damaged, err: "does not match its digests"},
		{arg: empty, err: "the lock file holds no agent"},
		{arg: manifest, err: "(a plan digest, plan file or lock file was expected)"},
		{arg: big, err: "big.sum is larger than the 16 MiB a plan or lock file may be"},
		{arg: bigLock, err: "big-lock.sum is larger than the 4 MiB a lock file may be"},
		{arg: zero, err: "zero.sum is not a regular file (a character device)"},
	} {
		got, err := temporal.ReadAllowed(c.arg)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("ReadAllowed(%s): %v, %v; want an error that says %q", filepath.Base(c.arg), got, err, c.err)
		case c.err == "" && (err != nil || !slices.Equal(got, c.want)):
			t.Errorf("ReadAllowed(%s): %v, %v; want %v", filepath.Base(c.arg), got, err, c.want)
		}
	}
}

// FuzzReadAllowed: whatever a file given to --allow holds, ReadAllowed
// returns well-formed digests or an error, and never panics.
func FuzzReadAllowed(f *testing.F) {
	f.Add([]byte(labeller(f, labelSchema)))
	f.Add([]byte("label blake3:" + strings.Repeat("cd", 32) + " blake3:" + strings.Repeat("ab", 32) + "\n"))
	f.Add([]byte("# header\n\nx y z\n"))
	f.Add([]byte(`{"format":"agentc.plan/v4"}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "allow")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		ds, err := temporal.ReadAllowed(path)
		if err != nil {
			return
		}
		if len(ds) == 0 {
			t.Fatal("no digest and no error")
		}
		for _, d := range ds {
			if _, err := digest.Parse(string(d)); err != nil {
				t.Fatalf("ReadAllowed returned %q: %v", d, err)
			}
		}
	})
}
