package cueproc

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestMain makes the test binary the child, with jobs that answer, spin
// and allocate without end.
func TestMain(m *testing.M) {
	ServeChild(map[string]Job{
		"echo": func(in json.RawMessage) (any, error) { return in, nil },
		"fail": func(json.RawMessage) (any, error) { return nil, errors.New("no such thing") },
		"spin": func(json.RawMessage) (any, error) {
			for n := 0; ; n++ {
				if n < 0 {
					return n, nil
				}
			}
		},
		"hold": func(in json.RawMessage) (any, error) {
			var mib int
			if err := json.Unmarshal(in, &mib); err != nil {
				return nil, err
			}
			// The limit is on address space: what is mapped counts,
			// touched or not, so nothing is written (which would cost
			// the machine the memory and the child CPU time).
			keep := make([][]byte, 0, mib/16)
			for range mib / 16 {
				keep = append(keep, make([]byte, 16<<20))
			}
			return len(keep) * 16, nil
		},
		"grow": func(json.RawMessage) (any, error) {
			var keep [][]byte
			for {
				keep = append(keep, make([]byte, 64<<20))
			}
		},
	})
	os.Exit(m.Run())
}

func TestRun(t *testing.T) {
	p, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]int
	if err := p.Run(context.Background(), "echo", map[string]int{"a": 1}, &out); err != nil || out["a"] != 1 {
		t.Fatalf("echo: %v, %v", out, err)
	}
	// Memory is what an evaluation may map beyond the child's start,
	// however large the program.
	var held int
	if err := p.Run(context.Background(), "hold", holdMiB, &held); err != nil || held != holdMiB {
		t.Errorf("hold %d MiB: %v, %v", holdMiB, held, err)
	}
	for _, c := range []struct {
		job  string
		in   any
		want string
	}{
		{"fail", nil, "no such thing"},
		{"nowhere", nil, `no evaluation "nowhere"`},
		{"spin", nil, "did not end within its bounds"},
		{"grow", nil, "did not end within its bounds (5s of CPU time, 2048 MiB of memory beyond the child's start), or its child failed: " + growSays},
		{"echo", strings.Repeat("x", MaxInput+100<<10), "larger than CUE is evaluated over"},
	} {
		err := p.Run(context.Background(), c.job, c.in, &out)
		var be *BoundError
		if !errors.As(err, &be) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a BoundError saying %q", c.job, err, c.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Run(ctx, "spin", nil, &out); !errors.Is(err, context.Canceled) {
		t.Errorf("spin, cancelled: %v, want context.Canceled", err)
	}
	if err := (Program{}).Run(context.Background(), "echo", nil, &out); err == nil {
		t.Error("the zero Program evaluated")
	}
}
