package journal_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/runtime/journal"
)

// FuzzRead: Read never panics, fails only with *journal.Error, and what
// it accepts expands, request by request, within MaxRequest (made small
// here, so that the seed corpus's value-reference bombs pass it), and
// within a budget or with a *journal.Error at the entry's line; a request's
// members expand as they are in the whole; and the Writer writes it again,
// to a journal that reads back the same.
func FuzzRead(f *testing.F) {
	defer func(r, fl int64) { journal.MaxRequest, journal.MaxFile = r, fl }(journal.MaxRequest, journal.MaxFile)
	journal.MaxRequest, journal.MaxFile = 4<<10, 1<<20
	f.Fuzz(func(t *testing.T, data []byte) {
		j, err := journal.Read(bytes.NewReader(data))
		if err == nil {
			budget := &journal.Budget{Max: 16 << 10, What: "the requests"}
			var all int64
			for i := range j.Entries {
				e := &j.Entries[i]
				r, err := e.ExpandRequest(nil)
				if err != nil {
					t.Fatalf("entry %s read, but does not expand: %v", e.Key, err)
				}
				if c, err := digest.CanonicalExact(r); err != nil || !bytes.Equal(c, r) {
					t.Fatalf("entry %s: the request expands to %s, not its canonical form %s (%v)", e.Key, r, c, err)
				}
				if int64(len(r)) > journal.MaxRequest {
					t.Fatalf("entry %s: a request of %d bytes, past MaxRequest %d", e.Key, len(r), journal.MaxRequest)
				}
				var whole map[string]json.RawMessage
				if err := json.Unmarshal(r, &whole); err != nil {
					t.Fatalf("entry %s: %v", e.Key, err)
				}
				for name, v := range whole {
					m, err := e.ExpandRequest(nil, name)
					var one map[string]json.RawMessage
					if err == nil {
						err = json.Unmarshal(m, &one)
					}
					if err != nil || len(one) != 1 || string(one[name]) != string(v) {
						t.Fatalf("entry %s: member %q expands to %s, %v; in the whole, %s", e.Key, name, m, err, v)
					}
				}
				_, err = e.ExpandRequest(budget)
				var je *journal.Error
				switch {
				case err == nil:
					all += int64(len(r))
				case !errors.As(err, &je) || je.Line < 2:
					t.Fatalf("entry %s: past the budget: %v, not a *journal.Error at its line", e.Key, err)
				}
			}
			if all > budget.Max {
				t.Fatalf("requests of %d bytes in all made, past the budget of %d", all, budget.Max)
			}
		}
		if err != nil {
			var je *journal.Error
			if !errors.As(err, &je) {
				t.Fatalf("error %v is a %T, not a *journal.Error", err, err)
			}
			return
		}
		if j.ValidBytes > int64(len(data)) || j.Truncated != (j.ValidBytes < int64(len(data))) {
			t.Fatalf("ValidBytes %d of %d, Truncated %v", j.ValidBytes, len(data), j.Truncated)
		}
		whole, err := journal.Read(bytes.NewReader(data[:j.ValidBytes]))
		if err != nil || whole.Truncated || len(whole.Entries) != len(j.Entries) {
			t.Fatalf("the complete lines alone: %v", err)
		}

		var b bytes.Buffer
		w, err := journal.CreateMemory(&b, j.Header)
		if err != nil {
			t.Fatalf("Create with a header Read accepted: %v", err)
		}
		for _, e := range j.Entries {
			if err := w.Append(e); err != nil {
				t.Fatalf("Append of an entry Read accepted: %v", err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		again, err := journal.Read(bytes.NewReader(b.Bytes()))
		if err != nil {
			t.Fatalf("reading the journal written again: %v\n%s", err, b.Bytes())
		}
		h, h2 := j.Header, again.Header
		if h.Plan != h2.Plan || h.Run != h2.Run || h.OutputSuffix != h2.OutputSuffix || h.Agent != h2.Agent ||
			!h.Started.Equal(h2.Started) || compactJSON(t, h.Tools) != compactJSON(t, h2.Tools) {
			t.Errorf("header %+v, written again %+v", h, h2)
		}
		if len(again.Entries) != len(j.Entries) {
			t.Fatalf("%d entries, written again %d", len(j.Entries), len(again.Entries))
		}
		for i, e := range j.Entries {
			sameEntry(t, again.Entries[i], e)
			if r, r2 := expand(t, &e), expand(t, &again.Entries[i]); string(r) != string(r2) {
				t.Errorf("entry %s: request %s, written again %s", e.Key, r, r2)
			}
		}
	})
}
