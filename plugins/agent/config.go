package agent

import (
	"strings"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/permission"
	"github.com/cordisgo/harness/plugins/toolregistry/deferral"
)

// Interface guards: the plugin's configuration has defaults and validates itself.
var (
	_ ctx.Defaulter = (*Config)(nil)
	_ ctx.Validator = Config{}
)

// Config configures one agent: the agent plugin's row at the top level (the main agent) or
// on an agent scope's row (a subagent, see the package documentation). Keys are camelCase.
//
// Config is a plain value.
type Config struct {
	// Description tells a parent agent what this agent is for: it is the description of the
	// subagent tool (agent__NAME). Unused for the main agent.
	Description string `json:"description"`
	// Model names the model (model service) the agent uses; "" is the service's default.
	Model string `json:"model"`
	// Prompt is a system-prompt section of this agent, registered in its layer.
	Prompt string `json:"prompt"`
	// Preamble replaces the agent's preamble section (DefaultPreamble: who the model is, the
	// date, the working directory, the platform, permissions and the harness's tools);
	// {{date}}, {{cwd}} and {{platform}} are filled in. "" removes it. A subagent's
	// replaces the main agent's in its scope.
	Preamble *string `json:"preamble"`
	// Instructions are the project instructions the main agent reads into its prompt:
	// AGENTS.md from the repository's root down to the working directory, and the user's
	// in the harness's configuration directory.
	Instructions InstructionsConfig `json:"instructions"`
	// MaxSteps bounds the model requests of one turn (default 50).
	MaxSteps int `json:"maxSteps"`
	// TokenBudget bounds the tokens (prompt and completion) of one turn's requests; 0 means
	// no budget.
	TokenBudget int `json:"tokenBudget"`
	// MaxParallel bounds the calls of one step that run at once (default 10; 1 runs every
	// call alone).
	MaxParallel int `json:"maxParallel"`
	// ParallelSafe lists tool-name patterns (path.Match syntax) of tools that may run
	// alongside others although they are not annotated read-only.
	ParallelSafe []string `json:"parallelSafe"`
	// LargeResultBytes is the size above which a result's text is saved whole in the
	// session's directory and the model gets a head-and-tail preview (default 51200).
	LargeResultBytes int `json:"largeResultBytes"`
	// MaxDepth bounds how deep subagents may delegate (default 3; 0 forbids subagents).
	MaxDepth int `json:"maxDepth"`
	// Tools narrows the inherited tools of a subagent's scope ([toolregistry.Registry.Restrict]):
	// with Allow, only matching inherited tools stay; Deny hides matching ones. Ignored for
	// an agent in the root layer (it inherits nothing).
	Tools ToolsFilter `json:"tools"`
	// Permissions decide which tool calls run, ask or are refused: a deny rule first, then
	// the tools a person allowed for the session, ask, allow, a read-only tool
	// (allowReadOnly), then default.
	Permissions permission.Rules `json:"permissions"`
	// Sampling says how MCP servers' sampling requests are answered by this agent's model:
	// "ask" (default: a person approves each request; refused when nobody can be asked),
	// "allow" or "deny".
	Sampling permission.Action `json:"sampling"`
	// Mode is how the model uses tools: "standard" (it calls them one by one), "ptc" (it
	// writes programs that call them, see package ptc and docs/ptc.md) or "both" (default:
	// both are offered; a session is in standard mode unless started in ptc mode).
	Mode string `json:"mode"`
	// DeferTools says when a request carries tool_search and the always-loaded tools
	// instead of every visible tool's definition: contextShare (default 0.1 of the model's
	// context window), maxTools (default 100), alwaysLoad (server, server/tool or public-name
	// patterns). See docs/tool-search.md.
	DeferTools deferral.Options `json:"deferTools"`
	// Compaction says when and how the conversation is made smaller to fit the model's
	// context window (see docs/agent.md, "Compaction").
	Compaction CompactionConfig `json:"compaction"`
	// SessionsDir is where session logs are written; "" is DefaultSessionsDir, and "-"
	// keeps sessions in memory only.
	SessionsDir string `json:"sessionsDir"`
}

// CompactionConfig configures compaction. It is a plain value.
type CompactionConfig struct {
	// Threshold is the share of the model's context window a request may fill before the
	// older turns are summarised (default 0.8); negative turns automatic compaction off
	// (/compact and a provider's "too long" refusal still compact).
	Threshold float64 `json:"threshold"`
	// Keep is the share of the window the latest messages keep verbatim (default 0.16,
	// about a sixth).
	Keep float64 `json:"keep"`
	// PruneBytes: an old tool result (before the kept messages) longer than this is
	// replaced by a pointer to its saved text before anything is summarised (default 2048).
	PruneBytes int `json:"pruneBytes"`
	// SummaryTokens bounds the summary's length in tokens (default 8192; at most an eighth
	// of the window is asked for).
	SummaryTokens int `json:"summaryTokens"`
}

// ToolsFilter is a list of allowed and denied tool-name patterns.
type ToolsFilter struct {
	// Allow keeps only the inherited tools matching one of these patterns.
	Allow []string `json:"allow"`
	// Deny hides the inherited tools matching one of these patterns.
	Deny []string `json:"deny"`
}

// Default sets the defaults.
func (o *Config) Default() {
	*o = Config{MaxSteps: 50, MaxParallel: 10, LargeResultBytes: 50 << 10, MaxDepth: 3, Sampling: permission.Ask, Mode: ModeBoth,
		Permissions:  permission.Rules{Default: permission.Ask},
		DeferTools:   deferral.Options{Calls: deferral.CallsProxy},
		Compaction:   CompactionConfig{Threshold: 0.8, Keep: 0.16, PruneBytes: 2048, SummaryTokens: 8192},
		Instructions: InstructionsConfig{File: "AGENTS.md", MaxBytes: 32 << 10}}
}

// Validate checks ranges, actions and patterns; each problem is a [*ctx.ConfigError].
func (o Config) Validate() error {
	var p ctx.Problems
	if o.MaxSteps <= 0 {
		p.Add("maxSteps", "must be a positive number of steps, got %d", o.MaxSteps)
	}
	if o.TokenBudget < 0 {
		p.Add("tokenBudget", "must not be negative, got %d", o.TokenBudget)
	}
	if o.MaxParallel <= 0 {
		p.Add("maxParallel", "must be at least 1, got %d", o.MaxParallel)
	}
	if o.LargeResultBytes <= 0 {
		p.Add("largeResultBytes", "must be a positive number of bytes, got %d", o.LargeResultBytes)
	}
	if o.Instructions.MaxBytes <= 0 {
		p.Add("instructions.maxBytes", "must be a positive number of bytes, got %d", o.Instructions.MaxBytes)
	}
	if f := o.Instructions.File; f == "" || f != "-" && (strings.ContainsAny(f, `/\`) || f == "." || f == "..") {
		p.Add("instructions.file", `expected a file name such as AGENTS.md, or "-" for none, got %q`, f)
	}
	if o.MaxDepth < 0 {
		p.Add("maxDepth", "must not be negative, got %d", o.MaxDepth)
	}
	switch o.Mode {
	case ModeStandard, ModePTC, ModeBoth:
	default:
		p.Add("mode", `expected "standard", "ptc" or "both", got %q`, o.Mode)
	}
	if c := o.Compaction; c.Threshold == 0 || c.Threshold > 1 {
		p.Add("compaction.threshold", "must be a share of the context window in (0, 1] (0.8 is 80 %%), or negative for never, got %g", c.Threshold)
	}
	if c := o.Compaction; c.Keep <= 0 || c.Keep > 0.5 {
		p.Add("compaction.keep", "must be a share of the context window in (0, 0.5], got %g", c.Keep)
	}
	if o.Compaction.PruneBytes <= 0 {
		p.Add("compaction.pruneBytes", "must be a positive number of bytes, got %d", o.Compaction.PruneBytes)
	}
	if o.Compaction.SummaryTokens <= 0 {
		p.Add("compaction.summaryTokens", "must be a positive number of tokens, got %d", o.Compaction.SummaryTokens)
	}
	permission.CheckAction(&p, "sampling", o.Sampling)
	o.Permissions.Check(&p, "permissions")
	permission.CheckPatterns(&p, "parallelSafe", o.ParallelSafe)
	permission.CheckPatterns(&p, "tools.allow", o.Tools.Allow)
	permission.CheckPatterns(&p, "tools.deny", o.Tools.Deny)
	permission.CheckPatterns(&p, "deferTools.alwaysLoad", o.DeferTools.AlwaysLoad)
	switch o.DeferTools.Calls {
	case deferral.CallsProxy, deferral.CallsDefinitions:
	default:
		p.Add("deferTools.calls", "expected %q or %q, got %q", deferral.CallsProxy, deferral.CallsDefinitions, o.DeferTools.Calls)
	}
	if o.DeferTools.ContextShare > 1 {
		p.Add("deferTools.contextShare", "must be a share of the context window at most 1 (0.1 is 10 %%), got %g", o.DeferTools.ContextShare)
	}
	if err := o.DeferTools.Embeddings.Validate(); err != nil {
		p.Add("deferTools.embeddings", "%v", err)
	}
	return p.Err()
}
