package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"agentc.dev/agentc/digest"
)

// Within returns where the callee is when its caller's directory is dir:
// the file or directory its tool names, and the directory its own relative
// paths resolve against. An absolute Path or Dir stands as it is.
func (c Callee) Within(dir string) (path, calleeDir string) {
	at := func(p string) string {
		p = filepath.FromSlash(p)
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	return at(c.Path), at(c.Dir)
}

// checkCallees says what is wrong with a plan's callees: each agent tool
// has one, of its path, holding a plan with an answer to return, whose
// contract is the one recorded and the one the tool pins; there is no
// other.
func (p *Plan) checkCallees() error {
	tools := p.Agent.Capabilities.Tools
	for _, name := range slices.Sorted(maps.Keys(tools)) {
		t := tools[name]
		if t.Kind != "agent" {
			continue
		}
		c, ok := p.Callees[name]
		switch {
		case !ok || c.Plan == nil:
			return fmt.Errorf("tool %q: the plan holds no compiled agent for it; compile the agent again (agentc compile)", name)
		case c.Path != t.Path:
			return fmt.Errorf("tool %q: the called agent compiled in is %q, not the tool's %q", name, c.Path, t.Path)
		case c.Contract != c.Plan.Digests.Contract:
			return fmt.Errorf("tool %q: the called agent's contract is %s, not the %s recorded for it", name, c.Plan.Digests.Contract, c.Contract)
		case t.Pin != "" && digest.Digest(t.Pin) != c.Contract:
			return fmt.Errorf("tool %q: the called agent's contract moved: pinned %s, found %s", name, t.Pin, c.Contract)
		case c.Plan.Agent.Output == nil:
			return fmt.Errorf("tool %q: the called agent declares no output, so it has no answer to return", name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(p.Callees)) {
		if tools[name].Kind != "agent" {
			return fmt.Errorf("callee %q: the agent has no agent tool of that name", name)
		}
	}
	return nil
}

// offsetOf returns the offset in a JSON text of the value at a path of
// object keys, or -1 when the text holds none there.
func offsetOf(data []byte, keys []string) int {
	dec := json.NewDecoder(bytes.NewReader(data))
	for _, key := range keys {
		if t, err := dec.Token(); err != nil || t != json.Delim('{') {
			return -1
		}
		for {
			t, err := dec.Token()
			if err != nil {
				return -1
			}
			k, ok := t.(string)
			if !ok {
				return -1 // the object ended
			}
			if k == key {
				break
			}
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return -1
			}
		}
	}
	// The decoder stands after the last key: the value follows the colon.
	off := int(dec.InputOffset())
	for off < len(data) && bytes.IndexByte([]byte(": \t\r\n"), data[off]) >= 0 {
		off++
	}
	return off
}
