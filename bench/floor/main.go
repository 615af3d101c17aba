// Floor is the least a Go program can do for what one `agentc run` of
// bench/testdata/agent.cue does: send the same single chat completion (the
// same messages, the output tool with the same schema, strict, the same
// forced tool choice) through the same SDK, and validate the answer's
// arguments with the same JSON Schema validator. It prints the answer.
// bench/run.sh times agentc against it; it imports nothing of agentc.
//
// Usage:
//
//	OPENAI_API_KEY=... floor -base-url URL [-request floor.json] [-schema schema.json]
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

// Request is the request file: what agentc's runtime sends for the bench
// agent, the prompt template already rendered.
type Request struct {
	Model       string `json:"model"`
	System      string `json:"system"`
	User        string `json:"user"`
	Tool        string `json:"tool"` // the output tool's name, before its suffix
	Description string `json:"description"`
	// Strict asks the provider to enforce the schema while generating, as
	// agentc does when the schema is within OpenAI's strict dialect.
	Strict bool `json:"strict"`
}

func run(args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("floor", flag.ContinueOnError)
	fl.SetOutput(stderr)
	baseURL := fl.String("base-url", "", "the server's base URL (required)")
	reqFile := fl.String("request", "bench/testdata/floor.json", "the request")
	schemaFile := fl.String("schema", "bench/testdata/schema.json", "the answer's JSON Schema")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *baseURL == "" || fl.NArg() > 0 {
		fl.Usage()
		return errors.New("usage: floor -base-url URL [-request FILE] [-schema FILE]")
	}
	var req Request
	data, err := os.ReadFile(*reqFile)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, &req); err != nil {
		return fmt.Errorf("%s: %w", *reqFile, err)
	}
	raw, err := os.ReadFile(*schemaFile)
	if err != nil {
		return err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("%s: %w", *schemaFile, err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("schema.json", doc); err != nil {
		return err
	}
	schema, err := c.Compile("schema.json")
	if err != nil {
		return err
	}
	var params map[string]any
	if err := json.Unmarshal(raw, &params); err != nil {
		return err
	}

	// A suffix of its own: agentc draws its own from the plan, and the
	// server compares requests with tool names aside.
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	tool := req.Tool + "_" + hex.EncodeToString(b[:])
	fn := shared.FunctionDefinitionParam{Name: tool, Description: openai.String(req.Description), Parameters: params}
	if req.Strict {
		fn.Strict = openai.Bool(true)
	}
	client := openai.NewClient(
		option.WithAPIKey(os.Getenv("OPENAI_API_KEY")),
		option.WithBaseURL(*baseURL),
		option.WithMaxRetries(0),
	)
	out, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model:      req.Model,
		Messages:   []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(req.System), openai.UserMessage(req.User)},
		Tools:      []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(fn)},
		ToolChoice: openai.ToolChoiceOptionFunctionToolChoice(openai.ChatCompletionNamedToolChoiceFunctionParam{Name: tool}),
	})
	if err != nil {
		return err
	}
	if len(out.Choices) == 0 {
		return errors.New("the response has no choices")
	}
	for _, tc := range out.Choices[0].Message.ToolCalls {
		if tc.Function.Name != tool {
			continue
		}
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(tc.Function.Arguments))
		if err != nil {
			return fmt.Errorf("the answer is not JSON: %w", err)
		}
		if err := schema.Validate(v); err != nil {
			return fmt.Errorf("the answer is invalid: %w", err)
		}
		var answer bytes.Buffer
		if err := json.Compact(&answer, []byte(tc.Function.Arguments)); err != nil {
			return err
		}
		answer.WriteByte('\n')
		_, err = stdout.Write(answer.Bytes())
		return err
	}
	return fmt.Errorf("the model did not call %s", tool)
}
