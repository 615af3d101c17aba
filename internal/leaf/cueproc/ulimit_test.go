//go:build linux && !race

package cueproc

import (
	"context"
	"testing"
)

// TestRunUnderUlimit runs the child under a hard limit on its address
// space tighter than the one it would set (a user's ulimit -v): the child
// keeps that limit rather than failing to raise it, and evaluates. (Not
// under the race detector, whose own memory a program that small in
// address space has no room for.)
func TestRunUnderUlimit(t *testing.T) {
	self, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	// 1.8 GiB, in KiB: above what the test binary holds at its start,
	// below the 2 GiB the child would once have set in all, and below
	// what it sets now.
	p := Program{Path: "/bin/sh", Args: []string{"sh", "-c", `ulimit -v 1887436 && exec "$0" ` + Verb, self.Path}}
	var out map[string]int
	if err := p.Run(context.Background(), "echo", map[string]int{"a": 1}, &out); err != nil || out["a"] != 1 {
		t.Fatalf("echo under ulimit -v: %v, %v", out, err)
	}
	if err := p.Run(context.Background(), "grow", nil, &out); err == nil {
		t.Fatal("grow under ulimit -v ended")
	}
}
