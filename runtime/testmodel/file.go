package testmodel

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
)

// samples are small real files of each media type a file input may
// declare (plan.FileMediaTypes), in base64: a 1×1 PNG, JPEG, GIF and WebP,
// a one-page PDF and a line of text.
var samples = map[string]string{
	"image/png":       "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNiAAAABgADNjd8qAAAAABJRU5ErkJggg==",
	"image/jpeg":      "/9j/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHRofHh0aHBwgJC4nICIsIxwcKDcpLDAxNDQ0Hyc5PTgyPC4zNDL/wAALCAABAAEBAREA/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/9oACAEBAAA/APn+v//Z",
	"image/gif":       "R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==",
	"image/webp":      "UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==",
	"application/pdf": base64.StdEncoding.EncodeToString(samplePDF()),
	"text/plain":      base64.StdEncoding.EncodeToString([]byte("example text\n")),
}

// samplePDF is a one-page PDF, its cross-reference table at the objects'
// true offsets.
func samplePDF() []byte {
	objects := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>",
	}
	b := []byte("%PDF-1.4\n")
	var xref []byte
	for i, o := range objects {
		xref = fmt.Appendf(xref, "%010d 00000 n \n", len(b))
		b = fmt.Appendf(b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	at := len(b)
	b = fmt.Appendf(b, "xref\n0 %d\n0000000000 65535 f \n%strailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objects)+1, xref, len(objects)+1, at)
	return b
}

// file returns, for a string in base64 of declared media types (a file
// input: contentEncoding base64 with a contentMediaType, or an anyOf of
// them), a small real file of the first, in base64. The content keywords
// are read from the schema document: compiled, they are annotations the
// validator keeps nothing of.
func (g *gen) file(atoms []*jsonschema.Schema) (string, bool) {
	encoded := false
	var types []string
	for _, a := range atoms {
		m, ok := g.at(a.Location).(map[string]any)
		if !ok {
			continue
		}
		if m["contentEncoding"] == "base64" {
			encoded = true
		}
		if mt, ok := m["contentMediaType"].(string); ok {
			types = append(types, mt)
		}
		for _, k := range []string{"anyOf", "oneOf"} {
			list, _ := m[k].([]any)
			for _, b := range list {
				if bm, ok := b.(map[string]any); ok {
					if mt, ok := bm["contentMediaType"].(string); ok {
						types = append(types, mt)
					}
				}
			}
		}
	}
	if !encoded {
		return "", false
	}
	for _, t := range types {
		f := plan.FileField{MediaTypes: []string{t}}
		for _, mt := range f.Expand() {
			if s, ok := samples[mt]; ok {
				return s, true
			}
		}
	}
	return "", false
}

// at is the value of the schema document a compiled schema's location
// points at, or nil.
func (g *gen) at(location string) any {
	_, frag, ok := strings.Cut(location, "#")
	if !ok {
		return nil
	}
	v := g.doc
	if frag == "" {
		return v
	}
	for _, tok := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch x := v.(type) {
		case map[string]any:
			v = x[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// facts are what the files a request carries say of themselves — their
// names, sizes, media types and digests — under the member names an
// output schema may give such fields, normalised by factKey. The test
// model fills a member so named with its fact where the member's schema
// accepts it: the one part of an answer it does not make up.
type facts map[string]any

// factNames lists, per fact, the last words of the member names that ask
// for it. A member is named by a word alone (bare) or after a prefix: the
// file input's own name ("document_size"), "file", "source" or "input".
var factNames = []struct {
	fact  string
	words []string
	bare  []string // the words that name the fact without a prefix
}{
	{"name", []string{"name", "filename"}, []string{"filename"}},
	{"size", []string{"size", "bytes", "sizebytes", "sizeinbytes", "bytecount"}, []string{"sizebytes", "sizeinbytes", "bytecount"}},
	{"media_type", []string{"mediatype", "mimetype", "contenttype", "type"}, []string{"mediatype", "mimetype", "contenttype"}},
	{"digest", []string{"digest", "blake3", "hash", "checksum"}, []string{"digest", "blake3", "checksum"}},
}

// fileFacts reads the facts of the files in req's messages; where two
// files answer to one name, the first in the conversation does.
func fileFacts(req *agentrt.Request) facts {
	f := facts{}
	put := func(k string, v any) {
		if _, ok := f[k]; !ok && v != nil {
			f[k] = v
		}
	}
	for _, msg := range req.Messages {
		for _, p := range msg.Parts {
			if p.File == nil {
				continue
			}
			values := map[string]any{
				"size":       json.Number(strconv.FormatInt(p.File.Size, 10)),
				"media_type": p.File.MediaType,
				"digest":     p.File.Digest,
			}
			if p.File.FileName != "" {
				values["name"] = p.File.FileName
			}
			prefixes := []string{"file", "source", "input"}
			if n := factKey(p.File.Name); n != "" {
				prefixes = append([]string{n, n + "file"}, prefixes...)
			}
			for _, fn := range factNames {
				v := values[fn.fact]
				for _, w := range fn.words {
					for _, pre := range prefixes {
						put(pre+w, v)
					}
				}
				for _, w := range fn.bare {
					put(w, v)
				}
			}
		}
	}
	if len(f) == 0 {
		return nil
	}
	return f
}

// factKey is a member name as facts are keyed: lower case, letters and
// digits only, so file_name, fileName and file-name are one.
func factKey(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// fact returns the fact for the member whose value is being built at
// depth, if the request's files have one.
func (g *gen) fact(depth int) (any, bool) {
	if g.facts == nil || g.member == "" || depth != g.memberDepth {
		return nil, false
	}
	v, ok := g.facts[factKey(g.member)]
	return v, ok
}
