package runview

import (
	"encoding/json"
	"testing"
)

// TestSameJSON: the report's answer is the page's when it is the same JSON
// value, compared in canonical form, not as Go prints the decoded values
// (which made {"a":"b c:d"} the same as {"a":"b","c":"d"}, and "1" as 1).
func TestSameJSON(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{`{"a":1,"b":[true,null]}`, `{"b":[true,null],"a":1.0}`, true},
		{"{\n  \"a\": \"x\"\n}", `{"a":"x"}`, true},
		{`{"a":"b c:d"}`, `{"a":"b","c":"d"}`, false},
		{`"1"`, `1`, false},
		{`[1,2]`, `[2,1]`, false},
		{`{"n":9007199254740993}`, `{"n":9007199254740992}`, false},
		{`not json`, `"not json"`, false},
	} {
		if got := sameJSON(c.a, json.RawMessage(c.b)); got != c.same {
			t.Errorf("sameJSON(%s, %s) = %v, want %v", c.a, c.b, got, c.same)
		}
	}
}
