package agent

import (
	"fmt"
	"path"
	"path/filepath"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/userdirs"
	"github.com/cordisgo/harness/toolsearch"
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
	// Permissions decide which tool calls run, ask or are refused.
	Permissions Permissions `json:"permissions"`
	// Sampling says how MCP servers' sampling requests are answered by this agent's model:
	// "ask" (default: a person approves each request; refused when nobody can be asked),
	// "allow" or "deny".
	Sampling Action `json:"sampling"`
	// Mode is how the model uses tools: "standard" (it calls them one by one), "ptc" (it
	// writes programs that call them, see package ptc and docs/ptc.md) or "both" (default:
	// both are offered; a session is in standard mode unless started in ptc mode).
	Mode string `json:"mode"`
	// DeferTools says when a request carries tool_search and the always-loaded tools
	// instead of every visible tool's definition: contextShare (default 0.1 of the model's
	// context window), maxTools (default 100), alwaysLoad (server, server/tool or public-name
	// patterns). See docs/tool-search.md.
	DeferTools toolsearch.DeferOptions `json:"deferTools"`
	// SessionsDir is where session logs are written; "" is DefaultSessionsDir, and "-"
	// keeps sessions in memory only.
	SessionsDir string `json:"sessionsDir"`
}

// ToolsFilter is a list of allowed and denied tool-name patterns.
type ToolsFilter struct {
	// Allow keeps only the inherited tools matching one of these patterns.
	Allow []string `json:"allow"`
	// Deny hides the inherited tools matching one of these patterns.
	Deny []string `json:"deny"`
}

// Action is a permission verdict: "allow", "ask" or "deny".
type Action string

// The permission actions.
const (
	ActionAllow Action = "allow"
	ActionAsk   Action = "ask"
	ActionDeny  Action = "deny"
)

// Permissions are an agent's rules. A rule is a path.Match pattern: one without '/'
// matches the tool's public name (mcp__gh__create_issue), one with '/' matches
// "SERVER/TOOL" for MCP tools (gh/create_*, gh/*). A call is decided in this order:
// a Deny rule (deny beats everything), an "allow for this session" answer, an Ask rule,
// an Allow rule, a read-only tool when AllowReadOnly, then Default.
type Permissions struct {
	// Default is the action for calls no rule decides (default "ask").
	Default Action `json:"default"`
	// Allow lists the rules of tools that run without asking.
	Allow []string `json:"allow"`
	// Ask lists the rules of tools that need a person's approval.
	Ask []string `json:"ask"`
	// Deny lists the rules of tools that never run; deny beats every other rule.
	Deny []string `json:"deny"`
	// AllowReadOnly allows tools annotated readOnlyHint (and not destructive) without a
	// rule (default true).
	AllowReadOnly *bool `json:"allowReadOnly"`
}

// Default sets the defaults.
func (o *Config) Default() {
	*o = Config{MaxSteps: 50, MaxParallel: 10, LargeResultBytes: 50 << 10, MaxDepth: 3, Sampling: ActionAsk, Mode: ModeBoth,
		Permissions: Permissions{Default: ActionAsk}}
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
	if o.MaxDepth < 0 {
		p.Add("maxDepth", "must not be negative, got %d", o.MaxDepth)
	}
	switch o.Mode {
	case ModeStandard, ModePTC, ModeBoth:
	default:
		p.Add("mode", `expected "standard", "ptc" or "both", got %q`, o.Mode)
	}
	checkAction(&p, "sampling", o.Sampling)
	checkAction(&p, "permissions.default", o.Permissions.Default)
	checkPatterns(&p, "parallelSafe", o.ParallelSafe)
	checkPatterns(&p, "tools.allow", o.Tools.Allow)
	checkPatterns(&p, "tools.deny", o.Tools.Deny)
	checkPatterns(&p, "permissions.allow", o.Permissions.Allow)
	checkPatterns(&p, "permissions.ask", o.Permissions.Ask)
	checkPatterns(&p, "permissions.deny", o.Permissions.Deny)
	checkPatterns(&p, "deferTools.alwaysLoad", o.DeferTools.AlwaysLoad)
	if o.DeferTools.ContextShare > 1 {
		p.Add("deferTools.contextShare", "must be a share of the context window at most 1 (0.1 is 10 %%), got %g", o.DeferTools.ContextShare)
	}
	if err := o.DeferTools.Embeddings.Validate(); err != nil {
		p.Add("deferTools.embeddings", "%v", err)
	}
	return p.Err()
}

func checkAction(p *ctx.Problems, key string, a Action) {
	switch a {
	case ActionAllow, ActionAsk, ActionDeny:
	default:
		p.Add(key, `expected "allow", "ask" or "deny", got %q`, a)
	}
}

func checkPatterns(p *ctx.Problems, key string, pats []string) {
	for i, s := range pats {
		if s == "" {
			p.Add(fmt.Sprintf("%s[%d]", key, i), "empty pattern")
			continue
		}
		if _, err := path.Match(s, ""); err != nil {
			p.Add(fmt.Sprintf("%s[%d]", key, i), "malformed pattern %q: %v", s, err)
		}
	}
}

func (o *Permissions) allowReadOnly() bool { return o.AllowReadOnly == nil || *o.AllowReadOnly }

// DefaultSessionsDir returns the directory session logs go to by default: harness/sessions
// in the user's state directory (userdirs.Env.State): $XDG_STATE_HOME/harness/sessions,
// else ~/.local/state/harness/sessions (on macOS ~/Library/Application
// Support/harness/sessions, on Windows %LocalAppData%). getenv reads the environment
// (os.Getenv when nil), so a command can resolve it for the environment it was given.
func DefaultSessionsDir(getenv func(string) string) (string, error) {
	dir, err := userdirs.Env{Getenv: getenv}.State()
	if err != nil {
		return "", fmt.Errorf("agent: no state directory for sessions: %w", err)
	}
	return filepath.Join(dir, "harness", "sessions"), nil
}
