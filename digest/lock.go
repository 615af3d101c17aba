package digest

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// LockFile is the lock file's name, at the root of a module.
const LockFile = "agentc.sum"

const lockHeader = `# agentc.sum: the contract and plan digests of each agent, one agent a line,
# sorted by name: NAME CONTRACT-DIGEST PLAN-DIGEST. Update it with
# "agentc digest --write"; "agentc digest --check" fails when an agent moved.
`

// contractsHeader starts the lock's contracts, after its agent lines.
const contractsHeader = `# The contracts the digests above and compatible_with pins name, one a line,
# sorted by digest: CONTRACT-DIGEST CANONICAL-JSON. agentc diffs against them.
`

// maxLockLine is the longest line a lock file may hold: a contract line
// holds a whole contract, schemas and all.
const maxLockLine = 16 << 20

// Entry is one agent's line in a lock file.
type Entry struct {
	Name     string
	Contract Digest
	Plan     Digest
}

// Lock is the content of a lock file: an entry per agent name, and
// contracts by their digest.
type Lock struct {
	Entries map[string]Entry
	// Contracts holds the canonical JSON of contracts (what the contract
	// digest is computed over; see plan.ContractJSON) by their digest.
	// ParseLock verifies each against its digest.
	Contracts map[Digest][]byte
}

// Contract returns the canonical JSON of the contract of digest d, if the
// lock holds it.
func (l *Lock) Contract(d Digest) ([]byte, bool) {
	c, ok := l.Contracts[d]
	return c, ok
}

// AddContract records the canonical JSON of a contract, and returns its
// digest.
func (l *Lock) AddContract(canonical []byte) Digest {
	d := Contract.OfCanonical(canonical)
	if l.Contracts == nil {
		l.Contracts = map[Digest][]byte{}
	}
	l.Contracts[d] = canonical
	return d
}

// ParseLock reads a lock file. Errors name the file and line.
func ParseLock(file string, data []byte) (*Lock, error) {
	l := &Lock{Entries: map[string]Entry{}, Contracts: map[Digest][]byte{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, maxLockLine)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		// No agent name holds a colon: a line that starts with a digest
		// is a contract.
		if strings.HasPrefix(line, Prefix) {
			if err := l.parseContract(line); err != nil {
				return nil, fmt.Errorf("%s:%d: %v", file, n, err)
			}
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

// parseContract reads a contract line, DIGEST CANONICAL-JSON, and checks
// that the JSON is the contract of that digest: a contract edited by hand
// is refused, never diffed against.
func (l *Lock) parseContract(line string) error {
	ds, js, _ := strings.Cut(line, " ")
	d, err := Parse(ds)
	if err != nil {
		return fmt.Errorf("contract: %v", err)
	}
	js = strings.TrimSpace(js)
	if js == "" {
		return fmt.Errorf("contract %s: want CONTRACT-DIGEST CANONICAL-JSON, found no JSON", d)
	}
	c, err := Canonical([]byte(js))
	if err != nil {
		return fmt.Errorf("contract %s: %v", d, err)
	}
	if string(c) != js {
		return fmt.Errorf("contract %s: the JSON is not in canonical form (RFC 8785), as agentc digest --write writes it", d)
	}
	if got := Contract.OfCanonical(c); got != d {
		return fmt.Errorf("contract %s: the JSON does not match its digest (it is %s): the line was edited; delete it, and agentc digest --write records the contracts of the agents as they are", d, got)
	}
	if l.Contracts[d] == nil {
		l.Contracts[d] = c
	}
	return nil
}

// Format writes the lock file: a header, the entries sorted by name, and
// the contracts sorted by digest.
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
	if len(l.Contracts) > 0 {
		b.WriteString("\n" + contractsHeader)
		for _, d := range slices.Sorted(maps.Keys(l.Contracts)) {
			fmt.Fprintf(&b, "%s %s\n", d, l.Contracts[d])
		}
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

// FindLock returns the lock file of the first of dirs that holds one, or
// "" when none does. Callers pass the directories of a project, nearest
// first (package internal/leaf/project), so that a lock file above the project
// applies to nothing in it.
func FindLock(dirs ...string) string {
	for _, d := range dirs {
		path := filepath.Join(d, LockFile)
		if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
			return path
		}
	}
	return ""
}
