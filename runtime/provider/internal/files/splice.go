package files

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"unicode/utf8"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
)

// A Splice sends the bytes of a request's files in base64 without holding
// them: the SDK is given a placeholder where each file's base64 goes (a
// JSON string no text can hold by chance, a random nonce in it), and the
// middleware streams the file from the store into the body in its place,
// as the request is sent. The SDKs encode a request's strings once per
// level of nesting, so a 10 MB file given to them whole costs some 160 MB
// of heap; spliced, it costs a buffer. Each file is read once whole,
// through the store's check of its digest, before its placeholder is
// given, so a file changed in the store is an error before any request.
type Splice struct {
	fr    agentrt.FileReader
	nonce string
	parts map[string]splicePart // by placeholder
}

type splicePart struct {
	f      *agentrt.File
	prefix string // written before the base64: "data:image/png;base64," or ""
	text   bool   // the file's text as a JSON string's contents, not base64
	length int64  // of what the part writes, the prefix included
}

// isText reports whether f is sent as a text file: checked to be text to
// its end, and its byte order mark dropped, however the API takes it.
func isText(f *agentrt.File) bool { return f.MediaType == "text/plain" }

// NewSplice returns a splice reading files from fr.
func NewSplice(fr agentrt.FileReader) *Splice {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return &Splice{fr: fr, nonce: hex.EncodeToString(b[:]), parts: map[string]splicePart{}}
}

// Base64 returns the placeholder that stands for f's bytes in base64. A
// text file is checked and sent as Text says, in base64.
func (s *Splice) Base64(f *agentrt.File) (string, error) {
	return s.add(splicePart{f: f})
}

// DataURL returns the placeholder that stands for f as a data: URL.
func (s *Splice) DataURL(f *agentrt.File) (string, error) {
	return s.add(splicePart{f: f, prefix: "data:" + f.MediaType + ";base64,"})
}

// Text returns the placeholder that stands for the text of f, a text
// file, as the contents of a JSON string: escaped as encoding/json
// escapes a string, a byte order mark at its start dropped. A file that
// is not text to its end (one stored before the store checked that) is
// an error, not sent.
func (s *Splice) Text(f *agentrt.File) (string, error) {
	return s.add(splicePart{f: f, text: true})
}

// add reads p's file once whole, through the store's check of its digest
// (and, for a text file, whichever way it is sent, a check that it is
// text), to know what the part will write, and returns its placeholder.
func (s *Splice) add(p splicePart) (string, error) {
	f := p.f
	if s.fr == nil {
		return "", fmt.Errorf("file %s: no file store to read it from", f.Name)
	}
	r, size, err := s.fr.Open(f.Digest)
	if err != nil {
		return "", fmt.Errorf("file %s: %w", f.Name, err)
	}
	if size != f.Size {
		// Refused unread: a blob of another size is not the file, and one
		// put in its place may be as large as the disk allows.
		r.Close()
		return "", fmt.Errorf("file %s: the store holds %d bytes under %s, not %d", f.Name, size, f.Digest, f.Size)
	}
	// A byte past the size, to reach the end, where the digest is
	// checked, and no more, whatever is appended meanwhile.
	in := io.LimitReader(r, f.Size+1)
	var n, length int64
	switch {
	case isText(f):
		sniff := &plan.Sniffer{}
		src := io.TeeReader(in, sniff)
		var enc io.Reader = &base64Reader{src: src, dropBOM: true}
		if p.text {
			enc = &textReader{src: src}
		}
		length, err = io.Copy(io.Discard, enc)
		length += int64(len(p.prefix))
		n = sniff.Size()
		if err == nil {
			err = checkText(sniff)
		}
	default:
		n, err = io.Copy(io.Discard, in)
		length = int64(len(p.prefix)) + int64(base64.StdEncoding.EncodedLen(int(n)))
	}
	r.Close()
	if err != nil {
		return "", fmt.Errorf("file %s: %w", f.Name, err)
	}
	if n != f.Size {
		return "", fmt.Errorf("file %s: the store holds %d bytes under %s, not %d", f.Name, n, f.Digest, f.Size)
	}
	p.length = length
	ph := fmt.Sprintf("agentc-file-%s-%d", s.nonce, len(s.parts))
	s.parts[ph] = p
	return ph, nil
}

// checkText fails when the bytes sniffed are not text to their end: a
// blob labelled text/plain by a journal, a host or an agentc that stored
// it before the store checked text throughout.
func checkText(sniff *plan.Sniffer) error {
	if sniff.MediaType() == "text/plain" {
		return nil
	}
	return fmt.Errorf("it is labelled text/plain but is not text: byte %d is a control character or not UTF-8; it is not sent", sniff.NotTextAt())
}

// Read reads f whole, through the store's check of its digest, for an
// API whose SDK takes a file's bytes: a text file checked to be text to
// its end and its byte order mark dropped, as a splice sends one.
func Read(fr agentrt.FileReader, f *agentrt.File) ([]byte, error) {
	if fr == nil {
		return nil, fmt.Errorf("file %s: no file store to read it from", f.Name)
	}
	r, _, err := fr.Open(f.Digest)
	if err != nil {
		return nil, fmt.Errorf("file %s: %w", f.Name, err)
	}
	defer r.Close()
	// One byte past the size, to tell a store that holds more; the
	// reader fails at its end when the bytes are not the digest's.
	b, err := io.ReadAll(io.LimitReader(r, f.Size+1))
	if err != nil {
		return nil, fmt.Errorf("file %s: %w", f.Name, err)
	}
	if int64(len(b)) != f.Size {
		return nil, fmt.Errorf("file %s: the store holds other than %d bytes under %s", f.Name, f.Size, f.Digest)
	}
	if isText(f) {
		sniff := &plan.Sniffer{}
		sniff.Write(b)
		if err := checkText(sniff); err != nil {
			return nil, fmt.Errorf("file %s: %w", f.Name, err)
		}
		b = bytes.TrimPrefix(b, bom)
	}
	return b, nil
}

// bom is the byte order mark a text file may begin with, which no API is
// sent.
var bom = []byte("\ufeff")

// Empty reports whether the splice has no file.
func (s *Splice) Empty() bool { return len(s.parts) == 0 }

// MaxBody bounds the body the SDK writes, around the placeholders where
// there are files: a request with or without files whose text is larger
// is not sent.
const MaxBody = 64 << 20

// ErrBodyTooLarge is the error of a request whose text is past MaxBody.
var ErrBodyTooLarge = errors.New("the request was not sent: its text is larger than 64 MiB")

// Middleware puts the files in the request body in place of their
// placeholders (an SDK's option.WithMiddleware), and refuses a body whose
// text is past MaxBody, files or none.
func (s *Splice) Middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return next(req)
	}
	if len(s.parts) == 0 {
		// The SDK holds the body already, and says its length; where it
		// does not, the body fails past the bound as it is sent.
		switch {
		case req.ContentLength > MaxBody:
			req.Body.Close()
			return nil, ErrBodyTooLarge
		case req.ContentLength <= 0:
			req.Body = &boundedBody{ReadCloser: req.Body, left: MaxBody}
		}
		return next(req)
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, MaxBody+1))
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	if len(body) > MaxBody {
		return nil, ErrBodyTooLarge
	}
	type at struct {
		i  int
		ph string
	}
	var ats []at
	for ph := range s.parts {
		quoted := []byte(`"` + ph + `"`)
		i := bytes.Index(body, quoted)
		if i < 0 || bytes.Index(body[i+1:], quoted) >= 0 {
			return nil, fmt.Errorf("file %s: its place in the request is not found once", s.parts[ph].f.Name)
		}
		ats = append(ats, at{i + 1, ph}) // inside the quotes
	}
	sort.Slice(ats, func(a, b int) bool { return ats[a].i < ats[b].i })
	var segs []segment
	last := 0
	length := int64(0)
	for _, a := range ats {
		p := s.parts[a.ph]
		segs = append(segs, segment{text: body[last:a.i]}, segment{text: []byte(p.prefix)}, segment{file: p.f, asText: p.text, dropBOM: isText(p.f)})
		length += int64(a.i-last) + p.length
		last = a.i + len(a.ph)
	}
	segs = append(segs, segment{text: body[last:]})
	length += int64(len(body) - last)
	open := func() (io.ReadCloser, error) { return &splicedBody{fr: s.fr, segs: segs}, nil }
	req.Body, _ = open()
	req.GetBody = open
	req.ContentLength = length
	req.Header.Set("Content-Length", fmt.Sprint(length))
	return next(req)
}

// boundedBody fails once more than left bytes are read from it.
type boundedBody struct {
	io.ReadCloser
	left int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.left -= int64(n); b.left < 0 {
		return 0, ErrBodyTooLarge
	}
	return n, err
}

type segment struct {
	text    []byte
	file    *agentrt.File
	asText  bool // the file as a JSON string's contents, not base64
	dropBOM bool // a text file in base64: its byte order mark dropped
}

// splicedBody reads segments in turn: text as it is, a file from the
// store in base64, opened when reached.
type splicedBody struct {
	fr   agentrt.FileReader
	segs []segment
	cur  io.Reader
	file io.Closer
}

func (b *splicedBody) Read(p []byte) (int, error) {
	for {
		if b.cur == nil {
			if len(b.segs) == 0 {
				return 0, io.EOF
			}
			seg := b.segs[0]
			b.segs = b.segs[1:]
			if seg.file == nil {
				b.cur = bytes.NewReader(seg.text)
				continue
			}
			r, _, err := b.fr.Open(seg.file.Digest)
			if err != nil {
				return 0, err
			}
			b.file = r
			if seg.asText {
				b.cur = &textReader{src: r}
			} else {
				b.cur = &base64Reader{src: r, dropBOM: seg.dropBOM}
			}
		}
		n, err := b.cur.Read(p)
		if err == io.EOF {
			b.cur = nil
			if b.file != nil {
				b.file.Close()
				b.file = nil
			}
			if n > 0 {
				return n, nil
			}
			continue
		}
		return n, err
	}
}

func (b *splicedBody) Close() error {
	if b.file != nil {
		return b.file.Close()
	}
	return nil
}

// base64Reader reads src in standard base64, a chunk at a time; with
// dropBOM, without a byte order mark at its start.
type base64Reader struct {
	src     io.Reader
	dropBOM bool
	raw     [3 * 16 << 10]byte
	out     []byte
	pending []byte
	started bool
	done    bool
}

func (r *base64Reader) Read(p []byte) (int, error) {
	for len(r.pending) == 0 {
		if r.done {
			return 0, io.EOF
		}
		n, err := io.ReadFull(r.src, r.raw[:])
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			// The end, where the store's reader checked the digest.
			r.done = true
		case err != nil:
			return 0, err
		}
		chunk := r.raw[:n]
		if r.dropBOM && !r.started {
			// Three bytes off a chunk of a multiple of three (or the
			// last) leave one that encodes without padding but at the
			// end.
			chunk = bytes.TrimPrefix(chunk, bom)
		}
		r.started = true
		r.out = r.out[:0]
		r.out = base64.StdEncoding.AppendEncode(r.out, chunk)
		r.pending = r.out
	}
	n := copy(p, r.pending)
	r.pending = r.pending[n:]
	return n, nil
}

// textReader reads src, UTF-8 text, as the contents of a JSON string,
// a chunk at a time, cut where a character ends: escaped as an
// encoding/json Encoder escapes a string with HTML escaping off, as the
// SDKs write their requests (appendJSONString). A byte order mark at its
// start is dropped.
type textReader struct {
	src     io.Reader
	raw     [48 << 10]byte
	carry   int // bytes of a character cut at the end of the last chunk, at raw's start
	started bool
	out     []byte
	pending []byte
	done    bool
}

func (r *textReader) Read(p []byte) (int, error) {
	for len(r.pending) == 0 {
		if r.done {
			return 0, io.EOF
		}
		n, err := io.ReadFull(r.src, r.raw[r.carry:])
		n += r.carry
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			// The end, where the store's reader checked the digest.
			r.done = true
		case err != nil:
			return 0, err
		}
		chunk := r.raw[:n]
		if !r.started {
			r.started = true
			chunk = bytes.TrimPrefix(chunk, bom)
		}
		r.carry = 0
		if !r.done {
			// A character cut at the chunk's end goes with the next.
			for k := len(chunk) - 1; k >= 0 && k > len(chunk)-utf8.UTFMax; k-- {
				if utf8.RuneStart(chunk[k]) {
					if !utf8.FullRune(chunk[k:]) {
						r.carry = len(chunk) - k
						chunk = chunk[:k]
					}
					break
				}
			}
		}
		r.out = appendJSONString(r.out[:0], chunk)
		r.pending = r.out
		copy(r.raw[:], r.raw[n-r.carry:n])
	}
	n := copy(p, r.pending)
	r.pending = r.pending[n:]
	return n, nil
}

// appendJSONString appends src as the contents of a JSON string, as
// encoding/json's Encoder writes a string with SetEscapeHTML(false) (Go's
// appendString, which FuzzJSONString holds this to): a quote and a
// backslash escaped, control characters as \b, \f, \n, \r, \t or \u00XX,
// U+2028 and U+2029 as \u2028 and \u2029, and each byte that is not
// UTF-8 as \ufffd.
func appendJSONString(dst, src []byte) []byte {
	const hex = "0123456789abcdef"
	start := 0
	for i := 0; i < len(src); {
		if b := src[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, src[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRune(src[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, src[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, src[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, src[start:]...)
}
