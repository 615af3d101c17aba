package journal_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeebo/blake3"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/runtime/journal"
)

var (
	testPlan  = "blake3:" + strings.Repeat("0123456789abcdef", 4)
	testStart = time.Date(2026, 11, 30, 9, 15, 0, 123456789, time.UTC)
	testTools = `[{"name":"search","description":"Search the issue tracker for issues like this one.","schema":{"type":"object","properties":{"q":{"type":"string","maxLength":200}},"required":["q"]}},` +
		`{"name":"fetch","description":"Fetch a page from one of the allowed hosts.","schema":{"type":"object","properties":{"url":{"type":"string","format":"uri"}},"required":["url"]}}]`
	testOutput = `{"name":"answer_1a2b3c4d","schema":{"type":"object","properties":{"label":{"enum":["bug","feature","question"]},"title":{"type":"string","maxLength":80}},"required":["label","title"]}}`
)

func testHeader() journal.Header {
	return journal.Header{Plan: testPlan, Run: "run-7", OutputSuffix: "1a2b3c4d", Agent: "triage", Started: testStart,
		Tools: json.RawMessage(`{"mcp":{"tracker":["search","fetch"]}}`)}
}

// message returns message i of conversation conv, longer than a value
// kept inline.
func message(conv, i int) string {
	role := [...]string{"user", "assistant", "tool"}[i%3]
	text := fmt.Sprintf("conversation %d, message %d: %s", conv, i, strings.Repeat("lorem ipsum ", 10+i%7))
	return fmt.Sprintf(`{"role":%q,"content":%q}`, role, text)
}

// modelRequest is a model request with the first n messages of a
// conversation, the tool specs and the output contract.
func modelRequest(conv, n int) json.RawMessage {
	msgs := make([]string, n)
	for i := range msgs {
		msgs[i] = message(conv, i)
	}
	return json.RawMessage(fmt.Sprintf(`{"provider":"openai","model":"gpt-a","messages":[%s],"tools":%s,"tool_choice":"auto","output":%s,"sampling":{"temperature":0}}`,
		strings.Join(msgs, ","), testTools, testOutput))
}

func fingerprint(t testing.TB, req json.RawMessage) string {
	t.Helper()
	fp, err := journal.Fingerprint(req)
	if err != nil {
		t.Fatal(err)
	}
	return fp
}

func modelEntry(t testing.TB, k journal.Key, req json.RawMessage) journal.Entry {
	return journal.Entry{Key: k, Kind: journal.KindModel, Fingerprint: fingerprint(t, req), Request: req,
		Response:   json.RawMessage(`{"message":{"role":"assistant","tool_calls":[{"id":"c1","name":"search","arguments":{"q":"crash"}}]}}`),
		Usage:      json.RawMessage(`{"input_tokens":1200,"output_tokens":31}`),
		Started:    testStart.Add(time.Duration(k.Round) * time.Second),
		DurationMS: int64(400 + k.Ordinal)}
}

func toolEntry(t testing.TB, k journal.Key, input string) journal.Entry {
	req := json.RawMessage(`{"tool":"search","input":` + input + `}`)
	return journal.Entry{Key: k, Kind: journal.KindTool, Fingerprint: fingerprint(t, req), Request: req,
		Response: json.RawMessage(`[{"id":17,"title":"Crash on start"}]`), Started: testStart, DurationMS: 12}
}

func create(t testing.TB, path string) *journal.Writer {
	t.Helper()
	w, err := journal.Create(path, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func write(t testing.TB, path string, entries []journal.Entry) {
	t.Helper()
	w := create(t, path)
	for _, e := range entries {
		if err := w.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func canonical(t testing.TB, data []byte) string {
	t.Helper()
	c, err := digest.Canonical(data)
	if err != nil {
		t.Fatalf("%v: %s", err, data)
	}
	return string(c)
}

func compactJSON(t testing.TB, data []byte) string {
	t.Helper()
	if data == nil {
		return "<nil>"
	}
	var b bytes.Buffer
	if err := json.Compact(&b, data); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// expand returns an entry's whole request.
func expand(t testing.TB, e *journal.Entry) json.RawMessage {
	t.Helper()
	r, err := e.ExpandRequest(nil)
	if err != nil {
		t.Fatalf("entry %s: %v", e.Key, err)
	}
	return r
}

// sameEntry checks that got is want read back: the request equal in
// canonical form, responses and usage equal in compact form.
func sameEntry(t testing.TB, got, want journal.Entry) {
	t.Helper()
	if got.Key != want.Key || got.Kind != want.Kind || got.Fingerprint != want.Fingerprint || got.Error != want.Error || got.DurationMS != want.DurationMS {
		t.Errorf("entry %s: got %+v, want %+v", want.Key, got, want)
	}
	if !got.Started.Equal(want.Started) {
		t.Errorf("entry %s: started %s, want %s", want.Key, got.Started, want.Started)
	}
	if got.Request != nil {
		t.Errorf("entry %s: read back with Request set: %s", want.Key, got.Request)
	}
	if g, w := string(expand(t, &got)), string(expand(t, &want)); g != w {
		t.Errorf("entry %s: request\n got %s\nwant %s", want.Key, g, w)
	}
	if g, w := compactJSON(t, got.Response), compactJSON(t, want.Response); g != w {
		t.Errorf("entry %s: response %s, want %s", want.Key, g, w)
	}
	if g, w := compactJSON(t, got.Usage), compactJSON(t, want.Usage); g != w {
		t.Errorf("entry %s: usage %s, want %s", want.Key, g, w)
	}
	if len(got.Lost) != len(want.Lost) {
		t.Errorf("entry %s: lost attempts %+v, want %+v", want.Key, got.Lost, want.Lost)
	}
	for i := range min(len(got.Lost), len(want.Lost)) {
		if g, w := got.Lost[i], want.Lost[i]; g.Attempt != w.Attempt || !g.Started.Equal(w.Started) {
			t.Errorf("entry %s: lost attempt %d: %+v, want %+v", want.Key, i, g, w)
		}
	}
}

// valueLines returns the digests of a journal's value lines, in order.
func valueLines(t testing.TB, data []byte) []string {
	t.Helper()
	var ds []string
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		var v struct {
			Value string `json:"value"`
		}
		if len(line) > 0 && json.Unmarshal(line, &v) == nil && v.Value != "" {
			ds = append(ds, v.Value)
		}
	}
	return ds
}

func checkValuesOnce(t testing.TB, data []byte) []string {
	t.Helper()
	ds := valueLines(t, data)
	seen := map[string]bool{}
	for _, d := range ds {
		if seen[d] {
			t.Errorf("value %s is written twice", d)
		}
		seen[d] = true
	}
	return ds
}

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.journal")
	var entries []journal.Entry
	const rounds = 40
	for r := range rounds {
		entries = append(entries, modelEntry(t, journal.Key{Round: r, Ordinal: 0}, modelRequest(1, 3+r)))
		entries = append(entries, toolEntry(t, journal.Key{Round: r, Ordinal: 1}, `{"q":"crash"}`))
	}
	failed := toolEntry(t, journal.Key{Path: "3.1", Round: 0, Ordinal: 0}, `{"q":"a query long enough to be stored once as a value of its own"}`)
	failed.Response, failed.Error = nil, "exit status 2: <no such index> & more"
	entries = append(entries, failed)
	// A call made a third time, its first two attempts lost with their
	// workers.
	entries[5].Lost = []journal.Attempt{{Attempt: 1, Started: entries[5].Started.Add(-30 * time.Second)},
		{Attempt: 2, Started: entries[5].Started.Add(-15 * time.Second)}}
	write(t, path, entries)

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte(`{"journal":"agentc.journal/v2","plan":"`+testPlan+`","run":"run-7",`)) {
		t.Errorf("header line: %.120s", data)
	}
	if !bytes.HasSuffix(data, []byte("\n")) {
		t.Error("the journal does not end with a newline")
	}
	// Distinct values: the messages of the conversation, the two tool
	// specs, the output contract and the failed call's input.
	ds := checkValuesOnce(t, data)
	if want := (3 + rounds - 1) + 2 + 1 + 1; len(ds) != want {
		t.Errorf("%d value lines, want %d", len(ds), want)
	}
	if st, _ := os.Stat(path); st.Size() > 200_000 {
		t.Errorf("journal is %d bytes; requests are not shared", st.Size())
	}

	j, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if j.Truncated || j.ValidBytes != int64(len(data)) {
		t.Errorf("Truncated %v, ValidBytes %d of %d", j.Truncated, j.ValidBytes, len(data))
	}
	h := testHeader()
	if j.Header.Plan != h.Plan || j.Header.Run != h.Run || j.Header.OutputSuffix != h.OutputSuffix || j.Header.Agent != h.Agent ||
		!j.Header.Started.Equal(h.Started) || string(j.Header.Tools) != string(h.Tools) {
		t.Errorf("header %+v, want %+v", j.Header, h)
	}
	if len(j.Entries) != len(entries) {
		t.Fatalf("%d entries, want %d", len(j.Entries), len(entries))
	}
	for i, e := range entries {
		sameEntry(t, j.Entries[i], e)
		if fp := fingerprint(t, expand(t, &j.Entries[i])); fp != e.Fingerprint {
			t.Errorf("entry %s: the request read back has fingerprint %s, want %s", e.Key, fp, e.Fingerprint)
		}
		got, ok := j.Lookup(e.Key)
		if !ok || got != &j.Entries[i] {
			t.Errorf("Lookup(%s) = %v, %v", e.Key, got, ok)
		}
	}
	if _, ok := j.Lookup(journal.Key{Round: rounds}); ok {
		t.Error("Lookup found an effect that is not there")
	}
}

func TestAppendFillsFingerprint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	e := toolEntry(t, journal.Key{}, `{"q":"x"}`)
	want := e.Fingerprint
	e.Fingerprint = ""
	write(t, path, []journal.Entry{e})
	j, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := j.Entries[0].Fingerprint; got != want {
		t.Errorf("fingerprint %s, want %s", got, want)
	}
}

// TestValueLookalike: request data shaped like a reference, an object whose
// only member is "$value", reads back as it was, wherever it is.
func TestValueLookalike(t *testing.T) {
	d := `"blake3:` + strings.Repeat("ab", 32) + `"`
	requests := []string{
		`{"a":{"$value":` + d + `}}`,
		`{"a":{"$value":"x"}}`,
		`{"a":{"$value":{"$value":1}}}`,
		`{"a":[1,{"$value":` + d + `},{"$value":null},[{"$value":2}]]}`,
		`{"a":{"b":{"$value":` + d + `}}}`,
		`{"a":{"$value":1,"b":2},"c":[{"$value":1,"d":2}]}`,
		`{"$value":` + d + `}`,
		`{"$value":{"$value":` + d + `}}`,
		`{"\u0024value":{"\u0024value":"y"}}`,
		`{"a":{"$value":"` + strings.Repeat("long ", 30) + `"}}`,
	}
	path := filepath.Join(t.TempDir(), "j")
	var entries []journal.Entry
	for i, r := range requests {
		entries = append(entries, toolEntry(t, journal.Key{Round: i}, "0"))
		entries[i].Request = json.RawMessage(r)
		entries[i].Fingerprint = fingerprint(t, entries[i].Request)
	}
	write(t, path, entries)
	j, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range entries {
		sameEntry(t, j.Entries[i], e)
	}
	data, _ := os.ReadFile(path)
	if !bytes.Contains(data, []byte(`"json":{"$value":"x"}}`)) {
		t.Errorf("a short lookalike is not stored as a value:\n%s", data)
	}
}

func TestTruncatedLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	entries := []journal.Entry{
		modelEntry(t, journal.Key{Round: 1}, modelRequest(1, 2)),
		toolEntry(t, journal.Key{Round: 1, Ordinal: 1}, `{"q":"x"}`),
		modelEntry(t, journal.Key{Round: 2}, modelRequest(1, 4)), // writes two value lines first
	}
	write(t, path, entries[:2])
	before, _ := os.ReadFile(path)
	write(t, path, entries)
	data, _ := os.ReadFile(path)
	if !bytes.HasPrefix(data, before) {
		t.Fatal("journals of the same entries differ")
	}
	boundaries := map[int]bool{}
	for i, c := range data {
		if c == '\n' {
			boundaries[i+1] = true
		}
	}
	// Cutting the file anywhere in what the last Append wrote loses the
	// last entry and nothing else.
	for cut := len(before); cut < len(data); cut++ {
		j, err := journal.Read(bytes.NewReader(data[:cut]))
		if err != nil {
			t.Fatalf("cut at %d of %d: %v", cut, len(data), err)
		}
		if len(j.Entries) != 2 {
			t.Fatalf("cut at %d: %d entries, want 2", cut, len(j.Entries))
		}
		valid := cut
		for !boundaries[valid] {
			valid--
		}
		if j.Truncated != !boundaries[cut] || j.ValidBytes != int64(valid) {
			t.Fatalf("cut at %d: Truncated %v, ValidBytes %d; want %v, %d", cut, j.Truncated, j.ValidBytes, !boundaries[cut], valid)
		}
	}
	// Cutting the end off an earlier line, the next line joined to what
	// is left, is corruption, reported at that line.
	lines := bytes.SplitAfter(data, []byte("\n"))
	start := 0
	for n, line := range lines[:len(lines)-2] {
		for cut := start + 1; cut < start+len(line); cut++ {
			damaged := append(append([]byte{}, data[:cut]...), data[start+len(line):]...)
			_, err := journal.Read(bytes.NewReader(damaged))
			var je *journal.Error
			if !errors.As(err, &je) || je.Line != n+1 {
				t.Fatalf("line %d cut at %d: error %v, want one at line %d", n+1, cut, err, n+1)
			}
		}
		start += len(line)
	}
}

func TestResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	var entries []journal.Entry
	for r := range 5 {
		entries = append(entries, modelEntry(t, journal.Key{Round: r}, modelRequest(2, 2+r)))
	}
	write(t, path, entries[:3])
	data, _ := os.ReadFile(path)
	last := bytes.LastIndexByte(data[:len(data)-1], '\n') + 1
	if err := os.WriteFile(path, data[:last+(len(data)-last)/2], 0o600); err != nil {
		t.Fatal(err)
	}

	j, w, err := journal.Resume(path)
	if err != nil {
		t.Fatal(err)
	}
	if !j.Truncated || len(j.Entries) != 2 || j.Header.Run != "run-7" {
		t.Fatalf("resumed: Truncated %v, %d entries, header %+v", j.Truncated, len(j.Entries), j.Header)
	}
	if err := w.Append(entries[1]); err == nil {
		t.Error("Append of an effect already in the journal succeeded")
	}
	for _, e := range entries[2:] {
		if err := w.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	data, _ = os.ReadFile(path)
	j, err = journal.Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if j.Truncated || len(j.Entries) != 5 {
		t.Fatalf("Truncated %v, %d entries, want 5", j.Truncated, len(j.Entries))
	}
	for i, e := range entries {
		sameEntry(t, j.Entries[i], e)
	}
	if ds := checkValuesOnce(t, data); len(ds) != 6+3 {
		t.Errorf("%d value lines, want 9", len(ds))
	}
}

// TestWentOn: a failure is gone on from when an effect that completed
// was written after it (a fallback's answer after the call that failed),
// and not when the journal ends in failures; an attempt made again and
// completed is the effect's entry.
func TestWentOn(t *testing.T) {
	failed := func(k journal.Key, req json.RawMessage) journal.Entry {
		e := modelEntry(t, k, req)
		e.Response, e.Error = nil, "openai: 503"
		return e
	}
	one, fb, two, fb2 := journal.Key{Round: 1}, journal.Key{Path: "1.0", Ordinal: 1}, journal.Key{Round: 2}, journal.Key{Path: "2.0", Ordinal: 1}
	path := filepath.Join(t.TempDir(), "j")
	write(t, path, []journal.Entry{failed(one, modelRequest(1, 2)), modelEntry(t, fb, modelRequest(1, 2)),
		failed(two, modelRequest(1, 4)), failed(fb2, modelRequest(1, 4))})
	j, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[journal.Key]bool{one: true, fb: false, two: false, fb2: false, {Round: 3}: false} {
		if got := j.WentOn(k); got != want {
			t.Errorf("WentOn(%s) = %v, want %v", k, got, want)
		}
	}
	j, w, err := journal.Resume(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(modelEntry(t, two, modelRequest(1, 4))); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if j, err = journal.Open(path); err != nil {
		t.Fatal(err)
	}
	if !j.WentOn(fb2) || j.WentOn(two) {
		t.Errorf("with 2.0 made again: WentOn(2.0/0.1) = %v, WentOn(2.0) = %v; want true, false", j.WentOn(fb2), j.WentOn(two))
	}
}

func TestResumeErrors(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := journal.Resume(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Resume of a missing file: %v", err)
	}
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("{}\n"), 0o600)
	_, _, err := journal.Resume(bad)
	if want := bad + ":1: no journal header"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Resume of a file without header: %v, want %s…", err, want)
	}
}

func TestFingerprint(t *testing.T) {
	base := `{"model":"gpt-a","messages":[{"role":"user","content":"hi"}],"sampling":{"temperature":1,"top_p":0.5}}`
	same := []string{
		`{"sampling":{"top_p":0.5,"temperature":1},"messages":[{"content":"hi","role":"user"}],"model":"gpt-a"}`,
		"{ \"model\" : \"gpt-a\",\n \"messages\":[{\"role\":\"user\",\"content\":\"hi\"}], \"sampling\":{\"temperature\":1.0,\"top_p\":5e-1}}",
		`{"model":"gpt\u002da","messages":[{"role":"user","content":"hi"}],"sampling":{"temperature":10E-1,"top_p":0.50}}`,
	}
	different := []string{
		`{"model":"gpt-b","messages":[{"role":"user","content":"hi"}],"sampling":{"temperature":1,"top_p":0.5}}`,
		`{"model":"gpt-a","messages":[{"role":"user","content":"hi!"}],"sampling":{"temperature":1,"top_p":0.5}}`,
		`{"model":"gpt-a","messages":[{"role":"user","content":"hi"}],"sampling":{"temperature":1,"top_p":0.6}}`,
		`{"model":"gpt-a","messages":[{"role":"user","content":"hi"}],"sampling":{"temperature":1}}`,
		`{"model":"gpt-a","messages":[{"role":"user","content":"hi"},{"role":"user","content":"hi"}],"sampling":{"temperature":1,"top_p":0.5}}`,
		`{"model":"gpt-a","messages":[{"role":"user","content":"hi"}],"sampling":{"temperature":"1","top_p":0.5}}`,
		`{"model":"gpt-a","messages":[{"role":"user","content":"hi"}],"sampling":{"temperature":1,"top_p":0.5},"x":null}`,
	}
	want := fingerprint(t, json.RawMessage(base))
	if _, err := digest.Parse(want); err != nil {
		t.Fatal(err)
	}
	for _, s := range same {
		if got := fingerprint(t, json.RawMessage(s)); got != want {
			t.Errorf("Fingerprint(%s) = %s, want %s as for %s", s, got, want, base)
		}
	}
	seen := map[string]string{want: base}
	for _, s := range different {
		got := fingerprint(t, json.RawMessage(s))
		if prev, dup := seen[got]; dup {
			t.Errorf("Fingerprint(%s) = Fingerprint(%s)", s, prev)
		}
		seen[got] = s
	}
	// The derive-key context is part of the format.
	var sum [32]byte
	blake3.DeriveKey("agentc.dev 2026-11-30 effect fingerprint v1", []byte(`{"a":[1,"x"]}`), sum[:])
	if got, want := fingerprint(t, json.RawMessage(`{ "a" : [ 1.0, "x" ] }`)), "blake3:"+hex.EncodeToString(sum[:]); got != want {
		t.Errorf("Fingerprint = %s, want %s", got, want)
	}
	if got, want := fingerprint(t, json.RawMessage(`{}`)), "blake3:a00a91ee02fdb2faf483e7942f7b30706fe3e76494007dad60820498560557da"; got != want {
		t.Errorf(`Fingerprint({}) = %s, want %s`, got, want)
	}
	for _, bad := range []string{``, `{`, `{"a":1,"a":2}`, `{"n":18446744073709551616}`} {
		if _, err := journal.Fingerprint(json.RawMessage(bad)); err == nil {
			t.Errorf("Fingerprint(%s) succeeded", bad)
		}
		if _, err := journal.ValueDigest(json.RawMessage(bad)); err == nil || !strings.HasPrefix(err.Error(), "journal: value digest: ") {
			t.Errorf("ValueDigest(%s): %v, want an error", bad, err)
		}
	}
}

func TestConcurrentAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	w := create(t, path)
	const workers, each = 8, 25
	var wg sync.WaitGroup
	for g := range workers {
		wg.Go(func() {
			for i := range each {
				// Every worker sends the same messages, so the value set is
				// contended.
				if err := w.Append(modelEntry(t, journal.Key{Round: g, Ordinal: i}, modelRequest(3, 1+i))); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	j, err := journal.Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Entries) != workers*each {
		t.Errorf("%d entries, want %d", len(j.Entries), workers*each)
	}
	if ds := checkValuesOnce(t, data); len(ds) != each+3 {
		t.Errorf("%d value lines, want %d", len(ds), each+3)
	}
}

func TestAppendRejects(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	w := create(t, path)
	defer w.Close()
	good := toolEntry(t, journal.Key{Round: 1}, `{"q":"x"}`)
	if err := w.Append(good); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		edit func(e *journal.Entry)
		want string
	}{
		{"same key", func(e *journal.Entry) {}, "effect 1.0 is already in the journal"},
		{"negative round", func(e *journal.Entry) { e.Key.Round = -1 }, "malformed effect key -1."},
		{"bad path", func(e *journal.Entry) { e.Key.Path = "x" }, `malformed effect key "x"`},
		{"kind", func(e *journal.Entry) { e.Kind = "plugin" }, `kind "plugin"`},
		{"request not JSON", func(e *journal.Entry) { e.Request = json.RawMessage(`{"a":`) }, "request: canonical JSON"},
		{"request not object", func(e *journal.Entry) { e.Request = json.RawMessage(`[1]`) }, "request: want a JSON object"},
		{"request duplicate", func(e *journal.Entry) { e.Request = json.RawMessage(`{"a":1,"a":1}`) }, "request: canonical JSON"},
		{"no request", func(e *journal.Entry) { e.Request = nil }, "request: canonical JSON"},
		{"fingerprint", func(e *journal.Entry) { e.Fingerprint = "md5:00" }, "fingerprint:"},
		{"response", func(e *journal.Entry) { e.Response = json.RawMessage(`{x}`) }, "response:"},
		{"usage", func(e *journal.Entry) { e.Usage = json.RawMessage(`[`) }, "usage:"},
		{"nothing", func(e *journal.Entry) { e.Response = nil }, "neither a response nor an error"},
		{"duration", func(e *journal.Entry) { e.DurationMS = -1 }, "negative duration"},
		{"year", func(e *journal.Entry) { e.Started = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, "outside the years"},
		{"lost attempt number", func(e *journal.Entry) { e.Lost = []journal.Attempt{{Attempt: 0, Started: e.Started}} }, "lost attempt 0: its number is below 1"},
		{"lost attempt year", func(e *journal.Entry) {
			e.Lost = []journal.Attempt{{Attempt: 1, Started: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}
		}, "lost attempt 1: started:"},
	}
	for i, tt := range tests {
		e := good
		if tt.name != "same key" {
			e.Key.Ordinal = 1 + i
		}
		tt.edit(&e)
		err := w.Append(e)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Append: %v, want an error with %q", tt.name, err, tt.want)
		}
	}
	// A rejected entry leaves the Writer usable.
	good.Key.Round = 2
	if err := w.Append(good); err != nil {
		t.Fatal(err)
	}
}

func TestCreateRejects(t *testing.T) {
	dir := t.TempDir()
	for _, h := range []journal.Header{
		{Plan: "blake3:xyz", Started: testStart},
		{Plan: testPlan, Started: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Plan: testPlan, Started: testStart, Tools: json.RawMessage(`{`)},
	} {
		if _, err := journal.Create(filepath.Join(dir, "j"), h); err == nil {
			t.Errorf("Create with %+v succeeded", h)
		}
	}
	if _, err := journal.Create(filepath.Join(dir, "no", "such", "dir"), testHeader()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Create in a missing directory: %v", err)
	}
}

// TestHeaderWithoutTools: a run that saw no tool set at its start has a
// header without "tools".
func TestHeaderWithoutTools(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	h := testHeader()
	h.Tools = nil
	w, err := journal.Create(path, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := `{"journal":"agentc.journal/v2","plan":"` + testPlan + `","run":"run-7","output_suffix":"1a2b3c4d","agent":"triage","started":"2026-11-30T09:15:00.123456789Z"}` + "\n"
	if got := string(readFile(t, path)); got != want {
		t.Errorf("journal:\n%s\nwant:\n%s", got, want)
	}
	j, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if j.Header.Tools != nil {
		t.Errorf("tools %s, want none", j.Header.Tools)
	}
}

func TestPoisoned(t *testing.T) {
	w := create(t, filepath.Join(t.TempDir(), "j"))
	if err := journal.CloseFile(w); err != nil {
		t.Fatal(err)
	}
	first := w.Append(toolEntry(t, journal.Key{}, `1`))
	if first == nil {
		t.Fatal("Append to a closed file succeeded")
	}
	second := w.Append(toolEntry(t, journal.Key{Round: 1}, `2`))
	if second != first {
		t.Errorf("second Append: %v, want the first error %v", second, first)
	}
}

func TestClosed(t *testing.T) {
	w := create(t, filepath.Join(t.TempDir(), "j"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(toolEntry(t, journal.Key{}, `1`)); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Append after Close: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestKey(t *testing.T) {
	for _, tt := range []struct {
		key  journal.Key
		text string
	}{
		{journal.Key{}, "0.0"},
		{journal.Key{Round: 3, Ordinal: 2}, "3.2"},
		{journal.Key{Path: "3.2", Round: 1}, "3.2/1.0"},
		{journal.Key{Path: "3.2/1.0", Round: 10, Ordinal: 11}, "3.2/1.0/10.11"},
		{journal.Key{Round: 2147483647, Ordinal: 2147483647}, "2147483647.2147483647"},
	} {
		if got := tt.key.String(); got != tt.text {
			t.Errorf("%#v.String() = %q, want %q", tt.key, got, tt.text)
		}
		got, err := journal.ParseKey(tt.text)
		if err != nil || got != tt.key {
			t.Errorf("ParseKey(%q) = %#v, %v; want %#v", tt.text, got, err, tt.key)
		}
	}
	parent := journal.Key{Round: 3, Ordinal: 2}
	if got := (journal.Key{Path: parent.Child(), Round: 1}).String(); got != "3.2/1.0" {
		t.Errorf("child key %q, want 3.2/1.0", got)
	}
	for _, bad := range []string{"", "1", "1.", ".1", "1.2.3", "01.0", "1.00", "-1.0", "+1.0", "1.0/", "/1.0", "1.0//2.0", "a.b", "1 .0", "2147483648.0", "1.0/x"} {
		if k, err := journal.ParseKey(bad); err == nil {
			t.Errorf("ParseKey(%q) = %#v, want an error", bad, k)
		}
	}
}

func TestOpenNamesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.journal")
	write(t, path, []journal.Entry{toolEntry(t, journal.Key{}, `1`)})
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("oops\n")
	f.Close()
	_, err := journal.Open(path)
	var je *journal.Error
	if !errors.As(err, &je) || je.File != path || je.Line != 3 {
		t.Fatalf("Open: %#v", err)
	}
	if want := path + ":3: not a JSON object: invalid character 'o' looking for beginning of value"; err.Error() != want {
		t.Errorf("error %q\nwant %q", err, want)
	}
	if _, err := journal.Open(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open of a missing file: %v", err)
	}
}

// TestFormat pins the bytes of a journal: the header, a value line and an
// entry that refers to it.
func TestFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	input := `{"q":"a query long enough to be stored once, as a value line of its own"}`
	e := toolEntry(t, journal.Key{Path: "1.0", Round: 2, Ordinal: 1}, input)
	e.Response, e.Error = nil, `exit status 2: "no index"`
	e.Started = time.Date(2026, 11, 30, 10, 0, 0, 0, time.FixedZone("CET", 3600))
	write(t, path, []journal.Entry{e})

	var sum [32]byte
	blake3.DeriveKey("agentc.dev 2026-11-30 journal value v1", []byte(input), sum[:])
	value := "blake3:" + hex.EncodeToString(sum[:])
	want := `{"journal":"agentc.journal/v2","plan":"` + testPlan + `","run":"run-7","output_suffix":"1a2b3c4d","agent":"triage","started":"2026-11-30T09:15:00.123456789Z","tools":{"mcp":{"tracker":["search","fetch"]}}}` + "\n" +
		`{"value":"` + value + `","json":` + input + `}` + "\n" +
		`{"effect":"1.0/2.1","kind":"tool","fingerprint":"` + e.Fingerprint + `","request":{"input":{"$value":"` + value + `"},"tool":"search"},"error":"exit status 2: \"no index\"","started":"2026-11-30T09:00:00Z","duration_ms":12}` + "\n"
	if got := string(readFile(t, path)); got != want {
		t.Errorf("journal:\n%s\nwant:\n%s", got, want)
	}
}

// TestLongLines: lines of several MiB read back.
func TestLongLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	big := strings.Repeat("0123456789abcdef", 3<<16) // 3 MiB
	e := modelEntry(t, journal.Key{}, json.RawMessage(`{"messages":[{"role":"user","content":"`+big+`"}],"n":1}`))
	e.Response = json.RawMessage(`{"content":"` + big + big + `"}`)
	write(t, path, []journal.Entry{e})
	j, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	sameEntry(t, j.Entries[0], e)
}

// TestKeyBounds: Append takes a key's round and ordinal up to the largest
// ParseKey reads, 2147483647, and refuses one past either end, with the
// key in its message.
func TestKeyBounds(t *testing.T) {
	const maxKey = math.MaxInt32
	path := filepath.Join(t.TempDir(), "j")
	w := create(t, path)
	defer w.Close()
	good := []journal.Key{
		{Round: maxKey},
		{Ordinal: maxKey},
		{Path: "2147483647.2147483647", Round: maxKey, Ordinal: maxKey},
	}
	for _, k := range good {
		if err := w.Append(toolEntry(t, k, `1`)); err != nil {
			t.Errorf("Append with key %s: %v", k, err)
		}
	}
	bad := []journal.Key{{Round: -1}, {Ordinal: -1}, {Path: "1.0", Round: -1}}
	if strconv.IntSize > 32 {
		past := maxKey // a variable: a 32-bit int cannot hold the constant one past
		past++
		bad = append(bad, journal.Key{Round: past}, journal.Key{Ordinal: past}, journal.Key{Round: past, Ordinal: past})
	}
	for _, k := range bad {
		want := fmt.Sprintf("journal: effect %s: malformed effect key %[1]s: round and ordinal must be in 0…2147483647", k)
		if err := w.Append(toolEntry(t, k, `1`)); err == nil || err.Error() != want {
			t.Errorf("Append with key %s: %v, want %q", k, err, want)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	j, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Entries) != len(good) {
		t.Fatalf("%d entries, want %d", len(j.Entries), len(good))
	}
	for i, k := range good {
		if j.Entries[i].Key != k {
			t.Errorf("entry %d: key %#v, want %#v", i, j.Entries[i].Key, k)
		}
	}
}

// TestEdgeValues: the first and last times a journal holds and a duration
// of zero read back; a request part of 64 bytes, the longest kept inline,
// is inline, and one of 65 is a value line.
func TestEdgeValues(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	first := toolEntry(t, journal.Key{}, `"`+strings.Repeat("a", 62)+`"`) // 64 bytes: inline
	first.Started, first.DurationMS = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), 0
	last := toolEntry(t, journal.Key{Round: 1}, `"`+strings.Repeat("b", 63)+`"`) // 65 bytes: a value line
	last.Started = time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)
	write(t, path, []journal.Entry{first, last})
	data := readFile(t, path)
	if !bytes.Contains(data, []byte(`"input":"`+strings.Repeat("a", 62)+`"`)) || len(valueLines(t, data)) != 1 {
		t.Errorf("want the 64-byte input inline and the 65-byte one in a value line:\n%s", data)
	}
	j, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range []journal.Entry{first, last} {
		sameEntry(t, j.Entries[i], e)
	}
}

// TestStoredNotCanonical: a journal's writer stores requests and values in
// canonical JSON, and a reader checks that rather than building it again;
// a journal whose stored JSON is not canonical (as an editor or another
// writer may leave it: white space, members in another order, 1.0 for 1)
// reads back to the same canonical requests, values included.
func TestStoredNotCanonical(t *testing.T) {
	long := `"` + strings.Repeat("a value long enough to be stored once ", 4) + `"`
	req := json.RawMessage(`{"tool":"search","input":{"q":` + long + `,"n":1,"list":[1,2]}}`)
	e := toolEntry(t, journal.Key{Round: 1}, "0")
	e.Request, e.Fingerprint = req, fingerprint(t, req)
	path := filepath.Join(t.TempDir(), "j")
	write(t, path, []journal.Entry{e})
	data := readFile(t, path)
	var edited []string
	for i, line := range strings.SplitAfter(string(data), "\n") {
		var m map[string]json.RawMessage
		if i == 0 || line == "" || json.Unmarshal([]byte(line), &m) != nil {
			edited = append(edited, line)
			continue
		}
		for _, k := range []string{"request", "json"} {
			if v, ok := m[k]; ok {
				var b bytes.Buffer
				if err := json.Indent(&b, v, "", " "); err != nil {
					t.Fatal(err)
				}
				s := strings.ReplaceAll(b.String(), "\n", "")
				s = strings.ReplaceAll(s, `"n": 1`, `"n": 1.0`)
				m[k] = json.RawMessage(s)
			}
		}
		// Members in reverse order, values indented onto one line.
		keys := slices.Sorted(maps.Keys(m))
		slices.Reverse(keys)
		var b strings.Builder
		b.WriteString("{ ")
		for i, k := range keys {
			if i > 0 {
				b.WriteString(" , ")
			}
			fmt.Fprintf(&b, "%q : %s", k, m[k])
		}
		b.WriteString(" }\n")
		edited = append(edited, b.String())
	}
	if strings.Join(edited, "") == string(data) {
		t.Fatal("the test edited nothing")
	}
	if !strings.Contains(strings.Join(edited, ""), `"n": 1.0`) {
		t.Fatalf("the test's edit missed the number:\n%s", strings.Join(edited, ""))
	}
	if err := os.WriteFile(path, []byte(strings.Join(edited, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	j, err := journal.Open(path)
	if err != nil {
		t.Fatalf("%v\n%s", err, strings.Join(edited, ""))
	}
	if len(j.Entries) != 1 {
		t.Fatalf("%d entries", len(j.Entries))
	}
	sameEntry(t, j.Entries[0], e)
	if got, want := string(expand(t, &j.Entries[0])), canonical(t, req); got != want {
		t.Fatalf("request read back as\n%s\nwant\n%s", got, want)
	}
}

// TestNewlineBomb: a reader sizes what it keeps by the lines a file could
// hold as entries, not by its newlines: a file of a header and 32 MiB of
// newlines is refused at its second line having made little beside the
// file's own bytes.
func TestNewlineBomb(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	write(t, path, nil)
	header := readFile(t, path)
	const newlines = 32 << 20
	data := append(header, bytes.Repeat([]byte{'\n'}, newlines)...)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := journal.Open(path)
	runtime.ReadMemStats(&after)
	var je *journal.Error
	if !errors.As(err, &je) || je.Line != 2 {
		t.Fatalf("got %v, want an error at line 2", err)
	}
	// The file is read whole (32 MiB); an entry slot a newline would be
	// gigabytes.
	if made := after.TotalAlloc - before.TotalAlloc; made > 3*newlines {
		t.Fatalf("reading made %d MiB for a file of %d MiB", made>>20, len(data)>>20)
	}
}

// TestJournalFull: an effect that would take the journal past MaxFile,
// the most a journal is read back at, is not written, nor any after it,
// and the journal, read back, holds every effect before it; a resumed
// writer counts what the file holds. (A run recorded a 336 MB journal
// that could then be neither replayed nor resumed.)
func TestJournalFull(t *testing.T) {
	defer func(fl int64) { journal.MaxFile = fl }(journal.MaxFile)
	journal.MaxFile = 8 << 10
	path := filepath.Join(t.TempDir(), "j")
	w := create(t, path)
	var full *journal.FullError
	n := 0
	for r := range 100 {
		err := w.Append(modelEntry(t, journal.Key{Round: r}, modelRequest(2, 2+r)))
		if errors.As(err, &full) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if full == nil || full.Key.Round != n || !strings.Contains(full.Error(), "past 0 MiB, the most a journal is read back at") {
		t.Fatalf("after %d effects: %v, want a *FullError for the next", n, full)
	}
	if err := w.Append(toolEntry(t, journal.Key{Round: 99, Ordinal: 1}, `{"q":"x"}`)); !errors.As(err, &full) {
		t.Errorf("an append after the journal was full: %v", err)
	}
	w.Close()
	j, err := journal.Open(path)
	if err != nil {
		t.Fatalf("the full journal does not read back: %v", err)
	}
	if len(j.Entries) != n {
		t.Errorf("%d entries read back, want %d", len(j.Entries), n)
	}
	_, w2, err := journal.Resume(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	if err := w2.Append(modelEntry(t, journal.Key{Round: n}, modelRequest(2, 2+n))); !errors.As(err, &full) {
		t.Errorf("a resumed writer took an effect past the bound: %v", err)
	}
}
