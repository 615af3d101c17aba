// Package manifest loads agentc manifests: CUE (files or package
// directories), JSON and YAML, unified with the embedded #Manifest schema and
// decoded into Go types. Every problem it finds carries a position.
package manifest

import (
	_ "embed"
	"encoding/json"
)

// SchemaSource is the #Manifest CUE definition, the single source of truth
// for what a manifest may say.
//
//go:embed schema.cue
var SchemaSource []byte

// SchemaFile is the file name under which the embedded schema is compiled; it
// tells positions in the schema from positions in the user's files.
const SchemaFile = "agentc:manifest/schema.cue"

// Manifest is one agent, decoded from a manifest unified with #Manifest, so
// every default is applied.
type Manifest struct {
	Name         string       `json:"name"`
	Description  string       `json:"description,omitempty"`
	Model        Model        `json:"model"`
	Instructions string       `json:"instructions"`
	Prompt       string       `json:"prompt,omitempty"`
	Input        *Input       `json:"input,omitempty"`
	Capabilities Capabilities `json:"capabilities"`
	Output       *Output      `json:"output,omitempty"`
	Budgets      Budgets      `json:"budgets"`
	Strategy     Strategy     `json:"strategy"`
}

// Model selects the provider and model an agent talks to.
type Model struct {
	Provider        string   `json:"provider"`
	Name            string   `json:"name"`
	BaseURL         string   `json:"base_url,omitempty"`
	Temperature     *float64 `json:"temperature,omitempty"`
	MaxOutputTokens int      `json:"max_output_tokens,omitempty"`
	Reasoning       string   `json:"reasoning,omitempty"`
}

// Input declares the JSON Schema of a run's input.
type Input struct {
	Schema json.RawMessage `json:"schema"`
}

// Capabilities is what an agent offers and what it may use.
type Capabilities struct {
	Provides string          `json:"provides,omitempty"`
	Tools    map[string]Tool `json:"tools"`
}

// Output is an agent's contract: the answer it promises back.
type Output struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	KeepsTools  bool            `json:"keeps_tools"`
	Mode        string          `json:"mode"`
	Enforce     string          `json:"enforce"`
	Retries     int             `json:"retries"`
}

// Budgets bound a run. A zero value means "no bound of that kind", except
// for Rounds and AnswerTurns: every run has those, and zero means the
// default (DefaultRounds, DefaultAnswerTurns in package plan).
type Budgets struct {
	Deadline      string `json:"deadline,omitempty"`
	Tools         *int   `json:"tools,omitempty"`
	Tokens        int    `json:"tokens,omitempty"`
	Rounds        int    `json:"rounds"`
	AnswerTurns   int    `json:"answer_turns"`
	AnswerReserve int    `json:"answer_reserve,omitempty"`
}

// Strategy is the declarative round strategy.
type Strategy struct {
	OnProse   string    `json:"on_prose"`
	Reminders int       `json:"reminders"`
	Escalate  *Escalate `json:"escalate,omitempty"`
}

// Escalate switches to another model after repeated invalid answers.
type Escalate struct {
	AfterInvalid int    `json:"after_invalid"`
	Model        string `json:"model"`
}

// Tool is one declared capability. Kind selects which of the other fields
// apply; the schema rejects fields of another kind.
type Tool struct {
	Kind        string `json:"kind"`
	Description string `json:"description"`

	// fs, http, exec
	MaxBytes int `json:"max_bytes,omitempty"`
	// fs
	Root string   `json:"root,omitempty"`
	Ops  []string `json:"ops,omitempty"`
	// http, exec
	Input   *Input `json:"input,omitempty"`
	Timeout string `json:"timeout,omitempty"`
	// http, mcp
	URL string `json:"url,omitempty"`
	// http: allowed URL prefixes; mcp: allowed tool names.
	Allow []string `json:"allow,omitempty"`
	// http
	Method  string            `json:"method,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
	// exec
	Argv []string `json:"argv,omitempty"`
	Dir  string   `json:"dir,omitempty"`
	// exec, mcp
	Env []string `json:"env,omitempty"`
	// mcp
	Command []string `json:"command,omitempty"`
	// agent
	Path string `json:"path,omitempty"`
	Pin  string `json:"pin,omitempty"`
}
