package compile

import (
	"bytes"
	"testing"
)

// TestAppendDoc: two documents get the same text exactly when they are the
// same JSON, number for number as written, whatever the order of members.
func TestAppendDoc(t *testing.T) {
	same := [][2]string{
		{`{"a":1,"b":[true,null,"x"]}`, `{"b":[true,null,"x"],"a":1}`},
		{`{"a":{"b":"c"}}`, `{ "a" : { "b" : "c" } }`},
	}
	differ := [][2]string{
		{`{"a":1}`, `{"a":1.0}`},
		{`{"a":1}`, `{"a":"1"}`},
		{`{"a":1e2}`, `{"a":100}`},
		{`{"a":[]}`, `{"a":{}}`},
		{`{"a":null}`, `{"a":false}`},
		{`{"ab":"c"}`, `{"a":"bc"}`},
		{`{"a\"":"b"}`, `{"a":"\"b"}`},
		{`["a","b"]`, `["ab"]`},
		{`[["a"],"b"]`, `[["a","b"]]`},
		{`{"a":{"b":1},"c":2}`, `{"a":{"b":1,"c":2}}`},
	}
	text := func(s string) []byte {
		var cs compiledSchemas
		b, ok := cs.appendDoc(nil, mustDoc(t, s))
		if !ok {
			t.Fatalf("%s: not a JSON document", s)
		}
		return b
	}
	for _, p := range same {
		if !bytes.Equal(text(p[0]), text(p[1])) {
			t.Errorf("%s and %s differ", p[0], p[1])
		}
	}
	for _, p := range differ {
		if bytes.Equal(text(p[0]), text(p[1])) {
			t.Errorf("%s and %s are the same", p[0], p[1])
		}
	}
	var cs compiledSchemas
	if _, ok := cs.appendDoc(nil, map[string]any{"a": 1}); ok {
		t.Error("a Go int is taken for a JSON value")
	}
}

// TestCompiledSchemas: a schema that compiled is not compiled again, and
// one that does not compile says why every time.
func TestCompiledSchemas(t *testing.T) {
	var cs compiledSchemas
	good := `{"type":"object","properties":{"a":{"type":"string","pattern":"^x"}}}`
	for range 2 {
		if err := cs.compile(mustDoc(t, good)); err != nil {
			t.Fatal(err)
		}
	}
	if len(cs.seen) != 1 {
		t.Errorf("%d schemas remembered, want 1", len(cs.seen))
	}
	bad := `{"type":"object","properties":{"a":{"type":"string","pattern":"("}}}`
	for range 2 {
		if err := cs.compile(mustDoc(t, bad)); err == nil {
			t.Fatal("an invalid pattern compiled")
		}
	}
	if len(cs.seen) != 1 {
		t.Errorf("%d schemas remembered, want only the one that compiled", len(cs.seen))
	}
	if err := cs.compile(map[string]any{"minLength": 1}); err != nil || len(cs.seen) != 1 {
		t.Errorf("a document with a Go int: %v, %d remembered; want it compiled and not remembered", err, len(cs.seen))
	}
}
