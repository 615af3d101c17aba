package temporal

import (
	"encoding/json"
	"unicode/utf8"

	agentrt "agentc.dev/agentc/runtime"
)

// asWritten puts back, in a report read from a run's workflow, the JSON
// the run wrote: Temporal's JSON payloads are written by encoding/json,
// which spells <, > and &, and U+2028 and U+2029, as \u escapes inside a
// json.RawMessage (the answer, a call's arguments), where the run's own
// report, printed in process, has the characters. The value is the same;
// the bytes a local run prints are what the caller compares.
func asWritten(rep *agentrt.Report) *agentrt.Report {
	if rep == nil {
		return nil
	}
	rep.Answer = unescapeHTML(rep.Answer)
	for i := range rep.Rounds {
		for j := range rep.Rounds[i].ToolCalls {
			c := &rep.Rounds[i].ToolCalls[j]
			c.Arguments = unescapeHTML(c.Arguments)
		}
	}
	return rep
}

// unescapeHTML returns JSON with the escapes encoding/json writes for <,
// >, &, U+2028 and U+2029 in its strings replaced by the characters. Any
// other escape is left as it is; so is data that is not valid JSON.
func unescapeHTML(data json.RawMessage) json.RawMessage {
	if len(data) == 0 || !json.Valid(data) {
		return data
	}
	var out []byte
	inString := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case !inString:
			inString = c == '"'
		case c == '"':
			inString = false
		case c == '\\':
			if data[i+1] == 'u' {
				if r, ok := htmlEscape(data[i+2 : i+6]); ok {
					if out == nil {
						out = append(make([]byte, 0, len(data)), data[:i]...)
					}
					out = utf8.AppendRune(out, r)
					i += 5
					continue
				}
			}
			// An escape of two bytes, or one kept: copied whole, so that
			// the byte after it is never read as its own.
			n := 2
			if data[i+1] == 'u' {
				n = 6
			}
			if out != nil {
				out = append(out, data[i:i+n]...)
			}
			i += n - 1
			continue
		}
		if out != nil {
			out = append(out, c)
		}
	}
	if out == nil {
		return data
	}
	return out
}

// htmlEscape reads the four hex digits of a \u escape that encoding/json
// writes of its own accord.
func htmlEscape(hex []byte) (rune, bool) {
	switch string(hex) {
	case "003c":
		return '<', true
	case "003e":
		return '>', true
	case "0026":
		return '&', true
	case "2028":
		return '\u2028', true
	case "2029":
		return '\u2029', true
	}
	return 0, false
}
