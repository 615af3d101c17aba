package testmodel

import (
	"bytes"
	"encoding/base64"
	"image"
	_ "image/gif"
	_ "image/jpeg"
	_ "image/png"
	"slices"
	"strconv"
	"strings"
	"testing"

	"agentc.dev/agentc/plan"
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
