package batch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	agentrt "agentc.dev/agentc/runtime"
)

// MaxItemID bounds an item line's id, in bytes: a name to find the item's
// result by, not data.
const MaxItemID = 256

// parseItem reads an item line (Options.Items), one JSON object:
// {"input": …, "model": "PROVIDER:MODEL", "id": "…"}. input is required;
// model and id are optional strings. Any other member is refused, so that
// a misspelt "modle" is not silently a run against the agent's own model.
func parseItem(line []byte) (input []byte, model, id string, err error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, "", "", errors.New(`an item line is a JSON object, {"input": …, "model": "PROVIDER:MODEL", "id": "…"}, with the run's input under "input"`)
	}
	var in json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, "", "", err
		}
		key, _ := tok.(string)
		switch key {
		case "input":
			if err := dec.Decode(&in); err != nil {
				return nil, "", "", fmt.Errorf(`"input": %v`, err)
			}
		case "model", "id":
			var v any
			if err := dec.Decode(&v); err != nil {
				return nil, "", "", fmt.Errorf("%q: %v", key, err)
			}
			s, ok := v.(string)
			switch {
			case !ok:
				return nil, "", "", fmt.Errorf("%q must be a string, not %s", key, agentrt.JSONKind(v))
			case key == "model" && strings.TrimSpace(s) == "":
				return nil, "", "", errors.New(`"model" is empty: name a model as PROVIDER:MODEL (openai:gpt-4o-2024-08-06), a provider, or test; leave "model" out to run the agent's own`)
			case key == "model":
				model = s
			case len(s) > MaxItemID:
				return nil, "", "", fmt.Errorf(`"id" is %d bytes, more than the %d an id may hold`, len(s), MaxItemID)
			case !utf8.ValidString(s):
				return nil, "", "", errors.New(`"id" is not valid UTF-8`)
			default:
				id = s
			}
		default:
			return nil, "", "", fmt.Errorf(`member %q: an item line holds only "input", "model" and "id"`, key)
		}
	}
	if in == nil {
		return nil, "", "", errors.New(`an item line has no "input": the run's input goes under "input"`)
	}
	if _, err := dec.Token(); err != nil && !errors.Is(err, io.EOF) {
		return nil, "", "", err
	}
	return []byte(in), model, id, nil
}

// modelLabel names the model an item ran against, as PROVIDER:MODEL, or
// test when the test model answered.
func modelLabel(r *agentrt.Runner, rep *agentrt.Report) string {
	if rep == nil || rep.Provider == "" {
		return ""
	}
	if rep.Provider == "test" {
		return "test"
	}
	return rep.Provider + ":" + r.Plan().Agent.Model.Name
}
