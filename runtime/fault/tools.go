package fault

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
)

// HangFor is how long tool_hang holds a call before it fails it as the
// tool's timeout would: it stands for the timeout, which would only be
// waited for.
const HangFor = 100 * time.Millisecond

// Tools wraps a run's tools (whose specs the run reads) so that their
// calls are answered from the script, in order, and the first fails as
// the fault k says (a tool fault; any other fails nothing). A call the
// script does not hold is the tool's error. injected reports whether a
// tool fault has been injected into a call.
func Tools(tools map[string]agentrt.Tool, s *Script, k Kind, p *plan.Plan) (_ map[string]agentrt.Tool, injected func() bool) {
	st := &toolState{script: s, kind: k, plan: p}
	out := make(map[string]agentrt.Tool, len(tools))
	for name, t := range tools {
		out[name] = &playedTool{Tool: t, name: name, st: st}
	}
	return out, func() bool {
		st.mu.Lock()
		defer st.mu.Unlock()
		return st.injected
	}
}

type toolState struct {
	script *Script
	kind   Kind
	plan   *plan.Plan

	mu       sync.Mutex
	used     []bool
	injected bool
}

// take returns the recorded result of a call of tool with args: the
// first not yet served with that tool and those arguments, else with
// that tool. fault is the fault to inject instead, if any.
func (st *toolState) take(tool string, args json.RawMessage) (fault string, res agentrt.ToolResult, ok bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.kind.where == onTool && !st.injected {
		st.injected = true
		return st.kind.Name, res, true
	}
	if st.used == nil {
		st.used = make([]bool, len(st.script.Tools))
	}
	pick := -1
	for i, r := range st.script.Tools {
		if st.used[i] || r.Tool != tool {
			continue
		}
		if pick < 0 {
			pick = i
		}
		if sameJSON(r.Arguments, args) {
			pick = i
			break
		}
	}
	if pick < 0 {
		return "", res, false
	}
	st.used[pick] = true
	return "", st.script.Tools[pick].Result, true
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

// playedTool is a tool whose calls the script answers.
type playedTool struct {
	agentrt.Tool
	name string
	st   *toolState
}

func (t *playedTool) Call(ctx context.Context, args json.RawMessage) (agentrt.ToolResult, error) {
	fault, res, ok := t.st.take(t.name, args)
	switch fault {
	case ToolError:
		return agentrt.ToolResult{}, errors.New("the tool failed (agentc fault layer)")
	case ToolHang:
		timer := time.NewTimer(HangFor)
		defer timer.Stop()
		select {
		case <-ctx.Done():
			return agentrt.ToolResult{}, ctx.Err()
		case <-timer.C:
		}
		return agentrt.ToolResult{IsError: true, Content: fmt.Sprintf("timed out after %s; the call was abandoned (agentc fault layer)", t.timeout())}, nil
	}
	if !ok {
		return agentrt.ToolResult{}, fmt.Errorf("agentc's fault layer: the journal recorded no more calls of %s", t.name)
	}
	return res, nil
}

// timeout is the tool's declared timeout, or its kind's default.
func (t *playedTool) timeout() string {
	if d, ok := t.st.plan.Agent.Capabilities.Tools[t.name]; ok && d.Timeout != "" {
		return d.Timeout
	}
	return "30s"
}
