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
// does not hold the run that writes to it: under BoundWrites (its wait
// shortened), once a write has waited the stream is given up, and the
// writer returns at once from then on. (Without the bound the handler
// below never returns.)
func TestSSEClientNotReading(t *testing.T) {
	done := make(chan int, 1)
	srv := httptest.NewServer(BoundWrites(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	}), 100*time.Millisecond))
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
