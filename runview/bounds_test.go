package runview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentc.dev/agentc/internal/leaf/pattern"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/journal"
)

// TestSameJSON: the report's answer is the page's when it is the same JSON
// value, compared in canonical form, not as Go prints the decoded values
// (which made {"a":"b c:d"} the same as {"a":"b","c":"d"}, and "1" as 1).
func TestSameJSON(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{`{"a":1,"b":[true,null]}`, `{"b":[true,null],"a":1.0}`, true},
		{"{\n  \"a\": \"x\"\n}", `{"a":"x"}`, true},
		{`{"a":"b c:d"}`, `{"a":"b","c":"d"}`, false},
		{`"1"`, `1`, false},
		{`[1,2]`, `[2,1]`, false},
		{`{"n":9007199254740993}`, `{"n":9007199254740992}`, false},
		{`not json`, `"not json"`, false},
	} {
		if got := sameJSON(c.a, json.RawMessage(c.b)); got != c.same {
			t.Errorf("sameJSON(%s, %s) = %v, want %v", c.a, c.b, got, c.same)
		}
	}
}

// journalOf writes a journal of entries, each started a second after the
// run, and reads it back; it returns the journal and its size.
func journalOf(tb testing.TB, entries ...journal.Entry) (*journal.Journal, int64) {
	tb.Helper()
	file := filepath.Join(tb.TempDir(), "run.jsonl")
	w, err := journal.Create(file, journal.Header{Plan: "blake3:" + strings.Repeat("0", 64), Run: "r1", OutputSuffix: "0badcafe", Agent: "a", Started: time.Unix(0, 0)})
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range entries {
		e.Started = time.Unix(1, 0)
		if err := w.Append(e); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	fi, err := os.Stat(file)
	if err != nil {
		tb.Fatal(err)
	}
	j, err := journal.Open(file)
	if err != nil {
		tb.Fatal(err)
	}
	return j, fi.Size()
}

// pageOf builds and writes the page of j.
func pageOf(tb testing.TB, j *journal.Journal) (*Page, string) {
	tb.Helper()
	p, err := Build(j, nil, nil, nil)
	if err != nil {
		tb.Fatal(err)
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		tb.Fatal(err)
	}
	return p, buf.String()
}

// nested is JSON nested depth deep: [[…[1]…]].
func nested(depth int) string { return strings.Repeat("[", depth) + "1" + strings.Repeat("]", depth) }

// TestIndentBounded: JSON is indented for reading only where that keeps
// it within a few times its size; deeper, it is shown compact. Indented,
// JSON n deep is n² spaces: 20 KB of it was 100 MB of page, and the
// model alone, with arguments 999 deep, could make a reply of 204 KB a
// page of 400 MB.
func TestIndentBounded(t *testing.T) {
	deep := nested(990)
	j, size := journalOf(t,
		journal.Entry{Key: journal.Key{Round: 1}, Kind: journal.KindModel,
			Request: []byte(`{"provider":"openai","model":"m","output_tool":"answer","messages":{"after":0,"new":[{"role":"user","content":"go"}]}}`),
			Response: []byte(`{"message":{"role":"assistant","tool_calls":[` +
				`{"id":"c1","name":"lookup","arguments":` + deep + `},` +
				`{"id":"c2","name":"lookup","arguments":` + deep + `},` +
				`{"id":"c3","name":"answer","arguments":{"a":` + deep + `}}]}}`)},
		journal.Entry{Key: journal.Key{Round: 1, Ordinal: 1}, Kind: journal.KindTool,
			Request: []byte(`{"tool":"lookup","arguments":` + deep + `}`), Response: []byte(`{"content":"ok"}`)},
		// A response the page does not know the shape of: shown raw.
		journal.Entry{Key: journal.Key{Round: 1, Ordinal: 2}, Kind: journal.KindTool,
			Request: []byte(`{"tool":"lookup"}`), Response: []byte(nested(9000))},
	)
	p, html := pageOf(t, j)
	if limit := 64<<10 + 16*size; int64(len(html)) > limit {
		t.Fatalf("a journal of %d bytes made a page of %d, more than %d", size, len(html), limit)
	}
	if p.Answer == nil || p.Answer.JSON != `{"a":`+deep+`}` {
		t.Errorf("the answer is not shown compact: %.80v", p.Answer)
	}
	// Shallow JSON is indented as before.
	for _, c := range []struct{ in, want string }{
		{`{"op":"read","path":"a.md"}`, "{\n  \"op\": \"read\",\n  \"path\": \"a.md\"\n}"},
		{`{"a":[],"b":{},"c":[1,{"d":"[,]"}]}`, "{\n  \"a\": [],\n  \"b\": {},\n  \"c\": [\n    1,\n    {\n      \"d\": \"[,]\"\n    }\n  ]\n}"},
		{` "x" `, `"x"`},
		{`not json`, `not json`},
		{`[[[[[[[[1]]]]]]]]`, `[[[[[[[[1]]]]]]]]`},
	} {
		if got := indent(json.RawMessage(c.in)); got != c.want {
			t.Errorf("indent(%s) = %q, want %q", c.in, got, c.want)
		}
	}
	// indentedWithin counts what json.Indent writes, to the byte.
	for _, in := range []string{`{"a":[],"b":{},"c":[1,{"d":"[,]\"{"}]}`, `[[],[[]],{"":{"":[1]}}]`, `"x"`, nested(50)} {
		var out bytes.Buffer
		if err := json.Indent(&out, []byte(in), "", "  "); err != nil {
			t.Fatal(err)
		}
		n := int64(out.Len())
		if !indentedWithin([]byte(in), n) || indentedWithin([]byte(in), n-1) {
			t.Errorf("indentedWithin(%s) does not count %d bytes", in, n)
		}
	}
}

// manyCalls is a journal of one model call whose reply asks for n tool
// calls, none of them made.
func manyCalls(t *testing.T, n int) (*journal.Journal, int64) {
	var calls []string
	for i := range n {
		calls = append(calls, fmt.Sprintf(`{"id":"c%d","name":"lookup","arguments":{}}`, i))
	}
	return journalOf(t, journal.Entry{Key: journal.Key{Round: 1}, Kind: journal.KindModel,
		Request:  []byte(`{"provider":"openai","model":"m","messages":{"after":0,"new":[{"role":"user","content":"go"}]}}`),
		Response: []byte(`{"message":{"role":"assistant","tool_calls":[` + strings.Join(calls, ",") + `]}}`)})
}

// TestCallsBounded: the tool calls of one reply are one journal entry,
// which MaxEffects counts once, but each was a row: one reply of 300,000
// calls made a page of 190 MB. The page shows the first MaxCalls of a
// reply, and says how many it left out.
func TestCallsBounded(t *testing.T) {
	j, size := manyCalls(t, 20_000)
	p, html := pageOf(t, j)
	if len(p.Rows) > 2_000 {
		t.Errorf("one reply of 20,000 calls made %d rows", len(p.Rows))
	}
	if limit := 64<<10 + 4*size; int64(len(html)) > limit {
		t.Errorf("a journal of %d bytes made a page of %d, more than %d", size, len(html), limit)
	}
	for _, want := range []string{"The reply asked for 19,000 more tool calls, not shown.",
		"19,000 tool calls past the first 1,000 of their reply are left out of the timeline."} {
		if !strings.Contains(html, want) {
			t.Errorf("the page does not say %q", want)
		}
	}
}

// TestRowsBounded: past MaxRows, rows are left out, and the page says how
// many.
func TestRowsBounded(t *testing.T) {
	defer func(n int) { MaxRows = n }(MaxRows)
	MaxRows = 10
	j, err := journal.Open(longJournal(t, 8)) // 24 rows: a round, its model call and tool call, 8 times
	if err != nil {
		t.Fatal(err)
	}
	p, html := pageOf(t, j)
	if len(p.Rows) != 10 || p.RowsLeftOut != 14 {
		t.Errorf("%d rows, %d left out; want 10 and 14", len(p.Rows), p.RowsLeftOut)
	}
	if want := "The page shows the first 10 rows of the timeline; 14 more are left out."; !strings.Contains(html, want) {
		t.Errorf("the page does not say %q", want)
	}
}

// TestAnswerValidatedOnce: only the answer the page shows, the last, is
// checked against its contract, and its patterns are under a budget of
// timeouts: a match that backtracks runs out of time after 100 ms, and a
// journal of 8 KB whose every reply answered took 25 s to view. Here 100
// replies each answer with a string such a pattern backtracks on, which
// took at least 10 s, and the last answer holds 40 of them.
func TestAnswerValidatedOnce(t *testing.T) {
	const contract = `{"type":"object","properties":{"s":{"type":"array","items":{"type":"string","pattern":"^(a+)+$"}}}}`
	bad := `"` + strings.Repeat("a", 40) + `!"`
	var entries []journal.Entry
	for r := 1; r <= 100; r++ {
		s := bad
		if r == 100 {
			s = strings.Repeat(bad+",", 39) + bad
		}
		entries = append(entries, journal.Entry{Key: journal.Key{Round: r}, Kind: journal.KindModel,
			Request: []byte(`{"provider":"openai","model":"m","output_tool":"answer","contract":` + contract +
				`,"messages":{"after":0,"new":[{"role":"user","content":"go"}]}}`),
			Response: []byte(fmt.Sprintf(`{"message":{"role":"assistant","tool_calls":[{"id":"c%d","name":"answer","arguments":{"s":[%s]}}]}}`, r, s))})
	}
	j, _ := journalOf(t, entries...)
	// Each value of the pattern is undecided: the earlier answers are not
	// checked at all, and of the shown one's 40 values the first four run
	// out of time and the rest are undecided at once, the budget spent
	// (the code before checked every answer, 139 matches of a tenth of a
	// second each).
	before := pattern.Undecided()
	p, _ := pageOf(t, j)
	if n := pattern.Undecided() - before; n > 40 {
		t.Errorf("%d matches undecided, want the shown answer's 40 at most", n)
	}
	if p.Answer == nil || p.Answer.Key != "100.0" || p.Answer.Contract != "invalid" || len(p.Answer.Errors) == 0 {
		t.Fatalf("the answer is %+v, want round 100's, invalid", p.Answer)
	}
	if e := p.Answer.Errors[0]; !strings.Contains(e, "could not be matched") {
		t.Errorf("the answer's error is %q", e)
	}
}

// TestPageMovesNoTerminal: the page goes to standard output by default, and
// may be printed later (cat run.html): what a tool or model wrote, kept in
// the journal, must not drive the terminal (a title, a screen clear, a
// write to the clipboard, OSC 52). html/template passes ESC, C1 controls
// and bidi overrides through; the page writes them as character
// references, which a browser shows as the characters.
func TestPageMovesNoTerminal(t *testing.T) {
	const hostile = "\x1b]0;pwned\x07\x1b[2J\x1b]52;c;cHduZWQ=\x07 \u009b2J \u202eexe.txt\u200b done\r"
	content, _ := json.Marshal(hostile)
	j, _ := journalOf(t,
		journal.Entry{Key: journal.Key{Round: 1}, Kind: journal.KindModel,
			Request:  []byte(`{"provider":"openai","model":"m","messages":{"after":0,"new":[{"role":"user","content":` + string(content) + `}]}}`),
			Response: []byte(`{"message":{"role":"assistant","content":` + string(content) + `,"tool_calls":[{"id":"c1","name":"lookup","arguments":{"q":` + string(content) + `}}]}}`)},
		journal.Entry{Key: journal.Key{Round: 1, Ordinal: 1}, Kind: journal.KindTool,
			Request: []byte(`{"tool":"lookup","arguments":{"q":"x"}}`), Response: []byte(`{"content":` + string(content) + `}`)})
	_, html := pageOf(t, j)
	for i, r := range html {
		if r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f || r == 0x202e || r == 0x200b {
			t.Fatalf("the page holds %U at %d: %q", r, i, html[max(i-40, 0):min(i+40, len(html))])
		}
	}
	if want := "&#x1b;]0;pwned&#x7;&#x1b;[2J&#x1b;]52;c;cHduZWQ=&#x7; &#x9b;2J &#x202e;exe.txt&#x200b; done&#xd;"; !strings.Contains(html, want) {
		t.Errorf("the page does not hold %q", want)
	}
	checkHTML(t, html)
}

// TestUsageSumSaturates: a journal's token counts are held as a run holds
// them (agentrt.Usage.Held) and summed without wrapping round: every
// reply counting 2^62 tokens in and out made a page saying
// -4611686018427387904 in. The page marks the held counts.
func TestUsageSumSaturates(t *testing.T) {
	var entries []journal.Entry
	for round := 1; round <= 3; round++ {
		entries = append(entries, journal.Entry{Key: journal.Key{Round: round}, Kind: journal.KindModel,
			Request:  []byte(`{"provider":"openai","model":"m","messages":{"after":0,"new":[{"role":"user","content":"go"}]}}`),
			Response: []byte(`{"message":{"role":"assistant","content":"x"},"usage":{"input":4611686018427387904,"output":4611686018427387904,"cached":7}}`)})
	}
	entries = append(entries, journal.Entry{Key: journal.Key{Round: 4}, Kind: journal.KindModel,
		Request:  []byte(`{"provider":"openai","model":"m","messages":{"after":0,"new":[{"role":"user","content":"go"}]}}`),
		Response: []byte(`{"message":{"role":"assistant","content":"x"},"usage":{"input":10,"output":2}}`)})
	j, _ := journalOf(t, entries...)
	p, html := pageOf(t, j)
	if want := (agentrt.Usage{Input: 3<<32 + 10, Output: 3<<32 + 2, Cached: 21}); p.Usage != want || !p.UsageHeld {
		t.Errorf("page usage %+v (held %v), want %+v, held", p.Usage, p.UsageHeld, want)
	}
	held := 0
	for _, r := range p.Rows {
		if r.Kind == "model" && (r.UsageHeld != (r.Usage.Input != 10)) {
			t.Errorf("row %s: usage %+v, held %v", r.Key, *r.Usage, r.UsageHeld)
		}
		if r.UsageHeld {
			held++
		}
	}
	if held != 6 { // three model calls and their rounds
		t.Errorf("%d rows marked held, want 6", held)
	}
	if !strings.Contains(html, `<dd id="tokens">12884901898 in, 12884901890 out (21 cached) <abbr class="held"`) {
		t.Errorf("the page's tokens are not the held sum, marked: %s", html[strings.Index(html, `<dd id="tokens">`):][:200])
	}
	max := agentrt.Usage{Input: math.MaxInt, Output: 1}
	if got := max.Add(agentrt.Usage{Input: 1, Output: math.MaxInt}); got.Input != math.MaxInt || got.Output != math.MaxInt {
		t.Errorf("a sum past the largest int is %+v, want it held there", got)
	}
}

// TestShownBoundedByJournal: a journal stores a value once and refers to
// it from every request that holds it, so one of 1 MB whose every model
// call refers to the same messages made a page of 250 MB (and took 1.7 GB
// and 20 s to make). What a page shows of the requests is bounded by the
// journal's size, which a real run's page stays well within.
func TestShownBoundedByJournal(t *testing.T) {
	for _, tc := range []struct {
		calls int
		fails bool
	}{{calls: 4}, {calls: 12, fails: true}} {
		file := filepath.Join(t.TempDir(), "run.jsonl")
		w, err := journal.Create(file, journal.Header{Plan: "blake3:" + strings.Repeat("0", 64), Run: "same", OutputSuffix: "0badcafe", Agent: "same", Started: time.Unix(0, 0)})
		if err != nil {
			t.Fatal(err)
		}
		messages := `{"after":0,"new":[{"role":"user","content":"` + strings.Repeat("x", 1<<20) + `"}]}`
		for r := 1; r <= tc.calls; r++ {
			err := w.Append(journal.Entry{Key: journal.Key{Round: r}, Kind: journal.KindModel, Started: time.Unix(int64(r), 0),
				Request:  []byte(`{"provider":"openai","model":"m","messages":` + messages + `}`),
				Response: []byte(`{"message":{"role":"assistant","content":"ok"},"usage":{"input":10,"output":5}}`)})
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		j, err := journal.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Build(j, nil, nil, nil)
		switch {
		case tc.fails && err == nil:
			t.Errorf("%d calls, each showing the 1 MiB of a journal of %d bytes: the page was made", tc.calls, j.ValidBytes)
		case tc.fails && !strings.Contains(err.Error(), "at most 4 times the journal's size, or 8 MiB"):
			t.Errorf("%d calls: %v", tc.calls, err)
		case !tc.fails && err != nil:
			t.Errorf("%d calls: %v", tc.calls, err)
		}
	}
}
