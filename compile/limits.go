package compile

import (
	"fmt"

	"agentc.dev/agentc/plan"
)

// checkSchemaSize refuses a schema with more JSON values than
// plan.MaxSchemaValues, the limit the runtime enforces too. It counts at
// most one value past the limit, so a huge schema is refused in
// milliseconds, before the validator's compiler, whose time grows faster
// than the schema, ever sees it.
func checkSchemaSize(s *Schema) *Diagnostic {
	if plan.SchemaValues(s.Doc, plan.MaxSchemaValues) <= plan.MaxSchemaValues {
		return nil
	}
	d := diag(s.Pos(""), CodeSchemaTooLarge, fmt.Sprintf(
		"%s: the schema holds more than %d JSON values (objects, arrays and scalars at every depth); agentc refuses schemas this large, which would take minutes to compile: split the contract, or share repeated parts through $defs and $ref",
		s.Path, plan.MaxSchemaValues))
	return &d
}
