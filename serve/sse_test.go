package serve

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestSSEClientNotReading: a client that stops reading its event stream
// does not hold the run that writes to it: once a write has waited
// sseWait the stream is given up, and the writer returns at once from
// then on. (Without the bound the handler below never returns.)
func TestSSEClientNotReading(t *testing.T) {
	old := sseWait
	sseWait = 100 * time.Millisecond
	t.Cleanup(func() { sseWait = old })
	done := make(chan int, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := &sseWriter{w: w}
		big := strings.Repeat("x", 64<<10)
		n := 0
		for ; n < 4096; n++ { // 256 MiB: far more than the connection's buffers hold
			s.send("event", big)
			s.mu.Lock()
			broken := s.broken
			s.mu.Unlock()
			if broken {
				break
			}
		}
		done <- n
	}))
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: agentc\r\nAccept: text/event-stream\r\n\r\n")
	// The client reads nothing.
	if n := <-done; n >= 4096 {
		t.Errorf("wrote all %d events to a client that reads nothing", n)
	}
}
