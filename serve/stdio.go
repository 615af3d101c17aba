package serve

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeSession serves s to the one client at the other end of t (MCP's
// stdio transport) until the client ends the session, or ctx ends (the
// server's stop). A stop interrupts the runs in flight (Runs.Stop; with a
// journal directory they are resumed by a later server) and waits until
// each call that was in flight has been answered, with what its run got to
// (the server stopped before it ended), before it ends the session: the
// client has a result for every call it made, not a closed connection.
// Nothing else bounds that wait: every call's run ends on the stop, and a
// second stop signal ends the process at once. The client's own end of the
// session cancels its runs, as a call it cancels does.
func ServeSession(ctx context.Context, s *mcp.Server, t mcp.Transport, runs *Runs) error {
	calls := &callsInFlight{ids: map[jsonrpc.ID]chan struct{}{}}
	sctx, end := context.WithCancel(context.WithoutCancel(ctx))
	defer end()
	served := make(chan struct{})
	defer close(served)
	defer context.AfterFunc(ctx, func() {
		runs.Stop()
		calls.answered(served)
		end()
	})()
	err := s.Run(sctx, &answering{Transport: t, calls: calls})
	runs.Stop()
	return err
}

// callsInFlight holds the tools/call requests a session has read and not
// yet answered, by their id: each with a channel closed once its answer
// is written.
type callsInFlight struct {
	mu  sync.Mutex
	ids map[jsonrpc.ID]chan struct{}
}

// read counts a call the client made.
func (c *callsInFlight) read(id jsonrpc.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.ids[id]; !ok {
		c.ids[id] = make(chan struct{})
	}
}

// written counts out the call a response answered.
func (c *callsInFlight) written(id jsonrpc.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch, ok := c.ids[id]; ok {
		close(ch)
		delete(c.ids, id)
	}
}

// answered waits until each call in flight now has been answered, or the
// session is over (served closed: an answer it could no longer write).
func (c *callsInFlight) answered(served <-chan struct{}) {
	c.mu.Lock()
	pending := make([]chan struct{}, 0, len(c.ids))
	for _, ch := range c.ids {
		pending = append(pending, ch)
	}
	c.mu.Unlock()
	for _, ch := range pending {
		select {
		case <-ch:
		case <-served:
			return
		}
	}
}

// answering is a transport whose connection tells calls of each tools/call
// request it reads and each response it writes.
type answering struct {
	mcp.Transport
	calls *callsInFlight
}

func (t *answering) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &answeringConn{Connection: c, calls: t.calls}, nil
}

// SupportsProtocolVersion is the wrapped transport's, where it says.
func (t *answering) SupportsProtocolVersion(v string) bool {
	if p, ok := t.Transport.(mcp.ProtocolVersionSupporter); ok {
		return p.SupportsProtocolVersion(v)
	}
	return true
}

type answeringConn struct {
	mcp.Connection
	calls *callsInFlight
}

func (c *answeringConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return msg, err
		}
		switch m := msg.(type) {
		case *jsonrpc.Response:
			// An older client's answer to an approval's form: one that
			// is not I-JSON becomes an error, which refuses the call.
			if m.Error == nil {
				if err := answerNotIJSON(m.Result); err != nil {
					return &jsonrpc.Response{ID: m.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: err.Error()}}, nil
				}
			}
		case *jsonrpc.Request:
			if !m.IsCall() || m.Method != "tools/call" {
				break
			}
			// A newer client's call that answers one: refused before
			// the SDK reads it, so it decides nothing, and the run
			// waits for an answer that reads one way.
			if err := callAnswersNotIJSON(m.Params); err != nil {
				if err := c.Connection.Write(ctx, &jsonrpc.Response{ID: m.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}}); err != nil {
					return nil, err
				}
				continue
			}
			c.calls.read(m.ID)
		}
		return msg, nil
	}
}

func (c *answeringConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		// Written, or never to be: either way no longer waited for.
		c.calls.written(resp.ID)
	}
	return err
}
