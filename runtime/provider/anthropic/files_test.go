package anthropic

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/jpeg"
	"image/png"
	"io"
	"reflect"
	"strings"
	"testing"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/provider/internal/filetest"
	"agentc.dev/agentc/runtime/provider/retry"
)

// The files the tests send, and their store (package filetest).
var (
	pngBytes   = filetest.PNG
	jpegBytes  = filetest.JPEG
	pdfBytes   = filetest.PDF
	fileStore  = filetest.Store
	putFile    = filetest.Put
	putFrom    = filetest.PutReader
	tamperBlob = filetest.Tamper
)

const (
	plainText = filetest.PlainText
	bomBody   = filetest.BOMBody
)

func filesRequest(fr agentrt.FileReader, parts ...agentrt.Part) *agentrt.Request {
	return &agentrt.Request{
		Model:    "claude-sonnet-4-5",
		Files:    fr,
		Messages: []agentrt.Message{{Role: agentrt.System, Content: "Read the files."}, {Role: agentrt.User, Parts: parts}},
	}
}

func textPart(s string) agentrt.Part        { return agentrt.Part{Text: s} }
func filePart(f *agentrt.File) agentrt.Part { return agentrt.Part{File: f} }
func b64(data []byte) string                { return base64.StdEncoding.EncodeToString(data) }

func base64Source(mt string, data []byte) map[string]any {
	return map[string]any{"type": "base64", "media_type": mt, "data": b64(data)}
}

// sentBytes decodes the base64 source of a block the server received.
func sentBytes(t *testing.T, block any, mt string) []byte {
	t.Helper()
	src, _ := block.(map[string]any)["source"].(map[string]any)
	if src["type"] != "base64" || src["media_type"] != mt {
		t.Fatalf("source %v, want base64 of %s", src, mt)
	}
	s, _ := src["data"].(string)
	data, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatalf("source of %s: %v", mt, err)
	}
	return data
}

var okMessage = message(`[{"type": "text", "text": "Read."}]`, "end_turn", "")

func TestFileBlocksSent(t *testing.T) {
	s := fileStore(t)
	pngData, jpegData, pdfData := pngBytes(t), jpegBytes(t), pdfBytes()
	pdf2 := append(pdfBytes(), "% copy\n"...)
	pngF := putFile(t, s, "photo", "photo.png", pngData, "image/png")
	jpegF := putFile(t, s, "scan", "scan.jpg", jpegData, "image/jpeg")
	pdfF := putFile(t, s, "invoice", "invoice-2024.pdf", pdfData, "application/pdf")
	pdfNoName := putFile(t, s, "contract", "", pdf2, "application/pdf")
	txtF := putFile(t, s, "notes", "notes.txt", []byte(plainText), "text/plain")
	bomF := putFile(t, s, "memo", "memo.txt", []byte("\ufeff"+bomBody), "text/plain")

	f := newFake(t, okMessage)
	resp, err := f.model(t, retry.Policy{}).Complete(t.Context(), filesRequest(s,
		textPart("Compare "), filePart(pngF), textPart(" with "), filePart(jpegF),
		textPart(", then read "), filePart(pdfF), filePart(pdfNoName),
		textPart(" and the notes: "), filePart(txtF), filePart(bomF), textPart("."),
	))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "Read." {
		t.Errorf("answer = %q", resp.Message.Content)
	}
	if n := f.attempts(); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
	b := f.body(0)
	jsonEq(t, "system", b["system"], `[{"type": "text", "text": "Read the files."}]`)
	msgs, _ := b["messages"].([]any)
	if len(msgs) != 1 || msgs[0].(map[string]any)["role"] != "user" {
		t.Fatalf("messages = %v, want one user message", b["messages"])
	}
	got, ok := msgs[0].(map[string]any)["content"].([]any)
	if !ok {
		t.Fatalf("user content = %#v, want an array of blocks", msgs[0].(map[string]any)["content"])
	}
	want := []any{
		map[string]any{"type": "text", "text": "Compare "},
		map[string]any{"type": "image", "source": base64Source("image/png", pngData)},
		map[string]any{"type": "text", "text": " with "},
		map[string]any{"type": "image", "source": base64Source("image/jpeg", jpegData)},
		map[string]any{"type": "text", "text": ", then read "},
		map[string]any{"type": "document", "source": base64Source("application/pdf", pdfData), "title": "invoice-2024.pdf"},
		map[string]any{"type": "document", "source": base64Source("application/pdf", pdf2)},
		map[string]any{"type": "text", "text": " and the notes: "},
		map[string]any{"type": "document", "source": map[string]any{"type": "text", "media_type": "text/plain", "data": plainText}, "title": "notes.txt"},
		map[string]any{"type": "document", "source": map[string]any{"type": "text", "media_type": "text/plain", "data": bomBody}, "title": "memo.txt"},
		map[string]any{"type": "text", "text": "."},
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", "  ")
		w, _ := json.MarshalIndent(want, "", "  ")
		t.Fatalf("user content:\ngot  %s\nwant %s", g, w)
	}
	// The bytes come back whole from what the server received.
	if sent := sentBytes(t, got[1], "image/png"); !bytes.Equal(sent, pngData) {
		t.Error("the PNG sent is not the PNG stored")
	} else if _, err := png.Decode(bytes.NewReader(sent)); err != nil {
		t.Errorf("the PNG sent does not decode: %v", err)
	}
	if sent := sentBytes(t, got[3], "image/jpeg"); !bytes.Equal(sent, jpegData) {
		t.Error("the JPEG sent is not the JPEG stored")
	} else if _, err := jpeg.Decode(bytes.NewReader(sent)); err != nil {
		t.Errorf("the JPEG sent does not decode: %v", err)
	}
	if sent := sentBytes(t, got[5], "application/pdf"); !bytes.Equal(sent, pdfData) || !bytes.HasPrefix(sent, []byte("%PDF-1.4\n")) {
		t.Error("the PDF sent is not the PDF stored")
	}
	for i := 8; i <= 9; i++ {
		data, _ := got[i].(map[string]any)["source"].(map[string]any)["data"].(string)
		if strings.HasPrefix(data, "\ufeff") || strings.ContainsRune(data, '\ufffd') {
			t.Errorf("document %d = %q: a byte order mark or a replaced byte was sent", i, data)
		}
	}
}

// TestFileRefused: files the request cannot carry fail Complete before any
// request, with an error that says which file and why.
func TestFileRefused(t *testing.T) {
	s := fileStore(t)
	head := pngBytes(t)
	// A PNG one byte past Anthropic's 5 MiB for an image.
	big := putFrom(t, s, "poster", "poster.png", io.MultiReader(bytes.NewReader(head), io.LimitReader(zeroReader{}, 5<<20+1-int64(len(head)))), "image/png")
	if big.Size != 5<<20+1 {
		t.Fatalf("stored %d bytes", big.Size)
	}
	pngF := putFile(t, s, "photo", "photo.png", pngBytes(t), "image/png")
	tiff := &agentrt.File{Name: "fax", FileName: "fax.tif", MediaType: "image/tiff", Size: pngF.Size, Digest: pngF.Digest}

	tamperedPNG := putFile(t, s, "altered", "altered.png", append(pngBytes(t), "trailing bytes to alter"...), "image/png")
	tamperBlob(t, s, tamperedPNG)
	tamperedPDF := putFile(t, s, "forged", "forged.pdf", pdfBytes(), "application/pdf")
	tamperBlob(t, s, tamperedPDF)
	tamperedText := putFile(t, s, "edited", "edited.txt", []byte(plainText+"and a third line\n"), "text/plain")
	tamperBlob(t, s, tamperedText)

	txtF := putFile(t, s, "notes", "notes.txt", []byte(plainText), "text/plain")
	with := func(f *agentrt.File, size int64) *agentrt.File { g := *f; g.Size = size; return &g }

	for _, c := range []struct {
		name  string
		files agentrt.FileReader
		file  *agentrt.File
		want  []string
	}{
		{"too large", s, big, []string{"poster", "5242881 bytes", "5 MiB", "image/png"}},
		{"media type not taken", s, tiff, []string{"fax", "anthropic does not take image/tiff"}},
		{"tampered image", s, tamperedPNG, []string{"altered", "the store was changed"}},
		{"tampered pdf", s, tamperedPDF, []string{"forged", "the store was changed"}},
		{"tampered text", s, tamperedText, []string{"edited", "the store was changed"}},
		{"no file store", nil, pngF, []string{"photo", "no file store"}},
		{"image smaller than stored", s, with(pngF, pngF.Size-1), []string{"photo", fmt.Sprint(pngF.Size - 1)}},
		{"image larger than stored", s, with(pngF, pngF.Size+1), []string{"photo", fmt.Sprint(pngF.Size + 1)}},
		{"text smaller than stored", s, with(txtF, txtF.Size-1), []string{"notes", fmt.Sprint(txtF.Size - 1)}},
		{"text larger than stored", s, with(txtF, txtF.Size+1), []string{"notes", fmt.Sprint(txtF.Size + 1)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t, okMessage)
			_, err := f.model(t, retry.Policy{}).Complete(t.Context(), filesRequest(c.files, textPart("Look: "), filePart(c.file)))
			if err == nil {
				t.Fatal("Complete succeeded")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if !strings.HasPrefix(err.Error(), "anthropic: ") || strings.Count(err.Error(), "anthropic:") != 1 {
				t.Errorf("error %q: want it to begin with the provider, named once", err)
			}
			if n := f.attempts(); n != 0 {
				t.Errorf("the server received %d requests, want none", n)
			}
		})
	}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestToolFilesSent: the files a tool returned follow its text in the
// tool_result block; a file the API does not take stays text.
func TestToolFilesSent(t *testing.T) {
	s := fileStore(t)
	pngData, pdfData := pngBytes(t), pdfBytes()
	pngF := putFile(t, s, "camera", "", pngData, "image/png")
	pdfF := putFile(t, s, "camera", "", pdfData, "application/pdf")
	tiff := &agentrt.File{Name: "camera", MediaType: "image/tiff", Size: pngF.Size, Digest: pngF.Digest}
	f := newFake(t, okMessage)
	req := &agentrt.Request{Model: "claude-test", Files: s, Messages: []agentrt.Message{
		{Role: agentrt.User, Content: "Take a picture."},
		{Role: agentrt.Assistant, ToolCalls: []agentrt.ToolCall{{ID: "c1", Name: "camera", Arguments: json.RawMessage(`{}`)}}},
		{Role: agentrt.ToolRole, ToolCallID: "c1", Name: "camera", Content: "two files", Parts: []agentrt.Part{filePart(pngF), filePart(tiff), filePart(pdfF)}},
	}}
	if _, err := f.model(t, retry.Policy{}).Complete(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	msgs := f.body(0)["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)
	blocks := last["content"].([]any)
	result := blocks[0].(map[string]any)
	content := result["content"].([]any)
	if result["type"] != "tool_result" || len(content) != 3 {
		g, _ := json.Marshal(last)
		t.Fatalf("tool result %s", g)
	}
	jsonEq(t, "text", content[0], `{"type": "text", "text": "two files"}`)
	if c := content[1].(map[string]any); c["type"] != "image" || !bytes.Equal(sentBytes(t, c, "image/png"), pngData) {
		t.Errorf("image block %v", c["type"])
	}
	if c := content[2].(map[string]any); c["type"] != "document" || !bytes.Equal(sentBytes(t, c, "application/pdf"), pdfData) {
		t.Errorf("document block %v", c["type"])
	}
}

// TestTextFileStreamed: a text file goes into the document block's source
// as the SDK writes a string, byte for byte, streamed from the store
// rather than handed to the SDK (files.Splice).
func TestTextFileStreamed(t *testing.T) {
	s := fileStore(t)
	data := filetest.EscapedText()
	txt := putFile(t, s, "notes", "notes.txt", data, "text/plain")
	f := newFake(t, okMessage)
	if _, err := f.model(t, retry.Policy{}).Complete(t.Context(), filesRequest(s, textPart("Read: "), filePart(txt))); err != nil {
		t.Fatal(err)
	}
	raw := f.raws[0]
	if want := []byte(`"data":"` + string(filetest.JSONText(t, data)) + `"`); !bytes.Contains(raw, want) {
		i := bytes.Index(raw, []byte(`"data":"`))
		t.Errorf("the body does not hold the text as encoding/json writes it: %.300s", raw[max(i, 0):])
	}
	if bytes.Contains(raw, []byte("agentc-file-")) {
		t.Error("a placeholder was sent")
	}
}

// TestTextNotText: a blob labelled text/plain that is not text to its end
// (a journal's, a host's) is refused before any request.
func TestTextNotText(t *testing.T) {
	s := fileStore(t)
	for _, fl := range filetest.NotText(t, s) {
		f := newFake(t, okMessage)
		_, err := f.model(t, retry.Policy{}).Complete(t.Context(), filesRequest(s, textPart("Look: "), filePart(fl)))
		if !filetest.NotTextError(err, fl) || f.attempts() != 0 {
			t.Errorf("%s: %d requests sent, error %v", fl.Name, f.attempts(), err)
		}
	}
}
