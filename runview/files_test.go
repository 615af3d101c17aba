package runview

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"golang.org/x/net/html"

	"agentc.dev/agentc/cost"
	"agentc.dev/agentc/internal/leaf/userfile"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/filestore"
)

// filesCase is an agent given three pictures, which the fake server
// answers at once.
const filesCase = `-- agent.cue --
name: "reader"
model: {provider: "openai", name: "gpt-test-1"}
instructions: "Read the pictures."
prompt: "Compare {{.scan}} with {{.photo}} and {{.lost}}."
input: schema: {
	type: "object"
	required: ["scan", "photo", "lost"]
	properties: {
		scan: {type: "string", contentEncoding: "base64", contentMediaType: "image/png"}
		photo: {type: "string", contentEncoding: "base64", contentMediaType: "image/png"}
		lost: {type: "string", contentEncoding: "base64", contentMediaType: "image/png"}
	}
}
output: {description: "The verdict.", schema: {type: "object", properties: ok: {type: "boolean"}, required: ["ok"]}}
budgets: deadline: "60s"
-- fake.json --
{"Read the pictures.": [{"ms": 40, "answer": {"ok": true}, "usage": {"prompt_tokens": 900, "completion_tokens": 10}}]}
-- approvals.json --
{}
`

// scanName is the scan's file name as it was handed in: markup, which
// the page must show as text.
const scanName = `<script>alert(1)<script>.png`

// pngOf is a real PNG of w×h pixels of one colour.
func pngOf(t *testing.T, w, h int, c color.NRGBA) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.SetNRGBA(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// card is what a file's card on the page shows, its attributes and text
// unescaped.
type card struct {
	src, alt string
	facts    map[string]string // by the dd's class
	note     string
}

// cards reads the file cards of a page, in order.
func cards(t *testing.T, page string) []card {
	t.Helper()
	var out []card
	z := html.NewTokenizer(strings.NewReader(page))
	depth, field := 0, ""
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return out
		}
		tok := z.Token()
		class := ""
		for _, a := range tok.Attr {
			if a.Key == "class" {
				class = a.Val
			}
		}
		switch tt {
		case html.StartTagToken, html.SelfClosingTagToken:
			if tok.Data == "div" && class == "file" {
				out = append(out, card{facts: map[string]string{}})
				depth = 1
				continue
			}
			if depth == 0 {
				continue
			}
			c := &out[len(out)-1]
			switch {
			case tok.Data == "img":
				for _, a := range tok.Attr {
					switch a.Key {
					case "src":
						c.src = a.Val
					case "alt":
						c.alt = a.Val
					}
				}
			case tok.Data == "dd":
				field = class
			case tok.Data == "p" && strings.Contains(class, "filenote"):
				field = "note"
			}
			if tok.Data == "div" {
				depth++
			}
		case html.EndTagToken:
			if depth == 0 {
				continue
			}
			if tok.Data == "div" {
				depth--
			}
			if tok.Data == "dd" || tok.Data == "p" {
				field = ""
			}
		case html.TextToken:
			if depth == 0 || field == "" {
				continue
			}
			c := &out[len(out)-1]
			if field == "note" {
				c.note += tok.Data
			} else {
				c.facts[field] += tok.Data
			}
		}
	}
}

// TestFiles records a run given three pictures, then shows its page:
// each file is a card naming its input, file name, media type, size and
// digest, escaped; the picture whose bytes are in the store beside the
// journal is on the page whole as a data: URL; one whose stored bytes
// were changed, one no longer in the store, one whose blob became a link
// out of the store, and one past MaxImage are cards without an image,
// saying why.
func TestFiles(t *testing.T) {
	ar := txtar.Parse([]byte(filesCase))
	scan := pngOf(t, 3, 2, color.NRGBA{R: 200, A: 255})
	photo := pngOf(t, 2, 2, color.NRGBA{G: 200, A: 255})
	lost := pngOf(t, 1, 1, color.NRGBA{B: 200, A: 255})
	var blobs []filestore.Blob
	j, rep, file := recordInput(t, ar, cost.Embedded(),
		func(s *filestore.Store) json.RawMessage {
			for _, b := range [][]byte{scan, photo, lost} {
				blob, err := s.Put(bytes.NewReader(b), 1<<20)
				if err != nil {
					t.Fatal(err)
				}
				blobs = append(blobs, blob)
			}
			in, _ := json.Marshal(map[string]any{
				"scan":  map[string]string{"digest": blobs[0].Digest, "file_name": scanName},
				"photo": map[string]string{"digest": blobs[1].Digest, "file_name": "photo.png"},
				"lost":  map[string]string{"digest": blobs[2].Digest},
			})
			return in
		})
	if rep.Outcome != agentrt.OutcomeOK {
		t.Fatalf("the run: %s %s", rep.Outcome, rep.Error)
	}
	store := StoreBeside(file)
	if store == nil || store.Dir() != file+".files" {
		t.Fatalf("the store beside %s: %v", file, store)
	}
	blobPath := func(i int) string {
		return filepath.Join(store.Dir(), strings.TrimPrefix(blobs[i].Digest, filestore.Prefix))
	}
	// The photo's stored bytes changed: one byte of its pixels.
	if err := os.Chmod(blobPath(1), 0o644); err != nil {
		t.Fatal(err)
	}
	changed := bytes.Clone(photo)
	changed[len(changed)-20] ^= 0xff
	if err := os.WriteFile(blobPath(1), changed, 0o644); err != nil {
		t.Fatal(err)
	}
	// The third gone.
	if err := os.Remove(blobPath(2)); err != nil {
		t.Fatal(err)
	}

	page := func() string {
		t.Helper()
		p, err := Build(j, rep, nil, store)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := p.Write(&buf); err != nil {
			t.Fatal(err)
		}
		checkHTML(t, buf.String())
		return buf.String()
	}
	html := page()
	got := cards(t, html)
	if len(got) != 3 {
		t.Fatalf("the page has %d file cards, want 3:\n%s", len(got), html)
	}
	want := []struct {
		input, name, size, src, note string
	}{
		{"scan", scanName, userfile.About(int64(len(scan))), "data:image/png;base64," + base64.StdEncoding.EncodeToString(scan), ""},
		{"photo", "photo.png", userfile.About(int64(len(photo))), "", "do not read as the file's"},
		{"lost", "", userfile.About(int64(len(lost))), "", "not in the store beside the journal"},
	}
	for i, w := range want {
		c := got[i]
		if c.facts["input"] != w.input || c.facts["filename"] != w.name || c.facts["mediatype"] != "image/png" ||
			c.facts["size"] != w.size || c.facts["digest"] != blobs[i].Digest {
			t.Errorf("card %d shows %v, want input %q, file %q, image/png, %s, %s", i, c.facts, w.input, w.name, w.size, blobs[i].Digest)
		}
		if c.src != w.src {
			t.Errorf("card %d's image is %.60q, want %.60q", i, c.src, w.src)
		}
		if w.note == "" && c.note != "" || !strings.Contains(c.note, w.note) {
			t.Errorf("card %d's note is %q, want one saying %q", i, c.note, w.note)
		}
	}
	if title := fmt.Sprintf(`<dd class="size" title="%d bytes">`, len(scan)); !strings.Contains(html, title) {
		t.Errorf("the page does not hold %s", title)
	}
	if got[0].alt != "scan: "+scanName {
		t.Errorf("the image's alt text is %q", got[0].alt)
	}
	// The file name's markup is text: escaped wherever it stands, never
	// an element.
	if strings.Contains(html, "<script>alert") || !strings.Contains(html, `<dd class="filename">&lt;script&gt;alert(1)&lt;script&gt;.png</dd>`) ||
		!strings.Contains(html, `alt="scan: &lt;script&gt;alert(1)&lt;script&gt;.png"`) {
		t.Errorf("the file name is not escaped on the page")
	}
	// The image's bytes are the run's, as given: no other image of them.
	if strings.Count(html, "data:image/") != 1 || !strings.Contains(html, `src="data:image/png;base64,`) {
		t.Errorf("the page holds %d data: images, want the scan's alone", strings.Count(html, "data:image/"))
	}
	// The text around the files, in order.
	if i, k := strings.Index(html, "<pre>Compare </pre>"), strings.Index(html, `<div class="file">`); i < 0 || k < i ||
		!strings.Contains(html, "<pre> with </pre>") || !strings.Contains(html, "<pre> and </pre>") {
		t.Errorf("the message's texts are not shown around its files")
	}

	// The scan's blob a link to a file outside the store holding the same
	// bytes: not read, though they are the digest's.
	outside := filepath.Join(t.TempDir(), "scan.png")
	if err := os.WriteFile(outside, scan, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(blobPath(0), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(blobPath(0)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, blobPath(0)); err != nil {
		t.Fatal(err)
	}
	if c := cards(t, page())[0]; c.src != "" || !strings.Contains(c.note, "not a regular file in the store") {
		t.Errorf("a link out of the store: image %.40q, note %q", c.src, c.note)
	}

	// Back in the store, but past MaxImage; then past MaxImages.
	if err := os.Remove(blobPath(0)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(blobPath(0), scan, 0o444); err != nil {
		t.Fatal(err)
	}
	if c := cards(t, page())[0]; c.src == "" {
		t.Fatalf("the scan back in the store is not shown: %q", c.note)
	}
	for _, bound := range []*int64{&MaxImage, &MaxImages} {
		old := *bound
		*bound = int64(len(scan)) - 1
		c := cards(t, page())[0]
		*bound = old
		if c.src != "" || !strings.Contains(c.note, "too large to show") {
			t.Errorf("an image past its bound: image %.40q, note %q", c.src, c.note)
		}
	}

	// Without a store, each file is a card saying so.
	p, err := Build(j, rep, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	for i, c := range cards(t, buf.String()) {
		if c.src != "" || c.note != "not in the store beside the journal" || c.facts["digest"] != blobs[i].Digest {
			t.Errorf("no store: card %d: image %.40q, note %q, %v", i, c.src, c.note, c.facts)
		}
	}
}

// TestFileDigestNamesNoPath: a digest not in the store's form is never
// looked up, nor is a file whose blob is in no store.
func TestFileDigestNamesNoPath(t *testing.T) {
	dir := t.TempDir()
	store, err := filestore.Open(filepath.Join(dir, "files"))
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, "secret.png")
	if err := os.WriteFile(secret, pngOf(t, 1, 1, color.NRGBA{A: 255}), 0o644); err != nil {
		t.Fatal(err)
	}
	b := &builder{files: store, images: map[string]stored{}}
	for _, d := range []string{"blake3:../secret.png", "../secret.png", "blake3:" + strings.Repeat("A", 64), ""} {
		f := b.file(agentrt.File{Name: "doc", MediaType: "image/png", Size: 10, Digest: d})
		if f.Thumbnail != "" || !strings.Contains(f.Note, "not a file digest") {
			t.Errorf("digest %q: image %.40q, note %q", d, f.Thumbnail, f.Note)
		}
	}
}

// TestStoreBeside: a run's journal has its store at FILE.files, a
// batch's journals theirs in the directory's files.
func TestStoreBeside(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run.jsonl")
	if s := StoreBeside(run); s != nil {
		t.Errorf("no store: got %s", s.Dir())
	}
	if err := os.Mkdir(run+".files", 0o755); err != nil {
		t.Fatal(err)
	}
	if s := StoreBeside(run); s == nil || s.Dir() != run+".files" {
		t.Errorf("a run's store: got %v", s)
	}
	batch := filepath.Join(dir, "batch")
	if err := os.MkdirAll(filepath.Join(batch, "files"), 0o755); err != nil {
		t.Fatal(err)
	}
	if s := StoreBeside(filepath.Join(batch, "000001-0123456789abcdef.jsonl")); s == nil || s.Dir() != filepath.Join(batch, "files") {
		t.Errorf("a batch's store: got %v", s)
	}
	// A file where the store would be is none.
	other := filepath.Join(dir, "other.jsonl")
	if err := os.WriteFile(other+".files", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if s := StoreBeside(other); s != nil {
		t.Errorf("a file named as a store: got %s", s.Dir())
	}
	// A link where the store would be is not followed, wherever it leads
	// (agentc run refuses one there): the page reads nothing through it.
	linked := filepath.Join(dir, "linked.jsonl")
	if err := os.Symlink(run+".files", linked+".files"); err != nil {
		t.Fatal(err)
	}
	if s := StoreBeside(linked); s != nil {
		t.Errorf("a link named as a store: got %s", s.Dir())
	}
}
