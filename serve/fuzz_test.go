package serve

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"agentc.dev/agentc/plan"
)

// FuzzMultipartInput: whatever a multipart body holds, reading it as a
// run's input ends with an input that is one JSON object, or an error
// with a status of 400 or 413; never a panic, never a file past its
// bound.
func FuzzMultipartInput(f *testing.F) {
	const boundary = "b0undary"
	f.Add([]byte("--b0undary\r\nContent-Disposition: form-data; name=\"input\"\r\n\r\n{\"title\":\"x\"}\r\n--b0undary\r\nContent-Disposition: form-data; name=\"note\"; filename=\"n.txt\"\r\n\r\nhello\r\n--b0undary--\r\n"))
	f.Add([]byte("--b0undary\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\n" + string(bytes.Repeat([]byte("a"), 100)) + "\r\n--b0undary--\r\n"))
	f.Add([]byte("--b0undary\r\nContent-Disposition: form-data; name=\"input\"\r\n\r\n[1]\r\n--b0undary--\r\n"))
	f.Add([]byte("--b0undary\r\n\r\n\r\n--b0undary--"))
	f.Add([]byte("not multipart at all"))
	files := []plan.FileField{{Name: "note", MediaTypes: []string{"text/plain"}, MaxBytes: 64}}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := http.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		if err != nil {
			t.Skip()
		}
		r.Header.Set("Content-Type", "multipart/form-data; boundary="+boundary)
		input, names, status, err := multipartInput(r, files)
		if err != nil {
			if status != http.StatusBadRequest && status != http.StatusRequestEntityTooLarge {
				t.Fatalf("status %d for %v", status, err)
			}
			return
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(input, &obj); err != nil || obj == nil {
			t.Fatalf("the input %q is not an object: %v", input, err)
		}
		if note, ok := obj["note"]; ok {
			var s string
			if json.Unmarshal(note, &s) == nil && len(s) > 88 {
				t.Fatalf("the note is %d base64 characters, past its bound of 64 bytes", len(s))
			}
		}
		for k := range names {
			if _, ok := obj[k]; !ok {
				t.Fatalf("a name for %q, which the input does not give", k)
			}
		}
	})
}

// FuzzBudgetsOfQuery: whatever a request's query holds, its bounds are
// refused or are bounds: never a negative tool budget, never a zero
// token budget, rounds or deadline.
func FuzzBudgetsOfQuery(f *testing.F) {
	for _, q := range []string{"deadline=30s&tools=3&tokens=5000&rounds=4", "tools=-1", "rounds=0", "deadline=soon", "tokens=99999999999999999999", "tools=1&tools=2", "x=1", "deadline=-1s", "%zz"} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		b, err := budgetsOfQuery(q)
		if err != nil {
			return
		}
		o, err := b.overrides()
		if err != nil {
			t.Fatalf("%q: read, then refused: %v", raw, err)
		}
		switch {
		case o.Tools != nil && *o.Tools < 0, o.Tokens != nil && *o.Tokens <= 0, o.Rounds != nil && *o.Rounds <= 0, o.Deadline != nil && *o.Deadline <= 0:
			t.Fatalf("%q: bounds %+v", raw, b)
		}
	})
}
