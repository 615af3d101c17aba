package runview

import (
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"strings"

	"agentc.dev/agentc/internal/leaf/userfile"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/filestore"
)

// MaxImage bounds an image the page shows: a larger one is shown as its
// card alone. MaxImages bounds the bytes of all the images a page holds.
var (
	MaxImage  int64 = 2 << 20
	MaxImages int64 = 32 << 20
)

// Notes on a file's card.
const (
	noteMissing  = "not in the store beside the journal"
	noteTooLarge = "too large to show"
)

// images are the media types the page shows as images.
var images = map[string]bool{"image/gif": true, "image/jpeg": true, "image/png": true, "image/webp": true}

// StoreBeside returns the file store beside the journal at path, where
// agentc run --record keeps the files a run is given: path.files for a
// run's journal, else the directory files beside it, the store of a
// batch's journals (agentc run --batch --record DIR keeps them in
// DIR/files). It returns nil when neither is a directory. A link at
// either name is not a store: agentc run refuses one there, and the page
// reads nothing where one leads (filestore.OpenOwn).
func StoreBeside(path string) *filestore.Store {
	for _, dir := range []string{path + ".files", filepath.Join(filepath.Dir(path), "files")} {
		if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
			continue
		}
		if s, err := filestore.OpenOwn(dir); err == nil {
			return s
		}
	}
	return nil
}

// stored is what the page found of a file in the store, by digest.
type stored struct {
	thumbnail template.URL
	size      int64 // the image's bytes
	note      string
}

// file is a file a message carries as its card shows it: an image the
// store holds, whose bytes are its digest's, is embedded whole as a data:
// URL, for the browser to scale; nothing is decoded here. A digest not in
// the store's form names no path, and only a regular file in the store's
// directory is read: never a link, whatever it points to.
func (b *builder) file(f agentrt.File) File {
	out := File{Name: f.Name, FileName: f.FileName, MediaType: f.MediaType, Size: f.Size, Digest: f.Digest}
	s, ok := b.images[f.Digest]
	if !ok {
		s = b.lookup(f)
		b.images[f.Digest] = s
	}
	out.Note = s.note
	if s.thumbnail != "" {
		if b.embedded+s.size > MaxImages {
			out.Note = fmt.Sprintf("%s: the page holds %s of images already", noteTooLarge, userfile.About(b.embedded))
			return out
		}
		b.embedded += s.size
		out.Thumbnail = s.thumbnail
	}
	return out
}

func (b *builder) lookup(f agentrt.File) stored {
	if err := filestore.CheckDigest(f.Digest); err != nil {
		return stored{note: "its digest is not a file digest: not looked up"}
	}
	if b.files == nil {
		return stored{note: noteMissing}
	}
	fi, err := os.Lstat(filepath.Join(b.files.Dir(), strings.TrimPrefix(f.Digest, filestore.Prefix)))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return stored{note: noteMissing}
	case err != nil:
		return stored{note: "the store beside the journal could not be read"}
	case !fi.Mode().IsRegular():
		return stored{note: "not a regular file in the store beside the journal: not read"}
	case !images[f.MediaType]:
		return stored{}
	case fi.Size() > MaxImage:
		return stored{note: fmt.Sprintf("%s: %s, and the page shows images of up to %s", noteTooLarge, userfile.About(fi.Size()), userfile.About(MaxImage))}
	}
	r, size, err := b.files.Open(f.Digest)
	if errors.Is(err, filestore.ErrNotStored) {
		return stored{note: noteMissing}
	}
	if err != nil {
		return stored{note: "not read: not a regular file in the store beside the journal"}
	}
	defer r.Close()
	if size > MaxImage {
		return stored{note: fmt.Sprintf("%s: %s, and the page shows images of up to %s", noteTooLarge, userfile.About(size), userfile.About(MaxImage))}
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxImage+1))
	switch {
	case err != nil:
		return stored{note: "the stored bytes do not read as the file's (their digest is another's, or a read failed): not shown"}
	case int64(len(data)) > MaxImage:
		return stored{note: fmt.Sprintf("%s: the page shows images of up to %s", noteTooLarge, userfile.About(MaxImage))}
	}
	sniffed := plan.SniffMediaType(data)
	if !images[sniffed] {
		return stored{note: "the stored bytes are not an image: not shown"}
	}
	s := stored{thumbnail: template.URL("data:" + sniffed + ";base64," + base64.StdEncoding.EncodeToString(data)), size: int64(len(data))}
	if sniffed != f.MediaType {
		s.note = "the stored bytes are " + sniffed
	}
	return s
}
