package journal_test

import (
	"bytes"
	"errors"
	"testing"

	"agentc.dev/agentc/runtime/journal"
)

// FuzzRead: Read never panics, fails only with *journal.Error, keeps its
// requests within MaxRequest each and MaxRequests in all (made small
// here, so that the seed corpus's value-reference bombs pass them), and
// what it accepts the Writer writes again, to a journal that reads back
// the same.
func FuzzRead(f *testing.F) {
	defer func(r, rs, fl int64) { journal.MaxRequest, journal.MaxRequests, journal.MaxFile = r, rs, fl }(journal.MaxRequest, journal.MaxRequests, journal.MaxFile)
	journal.MaxRequest, journal.MaxRequests, journal.MaxFile = 4<<10, 16<<10, 1<<20
	f.Fuzz(func(t *testing.T, data []byte) {
		j, err := journal.Read(bytes.NewReader(data))
		if err == nil {
			var all int64
			for _, e := range j.Entries {
				if int64(len(e.Request)) > journal.MaxRequest {
					t.Fatalf("entry %s: a request of %d bytes, past MaxRequest %d", e.Key, len(e.Request), journal.MaxRequest)
				}
				all += int64(len(e.Request))
			}
			if all > journal.MaxRequests {
				t.Fatalf("requests of %d bytes in all, past MaxRequests %d", all, journal.MaxRequests)
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
			if string(again.Entries[i].Request) != string(e.Request) {
				t.Errorf("entry %s: request %s, written again %s", e.Key, e.Request, again.Entries[i].Request)
			}
		}
	})
}
