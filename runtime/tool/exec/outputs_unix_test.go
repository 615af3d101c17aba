//go:build unix

package exec

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/filestore"
	"agentc.dev/agentc/runtime/redact"
)

// png is the start of a PNG file: its signature and a header chunk,
// enough for agentc to know it.
const png = `\211PNG\r\n\032\n\000\000\000\rIHDR\000\000\000\001\000\000\000\001\010\000\000\000\000:~\233U`

// outputTool is an exec tool whose shell script writes its output file
// chart (declared as types) at "$1".
func outputTool(t *testing.T, script string, chart plan.OutputFile) *Tool {
	t.Helper()
	return newTool(t, t.TempDir(), plan.Tool{
		Argv:        []string{"sh", "-c", script, "sh", `{{output_file "chart"}}`},
		OutputFiles: map[string]plan.OutputFile{"chart": chart},
	})
}

func storeCtx(t *testing.T) (context.Context, *filestore.Store) {
	t.Helper()
	s, err := filestore.Open(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	return runtime.WithFileStore(context.Background(), s), s
}

// A program's output file reaches the call's result from the run's store,
// named and typed; the directory it was written in is gone after the call.
func TestOutputFile(t *testing.T) {
	ctx, store := storeCtx(t)
	for _, c := range []struct {
		types    []string
		fileName string
	}{
		{[]string{"image/png"}, "chart.png"},
		{[]string{"image/*"}, "chart"},
		{[]string{"application/pdf", "image/png"}, "chart.pdf"},
	} {
		tool := outputTool(t, `printf '`+png+`' > "$1"; echo "wrote $(basename "$1")"; dirname "$1" > /dev/stderr`, plan.OutputFile{MediaTypes: c.types})
		res, err := tool.Call(ctx, json.RawMessage(`{}`))
		if err != nil || res.IsError {
			t.Fatalf("%v: %v %+v", c.types, err, res)
		}
		if len(res.Files) != 1 {
			t.Fatalf("%v: files %+v", c.types, res.Files)
		}
		f := res.Files[0]
		if f.Name != "chart" || f.FileName != c.fileName || f.MediaType != "image/png" || f.Size != 33 {
			t.Errorf("%v: file %+v", c.types, f)
		}
		if !strings.HasPrefix(res.Content, "wrote "+c.fileName+"\n") || !strings.HasSuffix(res.Content, "\n[output file chart: image/png, 33 bytes]") {
			t.Errorf("%v: content %q", c.types, res.Content)
		}
		r, n, err := store.Open(f.Digest)
		if err != nil || n != 33 {
			t.Fatalf("%v: the stored file: %v, %d bytes", c.types, err, n)
		}
		b, err := io.ReadAll(r)
		r.Close()
		if err != nil || !strings.HasPrefix(string(b), "\x89PNG\r\n\x1a\n") {
			t.Errorf("%v: stored %q, %v", c.types, b, err)
		}
		_, dir, _ := strings.Cut(res.Content, "stderr:\n")
		dir = strings.TrimSpace(strings.Split(dir, "\n")[0])
		if !strings.Contains(dir, "agentc-out-") {
			t.Fatalf("%v: the program printed no directory: %q", c.types, res.Content)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%v: the call's directory %s is left behind: %v", c.types, dir, err)
		}
	}
}

// What the program leaves in the output file's place that is not a file
// of a declared type within its bound is refused, and the call's result
// is an error saying why; a file it does not write is said, and is no
// error. None of it waits on a FIFO or follows a link.
func TestOutputFileRefused(t *testing.T) {
	ctx, store := storeCtx(t)
	secret := filepath.Join(t.TempDir(), "secret.png")
	if err := os.WriteFile(secret, []byte("\x89PNG\r\n\x1a\n a file beside"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, script string
		max          int64
		want         string
		isError      bool
	}{
		{"none", `true`, 0, "[output file chart: the program wrote none]", false},
		{"text", `echo hello > "$1"`, 0, "[output file chart: it is a text/plain file, and the tool declares image/png]", true},
		{"binary", `printf '\000\001\002' > "$1"`, 0, "[output file chart: it is none of the media types agentc recognises, and the tool declares image/png]", true},
		{"large", `printf '` + png + `' > "$1"`, 20, "[output file chart: it is 33 bytes, more than the 20 the tool takes]", true},
		{"link", `ln -s '` + secret + `' "$1"`, 0, "[output file chart: it is not a regular file (a symbolic link); the program must write the file itself]", true},
		{"fifo", `mkfifo "$1"`, 0, "[output file chart: it is not a regular file (a FIFO); the program must write the file itself]", true},
		{"directory", `mkdir "$1"`, 0, "[output file chart: it is not a regular file (a directory); the program must write the file itself]", true},
	} {
		tool := outputTool(t, c.script, plan.OutputFile{MediaTypes: []string{"image/png"}, MaxBytes: c.max})
		res, err := tool.Call(ctx, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if res.Content != c.want || res.IsError != c.isError || len(res.Files) != 0 {
			t.Errorf("%s: got %q (error %v, files %v), want %q (error %v)", c.name, res.Content, res.IsError, res.Files, c.want, c.isError)
		}
	}
	entries, err := os.ReadDir(store.Dir())
	if err != nil && !os.IsNotExist(err) || len(entries) != 0 {
		t.Errorf("the store holds %d blobs, want none: %v", len(entries), err)
	}

	// A program that fails is reported as ever; what it wrote is not read.
	tool := outputTool(t, `printf '`+png+`' > "$1"; exit 3`, plan.OutputFile{MediaTypes: []string{"image/png"}})
	if res, err := tool.Call(ctx, nil); err != nil || !res.IsError || len(res.Files) != 0 || !strings.Contains(res.Content, "exit status 3") {
		t.Errorf("a failed program: %v %+v", err, res)
	}

	// Without a store, a written file cannot be kept: the result says so.
	tool = outputTool(t, `printf '`+png+`' > "$1"`, plan.OutputFile{MediaTypes: []string{"image/png"}})
	if res, err := tool.Call(context.Background(), nil); err != nil || !res.IsError || res.Content != "[output file chart: the run has no file store to keep it in]" {
		t.Errorf("without a store: %v %+v", err, res)
	}
}

// TestOutputFileTextThroughout: a text output file is text to its end, not
// in its first bytes alone: one with a NUL or a terminal's escape past
// them is refused, and leaves nothing in the store.
func TestOutputFileTextThroughout(t *testing.T) {
	ctx, store := storeCtx(t)
	head := `i=0; while [ $i -lt 100 ]; do printf 'line of text\n'; i=$((i+1)); done > "$1"; `
	for _, c := range []struct{ name, script, want string }{
		{"nul", head + `printf '\000' >> "$1"`, "[output file chart: it is not text throughout: past its start it holds a control character or a byte that is not UTF-8]"},
		{"escape", head + `printf '\033[2J' >> "$1"`, "[output file chart: it is not text throughout: past its start it holds a control character or a byte that is not UTF-8]"},
		{"not UTF-8", head + `printf '\377' >> "$1"`, "[output file chart: it is not text throughout: past its start it holds a control character or a byte that is not UTF-8]"},
	} {
		tool := outputTool(t, c.script, plan.OutputFile{MediaTypes: []string{"text/plain"}})
		res, err := tool.Call(ctx, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if res.Content != c.want || !res.IsError || len(res.Files) != 0 {
			t.Errorf("%s: got %q (error %v, files %v), want %q", c.name, res.Content, res.IsError, res.Files, c.want)
		}
	}
	entries, err := os.ReadDir(store.Dir())
	if err != nil && !os.IsNotExist(err) || len(entries) != 0 {
		t.Errorf("the store holds %d blobs, want none: %v", len(entries), err)
	}
}

// An output file the tool does not declare is an error of the call, and
// so is a declaration New cannot take.
func TestOutputFileDeclared(t *testing.T) {
	tool := newTool(t, t.TempDir(), plan.Tool{
		Argv:        []string{"echo", `{{output_file "plot"}}`},
		OutputFiles: map[string]plan.OutputFile{"chart": {MediaTypes: []string{"image/png"}}},
	})
	if got := call(t, tool, `{}`); got != `error: argument 1: at <output_file "plot">: error calling output_file: the tool declares no output file "plot"` {
		t.Errorf("got %q", got)
	}
	for _, c := range []struct {
		name string
		o    plan.OutputFile
		want string
	}{
		{"../x", plan.OutputFile{MediaTypes: []string{"image/png"}}, `output file "../x": a name is up to 64 letters`},
		{"x", plan.OutputFile{}, `output file "x": media_types names none`},
		{"x", plan.OutputFile{MediaTypes: []string{"image/tiff"}}, `output file "x": media type "image/tiff" is not one agentc recognises`},
		{"x", plan.OutputFile{MediaTypes: []string{"image/png"}, MaxBytes: plan.DefaultMaxFileBytes + 1}, `max_bytes 20971521 is not between 1 and 20971520`},
	} {
		_, err := New("run", plan.Tool{Kind: "exec", Description: "d", Input: &plan.Input{Schema: json.RawMessage(schema)},
			Argv: []string{"echo"}, OutputFiles: map[string]plan.OutputFile{c.name: c.o}}, t.TempDir())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %+v: got %v, want %q", c.name, c.o, err, c.want)
		}
	}
}

// TestOutputFileRedacted: a text output file is redacted as the
// program's output is: a tool given a secret does not pass it on through
// a file, to the store (the journal's files, a test's recording) and the
// model. A PNG goes as it is.
func TestOutputFileRedacted(t *testing.T) {
	const secret = "tooltoken-SECRET-123"
	ctx, store := storeCtx(t)
	tool, err := New("run", plan.Tool{Kind: "exec", Description: "Note.", Confine: &plan.Confine{Enforce: "off"},
		Input:       &plan.Input{Schema: json.RawMessage(schema)},
		Argv:        []string{"sh", "-c", `printf 'note: %s\n' "$2" > "$1"; echo done`, "sh", `{{output_file "note"}}`, secret},
		OutputFiles: map[string]plan.OutputFile{"note": {MediaTypes: []string{"text/plain"}}},
	}, t.TempDir(), WithSecrets(redact.Of(secret)))
	if err != nil {
		t.Fatal(err)
	}
	res, err := tool.Call(ctx, json.RawMessage(`{}`))
	if err != nil || res.IsError || len(res.Files) != 1 {
		t.Fatalf("%v %+v", err, res)
	}
	r, _, err := store.Open(res.Files[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r)
	r.Close()
	if err != nil || string(b) != "note: [redacted]\n" {
		t.Errorf("the stored note: %q, %v; want the secret replaced", b, err)
	}
}

// TestOutputFilesTogether: output files that pass a result's bound
// together are refused from the one that passes it, and what is refused
// leaves nothing in the store, as a file refused alone does.
func TestOutputFilesTogether(t *testing.T) {
	ctx, store := storeCtx(t)
	each := plan.DefaultMaxRunFileBytes/2 + 1 // two pass the bound together
	// Each its own bytes, so that each would be a blob of its own.
	write := func(file string, n int64) string {
		return `{ printf '` + png + `'; head -c ` + strconv.FormatInt(n-33, 10) + ` /dev/zero; } > "` + file + `"`
	}
	tool := newTool(t, t.TempDir(), plan.Tool{
		Argv:        []string{"sh", "-c", write("$1", each) + `; ` + write("$2", each+1), "sh", `{{output_file "a"}}`, `{{output_file "b"}}`},
		OutputFiles: map[string]plan.OutputFile{"a": {MediaTypes: []string{"image/png"}}, "b": {MediaTypes: []string{"image/png"}}},
	})
	res, err := tool.Call(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("[output file a: image/png, %d bytes]\n[output file b: the call's output files pass 32 MiB together]", each)
	if !res.IsError || res.Content != want || len(res.Files) != 1 || res.Files[0].Name != "a" {
		t.Fatalf("got %q (error %v, files %+v), want %q", res.Content, res.IsError, res.Files, want)
	}
	entries, err := os.ReadDir(store.Dir())
	if err != nil || len(entries) != 1 || entries[0].Name() != strings.TrimPrefix(res.Files[0].Digest, filestore.Prefix) {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the store holds %v (%v), want a's blob alone, %s", names, err, res.Files[0].Digest)
	}
}
