//go:build unix

package a2a_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"agentc.dev/agentc/serve"
	a2aserve "agentc.dev/agentc/serve/a2a"
)

// TestA2AClientNotReading: a client that asks for a task's events
// (message/stream) and reads none of them holds no handler of the SDK's
// once the server bounds its writes (serve.BoundWrites, as agentc serve
// does, shortened here): the write that waited past the bound fails and
// the stream is given up. (Without the bound the handler never returns.)
// The SDK's first event is the task, its history holding the message: a
// message of 7 MiB is an event far past what the connection's buffers
// hold once the client's receive buffer is kept small.
func TestA2AClientNotReading(t *testing.T) {
	ag := labeler(t)
	runs, err := serve.NewRuns("", 0, false)
	if err != nil {
		t.Fatal(err)
	}
	returned := make(chan struct{}, 1)
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	h := serve.BoundWrites(a2aserve.Handler([]serve.Agent{ag}, runs, srv.URL, serve.AllAgents(token)), 100*time.Millisecond)
	mux.Handle(a2aserve.Prefix, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { returned <- struct{}{} }()
		h.ServeHTTP(w, r)
	}))
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var err error
		if cerr := c.Control(func(fd uintptr) { err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) }); cerr != nil {
			return cerr
		}
		return err
	}}
	conn, err := d.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"message/stream","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"` + strings.Repeat("x", 7<<20) + `"}]}}}`
	fmt.Fprintf(conn, "POST %slabeler HTTP/1.1\r\nHost: agentc\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: %d\r\n\r\n%s", a2aserve.Prefix, token, len(body), body)
	// The client reads nothing; the handler returns all the same.
	<-returned
}
