package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentc.dev/agentc/cost"
)

const origin = "a small copy of genai-prices' data file (MIT, testdata/LICENSE)"

// TestGenerate: the fixture, a small copy of genai-prices' data file in
// its own format, gives the expected table (testdata/prices.json; set
// AGENTC_UPDATE=1 to rewrite it), byte for byte on every run, and the
// table reads as agentc reads its own.
func TestGenerate(t *testing.T) {
	data, lim := read(t, "testdata/data.json"), read(t, "testdata/limits.json")
	got, err := Generate(data, lim, "2026-08-21", origin)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		again, err := Generate(data, lim, "2026-08-21", origin)
		if err != nil || !bytes.Equal(again, got) {
			t.Fatalf("a second run gave another table (%v):\n%s", err, again)
		}
	}
	golden := filepath.Join("testdata", "prices.json")
	if os.Getenv("AGENTC_UPDATE") != "" {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if want := read(t, golden); !bytes.Equal(got, want) {
		t.Errorf("the table differs from %s (AGENTC_UPDATE=1 rewrites it):\n%s", golden, got)
	}

	tab, err := cost.Parse("prices.json", got, "")
	if err != nil {
		t.Fatal(err)
	}
	if tab.AsOf != "2026-08-21" || !strings.Contains(tab.Source, origin) {
		t.Errorf("date %q, source %q", tab.AsOf, tab.Source)
	}
	for _, c := range []struct {
		prov, model, key string // key "": no entry
		in, cached, out  float64
		ctx, maxOut      int
		tiers            int
	}{
		// Tiers kept; the larger context window of the two sources.
		{"anthropic", "claude-sonnet-4-5-20250929", "claude-sonnet-4-5", 3, 0.3, 15, 1000000, 64000, 1},
		// In force on the date: 4/20, a cache read at input's 4 (it gives
		// none); a dearer price from 2027 raises output to 30 and adds
		// its tier.
		{"anthropic", "claude-opus-9", "claude-opus-9", 4, 4, 30, 0, 0, 1},
		{"anthropic", "claude-and", "claude-and", 1, 1, 2, 0, 0, 0}, // an and names no alias
		// An alias; the limits of an old snapshot's name land on its entry.
		{"openai", "gpt-4o-2024-08-06", "gpt-4o", 2.5, 1.25, 10, 128000, 16384, 0},
		{"openai", "gpt-4o-mini", "gpt-4o-mini", 0.15, 0.075, 0.6, 0, 0, 0}, // the id wins over another's equals
		{"openai", "gpt-4o-mini-2024-07-18", "gpt-4o-mini", 0.15, 0.075, 0.6, 0, 0, 0},
		{"openai", "o3-2025-04-16", "o3", 2, 0.5, 8, 200000, 100000, 0}, // the price in force, not the first
		{"openai", "text-embedding-3-small", "", 0, 0, 0, 0, 0, 0},      // no output price: not a chat model
		{"bedrock", "amazon.nova-lite", "amazon.nova-lite-v1:0", 0.06, 0.015, 0.24, 0, 0, 0},
		{"groq", "llama-3.1-8b", "", 0, 0, 0, 0, 0, 0}, // a provider agentc does not serve
	} {
		p, ok := tab.Lookup(c.prov, c.model)
		if ok != (c.key != "") || p.Key != c.key {
			t.Errorf("%s/%s: entry %q, %v; want %q", c.prov, c.model, p.Key, ok, c.key)
			continue
		}
		if ok && (p.Input != c.in || p.CachedInput != c.cached || p.Output != c.out || p.ContextWindow != c.ctx || p.MaxOutput != c.maxOut || len(p.Tiers) != c.tiers) {
			t.Errorf("%s/%s: %+v", c.prov, c.model, p)
		}
	}
	// The tier of the later condition: every token of a call of more than
	// 100000 in at $8; the cached ones at $4, the price in force (the
	// input's, as it gives no cache read), dearer than the later $0.40.
	// A cache write the data gives none of is priced as input.
	if p, _ := tab.Lookup("anthropic", "claude-opus-9"); len(p.Tiers) != 1 || p.Tiers[0] != (cost.Tier{Above: 100000, Input: 8, CachedInput: 4, CacheWrite: 8, Output: 30}) || p.CacheWrite != 4 {
		t.Errorf("claude-opus-9: cache write %v, tiers %+v", p.CacheWrite, p.Tiers)
	}
	// cache_write_mtok is the cache write, at every tier.
	if p, _ := tab.Lookup("anthropic", "claude-sonnet-4-5"); p.CacheWrite != 3.75 || len(p.Tiers) != 1 || p.Tiers[0].CacheWrite != 3.75 {
		t.Errorf("claude-sonnet-4-5: cache write %v, tiers %+v", p.CacheWrite, p.Tiers)
	}
}

// TestRun: the command writes the table where -o says, and refuses what
// it cannot read, saying what.
func TestRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "prices.json")
	if err := run([]string{"-from", "testdata/data.json", "-limits", "testdata/limits.json", "-date", "2026-08-21", "-origin", origin, "-o", out}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(read(t, out), read(t, "testdata/prices.json")) {
		t.Errorf("the command wrote another table than Generate")
	}
	bad := filepath.Join(t.TempDir(), "limits.json")
	if err := os.WriteFile(bad, []byte(`{"openai": {"gpt-9": {"context_window": 1, "max_output": 1}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-from", "testdata/data.json"}, "-from and -date are required"},
		{[]string{"-from", "testdata/data.json", "-date", "2026-08-21"}, "-origin is required for a data file"},
		{[]string{"-from", "testdata/data.json", "-date", "21/08/2026", "-origin", "x"}, `-date "21/08/2026": want YYYY-MM-DD`},
		{[]string{"-from", "testdata/limits.json", "-limits", "testdata/limits.json", "-date", "2026-08-21", "-origin", "x", "-o", out}, "the data file:"},
		{[]string{"-from", "testdata/data.json", "-limits", bad, "-date", "2026-08-21", "-origin", "x", "-o", out}, "the limits file: openai/gpt-9 matches no model of the data file"},
	} {
		if err := run(c.args); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("run(%q) = %v, want an error with %q", c.args, err, c.want)
		}
	}
}

func read(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestTarball: the npm package's tarball (a small one: testdata/npm, its
// data the fixture's, written as the package's bundle writes it, with
// bare keys, !0, 2e5, .5 and three kinds of quotes) gives the table the
// data file gives, its origin the package and version.
func TestTarball(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, f := range []struct{ name, file string }{
		{"package/LICENSE", "testdata/npm/LICENSE"},
		{"package/package.json", "testdata/npm/package.json"},
		{"package/dist/index.cjs", "testdata/npm/index.cjs"},
	} {
		data := read(t, f.file)
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(data))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tgz := filepath.Join(dir, "pydantic-genai-prices-0.0.1-fixture.tgz")
	if err := os.WriteFile(tgz, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "prices.json")
	if err := run([]string{"-from", tgz, "-limits", "testdata/limits.json", "-date", "2026-08-21", "-o", out}); err != nil {
		t.Fatal(err)
	}
	const pkgOrigin = "the npm package @pydantic/genai-prices 0.0.1-fixture"
	want := bytes.Replace(read(t, "testdata/prices.json"), []byte(origin), []byte(pkgOrigin), 1)
	if got := read(t, out); !bytes.Equal(got, want) {
		t.Errorf("the tarball gave another table than the data file:\n%s", got)
	}

	// A tarball of another package, or a bundle that is not the data, is
	// refused, saying so.
	for _, c := range []struct {
		pkg, bundle, want string
	}{
		{`{"name": "left-pad", "version": "1.0.0"}`, "const E=[]", `not the package @pydantic/genai-prices (package.json names "left-pad")`},
		{`{"name": "@pydantic/genai-prices", "version": "9"}`, "const E=[1]", "holds no array of providers"},
		{`{"name": "@pydantic/genai-prices", "version": "9"}`, "const E=[{id:\"openai\",models:[{id:\"m\",prices:{input_mtok:f()}}]}]", "offset 57: unexpected 'f' in the data"},
		{`{"name": "@pydantic/genai-prices", "version": "9"}`, "const E=[{id:\"openai\",name:`a ${b}`}]", "a template with a substitution"},
	} {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		tw := tar.NewWriter(zw)
		for name, data := range map[string]string{"package/package.json": c.pkg, "package/dist/index.cjs": c.bundle} {
			_ = tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data))})
			_, _ = tw.Write([]byte(data))
		}
		_ = tw.Close()
		_ = zw.Close()
		if _, _, err := readTarball(&buf); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("a tarball of %s, %s: %v; want an error with %q", c.pkg, c.bundle, err, c.want)
		}
	}
}
