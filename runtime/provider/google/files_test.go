package google

import (
	"bytes"
	"encoding/json"
	"image/jpeg"
	"image/png"
	"io"
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

func fileRequest(fr agentrt.FileReader, parts ...agentrt.Part) *agentrt.Request {
	return &agentrt.Request{
		Model:    "gemini-test",
		Files:    fr,
		Messages: []agentrt.Message{{Role: agentrt.System, Content: "Read the files."}, {Role: agentrt.User, Parts: parts}},
	}
}

func text(s string) agentrt.Part        { return agentrt.Part{Text: s} }
func file(f *agentrt.File) agentrt.Part { return agentrt.Part{File: f} }

// TestFilesSent: images, PDFs and text go as inline data, in order among
// the text, with the exact bytes stored.
func TestFilesSent(t *testing.T) {
	s := store(t)
	pngData, jpegData, pdfData := pngBytes(t), jpegBytes(t), pdfBytes()
	txtData := []byte(filetest.PlainText)
	pngF := put(t, s, "photo", "photo.png", pngData, "image/png")
	jpegF := put(t, s, "scan", "scan.jpg", jpegData, "image/jpeg")
	pdfF := put(t, s, "invoice", "invoice.pdf", pdfData, "application/pdf")
	txtF := put(t, s, "notes", "notes.txt", txtData, "text/plain")

	f := newFake(t, okAnswer)
	resp, err := newModel(t, f, nil).Complete(t.Context(), fileRequest(s,
		text("Compare "), file(pngF), text(" with "), file(jpegF), text(", then read "), file(pdfF), text(" and "), file(txtF)))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "Paris." || f.requests() != 1 {
		t.Fatalf("answer %q after %d requests", resp.Message.Content, f.requests())
	}
	contents := f.request(0).Contents
	if len(contents) != 1 || contents[0].Role != "user" {
		t.Fatalf("contents = %+v", contents)
	}
	parts := contents[0].Parts
	want := []struct {
		text string
		mt   string
		data []byte
	}{
		{text: "Compare "}, {mt: "image/png", data: pngData}, {text: " with "}, {mt: "image/jpeg", data: jpegData},
		{text: ", then read "}, {mt: "application/pdf", data: pdfData}, {text: " and "}, {mt: "text/plain", data: txtData},
	}
	if len(parts) != len(want) {
		t.Fatalf("%d parts, want %d", len(parts), len(want))
	}
	for i, w := range want {
		p := parts[i]
		if w.mt == "" {
			if p.Text != w.text || p.InlineData != nil {
				t.Errorf("part %d = %+v, want the text %q", i, p, w.text)
			}
			continue
		}
		// The fake decoded the base64: these are the bytes the server got.
		if p.InlineData == nil || p.InlineData.MIMEType != w.mt || !bytes.Equal(p.InlineData.Data, w.data) {
			t.Errorf("part %d: not the %s stored", i, w.mt)
		}
	}
	if _, err := png.Decode(bytes.NewReader(parts[1].InlineData.Data)); err != nil {
		t.Errorf("the PNG sent does not decode: %v", err)
	}
	if _, err := jpeg.Decode(bytes.NewReader(parts[3].InlineData.Data)); err != nil {
		t.Errorf("the JPEG sent does not decode: %v", err)
	}
}

// TestFileRefused: files the request cannot carry fail Complete before any
// request, with an error that says which file and why.
func TestFileRefused(t *testing.T) {
	s := store(t)
	big := putReader(t, s, "poster", "poster.png", io.MultiReader(bytes.NewReader(pngBytes(t)), io.LimitReader(zeros{}, 7<<20+1-int64(len(pngBytes(t))))), "image/png")
	pngF := put(t, s, "photo", "photo.png", pngBytes(t), "image/png")
	gif := &agentrt.File{Name: "anim", FileName: "anim.gif", MediaType: "image/gif", Size: pngF.Size, Digest: pngF.Digest}
	tamperedPNG := put(t, s, "altered", "altered.png", append(pngBytes(t), "trailing bytes to alter"...), "image/png")
	tamper(t, s, tamperedPNG)
	tamperedPDF := put(t, s, "forged", "forged.pdf", pdfBytes(), "application/pdf")
	tamper(t, s, tamperedPDF)
	tamperedText := put(t, s, "edited", "edited.txt", []byte(filetest.PlainText+"and a third line\n"), "text/plain")
	tamper(t, s, tamperedText)
	for _, c := range []struct {
		name  string
		files agentrt.FileReader
		file  *agentrt.File
		want  []string
	}{
		{"too large", s, big, []string{"poster", "7 MiB", "image/png"}},
		{"media type not taken", s, gif, []string{"anim", "google does not take image/gif"}},
		{"tampered image", s, tamperedPNG, []string{"altered", "the store was changed"}},
		{"tampered pdf", s, tamperedPDF, []string{"forged", "the store was changed"}},
		{"tampered text", s, tamperedText, []string{"edited", "the store was changed"}},
		{"no file store", nil, pngF, []string{"photo", "no file store"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t, okAnswer)
			_, err := newModel(t, f, nil).Complete(t.Context(), fileRequest(c.files, text("Look: "), file(c.file)))
			if err == nil {
				t.Fatal("Complete succeeded")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if n := strings.Count(err.Error(), "google:"); n != 1 {
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

// TestToolFilesSent: the files tools returned follow the turn's function
// responses, each named by its tool; one Gemini does not take stays text.
func TestToolFilesSent(t *testing.T) {
	s := store(t)
	pngData := pngBytes(t)
	pngF := put(t, s, "camera", "", pngData, "image/png")
	gif := &agentrt.File{Name: "camera", MediaType: "image/gif", Size: 4, Digest: pngF.Digest}
	f := newFakeAt(t, "/v1beta/models/gemini-2.5-flash:generateContent", okAnswer)
	req := &agentrt.Request{Model: "gemini-2.5-flash", Files: s, Messages: []agentrt.Message{
		{Role: agentrt.User, Content: "Take two pictures."},
		{Role: agentrt.Assistant, ToolCalls: []agentrt.ToolCall{{ID: "c1", Name: "camera", Arguments: json.RawMessage(`{}`)}, {ID: "c2", Name: "camera", Arguments: json.RawMessage(`{}`)}}},
		{Role: agentrt.ToolRole, ToolCallID: "c1", Name: "camera", Content: "[image content: image/png]", Parts: []agentrt.Part{file(pngF)}},
		{Role: agentrt.ToolRole, ToolCallID: "c2", Name: "camera", Content: "[image content: image/gif]", Parts: []agentrt.Part{file(gif)}},
	}}
	if _, err := newModel(t, f, nil).Complete(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	contents := f.request(0).Contents
	if len(contents) != 3 {
		t.Fatalf("%d contents, want 3", len(contents))
	}
	parts := contents[2].Parts
	if len(parts) != 4 || parts[0].FunctionResponse == nil || parts[1].FunctionResponse == nil {
		t.Fatalf("results turn = %s", must(json.Marshal(parts)))
	}
	for i, want := range []string{"[image content: image/png]", "[image content: image/gif]"} {
		if got := parts[i].FunctionResponse.Response["content"]; got != want || parts[i].FunctionResponse.ID != []string{"c1", "c2"}[i] {
			t.Errorf("result %d = %+v", i, parts[i].FunctionResponse)
		}
	}
	if parts[2].Text != "The tool camera returned this file (image/png):" {
		t.Errorf("part 2 = %q", parts[2].Text)
	}
	if d := parts[3].InlineData; d == nil || d.MIMEType != "image/png" || !bytes.Equal(d.Data, pngData) {
		t.Errorf("part 3 is not the PNG the tool returned: %+v", parts[3])
	}
}

func must(b []byte, _ error) []byte { return b }

// TestTextNotText: a blob labelled text/plain that is not text to its end
// (a journal's, a host's) is refused before any request, never sent as
// inline text/plain data.
func TestTextNotText(t *testing.T) {
	s := store(t)
	for _, fl := range filetest.NotText(t, s) {
		f := newFake(t, okAnswer)
		_, err := newModel(t, f, nil).Complete(t.Context(), fileRequest(s, text("Look: "), file(fl)))
		if !filetest.NotTextError(err, fl) || f.requests() != 0 {
			t.Errorf("%s: %d requests sent, error %v", fl.Name, f.requests(), err)
		}
	}
}

// TestTextBOM: a text file goes without the byte order mark it begins
// with, as every provider sends one, whatever chunks it is read in.
func TestTextBOM(t *testing.T) {
	s := store(t)
	small := put(t, s, "note", "note.txt", []byte("\ufeff"+filetest.BOMBody), "text/plain")
	long := filetest.EscapedText()
	big := put(t, s, "log", "log.txt", long, "text/plain")
	f := newFake(t, okAnswer)
	if _, err := newModel(t, f, nil).Complete(t.Context(), fileRequest(s, file(small), file(big))); err != nil {
		t.Fatal(err)
	}
	parts := f.request(0).Contents[0].Parts
	if len(parts) != 2 || string(parts[0].InlineData.Data) != filetest.BOMBody || !bytes.Equal(parts[1].InlineData.Data, long[3:]) {
		t.Errorf("the text sent is not the files' without their byte order marks: %d parts", len(parts))
	}
}
