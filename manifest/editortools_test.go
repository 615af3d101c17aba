package manifest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"
)

// The editor tests check the generated JSON Schema with the programs
// editors check manifests with: ajv (strict, draft 2020-12) and the YAML
// language server. scripts/install-editor-tools.sh installs both with npm
// and prints the directory that holds their node_modules, which the tests
// read from $AGENTC_EDITOR_TOOLS. Without it they skip, loudly; with
// AGENTC_REQUIRE_EDITOR_TOOLS set (scripts/test.sh sets it) they fail.
func editorTools(t *testing.T) (node, dir string) {
	t.Helper()
	dir = os.Getenv("AGENTC_EDITOR_TOOLS")
	why := ""
	if dir == "" {
		why = "AGENTC_EDITOR_TOOLS is not set; scripts/install-editor-tools.sh installs the tools and prints it"
	} else if _, err := os.Stat(filepath.Join(dir, "node_modules")); err != nil {
		why = fmt.Sprintf("AGENTC_EDITOR_TOOLS names %s: %v", dir, err)
	} else if node, err = exec.LookPath("node"); err != nil {
		why = "node is not on the PATH"
	}
	if why != "" {
		if os.Getenv("AGENTC_REQUIRE_EDITOR_TOOLS") != "" {
			t.Fatalf("the editor tools: %s", why)
		}
		t.Skipf("SKIPPED: no editor tools: %s", why)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return node, dir
}

// writeJSONSchema writes the generated schema into dir as
// agentc.schema.json, the name the test manifests give in their
// yaml-language-server line.
func writeJSONSchema(t *testing.T, dir string) string {
	t.Helper()
	b, err := JSONSchema()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "agentc.schema.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestJSONSchemaAjvStrict compiles the schema with ajv in strict mode.
func TestJSONSchemaAjvStrict(t *testing.T) {
	node, tools := editorTools(t)
	schema := writeJSONSchema(t, t.TempDir())
	out, err := exec.Command(node, "testdata/editortools/ajv-strict.js", tools, schema).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "compiled" {
		t.Fatalf("ajv strict does not compile the schema (%v):\n%s", err, out)
	}
}

// TestJSONSchemaYAMLLanguageServer opens YAML manifests in the YAML
// language server with the schema and checks what it marks: nothing in
// the manifests of testdata/editor, and in each case of
// testdata/editortools/mistakes.txtar, one mistake, exactly one
// diagnostic, on the line that ends with the comment "# want: TEXT",
// whose message holds TEXT.
func TestJSONSchemaYAMLLanguageServer(t *testing.T) {
	node, tools := editorTools(t)
	dir := t.TempDir()
	schema := writeJSONSchema(t, dir)

	type want struct {
		line int // 0-based, as LSP counts
		text string
	}
	docs := map[string]*want{} // file name → its one diagnostic, or nil
	good, _ := filepath.Glob("testdata/editor/*.yaml")
	if len(good) < 2 {
		t.Fatalf("found %d YAML manifests in testdata/editor", len(good))
	}
	for _, f := range good {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs[filepath.Base(f)] = nil
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ar, err := txtar.ParseFile("testdata/editortools/mistakes.txtar")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		var w *want
		for i, line := range strings.Split(string(f.Data), "\n") {
			if _, text, ok := strings.Cut(line, " # want: "); ok {
				if w != nil {
					t.Fatalf("%s: two lines want a diagnostic", f.Name)
				}
				w = &want{i, text}
			}
		}
		if w == nil {
			t.Fatalf("%s: no line says # want:", f.Name)
		}
		if _, dup := docs[f.Name]; dup {
			t.Fatalf("%s twice", f.Name)
		}
		docs[f.Name] = w
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	ls := startLanguageServer(t, node, filepath.Join(tools, "node_modules/yaml-language-server/bin/yaml-language-server"))
	ls.call("initialize", map[string]any{
		"processId":    os.Getpid(),
		"rootUri":      fileURI(dir),
		"capabilities": map[string]any{},
	})
	ls.notify("initialized", map[string]any{})
	// The schema is associated by the settings too, not only by the
	// files' first lines, and the schema store (fetched from the network)
	// is off.
	ls.notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{
		"yaml": map[string]any{
			"validate":    true,
			"schemas":     map[string]any{fileURI(schema): "*.yaml"},
			"schemaStore": map[string]any{"enable": false},
		},
	}})
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range docs {
			if !yield(n) {
				return
			}
		}
	})
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		ls.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
			"uri": fileURI(filepath.Join(dir, name)), "languageId": "yaml", "version": 1, "text": string(data),
		}})
	}
	got := ls.diagnostics(len(names))
	for _, name := range names {
		ds, ok := got[fileURI(filepath.Join(dir, name))]
		if !ok {
			t.Errorf("%s: no diagnostics published", name)
			continue
		}
		w := docs[name]
		if w == nil {
			for _, d := range ds {
				t.Errorf("%s:%d: %s; want no diagnostic", name, d.Range.Start.Line+1, d.Message)
			}
			continue
		}
		if len(ds) != 1 || ds[0].Range.Start.Line != w.line || !strings.Contains(ds[0].Message, w.text) {
			var b strings.Builder
			for _, d := range ds {
				fmt.Fprintf(&b, "\n\t%s:%d: %s", name, d.Range.Start.Line+1, d.Message)
			}
			t.Errorf("%s: %d diagnostics:%s\nwant one, at line %d, with %q", name, len(ds), b.String(), w.line+1, w.text)
		}
	}
	ls.call("shutdown", nil)
	ls.notify("exit", nil)
}

func fileURI(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

// languageServer is a client of a language server over stdio: JSON-RPC
// messages framed by a Content-Length header.
type languageServer struct {
	t    *testing.T
	in   io.WriteCloser
	msgs chan lspMessage
	id   int
}

type lspMessage struct {
	ID     *json.RawMessage `json:"id,omitempty"`
	Method string           `json:"method,omitempty"`
	Params json.RawMessage  `json:"params,omitempty"`
	Result json.RawMessage  `json:"result,omitempty"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

type lspDiagnostic struct {
	Range struct {
		Start struct{ Line, Character int } `json:"start"`
	} `json:"range"`
	Message string `json:"message"`
}

func startLanguageServer(t *testing.T, node, server string) *languageServer {
	t.Helper()
	cmd := exec.Command(node, server, "--stdio")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ls := &languageServer{t: t, in: in, msgs: make(chan lspMessage, 64)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(ls.msgs)
		r := bufio.NewReader(out)
		for {
			msg, err := readLSP(r)
			if err != nil {
				return
			}
			ls.msgs <- msg
		}
	}()
	t.Cleanup(func() {
		in.Close()
		// The server exits on "exit" or when its input closes; a
		// server that does not is killed.
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
		for range ls.msgs {
		}
		cmd.Wait()
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("the language server's stderr:\n%s", stderr.String())
		}
	})
	return ls
}

func readLSP(r *bufio.Reader) (lspMessage, error) {
	var msg lspMessage
	n := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return msg, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			if n, err = strconv.Atoi(v); err != nil {
				return msg, err
			}
		}
	}
	if n < 0 || n > 64<<20 {
		return msg, fmt.Errorf("a message of length %d", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return msg, err
	}
	return msg, json.Unmarshal(body, &msg)
}

func (ls *languageServer) send(msg map[string]any) {
	ls.t.Helper()
	msg["jsonrpc"] = "2.0"
	body, err := json.Marshal(msg)
	if err != nil {
		ls.t.Fatal(err)
	}
	if _, err := fmt.Fprintf(ls.in, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		ls.t.Fatalf("writing to the language server: %v", err)
	}
}

func (ls *languageServer) notify(method string, params any) {
	ls.t.Helper()
	ls.send(map[string]any{"method": method, "params": params})
}

// call sends a request and waits for its answer, answering the server's
// own requests (with no result) and setting aside what it publishes.
func (ls *languageServer) call(method string, params any) json.RawMessage {
	ls.t.Helper()
	ls.id++
	id := ls.id
	ls.send(map[string]any{"id": id, "method": method, "params": params})
	for {
		msg := ls.next()
		if msg.Method == "" && msg.ID != nil && string(*msg.ID) == strconv.Itoa(id) {
			if msg.Error != nil {
				ls.t.Fatalf("%s: %s", method, msg.Error.Message)
			}
			return msg.Result
		}
	}
}

// diagnostics waits for the diagnostics of n documents, by URI.
func (ls *languageServer) diagnostics(n int) map[string][]lspDiagnostic {
	ls.t.Helper()
	got := map[string][]lspDiagnostic{}
	for len(got) < n {
		msg := ls.next()
		if msg.Method != "textDocument/publishDiagnostics" {
			continue
		}
		var p struct {
			URI         string          `json:"uri"`
			Diagnostics []lspDiagnostic `json:"diagnostics"`
		}
		if err := json.Unmarshal(msg.Params, &p); err != nil {
			ls.t.Fatal(err)
		}
		got[p.URI] = p.Diagnostics
	}
	return got
}

// next returns the server's next message, answering its requests.
func (ls *languageServer) next() lspMessage {
	ls.t.Helper()
	select {
	case msg, ok := <-ls.msgs:
		if !ok {
			ls.t.Fatal("the language server ended")
		}
		if msg.Method != "" && msg.ID != nil {
			ls.send(map[string]any{"id": msg.ID, "result": nil})
		}
		return msg
	case <-time.After(time.Minute):
		ls.t.Fatal("no message from the language server within a minute")
	}
	panic("unreachable")
}
