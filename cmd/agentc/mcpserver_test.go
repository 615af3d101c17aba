package main

import (
	"context"
	"fmt"
	"os"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// docsServer is a real MCP server over stdio, standing in for the
// documentation server the release-notes example declares
// ("docs-mcp-server --stdio"): TestMain puts it on PATH under that name.
func docsServer() {
	s := sdk.NewServer(&sdk.Implementation{Name: "docs-mcp-server", Version: "1"}, nil)
	type query struct {
		Query string `json:"query" jsonschema:"what to look for"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "search_docs", Description: "Search the product documentation."},
		func(_ context.Context, _ *sdk.CallToolRequest, in query) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{
				Text: fmt.Sprintf("No page matches %q.", in.Query)}}}, nil, nil
		})
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}
