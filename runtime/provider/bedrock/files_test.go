package bedrock

import (
	"bytes"
	"strings"
	"testing"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/provider/internal/filetest"
)

// Files go as image and document blocks holding their exact bytes, in
// the user's order, a document named; files a tool returned go in its
// result; a file past Converse's bounds, or of a type it does not take,
// is an error before any request, and a file changed in the store too.
func TestFiles(t *testing.T) {
	s := filetest.Store(t)
	pngData, jpegData, pdfData := filetest.PNG(t), filetest.JPEG(t), filetest.PDF()
	pngF := filetest.Put(t, s, "photo", "photo.png", pngData, "image/png")
	jpegF := filetest.Put(t, s, "scan", "scan.jpg", jpegData, "image/jpeg")
	pdfF := filetest.Put(t, s, "invoice", "invoice 2024_03.pdf", pdfData, "application/pdf")
	txtF := filetest.Put(t, s, "notes", "", []byte(filetest.PlainText), "text/plain")

	f := newFake(t, ok(textReply("Seen.", "end_turn")))
	m := newModel(t, f, 1, nil)
	req := &agentrt.Request{Model: claude, Files: s, Messages: []agentrt.Message{
		{Role: agentrt.User, Parts: []agentrt.Part{{Text: "Look:"}, {File: pngF}, {File: jpegF}, {File: pdfF}, {File: txtF}}},
		{Role: agentrt.Assistant, ToolCalls: []agentrt.ToolCall{{ID: "t1", Name: "fetch", Arguments: []byte(`{}`)}}},
		{Role: agentrt.ToolRole, ToolCallID: "t1", Content: "two files", Parts: []agentrt.Part{{File: pngF}, {File: pdfF}}},
	}}
	if _, err := m.Complete(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	msgs := f.requests()[0].body.Messages
	u := msgs[0].Content
	if len(u) != 5 || *u[0].Text != "Look:" {
		t.Fatalf("user content %+v", u)
	}
	if i := u[1].Image; i == nil || i.Format != "png" || !bytes.Equal(i.Source.Bytes, pngData) {
		t.Errorf("png %+v", u[1])
	}
	if i := u[2].Image; i == nil || i.Format != "jpeg" || !bytes.Equal(i.Source.Bytes, jpegData) {
		t.Errorf("jpeg %+v", u[2])
	}
	if d := u[3].Document; d == nil || d.Format != "pdf" || d.Name != "invoice 2024 03" || !bytes.Equal(d.Source.Bytes, pdfData) {
		t.Errorf("pdf %+v", u[3].Document)
	}
	if d := u[4].Document; d == nil || d.Format != "txt" || d.Name != "notes" || string(d.Source.Bytes) != filetest.PlainText {
		t.Errorf("text %+v", u[4].Document)
	}
	r := msgs[2].Content[0].ToolResult
	if r == nil || len(r.Content) != 3 || *r.Content[0].Text != "two files" || !bytes.Equal(r.Content[1].Image.Source.Bytes, pngData) ||
		r.Content[2].Document == nil || r.Content[2].Document.Name != "invoice 2024 03 (2)" {
		t.Errorf("tool result %+v", r)
	}

	big := filetest.PutReader(t, s, "poster", "poster.png", bytes.NewReader(append(append([]byte{}, pngData...), make([]byte, 3_750_001-len(pngData))...)), "image/png")
	for name, fl := range map[string]*agentrt.File{"too large": big, "unknown type": {Name: "x", MediaType: "image/heic", Size: 1, Digest: pngF.Digest}} {
		f := newFake(t, ok(textReply("x", "end_turn")))
		_, err := newModel(t, f, 1, nil).Complete(t.Context(), &agentrt.Request{Model: nova, Files: s, Messages: []agentrt.Message{{Role: agentrt.User, Parts: []agentrt.Part{{File: fl}}}}})
		if err == nil || !strings.Contains(err.Error(), "bedrock") || len(f.requests()) != 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	filetest.Tamper(t, s, pdfF)
	f = newFake(t, ok(textReply("x", "end_turn")))
	if _, err := newModel(t, f, 1, nil).Complete(t.Context(), &agentrt.Request{Model: nova, Files: s, Messages: []agentrt.Message{{Role: agentrt.User, Parts: []agentrt.Part{{File: pdfF}}}}}); err == nil || len(f.requests()) != 0 {
		t.Errorf("a changed file: %v", err)
	}
}

// TestTextNotText: a blob labelled text/plain that is not text to its end
// (a journal's, a host's) is refused before any request, never sent as
// a txt document.
func TestTextNotText(t *testing.T) {
	s := filetest.Store(t)
	for _, fl := range filetest.NotText(t, s) {
		f := newFake(t, ok(textReply("Seen.", "end_turn")))
		_, err := newModel(t, f, 1, nil).Complete(t.Context(), &agentrt.Request{Model: claude, Files: s, Messages: []agentrt.Message{{Role: agentrt.User, Parts: []agentrt.Part{{Text: "x"}, {File: fl}}}}})
		if !filetest.NotTextError(err, fl) || len(f.requests()) != 0 {
			t.Errorf("%s: %d requests sent, error %v", fl.Name, len(f.requests()), err)
		}
	}
}

// TestTextBOM: a text file goes without the byte order mark it begins
// with, as every provider sends one.
func TestTextBOM(t *testing.T) {
	s := filetest.Store(t)
	fl := filetest.Put(t, s, "note", "note.txt", []byte("\ufeff"+filetest.BOMBody), "text/plain")
	f := newFake(t, ok(textReply("Seen.", "end_turn")))
	if _, err := newModel(t, f, 1, nil).Complete(t.Context(), &agentrt.Request{Model: claude, Files: s, Messages: []agentrt.Message{{Role: agentrt.User, Parts: []agentrt.Part{{File: fl}}}}}); err != nil {
		t.Fatal(err)
	}
	if d := f.requests()[0].body.Messages[0].Content[0].Document; d == nil || string(d.Source.Bytes) != filetest.BOMBody {
		t.Errorf("document %+v", d)
	}
}
