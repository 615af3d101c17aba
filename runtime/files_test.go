package runtime_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/filestore"
	"agentc.dev/agentc/runtime/journal"
)

const fileSchema = `{"type": "object", "required": ["doc"], "properties": {
	"doc": {"type": "string", "contentEncoding": "base64", "anyOf": [{"contentMediaType": "application/pdf"}, {"contentMediaType": "image/png"}], "maxLength": 400},
	"extra": {"type": "string", "contentEncoding": "base64", "contentMediaType": "text/plain"},
	"note": {"type": "string"}
}}`

const pdfBytes = "%PDF-1.4\n% a document\n"

func fileAgent(t *testing.T, prompt string) *plan.Plan {
	return agent(t, func(a *plan.Agent) {
		a.Input = &plan.Input{Schema: json.RawMessage(fileSchema)}
		a.Prompt = prompt
		// A deadline, whose context must keep what the run gives its
		// requests and tools.
		a.Budgets.Deadline = "30s"
	})
}

func storeWith(t *testing.T, files ...string) (*filestore.Store, []filestore.Blob) {
	t.Helper()
	s, err := filestore.Open(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	var bs []filestore.Blob
	for _, f := range files {
		b, err := s.Put(strings.NewReader(f), 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		bs = append(bs, b)
	}
	return s, bs
}

// The prompt places each file where it prints it; a file it does not
// print follows the text; the message's parts carry files by digest.
func TestFilesPlaced(t *testing.T) {
	store, bs := storeWith(t, pdfBytes, "some notes")
	p := fileAgent(t, "Read {{.doc}} from {{.note}}.")
	model := &scripted{turns: []turn{answer(`{"label":"bug"}`, 10)}}
	r, err := agentrt.New(p, agentrt.Options{Model: model, Files: store})
	if err != nil {
		t.Fatal(err)
	}
	in := `{"doc": {"digest": "` + bs[0].Digest + `", "file_name": "a.pdf"}, "extra": {"digest": "` + bs[1].Digest + `"}, "note": "acme"}`
	rep, err := r.Run(context.Background(), json.RawMessage(in))
	if err != nil {
		t.Fatal(err)
	}
	expect(t, rep, agentrt.OutcomeOK, agentrt.BoundNone, `{"label":"bug"}`)
	user := model.reqs[0].Messages[1]
	got, _ := json.Marshal(user.Parts)
	want := `[{"text":"Read "},{"file":{"name":"doc","file_name":"a.pdf","media_type":"application/pdf","size":22,"digest":"` + bs[0].Digest + `"}},{"text":" from acme."},` +
		`{"file":{"name":"extra","media_type":"text/plain","size":10,"digest":"` + bs[1].Digest + `"}}]`
	if string(got) != want || user.Content != "" {
		t.Errorf("parts %s\nwant  %s (content %q)", got, want, user.Content)
	}
	if model.reqs[0].Files == nil {
		t.Error("the request has no file reader")
	}
}

// Without a prompt the input is the message, each file named in its
// place and attached after it; bytes in base64 are put in the store.
func TestFilesWithoutPrompt(t *testing.T) {
	store, _ := storeWith(t)
	model := &scripted{turns: []turn{answer(`{"label":"bug"}`, 10)}}
	r, err := agentrt.New(fileAgent(t, ""), agentrt.Options{Model: model, Files: store})
	if err != nil {
		t.Fatal(err)
	}
	in := `{"doc": "` + base64.StdEncoding.EncodeToString([]byte(pdfBytes)) + `", "note": "x"}`
	if _, err := r.Run(context.Background(), json.RawMessage(in)); err != nil {
		t.Fatal(err)
	}
	parts := model.reqs[0].Messages[1].Parts
	if len(parts) != 2 || parts[0].Text != `{"doc":"(the file attached as doc)","note":"x"}` || parts[1].File == nil || parts[1].File.MediaType != "application/pdf" {
		b, _ := json.Marshal(parts)
		t.Fatalf("parts %s", b)
	}
	if _, err := store.Stat(parts[1].File.Digest, 1<<20); err != nil {
		t.Errorf("the file is not in the store: %v", err)
	}
}

// Every file is checked before any call: a wrong media type, a file past
// its schema's bound or the run's, a reference to nothing, bytes that are
// not base64, a reference with other members, no store.
func TestFilesRefused(t *testing.T) {
	notText := strings.Repeat("text ", 120) + "\x1b[2J"
	store, bs := storeWith(t, "plain text", "%PDF-"+strings.Repeat("x", 400), pdfBytes, notText)
	ref := func(i int) string { return `{"digest": "` + bs[i].Digest + `"}` }
	for _, c := range []struct{ in, want string }{
		// Text is text throughout, not in its first bytes alone.
		{`{"doc": ` + ref(2) + `, "extra": "` + base64.StdEncoding.EncodeToString([]byte(notText)) + `"}`, "file extra: its media type is none agentc recognises (text is UTF-8 throughout"},
		{`{"doc": ` + ref(2) + `, "extra": ` + ref(3) + `}`, "file extra: its media type is none agentc recognises (text is UTF-8 throughout"},
		{`{"doc": ` + ref(0) + `}`, "file doc: its media type is text/plain, not application/pdf or image/png"},
		{`{"doc": ` + ref(1) + `}`, "file doc: 405 bytes is larger than the 300 bytes its schema allows"},
		{`{"doc": {"digest": "blake3:` + strings.Repeat("0", 64) + `"}}`, "not in the file store"},
		{`{"doc": {"digest": "../../etc/passwd"}}`, "is not a file digest"},
		{`{"doc": {"digest": "` + bs[2].Digest + `", "path": "/etc/passwd"}}`, `unknown field "path"`},
		{`{"doc": {"digest": "` + bs[2].Digest + `", "file_name": "../x.pdf"}}`, "is not a file's base name"},
		{`{"doc": {"digest": "` + bs[2].Digest + `", "file_name": "x\u001b[2J.pdf"}}`, "is not a file's base name"},
		{`{"doc": "not base64!"}`, "file doc: not base64"},
		{`{"doc": 3}`, "not a number"},
	} {
		r, err := agentrt.New(fileAgent(t, ""), agentrt.Options{Model: refusingModel{}, Files: store})
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.Run(context.Background(), json.RawMessage(c.in))
		var ie *agentrt.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an input error saying %q", c.in, err, c.want)
		}
	}
	// The run's files together, past the run's bound.
	r, err := agentrt.New(fileAgent(t, ""), agentrt.Options{Model: refusingModel{}, Files: store, MaxFileBytes: 30})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Run(context.Background(), json.RawMessage(`{"doc": `+ref(2)+`, "extra": `+ref(0)+`}`))
	if err == nil || !strings.Contains(err.Error(), "the run's files come to more than the 30 bytes a run takes") {
		t.Errorf("past the run's bound: %v", err)
	}
	// No store: the run says so, and sends nothing.
	r, err = agentrt.New(fileAgent(t, ""), agentrt.Options{Model: refusingModel{}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Run(context.Background(), json.RawMessage(`{"doc": `+ref(2)+`}`))
	var ce *agentrt.ConfigError
	if !errors.As(err, &ce) {
		t.Errorf("no store: got %v", err)
	}
}

// TestFileRefPastBoundUnread: a reference naming a blob larger than its
// input's bound is refused by the blob's size, before its bytes are read:
// whoever may write a shared store (a Temporal client, which also names
// the files of the runs it starts) put a sparse file of text there, and
// the check read all of it (4 GiB took 37 seconds), in a workflow's task,
// to fail on its digest.
func TestFileRefPastBoundUnread(t *testing.T) {
	store, _ := storeWith(t, pdfBytes)
	digest := filestore.Prefix + strings.Repeat("ab", 32)
	f, err := os.Create(filepath.Join(store.Dir(), digest[len(filestore.Prefix):]))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(strings.Repeat("Some text.\n", 100)); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r, err := agentrt.New(fileAgent(t, ""), agentrt.Options{Model: refusingModel{}, Files: store})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Run(context.Background(), json.RawMessage(`{"doc": {"digest": "`+digest+`"}}`))
	var ie *agentrt.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "file doc: 64 MiB is larger than the 300 bytes its schema allows") {
		t.Errorf("got %v, want the blob refused by its size", err)
	}
}

// TestFilesPlacedBounded: a prompt that prints a file more than once (or
// in a range over the input, as often as the input has items) sends it
// each time, in every request: the files it places are held to the run's
// bound, as the files given are, before any call. A prompt that placed a
// 2 MB PDF 5,000 times sent a request carrying 10 GB of files. A run
// started before the bound (WithPlacedFilesUnbounded) runs as it did.
func TestFilesPlacedBounded(t *testing.T) {
	store, bs := storeWith(t, pdfBytes)
	in := json.RawMessage(`{"doc": {"digest": "` + bs[0].Digest + `"}}`)
	p := fileAgent(t, "Read {{.doc}}, then read it again: {{.doc}}")
	r, err := agentrt.New(p, agentrt.Options{Model: refusingModel{}, Files: store, MaxFileBytes: 30})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Run(context.Background(), in)
	var ie *agentrt.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "the prompt places the input's files 2 times, 44 bytes together, more than the 30 bytes a conversation's files may come to") {
		t.Errorf("placed past the bound: got %v, want an input error", err)
	}
	for _, c := range []struct {
		what  string
		bound int64
		ctx   context.Context
	}{
		{"within the bound", 44, context.Background()},
		{"a run started before the bound", 30, agentrt.WithPlacedFilesUnbounded(context.Background())},
	} {
		model := &scripted{turns: []turn{answer(`{"label":"bug"}`, 10)}}
		r, err := agentrt.New(p, agentrt.Options{Model: model, Files: store, MaxFileBytes: c.bound})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := r.Run(c.ctx, in)
		if err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		expect(t, rep, agentrt.OutcomeOK, agentrt.BoundNone, `{"label":"bug"}`)
		if n := filesOf(model.reqs[0].Messages[1]); n != 2 {
			t.Errorf("%s: the request carries the file %d times, want 2", c.what, n)
		}
	}
}

// filesOf counts the files a message carries.
func filesOf(m agentrt.Message) (n int) {
	for _, p := range m.Parts {
		if p.File != nil {
			n++
		}
	}
	return n
}

// A journal holds a file's digest, never its bytes; the text beside a
// file is redacted like any other; a replay with the same file is the
// same run, and with another file diverges, naming it.
func TestFilesJournaled(t *testing.T) {
	store, bs := storeWith(t, pdfBytes, "%PDF-1.4\n% another\n")
	p := fileAgent(t, "Read {{.doc}}: {{.note}}")
	file := filepath.Join(t.TempDir(), "run.jsonl")
	in := func(i int) json.RawMessage {
		return json.RawMessage(`{"doc": {"digest": "` + bs[i].Digest + `", "file_name": "a.pdf"}, "note": "key ` + planted + `"}`)
	}
	w, err := journal.Create(file, benchHeader)
	if err != nil {
		t.Fatal(err)
	}
	model := &scripted{turns: []turn{answer(`{"label":"bug"}`, 10)}}
	r, err := agentrt.New(p, agentrt.Options{Model: model, Files: store, Secrets: withPlanted(), Journal: &agentrt.Journal{Writer: w}})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := r.Run(context.Background(), in(0))
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	jn, _ := os.ReadFile(file)
	if !strings.Contains(string(jn), bs[0].Digest) || strings.Contains(string(jn), "a document") ||
		strings.Contains(string(jn), base64.StdEncoding.EncodeToString([]byte(pdfBytes))[:12]) || strings.Contains(string(jn), planted) {
		t.Errorf("the journal holds the file's bytes or the secret, or not its digest:\n%s", jn)
	}
	if got := model.reqs[0].Messages[1].Parts[2].Text; got != ": key [redacted]" {
		t.Errorf("the text after the file is %q", got)
	}
	replay := func(i int) *agentrt.Report {
		j, err := journal.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		r, err := agentrt.New(p, agentrt.Options{Model: refusingModel{}, Files: store, Secrets: withPlanted(), Journal: &agentrt.Journal{Recorded: j, Replay: true}})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := r.Run(context.Background(), in(i))
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	sameRun(t, "replay", rec, replay(0))
	d := replay(1).Divergence
	if d == nil || !strings.Contains(d.Reason, "the file given as doc (a.pdf) is not the one recorded") {
		t.Errorf("a changed file: divergence %+v", d)
	}
}

// cameraTool returns a picture it puts in the run's file store.
type cameraTool struct{}

func (cameraTool) Spec() agentrt.ToolSpec {
	return agentrt.ToolSpec{Name: "search", Description: "Take a picture.", Schema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false}`)}
}

func (cameraTool) Call(ctx context.Context, _ json.RawMessage) (agentrt.ToolResult, error) {
	store := agentrt.FileStore(ctx)
	if store == nil {
		return agentrt.ToolResult{Content: "no store"}, nil
	}
	b, err := store.Put(strings.NewReader("\x89PNG\r\n\x1a\n a picture"), 1<<20)
	if err != nil {
		return agentrt.ToolResult{}, err
	}
	return agentrt.ToolResult{Content: "[a picture]", Files: []agentrt.File{{Name: "search", MediaType: b.MediaType, Size: b.Size, Digest: b.Digest}}}, nil
}

// A tool's files reach the model as parts of its result's message, are
// journaled by digest with the result, and replay so.
func TestToolFilesJournaled(t *testing.T) {
	store, _ := storeWith(t)
	p := agent(t, withTool)
	file := filepath.Join(t.TempDir(), "run.jsonl")
	w, err := journal.Create(file, benchHeader)
	if err != nil {
		t.Fatal(err)
	}
	model := &scripted{turns: []turn{call(10, "search", `{"q":"x"}`), answer(`{"label":"bug"}`, 10)}}
	r, err := agentrt.New(p, agentrt.Options{Model: model, Files: store, Tools: map[string]agentrt.Tool{"search": cameraTool{}}, Journal: &agentrt.Journal{Writer: w}})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := r.Run(context.Background(), nil)
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	msgs := model.reqs[1].Messages
	res := msgs[len(msgs)-1]
	if res.Role != agentrt.ToolRole || res.Content != "[a picture]" || len(res.Parts) != 1 || res.Parts[0].File.MediaType != "image/png" {
		b, _ := json.Marshal(res)
		t.Fatalf("the tool's message %s", b)
	}
	jn, _ := os.ReadFile(file)
	if !strings.Contains(string(jn), res.Parts[0].File.Digest) || strings.Contains(string(jn), "a picture\"") && strings.Contains(string(jn), "PNG") {
		t.Errorf("the journal does not hold the file by digest:\n%s", jn)
	}
	j, err := journal.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	r, err = agentrt.New(p, agentrt.Options{Model: refusingModel{}, Files: store, Tools: map[string]agentrt.Tool{"search": cameraTool{}}, Journal: &agentrt.Journal{Recorded: j, Replay: true}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	sameRun(t, "replay", rec, rep)
}

// TestToolFilesBounded: every request carries the conversation's files
// again, so the files tools return count against the run's file bound
// together: a result whose files would pass it is an error the model
// reads, its files not sent, and a replay decides the same.
func TestToolFilesBounded(t *testing.T) {
	store, _ := storeWith(t)
	p := agent(t, withTool)
	file := filepath.Join(t.TempDir(), "run.jsonl")
	w, err := journal.Create(file, benchHeader)
	if err != nil {
		t.Fatal(err)
	}
	const bound = 40 // two of the camera's pictures of 18 bytes, not three
	model := &scripted{turns: []turn{call(10, "search", `{"q":"a"}`), call(10, "search", `{"q":"b"}`), call(10, "search", `{"q":"c"}`), answer(`{"label":"bug"}`, 10)}}
	tools := map[string]agentrt.Tool{"search": cameraTool{}}
	r, err := agentrt.New(p, agentrt.Options{Model: model, Files: store, Tools: tools, MaxFileBytes: bound, Journal: &agentrt.Journal{Writer: w}})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := r.Run(context.Background(), nil)
	w.Close()
	if err != nil || rec.Outcome != agentrt.OutcomeOK {
		t.Fatalf("%v %+v", err, rec)
	}
	for i, req := range model.reqs {
		var n int64
		for _, m := range req.Messages {
			for _, part := range m.Parts {
				if part.File != nil {
					n += part.File.Size
				}
			}
		}
		if n > bound {
			t.Errorf("request %d carries %d bytes of files, past %d", i+1, n, bound)
		}
	}
	msgs := model.reqs[3].Messages
	third := msgs[len(msgs)-1]
	if !third.IsError || len(third.Parts) != 0 || third.Content != "[a picture]\n[the result's files (18 bytes) are not sent: the conversation holds 36 bytes of files, and a conversation's files may come to 40 bytes together]" {
		b, _ := json.Marshal(third)
		t.Errorf("the third result: %s", b)
	}
	if calls := rec.Rounds[2].ToolCalls; len(calls) != 1 || !calls[0].IsError {
		t.Errorf("the report's third call: %+v", calls)
	}
	j, err := journal.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	r, err = agentrt.New(p, agentrt.Options{Model: refusingModel{}, Files: store, Tools: tools, MaxFileBytes: bound, Journal: &agentrt.Journal{Recorded: j, Replay: true}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	sameRun(t, "replay", rec, rep)
}

// TestToolFilesUnboundedBefore: a Temporal run started before the bound
// (agentrt.WithoutFileBounds) sends its tools' files as it did then, so
// that its history replays as it was made.
func TestToolFilesUnboundedBefore(t *testing.T) {
	store, _ := storeWith(t)
	p := agent(t, withTool)
	model := &scripted{turns: []turn{call(10, "search", `{"q":"a"}`), call(10, "search", `{"q":"b"}`), call(10, "search", `{"q":"c"}`), answer(`{"label":"bug"}`, 10)}}
	r, err := agentrt.New(p, agentrt.Options{Model: model, Files: store, Tools: map[string]agentrt.Tool{"search": cameraTool{}}, MaxFileBytes: 40})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := r.Run(agentrt.WithoutFileBounds(context.Background()), nil)
	if err != nil || rec.Outcome != agentrt.OutcomeOK {
		t.Fatalf("%v %+v", err, rec)
	}
	msgs := model.reqs[3].Messages
	if third := msgs[len(msgs)-1]; third.IsError || len(third.Parts) != 1 {
		b, _ := json.Marshal(third)
		t.Errorf("the third result, before the bound: %s", b)
	}
}

// TestFilesPastBudget: a call whose input, its files counted, is more
// than the token budget leaves is not sent, as text past it would not be;
// one within it is.
func TestFilesPastBudget(t *testing.T) {
	store, bs := storeWith(t, pdfBytes, strings.Repeat("Some notes.\n", 1000))
	in := json.RawMessage(`{"doc": {"digest": "` + bs[0].Digest + `"}, "extra": {"digest": "` + bs[1].Digest + `"}}`)
	for _, c := range []struct {
		provider string
		tokens   int
		sent     bool
	}{
		{"test", 5000, false}, // the text file alone is counted at 6,001 tokens
		{"test", 8000, true},
		{"openai", 5000, false},    // gpt-4o's tokeniser: the count as it is
		{"anthropic", 1000, false}, // a token a byte, taken at a quarter before any call
		{"anthropic", 5000, true},
	} {
		p := agent(t, func(a *plan.Agent) {
			a.Input = &plan.Input{Schema: json.RawMessage(fileSchema)}
			a.Model = plan.Model{Provider: c.provider, Name: "gpt-4o-2024-08-06"}
			if c.provider == "anthropic" {
				a.Model.Name = "claude-sonnet-4-5"
			}
			a.Budgets.Tokens = c.tokens
		})
		model := &scripted{turns: []turn{answer(`{"label":"bug"}`, 10)}}
		r, err := agentrt.New(p, agentrt.Options{Model: model, Files: store, Provider: c.provider})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := r.Run(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if sent := len(model.reqs) > 0; sent != c.sent {
			t.Errorf("%s, budget %d: sent %v, want %v (%s %s)", c.provider, c.tokens, sent, c.sent, rep.Bound, rep.Error)
		}
		if !c.sent && (rep.Bound != agentrt.BoundTokenBudget || !strings.Contains(rep.Error, "the next model call was not sent: its input is about")) {
			t.Errorf("%s, budget %d: %s %s", c.provider, c.tokens, rep.Bound, rep.Error)
		}
	}
}

// StoreInputFiles puts an input's base64 files in a store and names them
// by digest, for a run elsewhere; it refuses what a run would, and a
// reference, which would name a file someone else stored.
func TestStoreInputFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "files")
	store, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var bs []filestore.Blob
	for _, f := range []string{pdfBytes, "plain text"} {
		b, err := store.Put(strings.NewReader(f), 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		bs = append(bs, b)
	}
	stored := func() int {
		es, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		return len(es)
	}
	fields, err := plan.FileFields(json.RawMessage(fileSchema))
	if err != nil {
		t.Fatal(err)
	}
	b64 := func(s string) string { return `"` + base64.StdEncoding.EncodeToString([]byte(s)) + `"` }
	in := `{"doc": ` + b64(pdfBytes) + `, "extra": ` + b64("plain text") + `, "note": "a <note>", "n": 12345678901234567890}`
	out, err := agentrt.StoreInputFiles(store, fields, json.RawMessage(in), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := stored(); n != 2 {
		t.Errorf("the store holds %d files, want the 2 it had", n)
	}
	want := `{"doc":{"digest":"` + bs[0].Digest + `"},"extra":{"digest":"` + bs[1].Digest + `"},"n":12345678901234567890,"note":"a \u003cnote\u003e"}`
	if string(out) != want {
		t.Errorf("StoreInputFiles:\n got %s\nwant %s", out, want)
	}
	// The input it returns runs here as it would on a worker reading the
	// store: the same files.
	model := &scripted{turns: []turn{answer(`{"label":"bug"}`, 10)}}
	r, err := agentrt.New(fileAgent(t, "Read {{.doc}}."), agentrt.Options{Model: model, Files: store})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, rep, agentrt.OutcomeOK, agentrt.BoundNone, `{"label":"bug"}`)
	got, _ := json.Marshal(model.reqs[0].Messages[1].Parts)
	if w := `{"file":{"name":"doc","media_type":"application/pdf","size":22,"digest":"` + bs[0].Digest + `"}}`; !strings.Contains(string(got), w) {
		t.Errorf("parts %s, want the file %s", got, w)
	}

	for _, c := range []struct{ in, want string }{
		{`{"doc": ` + b64("other plain text") + `}`, "file doc: its media type is text/plain, not application/pdf or image/png"},
		{`{"doc": ` + b64("%PDF-"+strings.Repeat("x", 400)) + `}`, "file doc: larger than 300 bytes (the bound its schema's maxLength sets)"},
		{`{"doc": "not base64!"}`, "file doc: not base64"},
		{`{"doc": {"digest": "` + bs[0].Digest + `"}}`, "file doc: give the file's bytes in base64, as the contract says, not an object"},
		{`{"doc": 3}`, "not a number"},
		// The first file passes, the second does not: neither is stored.
		{`{"doc": ` + b64(pdfBytes+"a first file") + `, "extra": "not base64!"}`, "file extra: not base64"},
	} {
		_, err := agentrt.StoreInputFiles(store, fields, json.RawMessage(c.in), 0, nil)
		var ie *agentrt.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an input error saying %q", c.in, err, c.want)
		}
	}
	// A file refused is checked before it is stored: it leaves nothing.
	if n := stored(); n != 2 {
		t.Errorf("the store holds %d files after the refusals, want 2", n)
	}
	// The files together, past the run's bound: neither is stored.
	_, err = agentrt.StoreInputFiles(store, fields, json.RawMessage(`{"doc": `+b64(pdfBytes+"a second file")+`, "extra": `+b64("more plain text")+`}`), 30, nil)
	if err == nil || !strings.Contains(err.Error(), "the run's files come to more than the 30 bytes a run takes") {
		t.Errorf("past the run's bound: %v", err)
	}
	// A run here refuses the same way, and stores nothing either.
	r, err = agentrt.New(fileAgent(t, ""), agentrt.Options{Model: refusingModel{}, Files: store})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(context.Background(), json.RawMessage(`{"doc": `+b64(pdfBytes+"a third file")+`, "extra": "not base64!"}`)); err == nil {
		t.Error("a run took a file that is not base64")
	}
	if n := stored(); n != 2 {
		t.Errorf("the store holds %d files after the refusals, want 2", n)
	}
	// The names a client handed the files in under go in their
	// references, and reach the model; one that is not a plain base
	// name is left out, the file taken all the same.
	out, err = agentrt.StoreInputFiles(store, fields, json.RawMessage(`{"doc": `+b64(pdfBytes)+`, "extra": `+b64("plain text")+`}`), 0,
		map[string]string{"doc": "scan 2041.pdf", "extra": "notes\x1b[2J.txt", "nosuch": "x.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"doc":{"digest":"` + bs[0].Digest + `","file_name":"scan 2041.pdf"},"extra":{"digest":"` + bs[1].Digest + `"}}`; string(out) != want {
		t.Errorf("with names:\n got %s\nwant %s", out, want)
	}
	model = &scripted{turns: []turn{answer(`{"label":"bug"}`, 10)}}
	r, err = agentrt.New(fileAgent(t, "Read {{.doc}}."), agentrt.Options{Model: model, Files: store})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(context.Background(), out); err != nil {
		t.Fatal(err)
	}
	got, _ = json.Marshal(model.reqs[0].Messages[1].Parts)
	if w := `"file_name":"scan 2041.pdf"`; !strings.Contains(string(got), w) {
		t.Errorf("parts %s, want the file's name %s", got, w)
	}

	// An agent without files, no input, an input that is not an object:
	// as given.
	for _, c := range []struct {
		fields []plan.FileField
		in     string
	}{{nil, ""}, {nil, `{"a": 1}`}, {fields, ""}, {fields, `[1]`}} {
		if out, err := agentrt.StoreInputFiles(store, c.fields, json.RawMessage(c.in), 0, nil); err != nil || string(out) != c.in {
			t.Errorf("%q: %s, %v", c.in, out, err)
		}
	}
}

// CleanFileName keeps a plain base name and nothing that would name a
// directory or reach a terminal as anything but text.
func TestCleanFileName(t *testing.T) {
	for name, want := range map[string]bool{
		"invoice-2041.pdf":       true,
		"scan 2041 (1).PDF":      true,
		"Rechnung für März.pdf":  true,
		"請求書.pdf":                true,
		".hidden":                true,
		strings.Repeat("a", 255): true,
		"":                       false,
		".":                      false,
		"..":                     false,
		"a/b.pdf":                false,
		`C:\x\b.pdf`:             false,
		"a\x00b":                 false,
		"a\nb.pdf":               false,
		"a\rb.pdf":               false,
		"\x1b]0;title\x07.pdf":   false,
		"\u009b31m.pdf":          false,
		"abc\u202efdp.exe":       false,
		"zero\u200bwidth.pdf":    false,
		"bad\xffutf8.pdf":        false,
		strings.Repeat("a", 256): false,
	} {
		if got := agentrt.CleanFileName(name) == name && name != ""; got != want {
			t.Errorf("CleanFileName(%q) = %q, want it kept: %v", name, agentrt.CleanFileName(name), want)
		}
		if got := agentrt.CleanFileName(name); got != "" && got != name {
			t.Errorf("CleanFileName(%q) = %q: a name is kept whole or not at all", name, got)
		}
	}
}

// A base64 text that is not is said at its own byte, however far in.
func TestBase64Fault(t *testing.T) {
	good := strings.Repeat("QUJD", 5000)
	for text, want := range map[string]string{
		good + "QU!D":                     "at byte 20002",
		"not base64!":                     "at byte 3",
		good + "QUJ":                      "it ends part way through a group of four characters",
		"QUJDQ===":                        "at byte 5",
		"JVBERi0xLjQKJSBhIGRvY3VtZW50Cg=": "it ends part way through a group of four characters",
	} {
		_, err := base64.StdEncoding.DecodeString(text)
		if got := agentrt.Base64Fault(text, err); got != want {
			t.Errorf("%.20q…: %s, want %s", text[max(0, len(text)-20):], got, want)
		}
	}
}
