package compile_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentc.dev/agentc/compile"
	"agentc.dev/agentc/plan"
)

// Retarget makes the plan a manifest naming the other model compiles to,
// and refuses, naming them, what that model cannot take.
func TestRetarget(t *testing.T) {
	dir := t.TempDir()
	write := func(name, model, rest string) string {
		path := filepath.Join(dir, name+".cue")
		src := "name: \"" + name + "\"\nmodel: " + model + "\ninstructions: \"Answer.\"\nbudgets: deadline: \"60s\"\n" + rest
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	out := `output: {description: "The answer.", schema: {type: "object", properties: a: {type: "string", maxLength: 10}, required: ["a"], additionalProperties: false}}` + "\n"
	openai := compileAt(t, write("agent", `{provider: "openai", name: "gpt-4o-2024-08-06", base_url: "https://gateway.example/v1"}`, out))
	// The same agent written for Anthropic compiles to the retargeted plan.
	claude := compileAt(t, write("agent", `{provider: "anthropic", name: "claude-sonnet-4-5"}`, out))
	got, err := compile.Retarget(openai, "anthropic", "claude-sonnet-4-5")
	if err != nil {
		t.Fatal(err)
	}
	if got.Digests != claude.Digests || got.Output.Mode != plan.ModeTool || got.Output.Provider != "anthropic" || got.Agent.Model.BaseURL != "" {
		t.Errorf("retargeted: %+v %+v, want the digests %+v of the manifest naming the model", got.Digests, got.Output, claude.Digests)
	}
	if openai.Agent.Model.Provider != "openai" || openai.Output.Provider != "openai" {
		t.Error("the plan retargeted was changed")
	}
	// Its own model is the plan itself; its own provider keeps base_url.
	if same, err := compile.Retarget(openai, "openai", ""); err != nil || same != openai {
		t.Errorf("its own model: %v", err)
	}
	mini, err := compile.Retarget(openai, "openai", "gpt-4o-mini")
	if err != nil || mini.Agent.Model.BaseURL != "https://gateway.example/v1" || mini.Digests.Contract != openai.Digests.Contract || mini.Digests.Plan == openai.Digests.Plan {
		t.Errorf("another OpenAI model: %v %+v", err, mini)
	}

	native := compileAt(t, write("native", `{provider: "openai", name: "gpt-4o-2024-08-06"}`,
		`output: {mode: "native", description: "The answer.", schema: {type: "object", properties: {a: {type: "string"}, next: {"$ref": "#"}}, required: ["a"]}}`+"\n"))
	files := compileAt(t, write("files", `{provider: "openai", name: "gpt-4o-2024-08-06", temperature: 0.5}`,
		`input: schema: {type: "object", required: ["scan"], properties: scan: {type: "string", contentEncoding: "base64", contentMediaType: "image/png"}}`+"\nprompt: \"{{.scan}}\"\n"+out))
	for _, c := range []struct {
		p               *plan.Plan
		provider, model string
		want            string
	}{
		{openai, "anthropic", "", "the agent's model is openai gpt-4o-2024-08-06; name a model of anthropic too"},
		{openai, "mistral", "large", `unknown provider "mistral" (agentc runs anthropic, bedrock, google, openai)`},
		{openai, "test", "x", `unknown provider "test"`},
		{native, "anthropic", "claude-sonnet-4-5", `output.mode is "native", but anthropic's structured output cannot take this schema`},
		{files, "openai", "gpt-3.5-turbo", "input scan: openai gpt-3.5-turbo takes no file but text [INPUT_FILE_PROVIDER]"},
		{files, "anthropic", "claude-opus-4-7", "model.temperature: Anthropic's claude-opus-4-7 takes no temperature"},
		{files, "openai", "o3", "model.temperature: OpenAI's o3 is a reasoning model"},
	} {
		_, err := compile.Retarget(c.p, c.provider, c.model)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s for %s %s: got %v, want %q", c.p.Agent.Name, c.provider, c.model, err, c.want)
		}
	}
}

// TestRetargetChain: a plan with fallbacks, made for another model, is the
// plan of the manifest naming that model with the same fallbacks, whose
// chain answers one way (all natively, or all by the output tool), from a
// chain that answered by tool to one that answers natively too.
func TestRetargetChain(t *testing.T) {
	dir := t.TempDir()
	write := func(model, fallbacks string) string {
		path := filepath.Join(dir, "agent.cue")
		src := "name: \"chain\"\nmodel: {" + model + ", fallback: models: [" + fallbacks + "]}\ninstructions: \"Answer.\"\nbudgets: deadline: \"60s\"\n" +
			`output: {description: "The answer.", schema: {type: "object", properties: a: {type: "string"}, required: ["a"], additionalProperties: false}}` + "\n"
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	modes := func(p *plan.Plan) []string {
		out := []string{p.Output.Mode}
		for _, f := range p.Fallbacks {
			out = append(out, f.Output.Mode)
		}
		return out
	}
	const (
		gpt    = `provider: "openai", name: "gpt-4o-2024-08-06"`
		claude = `provider: "anthropic", name: "claude-sonnet-4-5"`
		gemini = `provider: "google", name: "gemini-2.5-pro"`
	)
	for _, c := range []struct {
		from, fallbacks, provider, model, to string
		want                                 string
	}{
		{claude, `"openai:gpt-4.1"`, "openai", "gpt-4o-2024-08-06", gpt, "[native native]"},
		{claude, `"google:gemini-2.5-flash"`, "google", "gemini-2.5-pro", gemini, "[native native]"},
		{gpt, `"google:gemini-2.5-flash"`, "anthropic", "claude-sonnet-4-5", claude, "[tool tool]"},
		{gpt, `"openai:gpt-4.1", "anthropic:claude-opus-4-1"`, "google", "gemini-2.5-pro", gemini, "[tool tool tool]"},
	} {
		from := compileAt(t, write(c.from, c.fallbacks))
		got, err := compile.Retarget(from, c.provider, c.model)
		if err != nil {
			t.Fatalf("%s to %s: %v", c.from, c.to, err)
		}
		want := compileAt(t, write(c.to, c.fallbacks))
		if got.Digests != want.Digests || fmt.Sprint(modes(got)) != c.want || fmt.Sprint(modes(want)) != c.want {
			t.Errorf("%s with %s, made for %s: modes %v, digests %+v; the manifest naming it: modes %v, digests %+v; want %s",
				c.from, c.fallbacks, c.to, modes(got), got.Digests, modes(want), want.Digests, c.want)
		}
	}
}
