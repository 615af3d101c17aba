package main

import (
	"encoding/json"
	"testing"
)

// FuzzJSLit: the reader of the package's array literal either refuses its
// input or writes valid JSON; never a panic, never a read past the input.
func FuzzJSLit(f *testing.F) {
	f.Add([]byte(`[{id:"openai",n:.5,m:-.25,c:2e5,b:!0,f:!1,z:null,s:'it''s',t:` + "`a\\`b`" + `,u:"\u00e9\x41"}]`))
	f.Add([]byte(`[{id:"x",models:[{id:"m",prices:{input_mtok:1,}},],}]`))
	f.Add([]byte(`[[[[[[`))
	f.Add([]byte(`["\`))
	f.Fuzz(func(t *testing.T, data []byte) {
		j := &jsLit{src: data}
		if err := j.value(); err != nil {
			return
		}
		if !json.Valid(j.out.Bytes()) {
			t.Fatalf("%q gave invalid JSON %q", data, j.out.Bytes())
		}
	})
}
