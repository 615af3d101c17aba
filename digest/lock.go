package digest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// LockFile is the lock file's name, at the root of a module.
const LockFile = "agentc.sum"

const lockHeader = `# agentc.sum: the contract and plan digests of each agent, one agent a line,
# sorted by name: NAME CONTRACT-DIGEST PLAN-DIGEST. Update it with
# "agentc digest --write"; "agentc digest --check" fails when an agent moved.
`

// Entry is one agent's line in a lock file.
type Entry struct {
	Name     string
	Contract Digest
	Plan     Digest
}

// Lock is the content of a lock file: an entry per agent name.
type Lock struct {
	Entries map[string]Entry
}

// ParseLock reads a lock file. Errors name the file and line.
func ParseLock(file string, data []byte) (*Lock, error) {
	l := &Lock{Entries: map[string]Entry{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 3 {
			return nil, fmt.Errorf("%s:%d: want NAME CONTRACT-DIGEST PLAN-DIGEST, found %d fields", file, n, len(fields))
		}
		c, err := Parse(fields[1])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: contract digest: %v", file, n, err)
		}
		p, err := Parse(fields[2])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: plan digest: %v", file, n, err)
		}
		if _, dup := l.Entries[fields[0]]; dup {
			return nil, fmt.Errorf("%s:%d: agent %q is listed twice", file, n, fields[0])
		}
		l.Entries[fields[0]] = Entry{Name: fields[0], Contract: c, Plan: p}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	return l, nil
}

// Format writes the lock file: a header, then the entries sorted by name.
func (l *Lock) Format() []byte {
	names := make([]string, 0, len(l.Entries))
	for n := range l.Entries {
		names = append(names, n)
	}
	sort.Strings(names)
	var b bytes.Buffer
	b.WriteString(lockHeader)
	for _, n := range names {
		e := l.Entries[n]
		fmt.Fprintf(&b, "%s %s %s\n", e.Name, e.Contract, e.Plan)
	}
	return b.Bytes()
}

// Moved is one digest of an agent that differs from its lock entry.
type Moved struct {
	Kind           string // "contract" or "plan"
	Locked, Actual Digest
}

func (m Moved) String() string {
	return fmt.Sprintf("%s digest moved (lock %s, now %s)", m.Kind, m.Locked, m.Actual)
}

// Moves are the digests of an agent that differ from its lock entry.
type Moves []Moved

func (ms Moves) String() string {
	s := make([]string, len(ms))
	for i, m := range ms {
		s[i] = m.String()
	}
	return strings.Join(s, "; ")
}

// Compare returns the digests of e that differ from the lock's entry of
// the same name, contract first; ok is false when the lock has no entry
// of that name.
func (l *Lock) Compare(e Entry) (moved Moves, ok bool) {
	was, ok := l.Entries[e.Name]
	if !ok {
		return nil, false
	}
	if e.Contract != was.Contract {
		moved = append(moved, Moved{Contract.Name, was.Contract, e.Contract})
	}
	if e.Plan != was.Plan {
		moved = append(moved, Moved{Plan.Name, was.Plan, e.Plan})
	}
	return moved, true
}

// FindLock returns the nearest lock file in dir or a directory above it,
// or "" when there is none. dir should be absolute: a relative one is
// searched only as far up as it reaches.
func FindLock(dir string) string {
	for d := dir; ; {
		path := filepath.Join(d, LockFile)
		if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
			return path
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}
