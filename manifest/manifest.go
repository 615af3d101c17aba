// Package manifest loads agentc manifests: CUE (files or package
// directories), JSON and YAML, unified with the embedded #Manifest schema and
// decoded into Go types. Every problem it finds carries a position.
package manifest

import (
	_ "embed"

	"agentc.dev/agentc/plan"
)

// SchemaSource is the #Manifest CUE definition, the single source of truth
// for what a manifest may say.
//
//go:embed schema.cue
var SchemaSource []byte

// SchemaFile is the file name under which the embedded schema is compiled; it
// tells positions in the schema from positions in the user's files.
const SchemaFile = "agentc:manifest/schema.cue"

// The agent's types are package plan's, written once there (CUE-free, so
// the runtime reads them without linking CUE); the loader decodes into them.
// TestSchemaMatchesGoTypes ties them to the CUE schema.
type (
	// Manifest is one agent, decoded from a manifest unified with
	// #Manifest, so every default is applied.
	Manifest     = plan.Agent
	Model        = plan.Model
	Input        = plan.Input
	Capabilities = plan.Capabilities
	Output       = plan.Output
	Budgets      = plan.Budgets
	Strategy     = plan.Strategy
	Escalate     = plan.Escalate
	Tool         = plan.Tool
)
