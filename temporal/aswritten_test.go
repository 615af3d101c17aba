package temporal

import (
	"encoding/json"
	"testing"
)

// TestUnescapeHTML: the escapes encoding/json writes of its own accord in
// a json.RawMessage are put back as the characters, and nothing else is
// touched: an escaped backslash before "u003c" is the backslash's, and
// the model's other escapes stay as written.
func TestUnescapeHTML(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"label":"a \u003c\u0026\u003e b"}`, `{"label":"a <&> b"}`},
		{`{"s":"\u2028\u2029"}`, "{\"s\":\"\u2028\u2029\"}"},
		{`{"s":"\\u003c"}`, `{"s":"\\u003c"}`},
		{`{"s":"\\\u003c"}`, `{"s":"\\<"}`},
		{`{"s":"\u00e9\n\"\u003c"}`, `{"s":"\u00e9\n\"<"}`},
		{`{"\u003ckey":1,"n":[1,"x"]}`, `{"<key":1,"n":[1,"x"]}`},
		{`{"plain":true}`, `{"plain":true}`},
		{`not json \u003c`, `not json \u003c`},
	} {
		if got := string(unescapeHTML(json.RawMessage(c.in))); got != c.want {
			t.Errorf("unescapeHTML(%s) = %s, want %s", c.in, got, c.want)
		}
	}
	// What a run prints in process comes back so from a payload.
	raw := json.RawMessage("{\"label\":\"<&> \u2028\"}")
	enc, err := json.Marshal(struct {
		A json.RawMessage `json:"a"`
	}{raw})
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		A json.RawMessage `json:"a"`
	}
	if err := json.Unmarshal(enc, &back); err != nil {
		t.Fatal(err)
	}
	if string(back.A) == string(raw) {
		t.Fatalf("the payload kept %s as it was: nothing to put back", raw)
	}
	if got, want := string(unescapeHTML(back.A)), string(raw); got != want {
		t.Errorf("through a payload: %s, want %s", got, want)
	}
}
