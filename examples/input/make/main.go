// Command make writes the example documents of examples/input: a one-page
// PDF of invoice 2041 (invoice-2041.pdf) and a picture of the same invoice
// (invoice-2041.png, and a JPEG of it, invoice-2041.jpg). Every byte comes
// from this program, so the files are the repository's own:
//
//	go run ./examples/input/make
//
// The PDF is PDF 1.4 written by hand: one page, Helvetica, a cross-reference
// table with the objects' true offsets. The picture is drawn with a 5×7
// bitmap font defined below, scaled up, in black on an off-white page.
package main

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"log"
	"os"
	"path/filepath"
	"strings"
)

// lines are the invoice as printed, top to bottom.
var lines = []string{
	"ACME GMBH",
	"INVOICE 2041",
	"DATE 2026-11-02",
	"1 X WIDGET SERVICE  EUR 100.84",
	"VAT 19%             EUR  19.16",
	"TOTAL               EUR 120.00",
}

func main() {
	dir := filepath.Join("examples", "input")
	write(filepath.Join(dir, "invoice-2041.pdf"), pdf())
	img := picture()
	var p, j bytes.Buffer
	if err := png.Encode(&p, img); err != nil {
		log.Fatal(err)
	}
	if err := jpeg.Encode(&j, img, &jpeg.Options{Quality: 80}); err != nil {
		log.Fatal(err)
	}
	write(filepath.Join(dir, "invoice-2041.png"), p.Bytes())
	write(filepath.Join(dir, "invoice-2041.jpg"), j.Bytes())
}

func write(path string, b []byte) {
	if err := os.WriteFile(path, b, 0o644); err != nil {
		log.Fatal(err)
	}
}

// pdf is the invoice as a one-page PDF.
func pdf() []byte {
	var text strings.Builder
	text.WriteString("BT /F1 14 Tf 72 760 Td 18 TL\n")
	for _, l := range lines {
		fmt.Fprintf(&text, "(%s) Tj T*\n", l)
	}
	text.WriteString("ET\n")
	objects := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", text.Len(), text.String()),
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objects))
	for i, o := range objects {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objects)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objects)+1, xref)
	return b.Bytes()
}

// picture is the invoice drawn on a page.
func picture() image.Image {
	const scale, pad = 3, 24
	width := 0
	for _, l := range lines {
		width = max(width, len(l))
	}
	w := pad*2 + width*6*scale
	h := pad*2 + len(lines)*10*scale
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = 0xf4
	}
	for row, l := range lines {
		for col, c := range l {
			g, ok := font[c]
			if !ok {
				log.Fatalf("no glyph for %q", c)
			}
			for y, bits := range g {
				for x := range 5 {
					if bits&(1<<(4-x)) == 0 {
						continue
					}
					for dy := range scale {
						for dx := range scale {
							img.SetGray(pad+(col*6+x)*scale+dx, pad+(row*10+y)*scale+dy, color.Gray{Y: 0x10})
						}
					}
				}
			}
		}
	}
	return img
}

// font is a 5×7 bitmap font of the characters the invoice uses: each row a
// byte whose low five bits are the pixels, left to right.
var font = map[rune][7]byte{
	' ': {},
	'.': {0, 0, 0, 0, 0, 0x0c, 0x0c},
	'-': {0, 0, 0, 0x1f, 0, 0, 0},
	'%': {0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03},
	'0': {0x0e, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0e},
	'1': {0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e},
	'2': {0x0e, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1f},
	'4': {0x02, 0x06, 0x0a, 0x12, 0x1f, 0x02, 0x02},
	'6': {0x06, 0x08, 0x10, 0x1e, 0x11, 0x11, 0x0e},
	'8': {0x0e, 0x11, 0x11, 0x0e, 0x11, 0x11, 0x0e},
	'9': {0x0e, 0x11, 0x11, 0x0f, 0x01, 0x02, 0x0c},
	'A': {0x0e, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11},
	'B': {0x1e, 0x11, 0x11, 0x1e, 0x11, 0x11, 0x1e},
	'C': {0x0e, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0e},
	'D': {0x1c, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1c},
	'E': {0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x1f},
	'G': {0x0e, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0f},
	'H': {0x11, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11},
	'I': {0x0e, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0e},
	'L': {0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1f},
	'M': {0x11, 0x1b, 0x15, 0x15, 0x11, 0x11, 0x11},
	'N': {0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11},
	'O': {0x0e, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e},
	'R': {0x1e, 0x11, 0x11, 0x1e, 0x14, 0x12, 0x11},
	'S': {0x0f, 0x10, 0x10, 0x0e, 0x01, 0x01, 0x1e},
	'T': {0x1f, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04},
	'U': {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e},
	'V': {0x11, 0x11, 0x11, 0x11, 0x11, 0x0a, 0x04},
	'W': {0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0a},
	'X': {0x11, 0x11, 0x0a, 0x04, 0x0a, 0x11, 0x11},
	'Y': {0x11, 0x11, 0x0a, 0x04, 0x04, 0x04, 0x04},
}
