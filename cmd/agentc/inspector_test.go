package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The scripts' MCP client from outside this repository is the MCP
// Inspector's command-line client, which scripts/install-mcp-inspector.sh
// installs with npm into a directory of its own and prints:
// $AGENTC_MCP_INSPECTOR. The scripts run it as $NODE $MCP_INSPECTOR (the
// package's mcp-inspector program, run by the Node.js installed beside it
// where there is one, else by node on the PATH). Where there is none, the
// scripts that need it skip, saying so, unless AGENTC_REQUIRE_MCP_INSPECTOR
// is set (the test script sets it), which makes them fail.

func mcpInspector() (node, prog, why string) {
	dir := os.Getenv("AGENTC_MCP_INSPECTOR")
	if dir == "" {
		return "", "", "AGENTC_MCP_INSPECTOR is not set; scripts/install-mcp-inspector.sh installs the MCP Inspector and prints it"
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", "", err.Error()
	}
	bin := filepath.Join(dir, "node_modules", ".bin")
	prog = filepath.Join(bin, "mcp-inspector")
	if _, err := os.Stat(prog); err != nil {
		return "", "", fmt.Sprintf("AGENTC_MCP_INSPECTOR names %s: %v", dir, err)
	}
	node = filepath.Join(bin, "node")
	if _, err := os.Stat(node); err != nil {
		if node, err = exec.LookPath("node"); err != nil {
			return "", "", "node is not on the PATH"
		}
	}
	return node, prog, ""
}

// mcpInspectorCondition is the [mcpinspector] condition: the Inspector is
// there. Where it is not and must be, the condition is an error, which
// fails the script that asks, saying why.
func mcpInspectorCondition() (bool, error) {
	_, prog, why := mcpInspector()
	if prog != "" {
		return true, nil
	}
	if os.Getenv("AGENTC_REQUIRE_MCP_INSPECTOR") != "" {
		return false, fmt.Errorf("AGENTC_REQUIRE_MCP_INSPECTOR is set, and there is no MCP Inspector: %s", why)
	}
	fmt.Fprintf(os.Stderr, "SKIPPED: scripts that need the MCP Inspector: %s\n", why)
	return false, nil
}

// mcpInspectorSetup sets $NODE and $MCP_INSPECTOR for the scripts, where
// the Inspector is there.
func mcpInspectorSetup(e *testscript.Env) {
	if node, prog, _ := mcpInspector(); prog != "" {
		e.Setenv("NODE", node)
		e.Setenv("MCP_INSPECTOR", prog)
	}
}

// mcpTool is the script command mcptool LIST TOOL DIGEST: LIST, what an
// MCP client printed of tools/list, holds the tool TOOL once, its
// inputSchema and outputSchema are JSON Schemas (draft 2020-12, MCP's
// default) that compile, and its _meta's agentc/contract and agentc/plan
// are the contract and plan of DIGEST, a line of agentc digest --json.
func mcpTool(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: mcptool LIST TOOL DIGEST")
	}
	tool := listedTool(ts, args[0], args[1])
	for _, s := range []string{"inputSchema", "outputSchema"} {
		compileSchema(ts, tool, s)
	}
	var digest struct{ Contract, Plan string }
	ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[2])), &digest))
	var meta map[string]any
	ts.Check(json.Unmarshal(tool["_meta"], &meta))
	for key, want := range map[string]string{"agentc/contract": digest.Contract, "agentc/plan": digest.Plan} {
		if got, _ := meta[key].(string); got == "" || got != want {
			ts.Fatalf("tool %s: _meta %s is %q, want %q", args[1], key, meta[key], want)
		}
	}
}

// mcpResult is the script command mcpresult LIST TOOL RESULT: RESULT,
// what an MCP client printed of a tools/call of TOOL, is not an error, and
// its structuredContent validates against the outputSchema the tool has in
// LIST (as mcptool reads it), and its text is that content's JSON. With !,
// the result fails one of these.
func mcpResult(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: mcpresult LIST TOOL RESULT")
	}
	schema := compileSchema(ts, listedTool(ts, args[0], args[1]), "outputSchema")
	err := checkResult(schema, []byte(ts.ReadFile(args[2])))
	switch {
	case err != nil && !neg:
		ts.Fatalf("%s: %v", args[2], err)
	case err == nil && neg:
		ts.Fatalf("%s: a valid result of %s", args[2], args[1])
	case err != nil:
		ts.Logf("%s: %v", args[2], err)
	}
}

func checkResult(schema *jsonschema.Schema, data []byte) error {
	var result struct {
		Content []struct {
			Type, Text string
		}
		StructuredContent json.RawMessage
		IsError           bool
	}
	if err := json.Unmarshal(data, &result); err != nil {
		return err
	}
	if result.IsError {
		return fmt.Errorf("the result is an error (isError)")
	}
	if len(result.StructuredContent) == 0 {
		return fmt.Errorf("the result has no structuredContent")
	}
	content, err := jsonschema.UnmarshalJSON(bytes.NewReader(result.StructuredContent))
	if err != nil {
		return err
	}
	if err := schema.Validate(content); err != nil {
		return fmt.Errorf("its structuredContent does not validate against the output schema: %v", err)
	}
	if len(result.Content) != 1 || result.Content[0].Type != "text" {
		return fmt.Errorf("the result's content is not one text: %+v", result.Content)
	}
	text, err := jsonschema.UnmarshalJSON(strings.NewReader(result.Content[0].Text))
	if err != nil {
		return fmt.Errorf("its text is not JSON: %v", err)
	}
	if !reflect.DeepEqual(text, content) {
		return fmt.Errorf("its text %s is not its structuredContent %s", result.Content[0].Text, result.StructuredContent)
	}
	return nil
}

// listedTool is the tool named name in the file list, a tools/list result.
func listedTool(ts *testscript.TestScript, list, name string) map[string]json.RawMessage {
	var l struct{ Tools []map[string]json.RawMessage }
	if err := json.Unmarshal([]byte(ts.ReadFile(list)), &l); err != nil {
		ts.Fatalf("%s: %v", list, err)
	}
	var found []map[string]json.RawMessage
	for _, t := range l.Tools {
		var n string
		_ = json.Unmarshal(t["name"], &n)
		if n == name {
			found = append(found, t)
		}
	}
	if len(found) != 1 {
		ts.Fatalf("%s lists the tool %s %d times, want once", list, name, len(found))
	}
	return found[0]
}

// compileSchema compiles the tool's schema field as a JSON Schema of draft
// 2020-12, with its formats asserted.
func compileSchema(ts *testscript.TestScript, tool map[string]json.RawMessage, field string) *jsonschema.Schema {
	raw, ok := tool[field]
	if !ok {
		ts.Fatalf("the tool has no %s", field)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	ts.Check(err)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	const url = "mem://tool.json"
	ts.Check(c.AddResource(url, doc))
	s, err := c.Compile(url)
	if err != nil {
		ts.Fatalf("the tool's %s does not compile: %v", field, err)
	}
	return s
}

// serveHTTP is the script command servehttp ARGS...: it starts agentc
// serve --http 127.0.0.1:0 ARGS... in the background, stopped when the
// script ends, reads the address it says it serves at from its standard
// error (so the server listens before the script goes on), and sets
// $MCP_URL to its MCP endpoint. The rest of its standard error goes to
// the file serve.log.
func serveHTTP(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("usage: servehttp ARGS...")
	}
	prog, err := exec.LookPath("agentc")
	ts.Check(err)
	cmd := exec.Command(prog, append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Dir = ts.MkAbs(".")
	var env []string
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "AGENTC_SERVE_TOKEN", "AGENTC_PRICES_MAX_AGE"} {
		env = append(env, k+"="+ts.Getenv(k))
	}
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	ts.Check(err)
	ts.Check(cmd.Start())
	exited := make(chan struct{})
	ts.Defer(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	log, err := os.Create(ts.MkAbs("serve.log"))
	ts.Check(err)
	found := make(chan string, 1)
	go func() {
		defer close(exited)
		defer log.Close()
		addr := regexp.MustCompile(`serving \d+ agents? at (http://127\.0\.0\.1:\d+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			fmt.Fprintln(log, sc.Text())
			if m := addr.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		_ = cmd.Wait()
		close(found)
	}()
	select {
	case u, ok := <-found:
		if !ok {
			ts.Fatalf("agentc serve --http ended without serving: %s", ts.ReadFile("serve.log"))
		}
		ts.Setenv("MCP_URL", u+"/mcp")
	case <-time.After(60 * time.Second):
		ts.Fatalf("agentc serve --http said no address in 60 s")
	}
}
