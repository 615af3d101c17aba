package journal_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"agentc.dev/agentc/runtime/journal"
)

// longRun returns the journal of a run of rounds model calls, each of
// which sends the same tool specs, one value of size bytes stored once,
// and one new message: the shape of a long run with large tools.
func longRun(t testing.TB, rounds, size int) ([]byte, string) {
	tools := `"` + strings.Repeat("t", size-2) + `"`
	d, err := journal.ValueDigest(json.RawMessage(tools))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"journal":%q,"plan":%q,"run":"long","output_suffix":"1a2b3c4d","agent":"long","started":"2026-12-01T00:00:00Z"}`+"\n", journal.Format, testPlan)
	fmt.Fprintf(&b, `{"value":%q,"json":%s}`+"\n", d, tools)
	for i := range rounds {
		fmt.Fprintf(&b, `{"effect":"%d.0","kind":"model","fingerprint":%q,"request":{"messages":{"after":%d,"new":[{"content":"turn %d","role":"user"}]},"model":"m","tools":{"$value":%q}},"response":{"message":{"role":"assistant","content":"ok"}},"started":"2026-12-01T00:00:01Z","duration_ms":1}`+"\n",
			i+1, d, 2*i, i, d)
	}
	return b.Bytes(), tools
}

// TestLongRunReads: a journal whose requests, their value references
// replaced, come to more than 256 MiB in all (300 model calls, each
// naming the same 1 MiB of tool specs) reads, and each request expands,
// whole or in part, one at a time.
func TestLongRunReads(t *testing.T) {
	const rounds = 300
	data, tools := longRun(t, rounds, 1<<20)
	j, err := journal.Read(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the journal of a long run does not read: %v", err)
	}
	if len(j.Entries) != rounds {
		t.Fatalf("%d entries, want %d", len(j.Entries), rounds)
	}
	for i := range j.Entries {
		e := &j.Entries[i]
		got, err := e.ExpandRequest(nil, "messages", "model")
		want := fmt.Sprintf(`{"messages":{"after":%d,"new":[{"content":"turn %d","role":"user"}]},"model":"m"}`, 2*i, i)
		if err != nil || string(got) != want {
			t.Fatalf("entry %s: %s, %v; want %s", e.Key, got, err, want)
		}
	}
	last := &j.Entries[rounds-1]
	whole, err := last.ExpandRequest(nil)
	want := fmt.Sprintf(`{"messages":{"after":%d,"new":[{"content":"turn %d","role":"user"}]},"model":"m","tools":%s}`, 2*(rounds-1), rounds-1, tools)
	if err != nil || string(whole) != want {
		t.Fatalf("entry %s, whole: %.200s, %v", last.Key, whole, err)
	}
}

// TestExpandBounds: a request is refused past MaxRequest, its value
// references counted before anything is made, when the journal is read
// and again when it is expanded; a Budget bounds what many expansions
// make, each refusal an *Error at the entry's line.
func TestExpandBounds(t *testing.T) {
	defer func(m int64) { journal.MaxRequest = m }(journal.MaxRequest)
	data, _ := longRun(t, 10, 1<<20)

	journal.MaxRequest = 1 << 20
	_, err := journal.Read(bytes.NewReader(data))
	var je *journal.Error
	if !errors.As(err, &je) || je.Line != 3 || !strings.Contains(je.Msg, `effect 1.0: request member "tools": the request, its value references replaced, is larger than the 1 MiB a request may be`) {
		t.Fatalf("read past MaxRequest: %v", err)
	}

	journal.MaxRequest = 2 << 20
	j, err := journal.Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	journal.MaxRequest = 1 << 20
	if _, err := j.Entries[4].ExpandRequest(nil, "tools"); !errors.As(err, &je) || je.Line != 7 ||
		je.Error() != `journal:7: effect 5.0: request member "tools": the request, its value references replaced, is larger than the 1 MiB a request may be` {
		t.Fatalf("expanded past MaxRequest: %v", err)
	}
	if got, err := j.Entries[4].ExpandRequest(nil, "model"); err != nil || string(got) != `{"model":"m"}` {
		t.Fatalf("a small member of a large request: %s, %v", got, err)
	}

	journal.MaxRequest = 2 << 20
	b := &journal.Budget{Max: 4 << 20, What: "the requests shown"}
	for i := range 3 {
		if _, err := j.Entries[i].ExpandRequest(b, "tools"); err != nil {
			t.Fatalf("entry %d within the budget: %v", i, err)
		}
	}
	_, err = j.Entries[3].ExpandRequest(b, "tools")
	if !errors.As(err, &je) || je.Line != 6 ||
		je.Error() != `journal:6: effect 4.0: request member "tools": the requests shown, their value references replaced, come to more than 4 MiB` {
		t.Fatalf("past the budget: %v", err)
	}
}
