package runcmd

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/runtime/filestore"
)

type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '%'
	}
	return len(p), nil
}

// A file from an endless standard input is read to its bound and
// refused, storing nothing.
func TestEndlessStdinFile(t *testing.T) {
	store, err := filestore.Open(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	fi := &fileInputs{fields: []plan.FileField{{Name: "doc", MediaTypes: []string{"application/pdf"}, MaxBytes: 1 << 20}}, store: store, stdin: endless{}}
	_, err = fi.resolve(nil, []string{"doc=-"}, ".")
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != ExitUsage || !strings.Contains(err.Error(), "larger than the 1 MiB input doc takes") {
		t.Fatalf("got %v", err)
	}
}
