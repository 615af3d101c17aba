package mcp

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary is also the MCP server the tests start: with
// serverVar set to 1 it serves testServer over stdio and exits.
const (
	serverVar  = "AGENTC_MCP_TEST_SERVER"
	variantVar = "AGENTC_MCP_TEST_VARIANT" // "changed", "crash", "mute", "spin", "flood", "floodstart", "ask", "newer"
	canaryVar  = "AGENTC_MCP_TEST_CANARY"  // set in the parent, never passed
)

// photoPNG is a real PNG, one pixel.
var photoPNG = func() []byte {
	var b bytes.Buffer
	img := image.NewGray(image.Rect(0, 0, 1, 1))
	if err := png.Encode(&b, img); err != nil {
		panic(err)
	}
	return b.Bytes()
}()

// platformTools adds the test server's tools that only some systems have.
var platformTools func(*sdk.Server)

// spun is what a server that spins (variant "spin", tool "spin") counts.
var spun int

func TestMain(m *testing.M) {
	if os.Getenv(serverVar) == "1" {
		os.Exit(serveStdio(os.Getenv(variantVar)))
	}
	os.Exit(m.Run())
}

func serveStdio(variant string) int {
	if variant == "crash" {
		fmt.Fprintln(os.Stderr, "test server: refusing to start (variant crash)")
		return 3
	}
	if variant == "mute" {
		io.Copy(io.Discard, os.Stdin)
		return 0
	}
	if variant == "spin" {
		for spun = 0; ; spun++ {
		}
	}
	if variant == "flood" {
		return flood()
	}
	if variant == "floodstart" {
		// Asked to start, it sends 200 pings of long ids (their answers,
		// 60 KB, more than a pipe holds) and reads nothing more.
		handServer(os.Stdin, os.Stdout, flooding{n: 200, idPad: 300, at: "initialize"}, nil)
		return 0
	}
	if variant == "newer" {
		// It answers initialize with the newest revision, whatever it
		// was asked for.
		handServer(os.Stdin, os.Stdout, flooding{version: "2026-07-28"}, nil)
		return 0
	}
	if err := testServer(variant).Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "test server:", err)
		return 1
	}
	return 0
}

// BigBytes is the size of the big tool's result, past MaxResultBytes.
const bigBytes = 2 << 20

// testServer is a real MCP server with the tools the tests call. The
// variant "changed" changes the description of echo.
func testServer(variant string) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "agentc-test-server", Version: "1"}, nil)
	text := func(s string) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
	}

	echoDesc := "Echo the text back."
	if variant == "changed" {
		echoDesc = "Echo the text back, loudly."
	}
	type echoIn struct {
		Text string `json:"text"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: echoDesc}, func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
		return text(in.Text), nil, nil
	})
	type addIn struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "add", Description: "Add two integers."}, func(_ context.Context, _ *sdk.CallToolRequest, in addIn) (*sdk.CallToolResult, any, error) {
		return text(fmt.Sprint(in.A + in.B)), nil, nil
	})
	type none struct{}
	sdk.AddTool(s, &sdk.Tool{Name: "fail", Description: "Fail on purpose."}, func(context.Context, *sdk.CallToolRequest, none) (*sdk.CallToolResult, any, error) {
		res := text("it failed on purpose")
		res.IsError = true
		return res, nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "secret", Description: "Tell the secret."}, func(context.Context, *sdk.CallToolRequest, none) (*sdk.CallToolResult, any, error) {
		return text("the secret"), nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "sleep", Description: "Block until cancelled."}, func(ctx context.Context, _ *sdk.CallToolRequest, _ none) (*sdk.CallToolResult, any, error) {
		<-ctx.Done()
		return nil, nil, ctx.Err()
	})
	sdk.AddTool(s, &sdk.Tool{Name: "exit", Description: "Exit the server."}, func(context.Context, *sdk.CallToolRequest, none) (*sdk.CallToolResult, any, error) {
		fmt.Fprintln(os.Stderr, "test server: exiting on request")
		os.Exit(2)
		return nil, nil, nil
	})
	type envIn struct {
		Name string `json:"name"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "env", Description: "Read an environment variable."}, func(_ context.Context, _ *sdk.CallToolRequest, in envIn) (*sdk.CallToolResult, any, error) {
		v, ok := os.LookupEnv(in.Name)
		if !ok {
			return text("(unset)"), nil, nil
		}
		return text(v), nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "cwd", Description: "Print the working directory."}, func(context.Context, *sdk.CallToolRequest, none) (*sdk.CallToolResult, any, error) {
		wd, err := os.Getwd()
		return text(wd), nil, err
	})
	sdk.AddTool(s, &sdk.Tool{Name: "image", Description: "Return an image and a caption."}, func(context.Context, *sdk.CallToolRequest, none) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{
			&sdk.ImageContent{Data: []byte("\x89PNG"), MIMEType: "image/png"},
			&sdk.TextContent{Text: "a caption"},
		}}, nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "photo", Description: "Return a picture, a PDF, a text blob, an image of no type agentc knows and a caption."}, func(context.Context, *sdk.CallToolRequest, none) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{
			&sdk.ImageContent{Data: photoPNG, MIMEType: "image/png"},
			&sdk.ImageContent{Data: []byte("\x00\x00\x00\x18ftypheic"), MIMEType: "image/heic"},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///report.pdf", MIMEType: "application/pdf", Blob: []byte("%PDF-1.4\n% a report\n")}},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///notes.txt", MIMEType: "text/plain", Blob: []byte("plain notes")}},
			&sdk.TextContent{Text: "a caption"},
		}}, nil, nil
	})
	if platformTools != nil {
		platformTools(s)
	}
	if variant == "ask" {
		// The newest revision's way to ask the client for input before
		// answering (multi-round-trip requests): each call's result asks
		// for the client's roots, and each call is said on stderr.
		var calls atomic.Int64
		sdk.AddTool(s, &sdk.Tool{Name: "ask", Description: "Ask for the client's roots."}, func(context.Context, *sdk.CallToolRequest, none) (*sdk.CallToolResult, any, error) {
			n := calls.Add(1)
			fmt.Fprintf(os.Stderr, "test server: ask called (%d)\n", n)
			return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"roots": &sdk.ListRootsParams{}}, RequestState: fmt.Sprint(n)}, nil, nil
		})
		// Asking nothing is the revision's way to say it is busy.
		sdk.AddTool(s, &sdk.Tool{Name: "busy", Description: "Be busy."}, func(context.Context, *sdk.CallToolRequest, none) (*sdk.CallToolResult, any, error) {
			fmt.Fprintf(os.Stderr, "test server: busy called (%d)\n", calls.Add(1))
			return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{}}, nil, nil
		})
	}
	sdk.AddTool(s, &sdk.Tool{Name: "spawn", Description: "Start a process in a session of its own; return its pid."}, func(context.Context, *sdk.CallToolRequest, none) (*sdk.CallToolResult, any, error) {
		cmd := exec.Command("setsid", "sleep", "300")
		if err := cmd.Start(); err != nil {
			return nil, nil, err
		}
		return text(strconv.Itoa(cmd.Process.Pid)), nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "big", Description: "Return a lot of text."}, func(context.Context, *sdk.CallToolRequest, none) (*sdk.CallToolResult, any, error) {
		return text(strings.Repeat("é", bigBytes/2)), nil, nil
	})

	// Schemas that accept anything: the SDK refuses to serve them through
	// AddTool, so they are added to the listing on the way out, as a
	// careless server would send them.
	bad := []*sdk.Tool{
		{Name: "empty_schema", Description: "Anything goes.", InputSchema: json.RawMessage(`{}`)},
		{Name: "annotations_only", Description: "Anything goes.", InputSchema: json.RawMessage(`{"title":"Args","description":"Whatever you like."}`)},
		{Name: "not_object", Description: "Anything goes.", InputSchema: json.RawMessage(`true`)},
	}
	s.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			res, err := next(ctx, method, req)
			if lt, ok := res.(*sdk.ListToolsResult); ok && err == nil && lt.NextCursor == "" {
				lt.Tools = append(lt.Tools, bad...)
			}
			return res, err
		}
	})
	return s
}

// flood is a server, written by hand, that answers the session's start
// and its tool list, and then, asked to call a tool, sends 5,000 pings
// and never reads its input again: the answers to its pings fill the
// pipe, and the client's handlers that write them wait for good.
func flood() int {
	handServer(os.Stdin, os.Stdout, flooding{n: 5000, pad: 2048}, nil)
	return 0
}

// flooding is what handServer sends when asked to call a tool: n pings,
// each with pad bytes of padding, all of one id where sameID says so;
// and the protocol version it answers initialize with, where version
// says (else the one it was asked for).
type flooding struct {
	n, pad  int
	sameID  bool
	version string
	// idPad pads each ping's id, which its answer repeats; at is the
	// request it floods when asked (tools/call where empty).
	idPad int
	at    string
}

// handServer is an MCP server written by hand over r and w, as a server
// of an older revision: it answers initialize, lists one tool (echo),
// answers any other request with an empty result, and, asked to call a
// tool, sends f's pings and reads nothing more, until done (nil: never).
// It returns when r ends or a write fails (the client went away).
func handServer(r io.Reader, w io.Writer, f flooding, done <-chan struct{}) {
	in := bufio.NewScanner(r)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	send := func(v any) error {
		b, _ := json.Marshal(v)
		_, err := w.Write(append(b, '\n'))
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
		if json.Unmarshal(in.Bytes(), &m) != nil || m.ID == nil {
			continue
		}
		result := map[string]any{}
		switch m.Method {
		case cmp.Or(f.at, "tools/call"):
			pad := strings.Repeat("x", f.pad)
			for i := range f.n {
				id := fmt.Sprintf("p%d%s", i, strings.Repeat("x", f.idPad))
				if f.sameID {
					id = "same"
				}
				if send(map[string]any{"jsonrpc": "2.0", "id": id, "method": "ping", "params": map[string]any{"_meta": map[string]any{"pad": pad}}}) != nil {
					return
				}
			}
			<-done // reads nothing more
			return
		case "initialize":
			v := m.Params.ProtocolVersion
			if f.version != "" {
				v = f.version
			}
			result = map[string]any{"protocolVersion": v, "capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "flood", "version": "1"}}
		case "tools/list":
			result = map[string]any{"tools": []any{map[string]any{"name": "echo", "description": "Echo.", "inputSchema": map[string]any{"type": "object"}}}}
		}
		if send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result}) != nil {
			return
		}
	}
}
