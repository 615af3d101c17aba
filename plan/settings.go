package plan

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// SettingProblem is a model setting its provider refuses for the model
// (Warning false: the call would fail), or one that asks the provider for
// nothing (Warning true: the call goes as if it were left out).
type SettingProblem struct {
	// Field is the setting: "temperature", "reasoning", "api" or "cache".
	Field   string
	Warning bool
	Msg     string
}

// CheckModelSettings checks m's settings against what its provider
// documents for its model family: the temperature range, models that
// take no temperature, and the reasoning levels a model takes. A model
// agentc does not recognise by name (a server that copies a provider's
// API, a model newer than these rules) is checked for its provider's
// ranges only.
func CheckModelSettings(m Model) []SettingProblem {
	var out []SettingProblem
	add := func(field string, warning bool, format string, args ...any) {
		out = append(out, SettingProblem{Field: field, Warning: warning, Msg: fmt.Sprintf(format, args...)})
	}
	if m.API != "" && m.Provider != "openai" {
		add("api", false, "api %q chooses among OpenAI's APIs; %s has one", m.API, m.Provider)
	}
	if m.Cache != nil && *m.Cache {
		switch m.Provider {
		case "google":
			add("cache", true, "Google is asked for no prompt cache: Gemini caches on its own, whatever cache says; leave cache out")
		case "bedrock":
			add("cache", true, "agentc sends Bedrock no cachePoint, so cache asks it for nothing; leave cache out")
		}
	}
	switch m.Provider {
	case "openai":
		r, known := openAIReasoning(m.Name)
		thinking := m.Reasoning != "" && m.Reasoning != "none"
		if known && !r.reasons && thinking {
			add("reasoning", false, "OpenAI's %s is not a reasoning model and refuses reasoning_effort (here %q); leave reasoning out", m.Name, m.Reasoning)
		}
		if t := m.Temperature; t != nil && *t != 1 && known && r.reasons {
			switch {
			case r.temperatureWithoutReasoning && !thinking:
			case r.temperatureWithoutReasoning:
				add("temperature", false, "OpenAI's %s takes a temperature only without reasoning (reasoning \"none\" or left out); with reasoning %q it refuses any but 1 (here %v)", m.Name, m.Reasoning, *t)
			default:
				add("temperature", false, "OpenAI's %s is a reasoning model and refuses any temperature but 1 (here %v); leave temperature out, and steer it with reasoning", m.Name, *t)
			}
		}
	case "google":
		if m.Reasoning == "none" && geminiAlwaysThinks(m.Name) {
			add("reasoning", false, "Google's %s cannot stop thinking, and takes no reasoning \"none\"; ask for \"low\", its least", m.Name)
		}
	case "bedrock":
		claude, isClaude := bedrockClaude(m.Name)
		if t := m.Temperature; t != nil {
			switch {
			case isClaude && anthropicNoSampling(claude):
				add("temperature", false, "%s (Anthropic's %s) takes no temperature (deprecated for it and the models after it, and refused); leave it out", m.Name, claude)
			case (isClaude || strings.Contains(m.Name, "amazon.nova")) && *t > 1:
				add("temperature", false, "%s takes a temperature from 0 to 1, not %v", m.Name, *t)
			}
		}
		if m.Reasoning != "" && m.Reasoning != "none" {
			switch {
			case isClaude && (strings.HasPrefix(claude, "claude-3-") && !strings.HasPrefix(claude, "claude-3-7-")):
				add("reasoning", false, "%s (Anthropic's %s) does not reason; leave reasoning out", m.Name, claude)
			case isClaude && anthropicNoSampling(claude):
				add("reasoning", false, "%s (Anthropic's %s) takes its effort, not the thinking budget agentc sends through Bedrock; leave reasoning out", m.Name, claude)
			case isClaude:
				add("reasoning", false, "%s (Anthropic's %s) thinks only without a forced tool call and a temperature, and an answer on Bedrock comes by a forced tool call; leave reasoning out", m.Name, claude)
			case !isClaude && strings.Contains(m.Name, "amazon.nova-") && !strings.Contains(m.Name, "amazon.nova-2-"):
				add("reasoning", false, "%s does not reason (Amazon Nova 2 does); leave reasoning out", m.Name)
			}
		}
	case "anthropic":
		if m.Reasoning == "none" {
			add("reasoning", false, "Anthropic's effort takes low, medium or high, not \"none\"; leave reasoning out for the model's default")
		}
		if t := m.Temperature; t != nil {
			switch {
			case anthropicNoSampling(m.Name):
				add("temperature", false, "Anthropic's %s takes no temperature (deprecated for it and the models after it, and refused); leave it out, and steer it with reasoning (its effort) instead", m.Name)
			case *t > 1:
				add("temperature", false, "Anthropic takes a temperature from 0 to 1, not %v", *t)
			}
		}
	}
	return out
}

// openAIModel is what agentc knows of an OpenAI model family's settings.
type openAIModel struct {
	// reasons: a reasoning model (the o-series, GPT-5), which takes
	// reasoning_effort and no temperature but 1.
	reasons bool
	// temperatureWithoutReasoning: it takes a temperature when its
	// reasoning is "none" or left out (GPT-5.1 and later, but their pro
	// models).
	temperatureWithoutReasoning bool
}

var (
	gpt5      = regexp.MustCompile(`^gpt-5(?:\.(\d+))?(?:-|$)`)
	oSeries   = regexp.MustCompile(`^o[1-9](?:-|$)`)
	chatModel = regexp.MustCompile(`^(?:gpt-3\.5|gpt-4|chatgpt-|gpt-5(?:\.\d+)?-chat)`)
)

// openAIReasoning tells what an OpenAI model takes, by its name; false
// for a name these rules do not know.
func openAIReasoning(name string) (openAIModel, bool) {
	switch {
	case chatModel.MatchString(name):
		return openAIModel{}, true
	case oSeries.MatchString(name):
		return openAIModel{reasons: true}, true
	}
	if m := gpt5.FindStringSubmatch(name); m != nil {
		minor, _ := strconv.Atoi(m[1])
		return openAIModel{reasons: true, temperatureWithoutReasoning: minor >= 1 && !strings.Contains(name, "-pro")}, true
	}
	return openAIModel{}, false
}

// claudeName reads a current Claude model name: family, then version
// (claude-opus-4-7, claude-sonnet-4-5-20250929, claude-haiku-5).
var claudeName = regexp.MustCompile(`^claude-(opus|sonnet|haiku|[a-z]+)-(\d+)(?:-(\d{1,2}))?(?:-|$)`)

// anthropicNoSampling reports whether a Claude model refuses sampling
// settings: Opus and Sonnet from 4.7, Haiku from 4.6, every model from 5,
// and the families after those three. Older names (claude-3-5-sonnet) and
// names these rules do not read take them.
func anthropicNoSampling(name string) bool {
	m := claudeName.FindStringSubmatch(name)
	if m == nil {
		return false
	}
	major, _ := strconv.Atoi(m[2])
	minor, _ := strconv.Atoi(m[3])
	switch m[1] {
	case "opus", "sonnet":
		return major > 4 || major == 4 && minor >= 7
	case "haiku":
		return major > 4 || major == 4 && minor >= 6
	}
	return major >= 4
}

// geminiAlwaysThinks reports whether a Gemini model cannot be told not to
// think: 2.5 Pro and the Pro models of Gemini 3.
func geminiAlwaysThinks(name string) bool {
	name = name[strings.LastIndex(name, "/")+1:]
	return strings.HasPrefix(name, "gemini-2.5-pro") || strings.HasPrefix(name, "gemini-3-pro") || strings.HasPrefix(name, "gemini-3.1-pro")
}

// bedrockClaude reads the Claude model of a Bedrock model ID or inference
// profile (us.anthropic.claude-sonnet-4-5-20250929-v1:0 gives
// claude-sonnet-4-5-20250929-v1:0); false for another model.
func bedrockClaude(id string) (string, bool) {
	_, after, ok := strings.Cut(id, "anthropic.claude-")
	if !ok {
		return "", false
	}
	return "claude-" + after, true
}
