package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Agent is an agent: the resolved agent a plan runs, the manifest with
// every default applied. These types are the only ones of the agent:
// package manifest decodes manifests into them (its Manifest is this type),
// and its TestSchemaMatchesGoTypes ties them to the CUE schema.
type Agent struct {
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
	// API is the provider's API where it has several: openai's "chat"
	// (the default) or "responses".
	API string `json:"api,omitempty"`
	// Cache, when false, turns prompt caching off (see Caches). A plan
	// never holds true: the compiler leaves the default out, so that
	// a plan that does not turn caching off has the digest it had before
	// the setting existed.
	Cache *bool `json:"cache,omitempty"`
	// Fallback names the models a call goes to when this one fails in a
	// way retrying it will not mend.
	Fallback *Fallback `json:"fallback,omitempty"`
}

// CheckModelName says why name cannot be a model's name: it is not UTF-8,
// it holds a control character (a line break, a tab, an escape, DEL or a
// C1 control), or a character that is not shown (Hidden). No provider
// names a model so, and the name reaches the terminal, the events and the
// journal. The manifest schema's #ModelName refuses the same.
func CheckModelName(name string) error {
	switch {
	case !utf8.ValidString(name):
		return errors.New("it is not UTF-8")
	case strings.ContainsFunc(name, unicode.IsControl):
		return errors.New(ControlRefused)
	case strings.ContainsFunc(name, Hidden):
		return errors.New(HiddenRefused)
	}
	return nil
}

// What CheckModelName says of a name that holds a control character, and
// of one that holds a character Hidden reports; vet says the same.
const (
	ControlRefused = "it holds a control character: a line break, a tab, an escape, DEL or a C1 control"
	HiddenRefused  = "it holds a character that is not shown: a zero-width space or joiner, a bidi control, a soft hyphen or a byte order mark"
)

// Hidden reports whether r is a character a name must not hold because a
// reader does not see it: it takes no room, or reorders the text around
// it (the format characters of Unicode that do so: the soft hyphen, the
// Arabic letter mark, the Mongolian vowel separator, the zero-width
// spaces, joiners and marks, the bidi embeddings, overrides and isolates,
// the word joiner and invisible operators, the byte order mark). A name
// holding one shows as another name.
func Hidden(r rune) bool {
	switch {
	case r == 0x00ad, r == 0x061c, r == 0x180e, r == 0xfeff:
	case 0x200b <= r && r <= 0x200f, 0x202a <= r && r <= 0x202e, 0x2060 <= r && r <= 0x206f:
	default:
		return false
	}
	return true
}

// Caches reports whether requests ask the provider to cache their
// stable start: unless the manifest turned caching off.
func (m Model) Caches() bool { return m.Cache == nil || *m.Cache }

// Fallback is an ordered list of models, each PROVIDER:MODEL, that a
// model call falls back to when the model before it fails for a reason
// another model may not share: its retries spent on overload, 5xx or rate
// limits, a model not found, a request too long for it; and, only when
// AlsoOn says, a refused credential or an exhausted quota. A contract
// failure (an invalid answer) never falls back.
type Fallback struct {
	Models []string `json:"models"`
	AlsoOn []string `json:"also_on,omitempty"`
}

// What a fallback may also be taken on (Fallback.AlsoOn).
const (
	FallbackOnAuth  = "auth"
	FallbackOnQuota = "quota"
)

// MaxFallbacks bounds a model's fallbacks: each is a lowering in the plan
// and a call made in the worst case.
const MaxFallbacks = 4

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

// ProviderKeyVars names, by provider, the environment variable a run reads
// the provider's key from.
var ProviderKeyVars = map[string]string{"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "google": "GEMINI_API_KEY"}

// GoogleKeyVar is the other variable the google provider reads its key
// from, when GEMINI_API_KEY is not set: the name Google's tools share.
const GoogleKeyVar = "GOOGLE_API_KEY"

// AzureKeyVars name the credentials of an Azure OpenAI resource, which
// the openai provider reads when AZURE_OPENAI_ENDPOINT names one: its API
// key, or a Microsoft Entra ID access token.
var AzureKeyVars = []string{"AZURE_OPENAI_API_KEY", "AZURE_OPENAI_AD_TOKEN"}

// AWSKeyVars name the secrets of the AWS credentials the bedrock provider
// may read from the environment (the standard chain reads the rest), and
// the Bedrock API key the AWS SDK's Bedrock client reads by itself.
var AWSKeyVars = []string{"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK"}

// KeyVars names, sorted, every environment variable agentc reads a
// credential of its own from: the providers' keys (ProviderKeyVars,
// AzureKeyVars) and the Temporal client's API key. Their values are
// secrets every run redacts; vet warns when a tool's env names one, and a
// Temporal worker refuses a plan whose tool's env names one.
func KeyVars() []string {
	vars := append(slices.Collect(maps.Values(ProviderKeyVars)), append(AzureKeyVars, GoogleKeyVar)...)
	vars = append(vars, AWSKeyVars...)
	return slices.Sorted(slices.Values(append(vars, "TEMPORAL_API_KEY")))
}

// The bounds every run has, whatever its manifest says: a run ends by
// itself however a model behaves.
const (
	// DefaultRounds is the rounds (model calls) of a run that declares none.
	DefaultRounds = 50
	// DefaultAnswerTurns is the answering turns a run may spend without
	// an answer when it declares none.
	DefaultAnswerTurns = 3
	// DefaultAnswerReserve is the answering turn's output a run keeps
	// tokens for, with a token budget, when neither answer_reserve nor
	// model.max_output_tokens is declared (at most a quarter of the
	// budget).
	DefaultAnswerReserve = 1024
)

// DeadlineLimit is how long a run may take: 0 when no deadline is
// declared, an error when the one declared is not a duration above zero
// (a plan written by hand may hold one vet would refuse).
func (b Budgets) DeadlineLimit() (time.Duration, error) {
	if b.Deadline == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(b.Deadline)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("budgets.deadline: %q is not a duration above zero (write e.g. \"90s\")", b.Deadline)
	}
	return d, nil
}

// RoundLimit is the rounds a run may take: the declared bound or the default.
func (b Budgets) RoundLimit() int {
	if b.Rounds > 0 {
		return b.Rounds
	}
	return DefaultRounds
}

// AnswerTurnLimit is the answering turns a run may spend without an answer.
func (b Budgets) AnswerTurnLimit() int {
	if b.AnswerTurns > 0 {
		return b.AnswerTurns
	}
	return DefaultAnswerTurns
}

// Reserve is the declared answer_reserve of a run with a budget of
// tokens or, when none is declared, one answering turn's output: maxOutput,
// the model's max_output_tokens, when set and below the budget; else half
// the budget; else DefaultAnswerReserve but at most a quarter of the
// budget. A run adds to the latter the conversation the answering turn
// sends, which only the run knows. Zero means no reserve (no token
// budget).
func (b Budgets) Reserve(tokens, maxOutput int) int {
	switch {
	case tokens <= 0:
		return 0
	case b.AnswerReserve > 0:
		return b.AnswerReserve
	case maxOutput > 0 && maxOutput < tokens:
		return maxOutput
	case maxOutput > 0:
		return tokens / 2
	}
	return min(DefaultAnswerReserve, tokens/4)
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
	// OutputFiles are the files the program writes for the model, by
	// name (see OutputFile).
	OutputFiles map[string]OutputFile `json:"output_files,omitempty"`
	// exec, mcp
	Env []string `json:"env,omitempty"`
	// mcp
	Command []string `json:"command,omitempty"`
	// exec, mcp over stdio: what the program may reach; nil confines it
	// with the defaults (see Confine).
	Confine *Confine `json:"confine,omitempty"`
	// agent
	Path string `json:"path,omitempty"`
	Pin  string `json:"pin,omitempty"`
	// CompatibleWith is a contract digest of the callee from which its
	// contract may only have changed compatibly; vet proves it against
	// the contract a lock file keeps. The run does not read it.
	CompatibleWith string `json:"compatible_with,omitempty"`

	// Approve says whether a call needs a person's approval (Approve*);
	// empty means the kind's default (see Approval). ApproveIf is a CUE
	// constraint over a call's arguments that approves, without asking, a
	// call whose arguments unify with it.
	Approve   string         `json:"approve,omitempty"`
	ApproveIf *CUEConstraint `json:"approve_if,omitempty"`
	// mcp: Approve and ApproveIf of the server's tools, by name, where
	// they differ from the server's.
	ApproveTools map[string]ToolApproval `json:"approve_tools,omitempty"`
}

// OutputFile is a file an exec tool's program writes for the model: an
// argument rendered by {{output_file "NAME"}} is a path in a directory
// agentc makes for the call, which the program may write; when it has
// exited, the file it left there is read, checked and stored, and the
// call's result carries it (runtime.ToolResult.Files).
type OutputFile struct {
	// MediaTypes are the media types it may be: each one of
	// FileMediaTypes, or image/* for any of the images. The first names
	// the path's extension (.png, .pdf, ...), for programs that go by it.
	MediaTypes []string `json:"media_types"`
	// MaxBytes bounds its size; the manifest's default is
	// DefaultMaxFileBytes, as is 0 in a plan.
	MaxBytes int64 `json:"max_bytes"`
}

// Confine is what an exec tool's program or a stdio mcp server may
// reach. Left out, it is confined with nothing but the system's programs
// and libraries to read, and no network.
type Confine struct {
	// Read lists the files and directories the program may read (and
	// execute); Write those it may also write. Each is relative to the
	// manifest's directory unless absolute.
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
	// Network lets the program use the network.
	Network bool `json:"network,omitempty"`
	// Enforce is "best" (or empty: confine as far as the system allows,
	// and warn of the rest), "require" (refuse to run where the system
	// cannot confine wholly) or "off" (run unconfined).
	Enforce string `json:"enforce,omitempty"`
	// Limits bound what each of the program's processes may use; nil
	// bounds nothing but the tool's timeout.
	Limits *Limits `json:"limits,omitempty"`
}

// Limits bound what each process of a confined program may use, on Linux
// (resource limits the program cannot raise). Zero fields bound nothing.
type Limits struct {
	// CPU is the CPU time of each process, a duration rounded up to
	// whole seconds: past it the process gets SIGXCPU, and a second
	// later SIGKILL.
	CPU string `json:"cpu,omitempty"`
	// Memory is the memory each process may map privately to write, in
	// bytes (heap and private writable mappings, not its code, the files
	// it maps to read or shared memory), and, apart, its stack: past it,
	// an allocation fails.
	Memory int64 `json:"memory,omitempty"`
	// FileSize is the size, in bytes, past which no file may grow: a
	// write stops there, and the next gets SIGXFSZ.
	FileSize int64 `json:"file_size,omitempty"`
}

// MinMemory is the least Limits.Memory may be: what a small program
// needs to start.
const MinMemory = 1 << 20

// CPUSeconds is l.CPU in whole seconds, rounded up; 0 when it is empty.
func (l Limits) CPUSeconds() (int64, error) {
	if l.CPU == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(l.CPU)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("confine.limits.cpu: %q is not a positive duration (write e.g. \"30s\")", l.CPU)
	}
	n := int64(d / time.Second)
	if d%time.Second != 0 {
		n++
	}
	return n, nil
}

// Check says what in l no program can be bounded to.
func (l Limits) Check() error {
	if _, err := l.CPUSeconds(); err != nil {
		return err
	}
	if l.Memory != 0 && l.Memory < MinMemory {
		return fmt.Errorf("confine.limits.memory is %d bytes; it must be at least %d (1 MiB), which a small program needs to start", l.Memory, MinMemory)
	}
	if l.FileSize < 0 {
		return fmt.Errorf("confine.limits.file_size is %d; it must be positive", l.FileSize)
	}
	return nil
}

// ToolApproval is what an mcp tool's approval is, where it differs from
// its server's.
type ToolApproval struct {
	Approve   string         `json:"approve,omitempty"`
	ApproveIf *CUEConstraint `json:"approve_if,omitempty"`
}
