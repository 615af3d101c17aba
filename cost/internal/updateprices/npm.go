package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The npm package @pydantic/genai-prices carries the data compiled into
// its JavaScript (dist/index.cjs) as one array literal; readTarball finds
// it there and writes it as the JSON of the repository's data file.
const (
	npmName   = "@pydantic/genai-prices"
	npmBundle = "package/dist/index.cjs"
	maxEntry  = 64 << 20
)

// readTarball reads the package's tarball (npm pack): the data, as JSON,
// and the package's version.
func readTarball(r io.Reader) (data []byte, version string, err error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, "", fmt.Errorf("not a gzipped tarball: %v", err)
	}
	tr := tar.NewReader(zr)
	var bundle []byte
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, "", fmt.Errorf("the tarball: %v", err)
		}
		if h.Name != "package/package.json" && h.Name != npmBundle {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(tr, maxEntry+1))
		if err != nil || len(b) > maxEntry {
			return nil, "", fmt.Errorf("the tarball's %s: unreadable or over %d bytes", h.Name, maxEntry)
		}
		if h.Name == npmBundle {
			bundle = b
			continue
		}
		var pkg struct{ Name, Version string }
		if err := json.Unmarshal(b, &pkg); err != nil || pkg.Name != npmName {
			return nil, "", fmt.Errorf("the tarball is not the package %s (package.json names %q)", npmName, pkg.Name)
		}
		version = pkg.Version
	}
	if version == "" || bundle == nil {
		return nil, "", fmt.Errorf("the tarball lacks package/package.json or %s", npmBundle)
	}
	// The data is the first array of objects whose first key is id:
	// the providers.
	start := bytes.Index(bundle, []byte(`=[{id:"`))
	if start < 0 {
		return nil, "", fmt.Errorf("%s holds no array of providers", npmBundle)
	}
	j := &jsLit{src: bundle, pos: start + 1}
	if err := j.value(); err != nil {
		return nil, "", fmt.Errorf("%s, offset %d: %v", npmBundle, j.pos, err)
	}
	return j.out.Bytes(), version, nil
}

// jsLit writes a JavaScript literal as JSON: objects whose keys may be
// bare, strings in any of the three quotes (without substitutions),
// numbers as a minifier writes them (.5, 1e6) and !0 and !1.
type jsLit struct {
	src   []byte
	pos   int
	out   bytes.Buffer
	depth int
}

func (j *jsLit) peek() byte {
	if j.pos < len(j.src) {
		return j.src[j.pos]
	}
	return 0
}

func (j *jsLit) value() error {
	if j.depth++; j.depth > 64 {
		return errors.New("nested too deep")
	}
	defer func() { j.depth-- }()
	switch c := j.peek(); {
	case c == '{' || c == '[':
		return j.list(c)
	case c == '"' || c == '\'' || c == '`':
		return j.str()
	case c == '!' && j.pos+1 < len(j.src) && (j.src[j.pos+1] == '0' || j.src[j.pos+1] == '1'):
		j.out.WriteString(map[byte]string{'0': "true", '1': "false"}[j.src[j.pos+1]])
		j.pos += 2
		return nil
	case c == '-' || c == '.' || c >= '0' && c <= '9':
		return j.num()
	default:
		for _, w := range []string{"null", "true", "false"} {
			if bytes.HasPrefix(j.src[j.pos:], []byte(w)) {
				j.out.WriteString(w)
				j.pos += len(w)
				return nil
			}
		}
		return fmt.Errorf("unexpected %q in the data", c)
	}
}

// list is an object or an array, which may end in a comma.
func (j *jsLit) list(open byte) error {
	closing := map[byte]byte{'{': '}', '[': ']'}[open]
	j.out.WriteByte(open)
	j.pos++
	for n := 0; ; n++ {
		if j.peek() == closing {
			j.out.WriteByte(closing)
			j.pos++
			return nil
		}
		if n > 0 {
			j.out.WriteByte(',')
		}
		if open == '{' {
			if err := j.key(); err != nil {
				return err
			}
			if j.peek() != ':' {
				return errors.New("want : after a key")
			}
			j.out.WriteByte(':')
			j.pos++
		}
		if err := j.value(); err != nil {
			return err
		}
		switch j.peek() {
		case ',':
			j.pos++
		case closing:
		default:
			return fmt.Errorf("want , or %c", closing)
		}
	}
}

func (j *jsLit) key() error {
	if c := j.peek(); c == '"' || c == '\'' {
		return j.str()
	}
	start := j.pos
	for c := j.peek(); c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' && j.pos > start; c = j.peek() {
		j.pos++
	}
	if j.pos == start {
		return errors.New("want a key")
	}
	b, _ := json.Marshal(string(j.src[start:j.pos]))
	j.out.Write(b)
	return nil
}

func (j *jsLit) str() error {
	q := j.src[j.pos]
	j.pos++
	var s strings.Builder
	for {
		if j.pos >= len(j.src) {
			return errors.New("a string does not end")
		}
		c := j.src[j.pos]
		switch {
		case c == q:
			j.pos++
			b, _ := json.Marshal(s.String())
			j.out.Write(b)
			return nil
		case q == '`' && c == '$' && j.pos+1 < len(j.src) && j.src[j.pos+1] == '{':
			return errors.New("a template with a substitution")
		case c == '\\':
			if j.pos+1 >= len(j.src) {
				return errors.New("a string does not end")
			}
			e := j.src[j.pos+1]
			j.pos += 2
			switch e {
			case 'n':
				s.WriteByte('\n')
			case 't':
				s.WriteByte('\t')
			case 'r':
				s.WriteByte('\r')
			case 'u', 'x':
				n := map[byte]int{'u': 4, 'x': 2}[e]
				if j.pos+n > len(j.src) {
					return errors.New("a short escape")
				}
				r, err := strconv.ParseUint(string(j.src[j.pos:j.pos+n]), 16, 32)
				if err != nil {
					return fmt.Errorf("the escape \\%c%s", e, j.src[j.pos:j.pos+n])
				}
				s.WriteRune(rune(r))
				j.pos += n
			case '\n':
			default:
				s.WriteByte(e) // \\ \' \" \` \/ stand for themselves
			}
		default:
			r, size := utf8.DecodeRune(j.src[j.pos:])
			s.WriteRune(r)
			j.pos += size
		}
	}
}

// num writes a number as JSON has it: a leading 0 before a bare point.
func (j *jsLit) num() error {
	start := j.pos
	for c := j.peek(); c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' || c >= '0' && c <= '9'; c = j.peek() {
		j.pos++
	}
	t := string(j.src[start:j.pos])
	neg := strings.HasPrefix(t, "-")
	t = strings.TrimPrefix(t, "-")
	if strings.HasPrefix(t, ".") {
		t = "0" + t
	}
	if neg {
		t = "-" + t
	}
	if !json.Valid([]byte(t)) {
		return fmt.Errorf("the number %q", j.src[start:j.pos])
	}
	j.out.WriteString(t)
	return nil
}
