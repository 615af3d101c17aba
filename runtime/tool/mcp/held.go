package mcp

import (
	"context"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"agentc.dev/agentc/internal/leaf/userfile"
)

// MaxUnanswered and MaxUnansweredBytes bound the requests a stdio server
// has sent agentc (a ping, a roots/list) whose answers are not yet
// written: the SDK answers each in a goroutine of its own, which holds
// the request until its answer is written, and a server that sends
// requests and reads none of the answers blocks every such write. Past
// either bound the session ends, and the call under way fails, saying
// why. A server that reads what it is sent never comes near them.
//
// MaxUnansweredHTTP is the bound on their number over streamable HTTP,
// where each answer is a request of its own (a POST), written when the
// server answers it: one the server leaves unanswered holds a goroutine
// and a connection, and the process's file descriptors run out long
// before 1,024 of them would be reached in several servers' calls.
const (
	MaxUnanswered      = 1024
	MaxUnansweredHTTP  = 64
	MaxUnansweredBytes = 64 << 20
)

// floodError ends a session whose server sent more requests than agentc
// holds unanswered.
type floodError struct {
	count int   // the requests unanswered
	bytes int64 // their parameters' bytes
	max   int   // the bound on their number
}

func (e *floodError) Error() string {
	return fmt.Sprintf("the server sent %d requests (%s of parameters) whose answers it has not read, more than agentc holds (%d requests, %s)", e.count, userfile.About(e.bytes), e.max, userfile.Size(MaxUnansweredBytes))
}

// heldTransport connects as its transport does, holding the connection to
// the bounds on unanswered requests, max of them (0: MaxUnanswered) and
// MaxUnansweredBytes; flooded hears the error that ends a session past
// them.
type heldTransport struct {
	mcp.Transport
	max     int
	flooded func(error)
	// opened, when set, is given each connection made.
	opened func(*heldConn)
}

func (t heldTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	max := t.max
	if max <= 0 {
		max = MaxUnanswered
	}
	stop, cut := context.WithCancel(context.Background())
	held := &heldConn{Connection: c, max: max, flooded: t.flooded, stop: stop, cut: cut, sizes: map[jsonrpc.ID][]int64{}}
	if t.opened != nil {
		t.opened(held)
	}
	return held, nil
}

// heldConn counts the requests read whose answers are not yet written.
type heldConn struct {
	mcp.Connection
	max     int
	flooded func(error)
	// stop ends, by cut, when the bound is passed, and with it the
	// writes of answers under way: over HTTP, the requests that carry
	// them, which the SDK makes with a context that never ends.
	stop context.Context
	cut  context.CancelFunc

	mu sync.Mutex
	// sizes holds, for each id, the parameters' bytes of each request
	// of that id not yet answered, oldest first: a server may send an id
	// again while its first answer waits (the SDK forgets an id once it
	// starts writing its answer), and each such request holds a
	// goroutine of its own.
	sizes map[jsonrpc.ID][]int64
	count int   // the requests unanswered
	bytes int64 // their parameters' bytes
}

func (c *heldConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err != nil {
		return m, err
	}
	req, ok := m.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		return m, nil
	}
	c.mu.Lock()
	n := int64(len(req.Params))
	c.sizes[req.ID] = append(c.sizes[req.ID], n)
	c.count++
	c.bytes += n
	var ferr *floodError
	if c.count > c.max || c.bytes > MaxUnansweredBytes {
		ferr = &floodError{count: c.count, bytes: c.bytes, max: c.max}
	}
	c.mu.Unlock()
	if ferr != nil {
		if c.flooded != nil {
			c.flooded(ferr)
		}
		c.abort()
		return nil, ferr
	}
	return m, nil
}

// abort ends the writes of answers under way, now. The handlers blocked
// writing them hold the SDK's own close until they end: closing the
// connection under them ends their writes (a stdio server's pipes; its
// process is ended by the transport), and so does stop (the requests
// carrying them to an HTTP server).
func (c *heldConn) abort() {
	c.cut()
	go c.Connection.Close()
}

func (c *heldConn) Write(ctx context.Context, m jsonrpc.Message) error {
	resp, ok := m.(*jsonrpc.Response)
	if !ok {
		return c.Connection.Write(ctx, m)
	}
	// An answer's write is done when Write returns (over HTTP the
	// response to the request carrying it is closed by then), so its
	// context may end with it.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(c.stop, cancel)()
	err := c.Connection.Write(ctx, m)
	c.mu.Lock()
	if q := c.sizes[resp.ID]; len(q) > 0 {
		c.count--
		c.bytes -= q[0]
		if len(q) == 1 {
			delete(c.sizes, resp.ID)
		} else {
			c.sizes[resp.ID] = q[1:]
		}
	}
	c.mu.Unlock()
	return err
}
