package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	nethttp "net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"agentc.dev/agentc/internal/cli"
	"agentc.dev/agentc/internal/cli/cuecmd"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/testmodel"
)

// TestRunExamples runs every example against the test model with an input
// made from its input schema. Each must answer (exit 0) with a value that
// validates against its output schema, and its report must show every
// tool call. The MCP server the release-notes example declares is a real
// one built from this package's test code (docsServer), on PATH.
func TestRunExamples(t *testing.T) {
	names, err := filepath.Glob("../../examples/*.*") // the manifests, not examples/input
	if err != nil || len(names) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	ran := 0
	for _, name := range names {
		t.Run(filepath.Base(name), func(t *testing.T) {
			dir, _ := filepath.Abs(".")
			p, _, err := cuecmd.Compiler().Load(cli.Env{Stdin: strings.NewReader(""), Stderr: &bytes.Buffer{}, Dir: dir}, name, "")
			if err != nil {
				t.Fatalf("build: %v", err)
			}
			input := "null"
			if p.Agent.Input != nil {
				in, err := testmodel.Synthesize(p.Agent.Input.Schema, 0)
				if err != nil {
					t.Fatalf("no input can be made for the example: %v", err)
				}
				input = string(in)
			}
			// http tools' requests, once their allowlist checks pass, are
			// answered here: tests send no traffic off this machine.
			answered := &localTransport{}
			var stdout, stderr bytes.Buffer
			// The test model calls every tool once: those that ask for
			// approval are approved (there is no terminal to ask on).
			code := run([]string{"run", name, "--model", "test", "--report", "--input", input, "--approve", "yes"},
				cli.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Dir: dir, HTTPTransport: answered})
			ran++
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr.String())
			}
			var rep agentrt.Report
			if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
				t.Fatalf("report is not JSON: %v\n%s", err, stdout.String())
			}
			out, err := plan.CompileSchemaJSON(p.Agent.Output.Schema)
			if err != nil {
				t.Fatal(err)
			}
			v, err := plan.UnmarshalJSONValue(rep.Answer)
			if err != nil {
				t.Fatal(err)
			}
			if err := out.Validate(v); err != nil {
				t.Errorf("answer %s does not validate: %v", rep.Answer, err)
			}
			called := map[string]bool{}
			for _, r := range rep.Rounds {
				for _, c := range r.ToolCalls {
					called[c.Name] = true
				}
			}
			for name, decl := range p.Agent.Capabilities.Tools {
				names := []string{name}
				if decl.Kind == "mcp" {
					names = decl.Allow // an mcp server's tools go by their own names
				}
				for _, n := range names {
					if !called[n] {
						t.Errorf("the report shows no call of tool %q", n)
					}
				}
			}
			if p.Output != nil && p.Output.Mode == plan.ModeTool && !called[rep.OutputTool] {
				t.Errorf("the report shows no call of the output tool %q", rep.OutputTool)
			}
			for _, rd := range rep.Rounds {
				for _, c := range rd.ToolCalls {
					if decl := p.Agent.Capabilities.Tools[c.Name]; decl.Kind == "http" && c.IsError {
						t.Errorf("http tool %s failed: %s", c.Name, c.Error)
					}
				}
			}
			if n := networkTools(p); n > 0 && answered.count() == 0 {
				t.Errorf("the example has %d http tools, but no request reached the transport", n)
			}
		})
	}
	if ran == 0 {
		t.Error("no example ran")
	}
}

// networkTools counts the http tools of a plan.
func networkTools(p *plan.Plan) int {
	n := 0
	for _, t := range p.Agent.Capabilities.Tools {
		if t.Kind == "http" {
			n++
		}
	}
	return n
}

// localTransport answers every request with an empty JSON object, on the
// spot, and counts them.
type localTransport struct {
	mu sync.Mutex
	n  int
}

func (l *localTransport) RoundTrip(req *nethttp.Request) (*nethttp.Response, error) {
	l.mu.Lock()
	l.n++
	l.mu.Unlock()
	return &nethttp.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: nethttp.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader("{}")), Request: req}, nil
}

func (l *localTransport) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// TestRunInterrupted: a cancelled run exits 130 and sends nothing more.
func TestRunInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	code := run([]string{"run", "../../examples/invoice-extractor.cue", "--model", "test", "--input", `{"document_text":"Invoice 42 from ACME Corp, total 10 EUR","file_name":"a.pdf","sender_email":"a@b.example"}`},
		cli.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Ctx: ctx})
	if code != 130 {
		t.Errorf("exit %d, want 130\n%s%s", code, stdout.String(), stderr.String())
	}
	if stdout.Len() > 0 || strings.Contains(stderr.String(), "model_call") {
		t.Errorf("an interrupted run went on:\n%s%s", stdout.String(), stderr.String())
	}
}
