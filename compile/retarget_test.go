package compile_test

import (
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
