package plan

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// TestReadErrors: each file of testdata/read holds a damaged plan.json and
// the exact error Read gives for it, position included.
func TestReadErrors(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "read", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases in testdata/read: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			parts := map[string][]byte{}
			for _, f := range ar.Files {
				parts[f.Name] = f.Data
			}
			data, ok := parts["plan.json"]
			want, ok2 := parts["error"]
			if !ok || !ok2 {
				t.Fatalf("%s needs a plan.json and an error section", file)
			}
			_, err = Read("plan.json", data)
			if err == nil {
				t.Fatal("accepted")
			}
			if got, want := err.Error(), strings.TrimSuffix(string(want), "\n"); got != want {
				t.Errorf("error\n  %s\nwant\n  %s", got, want)
			}
		})
	}
}
