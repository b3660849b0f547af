// Package permission is the one vocabulary of tool permissions: the verdict on a call
// ([Action]: allow, ask or deny), an agent's rules ([Rules]) and the questions put to the
// person driving a session with their answers ([Approvals]). The tool registry's policy
// chain speaks it, the agent decides its calls and its PTC programs' calls with it, and the
// page and the terminal answer its questions.
//
// # Concurrency
//
// [Rules] and [Answer] are plain values. [Approvals] is safe for concurrent use.
package permission

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/cordisgo/harness/ctx"
)

// Action is a verdict on a call: a policy's, a rule's, or a person's answer.
type Action string

// The verdicts. [AllowSession] is an answer only: a rule or a policy never gives it.
const (
	// Allow runs the call.
	Allow Action = "allow"
	// Ask puts the call to a person (the approver) before it runs.
	Ask Action = "ask"
	// Deny refuses the call; the model is told why.
	Deny Action = "deny"
	// AllowSession, a person's answer, runs the call and every later call of the same tool
	// in the session without asking again.
	AllowSession Action = "allow_session"
)

// CheckAction adds a problem at key unless a is allow, ask or deny.
func CheckAction(p *ctx.Problems, key string, a Action) {
	switch a {
	case Allow, Ask, Deny:
	default:
		p.Add(key, `expected "allow", "ask" or "deny", got %q`, a)
	}
}

// CheckPatterns adds a problem at key[i] for each empty or malformed path.Match pattern.
func CheckPatterns(p *ctx.Problems, key string, pats []string) {
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

// Tool is what a rule sees of a tool: its public name and the tool registry's metadata
// (an MCP tool's "server", "mcpTool", "readOnlyHint" and "destructiveHint").
type Tool struct {
	Name string
	Meta map[string]string
}

// ReadOnly reports whether a tool's metadata says it is read-only and not destructive
// (the MCP client copies the readOnlyHint and destructiveHint annotations into it). Such
// calls need no approval by default ([Rules].AllowReadOnly) and may overlap other calls.
func ReadOnly(meta map[string]string) bool {
	return meta["readOnlyHint"] == "true" && meta["destructiveHint"] != "true"
}

// The metadata of a tool with an MCP App's view (SEP-1865), which the MCP client copies
// from the tool's _meta.ui: the view's ui:// resource and who may call the tool.
const (
	// MetaUIResource is the ui:// URI of the tool's view.
	MetaUIResource = "ui.resourceUri"
	// MetaUIVisibility is _meta.ui.visibility joined with commas ("model,app", "app");
	// absent when the server left it out (both may call the tool).
	MetaUIVisibility = "ui.visibility"
)

// AppOnly reports whether a tool's metadata says only its app's view may call it (a
// visibility without "model"): such a tool is not offered to a model, and a model's call
// of it is refused.
func AppOnly(meta map[string]string) bool {
	return meta[MetaUIResource] != "" && !visible(meta, "model")
}

// AppCallable reports whether a view may call the tool: its visibility, when it has one,
// lists "app".
func AppCallable(meta map[string]string) bool { return visible(meta, "app") }

func visible(meta map[string]string, who string) bool {
	vis, ok := meta[MetaUIVisibility]
	return !ok || slices.Contains(strings.Split(vis, ","), who)
}

// Match returns the first pattern of pats that matches t: a pattern without '/' matches
// the public name (mcp__gh__create_issue), one with '/' matches "SERVER/TOOL" of an MCP
// tool (gh/create_*, gh/*). Patterns use path.Match syntax.
func Match(pats []string, t Tool) (string, bool) {
	for _, p := range pats {
		subject := t.Name
		if strings.Contains(p, "/") {
			server, raw := t.Meta["server"], t.Meta["mcpTool"]
			if server == "" || raw == "" {
				continue
			}
			subject = server + "/" + raw
		}
		if ok, _ := path.Match(p, subject); ok {
			return p, true
		}
	}
	return "", false
}

// Rules are an agent's permissions (its configuration's permissions key). A call is
// decided in this order: a Deny rule (deny beats everything), an "allow for this session"
// answer, an Ask rule, an Allow rule, a read-only tool when AllowReadOnly, then Default.
//
// Rules is a plain value.
type Rules struct {
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

// Check adds the problems of r at key's subkeys: the default action and every pattern.
func (r Rules) Check(p *ctx.Problems, key string) {
	CheckAction(p, key+".default", r.Default)
	CheckPatterns(p, key+".allow", r.Allow)
	CheckPatterns(p, key+".ask", r.Ask)
	CheckPatterns(p, key+".deny", r.Deny)
}

func (r *Rules) allowReadOnly() bool { return r.AllowReadOnly == nil || *r.AllowReadOnly }

// Decision is a verdict with its reason: why a call is refused, or what a question asks.
type Decision struct {
	Action Action
	Reason string
}

// Decide applies r to a call of t. granted says the person allowed t for the session.
func (r *Rules) Decide(t Tool, granted bool) Decision {
	if rule, ok := Match(r.Deny, t); ok {
		return Decision{Action: Deny, Reason: fmt.Sprintf("the agent's permissions deny it (rule %q)", rule)}
	}
	if granted {
		return Decision{Action: Allow}
	}
	if rule, ok := Match(r.Ask, t); ok {
		return Decision{Action: Ask, Reason: fmt.Sprintf("rule %q asks", rule)}
	}
	if _, ok := Match(r.Allow, t); ok {
		return Decision{Action: Allow}
	}
	if r.allowReadOnly() && ReadOnly(t.Meta) {
		return Decision{Action: Allow}
	}
	switch r.Default {
	case Allow:
		return Decision{Action: Allow}
	case Deny:
		return Decision{Action: Deny, Reason: "no rule of the agent's permissions allows it (default deny)"}
	}
	return Decision{Action: Ask, Reason: "no rule of the agent's permissions allows it"}
}
