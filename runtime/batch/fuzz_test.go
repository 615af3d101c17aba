package batch_test

import (
	"bytes"
	"context"
	"encoding/json"
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
// the limit, and any other is that item's error, naming its line.
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
	})
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
