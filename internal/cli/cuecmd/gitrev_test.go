package cuecmd

import (
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
