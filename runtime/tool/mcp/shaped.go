package mcp

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"agentc.dev/agentc/internal/leaf/jsonshape"
)

// MaxMessageValues bounds the JSON values of a message a server sends,
// beside its bytes (MaxMessageBytes): what the SDK decodes a result or a
// tool's schema into costs hundreds of bytes a value where the message
// took two or three (16 MiB of {} in a result's structuredContent held
// about 580 MB). A message's values are counted before the SDK decodes its
// result or parameters (jsonshape, which allocates nothing): at 2^18 a
// message decodes to tens of megabytes. A table of 20,000 rows of ten
// columns is within it; a larger result goes as text. (How deep a message
// nests the SDK bounds itself, at 1,000, as it reads the message.)
const MaxMessageValues = 1 << 18

// denseError is a message past MaxMessageValues.
type denseError struct {
	what   string
	values int
}

func (e *denseError) Error() string {
	return fmt.Sprintf("the server sent %s of %d JSON values, more than the %d agentc reads of one message (a large result goes as text)", e.what, e.values, MaxMessageValues)
}

// dense returns the error of a message's result or parameters past
// MaxMessageValues, or nil.
func dense(what string, b []byte) error {
	if values, _ := jsonshape.Measure(b); values > MaxMessageValues {
		return &denseError{what: what, values: values}
	}
	return nil
}

// shapedTransport connects as its transport does, holding each message
// the server sends to MaxMessageValues before the SDK decodes its result
// or parameters: an answer past it fails its call, saying why, and the
// session goes on; a request or notification past it ends the session (a
// server sends none of any size), and lost hears why.
type shapedTransport struct {
	mcp.Transport
	lost func(error)
}

func (t shapedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &shapedConn{Connection: c, lost: t.lost}, nil
}

type shapedConn struct {
	mcp.Connection
	lost func(error)
}

func (c *shapedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err != nil {
		return m, err
	}
	switch m := m.(type) {
	case *jsonrpc.Response:
		if err := dense("an answer", m.Result); err != nil {
			return &jsonrpc.Response{ID: m.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}}, nil
		}
	case *jsonrpc.Request:
		what := "a notification"
		if m.IsCall() {
			what = "a request"
		}
		if err := dense(what+" ("+m.Method+")", m.Params); err != nil {
			if c.lost != nil {
				c.lost(err)
			}
			go c.Connection.Close()
			return nil, err
		}
	}
	return m, nil
}
