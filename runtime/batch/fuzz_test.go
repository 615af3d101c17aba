package batch_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"agentc.dev/agentc/digest"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/batch"
)

// FuzzLines reads arbitrary bytes as a batch's input (seeds in
// testdata/fuzz/FuzzLines): the batch never panics or hangs, makes one
// item of each line that is not blank, in order, with its line number;
// an item runs exactly when its line is one JSON value no longer than
// the limit, and any other is that item's error, naming its line; Count
// counts as many.
func FuzzLines(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		const maxLine = 64
		var ran []string
		run := func(_ context.Context, index, line int, input json.RawMessage) (*agentrt.Report, error) {
			ran = append(ran, string(input))
			return &agentrt.Report{Outcome: agentrt.OutcomeOK, Bound: agentrt.BoundNone, Answer: input}, nil
		}
		b := batch.NewFunc(run, batch.Options{Parallel: 1, MaxLine: maxLine})
		var got []batch.Result
		sum, err := b.Run(context.Background(), bytes.NewReader(data), func(r batch.Result) error {
			got = append(got, r)
			return nil
		})
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		// What the batch should have made of the input, line by line.
		type want struct {
			line int
			text string
			ok   bool
		}
		var wants []want
		lines := strings.Split(string(data), "\n")
		if len(lines) > 0 && lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		for i, l := range lines {
			l = strings.TrimSuffix(l, "\r")
			if len(l) <= maxLine && strings.TrimSpace(l) == "" {
				continue
			}
			// An input is one JSON value that is I-JSON, as a journal
			// records it exactly.
			_, ijson := digest.CanonicalExact([]byte(l))
			wants = append(wants, want{line: i + 1, text: l, ok: len(l) <= maxLine && json.Valid([]byte(l)) && ijson == nil})
		}
		if len(got) != len(wants) || sum.Done != len(wants) {
			t.Fatalf("%d results (%d done) for %d items", len(got), sum.Done, len(wants))
		}
		bad := 0
		for i, r := range got {
			w := wants[i]
			if r.Index != i || r.Line != w.line {
				t.Fatalf("result %d: index %d, line %d; want %d, %d", i, r.Index, r.Line, i, w.line)
			}
			switch {
			case w.ok && (r.Outcome != agentrt.OutcomeOK || string(r.Answer) != w.text):
				t.Fatalf("line %d %q: %s %q, want it run", w.line, w.text, r.Outcome, r.Error)
			case !w.ok && (r.Outcome != agentrt.OutcomeError || !strings.HasPrefix(r.Error, "line "+itoa(w.line))):
				t.Fatalf("line %d %q: %s %q, want its error naming its line", w.line, w.text, r.Outcome, r.Error)
			}
			if !w.ok {
				bad++
			}
		}
		if sum.BadLines != bad || len(ran) != len(wants)-bad {
			t.Fatalf("%d bad lines, %d run; want %d, %d", sum.BadLines, len(ran), bad, len(wants)-bad)
		}
		// Counted before a batch runs, the items are the ones it makes.
		if n := batch.Count(bytes.NewReader(data), maxLine); n != int64(len(wants)) {
			t.Fatalf("Count says %d items, the batch made %d", n, len(wants))
		}
	})
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// FuzzItems reads arbitrary bytes as a batch of item lines (seeds in
// testdata/fuzz/FuzzItems): the batch never panics; an item runs exactly
// when its line is an object of "input", "model" and "id" alone, with an
// input and string model and id, and it runs that input; the result
// repeats the id. This batch runs items elsewhere, so an item naming a
// model is refused, naming its line.
func FuzzItems(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		var ran []json.RawMessage
		run := func(_ context.Context, index, line int, input json.RawMessage) (*agentrt.Report, error) {
			ran = append(ran, append(json.RawMessage(nil), input...))
			return &agentrt.Report{Outcome: agentrt.OutcomeOK, Bound: agentrt.BoundNone, Answer: input}, nil
		}
		b := batch.NewFunc(run, batch.Options{Parallel: 1, MaxLine: 256, Items: true})
		var got []batch.Result
		if _, err := b.Run(context.Background(), bytes.NewReader(data), func(r batch.Result) error {
			got = append(got, r)
			return nil
		}); err != nil {
			t.Fatalf("Run: %v", err)
		}
		lines := strings.Split(string(data), "\n")
		n := 0
		for _, r := range got {
			l := strings.TrimSuffix(lines[r.Line-1], "\r")
			var obj map[string]json.RawMessage
			isObj := json.Unmarshal([]byte(l), &obj) == nil
			if r.Outcome != agentrt.OutcomeOK {
				if !strings.HasPrefix(r.Error, "line "+strconv.Itoa(r.Line)) {
					t.Errorf("line %d: error %q does not name its line", r.Line, r.Error)
				}
				if isObj && obj["input"] != nil && obj["model"] == nil && len(l) <= 256 {
					if _, err := digest.CanonicalExact([]byte(l)); err == nil && onlyItemKeys(obj) && stringOrAbsent(obj["id"]) {
						t.Errorf("line %d: %q is an item but failed: %s", r.Line, l, r.Error)
					}
				}
				continue
			}
			if !isObj || !onlyItemKeys(obj) || obj["model"] != nil || !stringOrAbsent(obj["id"]) {
				t.Fatalf("line %d: %q ran but is not an item of the agent's own model", r.Line, l)
			}
			if n >= len(ran) || !jsonEqual(ran[n], obj["input"]) {
				t.Fatalf("line %d: ran something other than its input", r.Line)
			}
			var id string
			_ = json.Unmarshal(obj["id"], &id)
			if r.ID != id {
				t.Errorf("line %d: result id %q, line's %q", r.Line, r.ID, id)
			}
			n++
		}
		if n != len(ran) {
			t.Fatalf("%d runs for %d items that ran", len(ran), n)
		}
	})
}

func onlyItemKeys(obj map[string]json.RawMessage) bool {
	for k := range obj {
		if k != "input" && k != "model" && k != "id" {
			return false
		}
	}
	return true
}

func stringOrAbsent(v json.RawMessage) bool {
	if v == nil {
		return true
	}
	var s string
	return json.Unmarshal(v, &s) == nil && len(s) <= batch.MaxItemID
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
