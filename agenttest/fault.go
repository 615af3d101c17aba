package agenttest

import (
	"bytes"
	"encoding/json"
	"fmt"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/fault"
)

// CheckFault checks the run got of the case name with the fault injected
// against want ("recovered", "error" or a bound's name); base is the
// report of the case's run without the fault. A failure is positioned at
// the case's faults.<fault> when the manifest declared it.
func (c *Checker) CheckFault(name, kind, want string, base, got *agentrt.Report) []Failure {
	pos := ""
	if _, ok := c.p.Sources["tests."+name+".faults."+kind]; ok {
		pos = c.pos("tests." + name + ".faults." + kind).String()
	}
	ok := false
	switch want {
	case fault.Recovered:
		ok = got.Outcome == agentrt.OutcomeOK && got.Bound == agentrt.BoundNone && sameAnswer(base.Answer, got.Answer)
		if kind == fault.Outage {
			// Recovered from an outage: a fallback model served.
			ok = ok && len(got.Fallbacks) > 0
		}
	case fault.Failed:
		ok = got.Outcome == agentrt.OutcomeError && got.Bound == agentrt.BoundNone
	default:
		ok = got.Bound == want
	}
	if ok {
		return nil
	}
	return []Failure{{Pos: pos, Msg: fmt.Sprintf("%s: expected %s, got %s", kind, want, Describe(base, got))}}
}

// Describe says how a fault run ended, next to the run without it.
func Describe(base, got *agentrt.Report) string {
	s := fmt.Sprintf("outcome %s, bound %s", got.Outcome, got.Bound)
	switch {
	case got.Outcome == agentrt.OutcomeOK && sameAnswer(base.Answer, got.Answer):
		s += ", the same answer"
	case got.Outcome == agentrt.OutcomeOK:
		s += ", another answer: " + short(got.Answer)
	}
	if n := len(got.Fallbacks); n > 0 {
		to := got.Fallbacks[n-1].To
		s += fmt.Sprintf(", served by the fallback %s:%s", to.Provider, to.Model)
	}
	if got.Error != "" {
		s += ": " + got.Error
	}
	return s
}

func sameAnswer(a, b json.RawMessage) bool {
	var x, y bytes.Buffer
	if json.Compact(&x, a) != nil || json.Compact(&y, b) != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(x.Bytes(), y.Bytes())
}

func short(b json.RawMessage) string {
	var x bytes.Buffer
	if json.Compact(&x, b) != nil {
		x.Reset()
		x.Write(b)
	}
	r := []rune(x.String())
	if len(r) > 120 {
		return string(r[:120]) + "…"
	}
	return string(r)
}
