package testmodel

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	_ "image/gif"
	_ "image/jpeg"
	_ "image/png"
	"slices"
	"strconv"
	"strings"
	"testing"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
)

// Every sample is a real file of its media type: agentc sniffs it as that
// type, and the images decode.
func TestSamples(t *testing.T) {
	for _, mt := range plan.FileMediaTypes {
		s, ok := samples[mt]
		if !ok {
			t.Errorf("no sample of %s", mt)
			continue
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Errorf("%s: %v", mt, err)
			continue
		}
		if got := plan.SniffMediaType(b); got != mt {
			t.Errorf("the %s sample sniffs as %q", mt, got)
		}
		if strings.HasPrefix(mt, "image/") && mt != "image/webp" {
			if _, format, err := image.Decode(bytes.NewReader(b)); err != nil || "image/"+format != mt {
				t.Errorf("the %s sample decodes as %q: %v", mt, format, err)
			}
		}
	}
	pdf := samplePDF()
	at := bytes.Index(pdf, []byte("\nxref\n")) + 1
	if !bytes.HasSuffix(pdf, []byte("startxref\n"+itoa(at)+"\n%%EOF\n")) {
		t.Errorf("the PDF's startxref is not its table's offset %d:\n%s", at, pdf)
	}
	for i, want := range []string{"1 0 obj", "2 0 obj", "3 0 obj"} {
		off := bytes.Index(pdf, []byte(want))
		line := []byte(strings.Repeat("0", 10-len(itoa(off))) + itoa(off) + " 00000 n ")
		if !bytes.Contains(pdf, line) {
			t.Errorf("object %d at %d is not in the table", i+1, off)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// A file input's value is a sample of its first declared type.
func TestSynthesizesFiles(t *testing.T) {
	for _, c := range []struct{ prop, want string }{
		{`{"type": "string", "contentEncoding": "base64", "contentMediaType": "image/png"}`, "image/png"},
		{`{"type": "string", "contentEncoding": "base64", "anyOf": [{"contentMediaType": "application/pdf"}, {"contentMediaType": "image/png"}]}`, "application/pdf"},
		{`{"type": "string", "contentEncoding": "base64", "oneOf": [{"contentMediaType": "image/*"}]}`, "image/gif"},
		{`{"type": "string", "contentEncoding": "base64", "contentMediaType": "text/plain"}`, "text/plain"},
	} {
		out, err := Synthesize([]byte(`{"type": "object", "required": ["f"], "properties": {"f": `+c.prop+`}}`), 0)
		if err != nil {
			t.Fatal(err)
		}
		s := string(out)
		s = strings.TrimSuffix(strings.TrimPrefix(s, `{"f":"`), `"}`)
		b, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(s, `\/`, "/"))
		if err != nil || plan.SniffMediaType(b) != c.want {
			t.Errorf("%s: got %s (%v), want a %s file", c.prop, out, err, c.want)
		}
	}
	if !slices.Contains(plan.FileMediaTypes, "image/gif") {
		t.Fatal("image/* expands to gif first")
	}
}

// An answer's members that ask for a file's name, size, media type or
// digest hold the request's file's own, where their schemas take them;
// other members, and those whose schemas refuse the fact, are made up as
// ever.
func TestAnswersWithFileFacts(t *testing.T) {
	const digest = "blake3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
	schema := `{"type":"object","additionalProperties":false,
		"required":["file_name","document_size","mime_type","digest","checksum","name","total","size","source_type"],
		"properties":{
			"file_name":{"type":"string"},
			"document_size":{"type":"integer","minimum":0},
			"mime_type":{"type":"string","pattern":"^[a-z]+/[a-z.+-]+$"},
			"digest":{"type":"string"},
			"checksum":{"type":"string","pattern":"^sha256:"},
			"name":{"type":"string"},
			"total":{"type":"number"},
			"size":{"type":"integer"},
			"source_type":{"enum":["scan","email"]}}}`
	file := &agentrt.File{Name: "document", FileName: "invoice-2041.pdf", MediaType: "application/pdf", Size: 2817, Digest: digest}
	msgs := []agentrt.Message{{Role: agentrt.User, Parts: []agentrt.Part{{Text: "The invoice:"}, {File: file}}}}
	for _, mode := range []string{"tool", "native"} {
		req := &agentrt.Request{Model: "test", Messages: msgs, ToolChoice: agentrt.ToolChoice{Mode: "auto"}}
		if mode == "tool" {
			req.Tools = []agentrt.ToolSpec{{Name: "answer", Schema: json.RawMessage(schema)}}
			req.OutputTool = "answer"
		} else {
			req.Answer = &agentrt.AnswerFormat{Mode: "native", Name: "answer", Schema: json.RawMessage(schema)}
		}
		resp := complete(t, Model{}, req)
		raw := resp.Message.Content
		if mode == "tool" {
			if len(resp.Message.ToolCalls) != 1 {
				t.Fatalf("%s: got %+v", mode, resp.Message)
			}
			raw = string(resp.Message.ToolCalls[0].Arguments)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(raw), &got); err != nil {
			t.Fatalf("%s: %v: %s", mode, err, raw)
		}
		want := map[string]any{
			"file_name": "invoice-2041.pdf", "document_size": float64(2817), "mime_type": "application/pdf",
			"digest": digest, "name": "example name", "size": float64(1), "source_type": "scan",
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s = %#v, want %#v", mode, k, got[k], v)
			}
		}
		if c, _ := got["checksum"].(string); !strings.HasPrefix(c, "sha256:") {
			t.Errorf("%s: checksum %q: the pattern refuses the digest, and the value must still meet it", mode, c)
		}
	}
	// Without files, nothing is taken for a fact.
	req := &agentrt.Request{Model: "test", Messages: []agentrt.Message{{Role: agentrt.User, Content: "Hi"}},
		Answer: &agentrt.AnswerFormat{Mode: "native", Name: "answer", Schema: json.RawMessage(schema)}}
	resp := complete(t, Model{}, req)
	if strings.Contains(resp.Message.Content, "invoice-2041") || strings.Contains(resp.Message.Content, "blake3:") {
		t.Errorf("an answer without files holds a file's facts: %s", resp.Message.Content)
	}
}
