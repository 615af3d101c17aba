package contractdiff

// Class says what a change means to the programs on the other side of a
// contract.
type Class string

const (
	// Breaking: some value a consumer or caller relied on is no longer
	// accepted where it was; for a schema change, the engine named one.
	Breaking Class = "breaking"
	// Compatible: every party keeps working; for a schema change, the
	// engine proved it.
	Compatible Class = "compatible"
	// Undecided: the engine could prove neither.
	Undecided Class = "undecided"
)

// Categories of rules.
const (
	// CategorySchema rules explain a change of the input or output schema;
	// the class of each finding is the inclusion engine's verdict on the
	// whole change where it proves it compatible, else on that change
	// alone (breaking only with an example confirmed against the whole),
	// and the rule's classes are what a plain case gets.
	CategorySchema = "schema"
	// CategoryCombined rules report what the changes of one schema do
	// together, where no change alone says it.
	CategoryCombined = "combined"
	// CategoryAnnotation rules report a change of text no validator reads.
	CategoryAnnotation = "annotation"
	// CategoryContract rules report a change of the contract outside its
	// schemas; their class is the rule's.
	CategoryContract = "contract"
)

// Rule describes one kind of finding.
type Rule struct {
	ID       string
	Category string
	// Output and Input are the class of the change in the output schema
	// (data the agent produces) and in the input schema (data callers
	// produce). For a schema rule they are the usual verdict, and each
	// finding carries the engine's own.
	Output, Input Class
	Doc           string
}

// Rules lists every finding agentc diff reports. IDs are stable: an ID
// is never reused for another meaning.
var Rules = []Rule{
	{RequiredAdded, CategorySchema, Compatible, Breaking, "a member is now required"},
	{RequiredRemoved, CategorySchema, Breaking, Compatible, "a member is no longer required"},
	{EnumValueAdded, CategorySchema, Breaking, Compatible, "an enum admits a new value"},
	{EnumValueRemoved, CategorySchema, Compatible, Breaking, "an enum no longer admits a value"},
	{PropertyAdded, CategorySchema, Breaking, Compatible, "a property is declared that was not (widening where additionalProperties held it out)"},
	{PropertyRemoved, CategorySchema, Compatible, Breaking, "a declared property is gone (narrowing where additionalProperties holds it out)"},
	{BoundWidened, CategorySchema, Breaking, Compatible, "a minimum, maximum, length, size or count bound is loosened or removed"},
	{BoundNarrowed, CategorySchema, Compatible, Breaking, "a minimum, maximum, length, size or count bound is tightened or added"},
	{TypeChanged, CategorySchema, Breaking, Compatible, "the type keyword changed"},
	{PatternChanged, CategorySchema, Undecided, Undecided, "a pattern or format changed, added or removed, which the engine cannot compare"},
	{RefChanged, CategorySchema, Undecided, Undecided, "a $ref points elsewhere"},
	{SchemaChanged, CategorySchema, Undecided, Undecided, "any other constraint keyword added, removed or changed, or a schema replaced"},
	{ChangesCombined, CategoryCombined, Breaking, Breaking, "the whole change breaks where no change alone shows it, or is not proved where each change alone is"},
	{AnnotationChanged, CategoryAnnotation, Compatible, Compatible, "a title, description, examples, default or comment changed"},
	{ProvidesChanged, CategoryContract, Breaking, Breaking, "capabilities.provides changed: callers find the agent by it"},
	{OutputRenamed, CategoryContract, Breaking, Breaking, "output.name changed"},
	{OutputDescriptionChanged, CategoryAnnotation, Compatible, Compatible, "output.description changed"},
	{OutputRemoved, CategoryContract, Breaking, Breaking, "the agent no longer has an output contract"},
	{OutputAdded, CategoryContract, Compatible, Compatible, "the agent now has an output contract"},
	{AgentAdded, CategoryContract, Compatible, Compatible, "the agent did not exist: every part of its contract is new"},
	{AgentRemoved, CategoryContract, Breaking, Breaking, "the agent is gone: nothing answers its callers and consumers"},
	{FileTypeRemoved, CategoryContract, Breaking, Breaking, "a file input no longer takes a media type it took: callers' files of it are refused"},
	{FileTypeAdded, CategoryContract, Compatible, Compatible, "a file input takes a media type it did not"},
	{FileKindChanged, CategoryContract, Breaking, Breaking, "a property became a file input, or stopped being one: what callers send there changes meaning"},
	{KeepsToolsChanged, CategoryContract, Compatible, Compatible, "output.keeps_tools changed: how the agent works, not what it answers"},
}

// Rule IDs.
const (
	RequiredAdded            = "REQUIRED_ADDED"
	RequiredRemoved          = "REQUIRED_REMOVED"
	EnumValueAdded           = "ENUM_VALUE_ADDED"
	EnumValueRemoved         = "ENUM_VALUE_REMOVED"
	PropertyAdded            = "PROPERTY_ADDED"
	PropertyRemoved          = "PROPERTY_REMOVED"
	BoundWidened             = "BOUND_WIDENED"
	BoundNarrowed            = "BOUND_NARROWED"
	TypeChanged              = "TYPE_CHANGED"
	PatternChanged           = "PATTERN_CHANGED"
	RefChanged               = "REF_CHANGED"
	SchemaChanged            = "SCHEMA_CHANGED"
	ChangesCombined          = "CHANGES_COMBINED"
	AnnotationChanged        = "ANNOTATION_CHANGED"
	ProvidesChanged          = "PROVIDES_CHANGED"
	OutputRenamed            = "OUTPUT_RENAMED"
	OutputDescriptionChanged = "OUTPUT_DESCRIPTION_CHANGED"
	OutputRemoved            = "OUTPUT_REMOVED"
	OutputAdded              = "OUTPUT_ADDED"
	KeepsToolsChanged        = "KEEPS_TOOLS_CHANGED"
	FileTypeRemoved          = "FILE_TYPE_REMOVED"
	FileTypeAdded            = "FILE_TYPE_ADDED"
	FileKindChanged          = "FILE_KIND_CHANGED"
	AgentAdded               = "AGENT_ADDED"
	AgentRemoved             = "AGENT_REMOVED"
)

// RuleOf returns the rule of an ID.
func RuleOf(id string) (Rule, bool) {
	for _, r := range Rules {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}
