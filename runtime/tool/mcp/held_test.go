package mcp

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestUnansweredBounded: a server that sends requests and reads none of
// the answers (over an unbuffered pipe, so each answer's write blocks)
// ends its session once it has more unanswered than agentc holds, by
// their number or by their bytes, and the error says why.
func TestUnansweredBounded(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    flooding
		want string
	}{
		{"count", flooding{n: MaxUnanswered + 1}, fmt.Sprintf("the server sent %d requests", MaxUnanswered+1)},
		{"bytes", flooding{n: 70, pad: 1 << 20}, "the server sent 64 requests (64.0 MiB of parameters)"},
		// One id sent again and again: the SDK forgets an id once it
		// starts writing its answer, and takes the next as a request of
		// its own.
		{"one id", flooding{n: MaxUnanswered + 1, sameID: true}, fmt.Sprintf("the server sent %d requests", MaxUnanswered+1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ours, theirs := net.Pipe()
			flooded := make(chan error, 1)
			held := heldTransport{Transport: &sdk.IOTransport{Reader: ours, Writer: ours}, flooded: func(err error) { flooded <- err }}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			served := make(chan struct{})
			go func() { handServer(theirs, theirs, tc.f, ctx.Done()); theirs.Close(); close(served) }()
			client := sdk.NewClient(&sdk.Implementation{Name: "agentc", Version: "test"}, nil)
			session, err := client.Connect(ctx, held, nil)
			if err != nil {
				t.Fatal(err)
			}
			// The server floods while the call is under way; the call
			// ends with the session.
			if _, err := session.CallTool(ctx, &sdk.CallToolParams{Name: "echo"}); err == nil {
				t.Error("a call the server never answered succeeded")
			}
			err = <-flooded
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "whose answers it has not read") {
				t.Errorf("the session ended with %q, want %q", err, tc.want)
			}
			if err := session.Wait(); err == nil {
				t.Error("the session ended without an error")
			}
			cancel()
			<-served
		})
	}
}
