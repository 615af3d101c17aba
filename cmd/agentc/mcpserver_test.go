package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// docsServer is a real MCP server over stdio, standing in for the
// documentation server the release-notes example declares
// ("docs-mcp-server --stdio"): TestMain puts it on PATH under that name.
func docsServer() {
	s := sdk.NewServer(&sdk.Implementation{Name: "docs-mcp-server", Version: "1"}, nil)
	// DOCS_SERVER_DESCRIPTION changes what the server says of its tool:
	// a server whose tools changed.
	desc := "Search the product documentation."
	if d := os.Getenv("DOCS_SERVER_DESCRIPTION"); d != "" {
		desc = d
	}
	// DOCS_SERVER_SCHEMA names a file whose JSON is the tool's input
	// schema, in place of the one its arguments' type makes.
	if f := os.Getenv("DOCS_SERVER_SCHEMA"); f != "" {
		schema, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		s.AddTool(&sdk.Tool{Name: "search_docs", Description: desc, InputSchema: json.RawMessage(schema)},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "No page matches."}}}, nil
			})
	} else {
		addSearch(s, desc)
	}
	// DOCS_SERVER_STUBBORN makes a server that is slow to stop: it writes
	// its pid to server.pid, ignores SIGTERM, and stays after its stdin
	// closes, until it is killed.
	stubborn := os.Getenv("DOCS_SERVER_STUBBORN") != ""
	if stubborn {
		signal.Ignore(syscall.SIGTERM)
		if err := os.WriteFile("server.pid", []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if stubborn {
		time.Sleep(time.Hour)
	}
	os.Exit(0)
}

// addSearch adds the server's search_docs tool, its input schema made
// from its arguments' type.
func addSearch(s *sdk.Server, desc string) {
	type query struct {
		Query string `json:"query" jsonschema:"what to look for"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "search_docs", Description: desc},
		func(_ context.Context, _ *sdk.CallToolRequest, in query) (*sdk.CallToolResult, any, error) {

			// DOCS_SERVER_RESULT names a file whose text is every result.
			if f := os.Getenv("DOCS_SERVER_RESULT"); f != "" {
				data, err := os.ReadFile(f)
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(data)}}}, nil, err
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{
				Text: fmt.Sprintf("No page matches %q.", in.Query)}}}, nil, nil
		})
}
