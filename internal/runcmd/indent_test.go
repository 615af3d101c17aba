package runcmd

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestIndentedSize: the size counted is the size json.Indent makes, for
// values shallow and deep, with strings that hold brackets and escapes.
func TestIndentedSize(t *testing.T) {
	for _, v := range []string{
		`{}`, `[]`, `{"a":1}`, `{"a":[1,2,{"b":"x]\"[,"},[]],"c":{}}`,
		`[[[[[0,0],[0]]]]]`, `"a string, [with] {brackets}"`, `{"k":"\\","l":[{"m":null}]}`,
		`{"pad":` + strings.Repeat("[", 300) + strings.Repeat("0,", 50) + "0" + strings.Repeat("]", 300) + `}`,
	} {
		var want bytes.Buffer
		if err := json.Indent(&want, []byte(v), "", "  "); err != nil {
			t.Fatal(err)
		}
		if got := indentedSize([]byte(v)); got != int64(want.Len()) {
			t.Errorf("indentedSize(%.40s) = %d, want %d", v, got, want.Len())
		}
	}
}
