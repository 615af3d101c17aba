package mcp

import (
	"bufio"
	"context"
	"encoding/json"
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
		n    int // the requests sent
		pad  int // each one's padding
		want string
	}{
		{"count", MaxUnanswered + 1, 0, fmt.Sprintf("the server sent %d requests", MaxUnanswered+1)},
		{"bytes", 70, 1 << 20, "the server sent 64 requests (67110144 bytes of parameters)"},
		// One id sent again and again: the SDK forgets an id once it
		// starts writing its answer, and takes the next as a request of
		// its own.
		{"one id", -(MaxUnanswered + 1), 0, fmt.Sprintf("the server sent %d requests", MaxUnanswered+1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ours, theirs := net.Pipe()
			flooded := make(chan error, 1)
			held := heldTransport{Transport: &sdk.IOTransport{Reader: ours, Writer: ours}, flooded: func(err error) { flooded <- err }}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			served := make(chan error, 1)
			go func() { served <- floodServer(ctx, theirs, tc.n, tc.pad) }()
			client := sdk.NewClient(&sdk.Implementation{Name: "agentc", Version: "test"}, nil)
			session, err := client.Connect(ctx, held, nil)
			if err != nil {
				t.Fatalf("%v (the server: %v)", err, <-served)
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

// floodServer answers the handshake on conn, as a server of an older
// revision would (initialize answered, any other request with an empty
// result), then sends n pings (-n: all of one id), each with pad bytes
// of padding, and reads
// nothing more: over an unbuffered pipe, every answer's write blocks.
func floodServer(ctx context.Context, conn net.Conn, n, pad int) error {
	defer conn.Close()
	in := bufio.NewScanner(conn)
	send := func(v any) error {
		b, _ := json.Marshal(v)
		_, err := conn.Write(append(b, '\n'))
		return err
	}
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if err := json.Unmarshal(in.Bytes(), &m); err != nil {
			return err
		}
		if m.Method == "notifications/initialized" {
			break
		}
		if m.ID == nil {
			continue
		}
		result := map[string]any{}
		if m.Method == "initialize" {
			result = map[string]any{"protocolVersion": m.Params.ProtocolVersion, "capabilities": map[string]any{}, "serverInfo": map[string]any{"name": "flood", "version": "1"}}
		}
		if err := send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result}); err != nil {
			return err
		}
	}
	p := strings.Repeat("x", pad)
	same := n < 0 // every ping with one id
	if same {
		n = -n
	}
	for i := range n {
		id := fmt.Sprintf("p%d", i)
		if same {
			id = "same"
		}
		if send(map[string]any{"jsonrpc": "2.0", "id": id, "method": "ping", "params": map[string]any{"_meta": map[string]any{"pad": p}}}) != nil {
			return nil // the client ended the session
		}
	}
	<-ctx.Done()
	return nil
}
