package openai

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
)

// The files the tests send, and their store (package filetest).
var (
	pngBytes  = filetest.PNG
	jpegBytes = filetest.JPEG
	pdfBytes  = filetest.PDF
	store     = filetest.Store
	put       = filetest.Put
	putReader = filetest.PutReader
	tamper    = filetest.Tamper
)

const (
	plainText = filetest.PlainText
	bomBody   = filetest.BOMBody
)

func fileRequest(fr agentrt.FileReader, parts ...agentrt.Part) *agentrt.Request {
	return &agentrt.Request{
		Model:    "gpt-test",
		Files:    fr,
		Messages: []agentrt.Message{{Role: agentrt.System, Content: "Read the files."}, {Role: agentrt.User, Parts: parts}},
	}
}

func text(s string) agentrt.Part        { return agentrt.Part{Text: s} }
func file(f *agentrt.File) agentrt.Part { return agentrt.Part{File: f} }
func b64(data []byte) string            { return base64.StdEncoding.EncodeToString(data) }
func imagePart(mt string, data []byte) any {
	return map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:" + mt + ";base64," + b64(data)}}
}

// userContent is the content array of the user message of a request body.
func userContent(t *testing.T, body map[string]any) []any {
	t.Helper()
	msgs, _ := body["messages"].([]any)
	if len(msgs) != 2 {
		t.Fatalf("messages = %v, want the system and the user message", body["messages"])
	}
	user, _ := msgs[1].(map[string]any)
	if user["role"] != "user" {
		t.Fatalf("second message = %v, want the user's", user)
	}
	content, ok := user["content"].([]any)
	if !ok {
		t.Fatalf("user content = %#v, want an array of parts", user["content"])
	}
	return content
}

// dataURL decodes a data: URL of media type mt in base64.
func dataURL(t *testing.T, url any, mt string) []byte {
	t.Helper()
	s, _ := url.(string)
	prefix := "data:" + mt + ";base64,"
	if !strings.HasPrefix(s, prefix) {
		t.Fatalf("data URL %.60q does not begin %q", s, prefix)
	}
	data, err := base64.StdEncoding.DecodeString(s[len(prefix):])
	if err != nil {
		t.Fatalf("data URL of %s: %v", mt, err)
	}
	return data
}

func TestFilePartsSent(t *testing.T) {
	s := store(t)
	pngData, jpegData, pdfData := pngBytes(t), jpegBytes(t), pdfBytes()
	pngF := put(t, s, "photo", "photo.png", pngData, "image/png")
	jpegF := put(t, s, "scan", "scan.jpg", jpegData, "image/jpeg")
	pdfF := put(t, s, "invoice", "invoice-2024.pdf", pdfData, "application/pdf")
	pdfNoName := put(t, s, "contract", "", append(pdfBytes(), "% copy\n"...), "application/pdf")
	txtF := put(t, s, "notes", "notes.txt", []byte(plainText), "text/plain")
	bomF := put(t, s, "memo", "memo.txt", []byte("\ufeff"+bomBody), "text/plain")

	f := newFake(t, okAnswer)
	m := newModel(t, f, nil)
	resp, err := m.Complete(t.Context(), fileRequest(s,
		text("Compare "), file(pngF), text(" with "), file(jpegF),
		text(", then read "), file(pdfF), file(pdfNoName),
		text(" and the notes: "), file(txtF), file(bomF), text("."),
	))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "Paris." {
		t.Errorf("answer = %q", resp.Message.Content)
	}
	if n := f.requests(); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
	got := userContent(t, f.body(0))
	want := []any{
		map[string]any{"type": "text", "text": "Compare "},
		imagePart("image/png", pngData),
		map[string]any{"type": "text", "text": " with "},
		imagePart("image/jpeg", jpegData),
		map[string]any{"type": "text", "text": ", then read "},
		map[string]any{"type": "file", "file": map[string]any{"file_data": "data:application/pdf;base64," + b64(pdfData), "filename": "invoice-2024.pdf"}},
		map[string]any{"type": "file", "file": map[string]any{"file_data": "data:application/pdf;base64," + b64(append(pdfBytes(), "% copy\n"...)), "filename": "contract.pdf"}},
		map[string]any{"type": "text", "text": " and the notes: "},
		map[string]any{"type": "text", "text": plainText},
		map[string]any{"type": "text", "text": bomBody},
		map[string]any{"type": "text", "text": "."},
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", "  ")
		w, _ := json.MarshalIndent(want, "", "  ")
		t.Fatalf("user content:\ngot  %s\nwant %s", g, w)
	}
	// The bytes come back whole from what the server received.
	part := func(i int) map[string]any { return got[i].(map[string]any) }
	if b := dataURL(t, part(1)["image_url"].(map[string]any)["url"], "image/png"); !bytes.Equal(b, pngData) {
		t.Error("the PNG sent is not the PNG stored")
	}
	if _, err := png.Decode(bytes.NewReader(dataURL(t, part(1)["image_url"].(map[string]any)["url"], "image/png"))); err != nil {
		t.Errorf("the PNG sent does not decode: %v", err)
	}
	if b := dataURL(t, part(3)["image_url"].(map[string]any)["url"], "image/jpeg"); !bytes.Equal(b, jpegData) {
		t.Error("the JPEG sent is not the JPEG stored")
	}
	if _, err := jpeg.Decode(bytes.NewReader(dataURL(t, part(3)["image_url"].(map[string]any)["url"], "image/jpeg"))); err != nil {
		t.Errorf("the JPEG sent does not decode: %v", err)
	}
	pdfSent := dataURL(t, part(5)["file"].(map[string]any)["file_data"], "application/pdf")
	if !bytes.Equal(pdfSent, pdfData) || !bytes.HasPrefix(pdfSent, []byte("%PDF-1.4\n")) {
		t.Error("the PDF sent is not the PDF stored")
	}
	for i := 8; i <= 9; i++ {
		if s := part(i)["text"].(string); strings.HasPrefix(s, "\ufeff") || strings.ContainsRune(s, '\ufffd') {
			t.Errorf("text part %d = %q: a byte order mark or a replaced byte was sent", i, s)
		}
	}
}

// TestFileRefused: files the request cannot carry fail Complete before any
// request, with an error that says which file and why.
func TestFileRefused(t *testing.T) {
	s := store(t)
	// A PNG one byte past OpenAI's 20 MiB for an image.
	big := putReader(t, s, "poster", "poster.png", io.MultiReader(bytes.NewReader(pngBytes(t)), io.LimitReader(zeros{}, 20<<20+1-int64(len(pngBytes(t))))), "image/png")
	if big.Size != 20<<20+1 {
		t.Fatalf("stored %d bytes", big.Size)
	}
	pngF := put(t, s, "photo", "photo.png", pngBytes(t), "image/png")
	tiff := &agentrt.File{Name: "fax", FileName: "fax.tif", MediaType: "image/tiff", Size: pngF.Size, Digest: pngF.Digest}

	tamperedPNG := put(t, s, "altered", "altered.png", append(pngBytes(t), "trailing bytes to alter"...), "image/png")
	tamper(t, s, tamperedPNG)
	tamperedPDF := put(t, s, "forged", "forged.pdf", pdfBytes(), "application/pdf")
	tamper(t, s, tamperedPDF)
	tamperedText := put(t, s, "edited", "edited.txt", []byte(plainText+"and a third line\n"), "text/plain")
	tamper(t, s, tamperedText)

	txtF := put(t, s, "notes", "notes.txt", []byte(plainText), "text/plain")
	with := func(f *agentrt.File, size int64) *agentrt.File { g := *f; g.Size = size; return &g }

	for _, c := range []struct {
		name  string
		files agentrt.FileReader
		file  *agentrt.File
		want  []string
	}{
		{"too large", s, big, []string{"poster", "20971521 bytes", "20 MiB", "image/png"}},
		{"media type not taken", s, tiff, []string{"fax", "openai does not take image/tiff"}},
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
			f := newFake(t, okAnswer)
			m := newModel(t, f, nil)
			_, err := m.Complete(t.Context(), fileRequest(c.files, text("Look: "), file(c.file)))
			if err == nil {
				t.Fatal("Complete succeeded")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if n := strings.Count(err.Error(), "openai:"); n != 1 {
				t.Errorf("error %q names the provider %d times, want once", err, n)
			}
			if n := f.requests(); n != 0 {
				t.Errorf("the server received %d requests, want none", n)
			}
		})
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestToolFilesSent: a tool message holds only text, so the files tools
// returned go in one user message after the turn's tool messages, each
// named by its tool; a file Chat Completions does not take stays text.
func TestToolFilesSent(t *testing.T) {
	s := store(t)
	pngData := pngBytes(t)
	pngF := put(t, s, "camera", "", pngData, "image/png")
	tiff := &agentrt.File{Name: "camera", MediaType: "image/tiff", Size: 4, Digest: pngF.Digest}
	f := newFake(t, okAnswer)
	m := newModel(t, f, nil)
	req := &agentrt.Request{Model: "gpt-test", Files: s, Messages: []agentrt.Message{
		{Role: agentrt.System, Content: "Look."},
		{Role: agentrt.User, Content: "Take two pictures."},
		{Role: agentrt.Assistant, ToolCalls: []agentrt.ToolCall{{ID: "c1", Name: "camera", Arguments: json.RawMessage(`{}`)}, {ID: "c2", Name: "camera", Arguments: json.RawMessage(`{}`)}}},
		{Role: agentrt.ToolRole, ToolCallID: "c1", Name: "camera", Content: "[image content: image/png]", Parts: []agentrt.Part{file(pngF)}},
		{Role: agentrt.ToolRole, ToolCallID: "c2", Name: "camera", Content: "[image content: image/tiff]", Parts: []agentrt.Part{file(tiff)}},
	}}
	if _, err := m.Complete(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	msgs := f.body(0)["messages"].([]any)
	roles := []string{}
	for _, m := range msgs {
		roles = append(roles, m.(map[string]any)["role"].(string))
	}
	if strings.Join(roles, ",") != "system,user,assistant,tool,tool,user" {
		t.Fatalf("roles %v", roles)
	}
	if c := msgs[3].(map[string]any)["content"]; c != "[image content: image/png]" {
		t.Errorf("tool message content %v", c)
	}
	got := msgs[5].(map[string]any)["content"].([]any)
	want := []any{
		map[string]any{"type": "text", "text": "The tool camera returned this file (image/png):"},
		imagePart("image/png", pngData),
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		t.Errorf("files message %s", g)
	}
}

// TestTextFileStreamed: a text file goes into the body as the SDK writes a
// string, byte for byte, streamed from the store rather than handed to the
// SDK (files.Splice), for Chat Completions and the Responses API alike.
func TestTextFileStreamed(t *testing.T) {
	s := store(t)
	data := filetest.EscapedText()
	txt := put(t, s, "notes", "notes.txt", data, "text/plain")
	want := []byte(`"text":"` + string(filetest.JSONText(t, data)) + `"`)
	for _, api := range []string{"chat", "responses"} {
		var f *fake
		var m *Model
		if api == "chat" {
			f = newFake(t, okAnswer)
			m = newModel(t, f, nil)
		} else {
			f = newResponsesFake(t, okResponse)
			m = newResponsesModel(t, f, nil)
		}
		if _, err := m.Complete(t.Context(), fileRequest(s, text("Read: "), file(txt))); err != nil {
			t.Fatalf("%s: %v", api, err)
		}
		raw := f.bodies[0]
		if !bytes.Contains(raw, want) {
			i := bytes.Index(raw, []byte(`"text":"Read: "`))
			t.Errorf("%s: the body does not hold the text as encoding/json writes it: %.300s", api, raw[max(i, 0):])
		}
		if bytes.Contains(raw, []byte("agentc-file-")) {
			t.Errorf("%s: a placeholder was sent", api)
		}
	}
}

// TestBodyBound: a request whose text is past 64 MiB is not sent, though
// it holds no file (files.MaxBody).
func TestBodyBound(t *testing.T) {
	f := newFake(t, okAnswer)
	a := &attempts{}
	req := &agentrt.Request{Model: "gpt-test", Messages: []agentrt.Message{{Role: agentrt.User, Content: strings.Repeat("x", 64<<20+1)}}}
	_, err := newModel(t, f, a).Complete(t.Context(), req)
	if err == nil || !strings.Contains(err.Error(), "larger than 64 MiB") {
		t.Errorf("error %v", err)
	}
	if f.requests() != 0 {
		t.Errorf("%d requests reached the server", f.requests())
	}
}

// TestTextNotText: a blob labelled text/plain that is not text to its end
// (a journal's, a host's) is refused before any request, by Chat
// Completions and by Responses.
func TestTextNotText(t *testing.T) {
	s := store(t)
	for _, fl := range filetest.NotText(t, s) {
		f := newFake(t, okAnswer)
		_, err := newModel(t, f, nil).Complete(t.Context(), fileRequest(s, text("Look: "), file(fl)))
		if !filetest.NotTextError(err, fl) || f.requests() != 0 {
			t.Errorf("chat, %s: %d requests sent, error %v", fl.Name, f.requests(), err)
		}
		r := newResponsesFake(t, okResponse)
		_, err = newResponsesModel(t, r, nil).Complete(t.Context(), fileRequest(s, text("Look: "), file(fl)))
		if !filetest.NotTextError(err, fl) || r.requests() != 0 {
			t.Errorf("responses, %s: %d requests sent, error %v", fl.Name, r.requests(), err)
		}
	}
}
