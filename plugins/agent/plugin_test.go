package agent

import (
	"slices"
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/permission"
	"github.com/cordisgo/harness/plugins/agent/session"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/plugins/sysprompt"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// agentScope mounts an agent scope called name on c, as the binary mounts a profile row
// with nested rows: a layer of its own in which the agent plugin runs with cfg.
func agentScope(t *testing.T, c *ctx.Context, name string, cfg map[string]any, inside func(layer *ctx.Context)) *ctx.Scope {
	t.Helper()
	def := ctx.Define(ctx.Meta{Name: name}, func(c *ctx.Context, _ struct{}) error {
		layer := c.Layered()
		if _, err := layer.Plugin(Plugin, cfg); err != nil {
			return err
		}
		if inside != nil {
			inside(layer)
		}
		return nil
	})
	return ctxtest.Mount(t, c, def, nil)
}

// newRoot returns a test root with the tool registry, the system prompt, the plugins extra
// (mounted in that order) and a model service of models (nil: none), ready for the agent
// plugin.
func newRoot(t *testing.T, models map[string]model.Model, extra ...ctx.PluginDef) *ctx.Context {
	t.Helper()
	root := ctxtest.New(t)
	ctxtest.MountActive(t, root, toolregistry.Plugin, nil)
	ctxtest.MountActive(t, root, sysprompt.Plugin, nil)
	for _, def := range extra {
		ctxtest.MountActive(t, root, def, nil)
	}
	if _, err := model.Key.Provide(root, model.NewService(models, "")); err != nil {
		t.Fatal(err)
	}
	return root
}

// mainAgent settles root and returns its agent service and main agent.
func mainAgent(t *testing.T, root *ctx.Context) (*Service, *agentDef) {
	t.Helper()
	ctxtest.Settle(t, root)
	svc, _ := Key.Get(root)
	d, err := svc.agent("")
	if err != nil {
		t.Fatal(err)
	}
	return svc, d
}

// bareSession is a session of svc that runs no loop (in PTC mode when ptcMode), for tests of
// what its requests carry and of its tool calls.
func bareSession(svc *Service, ptcMode bool) *Session {
	s := &Session{svc: svc, ptc: ptcMode, approvals: permission.NewApprovals(false), log: session.NewLog(nil, nil, nil),
		saved: map[string]string{}}
	s.approver = toolregistry.ApproverFunc(s.approve)
	return s
}

func names(list []toolregistry.Info) []string {
	var out []string
	for _, t := range list {
		out = append(out, t.Name)
	}
	return out
}

// TestSubagentTools: every agent scope with the agent plugin gives its nearest enclosing
// agent one tool; a subagent sees its own subagents' tools, not its parent's or siblings'.
func TestSubagentTools(t *testing.T) {
	root := ctxtest.New(t)
	ctxtest.MountActive(t, root, toolregistry.Plugin, nil)
	if _, err := model.Key.Provide(root, model.NewService(nil, "")); err != nil {
		t.Fatal(err)
	}
	ctxtest.MountActive(t, root, Plugin, map[string]any{"sessionsDir": "-"})
	var coderLayer *ctx.Context
	agentScope(t, root, "coder", map[string]any{"description": "Writes code."}, func(layer *ctx.Context) {
		coderLayer = layer
		agentScope(t, layer, "review", map[string]any{"description": "Reviews code."}, nil)
	})
	agentScope(t, root, "docs", nil, nil)
	ctxtest.Settle(t, root)

	reg, _ := toolregistry.Key.Get(root)
	got := names(reg.List(root))
	if want := []string{"agent__coder", "agent__docs", "call_tool", "read_tool_result", "task_result", "tool_search"}; !slices.Equal(got, want) {
		t.Errorf("root tools %v, want %v", got, want)
	}
	if got := names(reg.List(coderLayer)); !slices.Equal(got, []string{"agent__review", "call_tool", "read_tool_result", "task_result", "tool_search"}) {
		t.Errorf("coder's tools %v", got)
	}
	svc, _ := Key.Get(root)
	var agentNames []string
	for _, a := range svc.Agents() {
		agentNames = append(agentNames, a.Name+"<"+a.Parent)
	}
	if want := []string{"<", "coder<", "coder.review<coder", "docs<"}; !slices.Equal(agentNames, want) {
		t.Errorf("agents %v, want %v", agentNames, want)
	}
	if _, err := svc.Start(StartOptions{Agent: "codr"}); err == nil || !strings.Contains(err.Error(), `did you mean "coder"`) {
		t.Errorf("unknown agent: %v", err)
	}
}
