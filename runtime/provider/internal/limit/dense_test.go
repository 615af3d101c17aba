package limit

import (
	"errors"
	"io"
	"strings"
	"testing"

	"agentc.dev/agentc/runtime/internal/replylimit"
)

// TestValues: a body is held to replylimit.ValueBound values as it is read; a
// stream's events (ended by a blank line, \n or \r\n) each alone, and
// each to EventBound bytes; no limit bounds nothing.
func TestValues(t *testing.T) {
	bound := int(replylimit.ValueBound(1)) // 65,540
	objs := func(n int) string { return "[" + strings.Repeat("{},", n-1) + "{}]" }
	read := func(s string, tokens int64, events bool) error {
		_, err := io.ReadAll(Values(io.NopCloser(strings.NewReader(s)), tokens, events))
		return err
	}
	var de *DenseError
	if err := read(objs(bound-1), 1, false); err != nil {
		t.Errorf("at the bound: %v", err)
	}
	if err := read(objs(bound), 1, false); !errors.As(err, &de) || de.Event {
		t.Errorf("past the bound: %v", err)
	}
	if err := read(objs(bound), 0, false); err != nil {
		t.Errorf("no limit: %v", err)
	}
	ev := "data: " + objs(bound-2) + "\r\n\r\n"
	if err := read(ev+ev+strings.ReplaceAll(ev, "\r", ""), 1, true); err != nil {
		t.Errorf("events each at the bound: %v", err)
	}
	if err := read(ev+"data: "+objs(bound)+"\n\n", 1, true); !errors.As(err, &de) || !de.Event || de.Values == 0 {
		t.Errorf("an event past the bound: %v", err)
	}
	long := "data: \"" + strings.Repeat("x", int(EventBound(1))) + "\"\n\n"
	if err := read(long, 1, true); !errors.As(err, &de) || de.Bytes == 0 {
		t.Errorf("an event past its bytes: %v", err)
	}
}
