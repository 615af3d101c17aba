// Package vetcase reads the scenarios of testdata/vet: a txtar archive of
// manifest files, an optional "args" file (the command line after
// "agentc"; by default "vet" and every top-level manifest file), an
// optional "exit" file (the exit code; 1 by default), an optional "links"
// file (a symbolic link a line: its path, then what it points to, made
// after the files) and "want", the exact output. The command line's tests and compile's own run the same cases
// through it.
package vetcase

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/txtar"
)

// Case is one scenario, its manifest files written out.
type Case struct {
	Archive *txtar.Archive
	Args    []string
	Want    string
	HasWant bool
	Exit    int
}

// Read parses the case at file and writes its manifest files under dir.
func Read(file, dir string) (*Case, error) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		return nil, err
	}
	c := &Case{Archive: ar, Exit: 1}
	var args []string
	var links []string
	for _, f := range ar.Files {
		switch f.Name {
		case "links":
			links = strings.Split(strings.TrimSpace(string(f.Data)), "\n")
		case "want":
			c.Want, c.HasWant = string(f.Data), true
		case "args":
			c.Args = strings.Fields(string(f.Data))
		case "exit":
			if c.Exit, err = strconv.Atoi(strings.TrimSpace(string(f.Data))); err != nil {
				return nil, fmt.Errorf("%s: exit: %v", file, err)
			}
		default:
			p := filepath.Join(dir, f.Name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return nil, err
			}
			if err := os.WriteFile(p, f.Data, 0o644); err != nil {
				return nil, err
			}
			if !strings.Contains(f.Name, "/") {
				args = append(args, f.Name)
			}
		}
	}
	for _, l := range links {
		f := strings.Fields(l)
		if len(f) != 2 {
			return nil, fmt.Errorf("%s: links: want PATH TARGET, found %q", file, l)
		}
		p := filepath.Join(dir, f[0])
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.Symlink(f[1], p); err != nil {
			return nil, err
		}
	}
	if c.Args == nil {
		c.Args = append([]string{"vet"}, args...)
	}
	return c, nil
}

// SetWant replaces the case's want section, adding one if it has none.
func (c *Case) SetWant(out string) {
	for i, f := range c.Archive.Files {
		if f.Name == "want" {
			c.Archive.Files[i].Data = []byte(out)
			return
		}
	}
	c.Archive.Files = append(c.Archive.Files, txtar.File{Name: "want", Data: []byte(out)})
}
