// Command peer runs the bench agent the way a Genkit user would: the agent
// as a prompt file (bench/testdata/bench.prompt: model, instructions,
// prompt, input and output JSON Schemas), Genkit's OpenAI plugin pointed
// at bench/server, the input and the answer validated against their
// schemas by Genkit. bench/run.sh times agentc beside it: it is the peer,
// another Go framework doing what agentc does for this agent, where the
// floor (bench/floor) is the least a program can do.
//
// It is a module of its own so that Genkit and its dependencies never
// enter agentc's module graph.
//
// Genkit's OpenAI plugin has no native structured output, so Genkit asks
// for the answer in the prompt (the schema in the instructions) and
// parses it from the reply's text; bench/server answers such a request
// with the answer as the message content.
//
// Usage:
//
//	peer -base-url URL [-prompt FILE] [-input FILE]
//
// It prints the answer as compact JSON, keys sorted, and fails (exit 1)
// when the input or the answer does not match its schema. The API key is
// OPENAI_API_KEY's.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
	"github.com/firebase/genkit/go/plugins/compat_oai/openai"
	"github.com/openai/openai-go/option"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "peer:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("peer", flag.ContinueOnError)
	fl.SetOutput(stderr)
	baseURL := fl.String("base-url", "", "the server's base URL (required)")
	promptFile := fl.String("prompt", "bench/testdata/bench.prompt", "the agent, a Genkit prompt file")
	inputFile := fl.String("input", "bench/testdata/input.json", "the input, a JSON object")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *baseURL == "" || fl.NArg() > 0 {
		fl.Usage()
		return errors.New("usage: peer -base-url URL [-prompt FILE] [-input FILE]")
	}
	raw, err := os.ReadFile(*inputFile)
	if err != nil {
		return err
	}
	var input map[string]any
	if err := json.Unmarshal(raw, &input); err != nil {
		return fmt.Errorf("%s: %w", *inputFile, err)
	}
	// Genkit panics on a prompt file it cannot read; check it is there
	// first, for an error rather than a stack.
	if _, err := os.Stat(*promptFile); err != nil {
		return err
	}
	key := os.Getenv("OPENAI_API_KEY")
	if key == "" {
		return errors.New("OPENAI_API_KEY is not set")
	}
	ctx := context.Background()
	g := genkit.Init(ctx, genkit.WithPlugins(&openai.OpenAI{
		APIKey: key,
		Opts:   []option.RequestOption{option.WithBaseURL(*baseURL), option.WithMaxRetries(0)},
	}))
	prompt := genkit.LoadPrompt(g, *promptFile, "")
	if prompt == nil {
		return fmt.Errorf("%s: Genkit loaded no prompt", *promptFile)
	}
	resp, err := prompt.Execute(ctx, ai.WithInput(input))
	if err != nil {
		return err
	}
	var answer any
	if err := resp.Output(&answer); err != nil {
		return err
	}
	out, err := json.Marshal(answer)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", out)
	return err
}
