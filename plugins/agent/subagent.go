package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cordisgo/harness/plugins/agent/session"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

var subagentSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"task":{"type":"string","description":"The task, with everything the subagent needs to know: it does not see this conversation."}},` +
	`"required":["task"],"additionalProperties":false}`)

// subagentTool is the tool through which d's model hands a task to the subagent child.
func (d *agentDef) subagentTool(child, suffix, desc string) toolregistry.Tool {
	if desc == "" {
		desc = fmt.Sprintf("Hands a task to the subagent %q.", child)
	}
	desc += " It works on its own with its own tools and returns its final answer."
	return toolregistry.Tool{
		Name:        subagentPrefix + suffix,
		Description: desc,
		Parameters:  subagentSchema,
		Timeout:     -1, // a subagent runs its own loop, bounded by its steps
		Meta:        map[string]string{"harness": "agent", "agent": child},
		Execute: func(cx context.Context, call *toolregistry.Call) (*toolregistry.Result, error) {
			return d.delegate(cx, child, call)
		},
	}
}

// delegate runs one subagent session for the task in call.
func (d *agentDef) delegate(cx context.Context, child string, call *toolregistry.Call) (*toolregistry.Result, error) {
	var in struct {
		Task string `json:"task"`
	}
	if err := json.Unmarshal(call.Args, &in); err != nil {
		return nil, err
	}
	parent, _ := call.Session.(*Session)
	svc := d.service()
	depth, maxDepth := 1, d.cfg.MaxDepth
	if parent != nil {
		svc = parent.svc
		depth = parent.depth + 1
		if pd, err := parent.root().def(); err == nil {
			maxDepth = pd.cfg.MaxDepth
		}
	}
	if svc == nil {
		return nil, errors.New("no agent service (mount the agent plugin at the top level)")
	}
	if depth > maxDepth {
		return nil, fmt.Errorf("%w: the subagent %q would run at depth %d, and the agent's maxDepth is %d", ErrDepth, child, depth, maxDepth)
	}
	cd, err := svc.agent(child)
	if err != nil {
		return nil, err
	}
	s, err := svc.start(cd, StartOptions{Ephemeral: parent == nil}, parent, depth)
	if err != nil {
		return nil, err
	}
	defer func() { _ = s.Close() }()
	end, err := s.Send(cx, in.Task)
	if err != nil {
		return nil, fmt.Errorf("subagent %q: %w", child, err)
	}
	if parent != nil {
		parent.foldSubagentUsage(child, call, end.Usage)
	}
	text := end.Text
	if end.Reason != session.StopDone {
		text = fmt.Sprintf("[the subagent stopped before finishing: %s]\n%s", end.Reason, text)
	}
	if text == "" {
		text = "(the subagent gave no answer)"
	}
	return toolregistry.TextResult(text), nil
}

// foldSubagentUsage counts what a subagent's run used (its own subagents' included) as the
// parent's: a durable usage event in the parent's log, marked with the subagent's name and
// the delegating call (so the session's totals — sessions list, /cost — include it, and a
// surface can tell it from the subagent's own per-request events forwarded live), and, at
// the end of the parent's step, in the turn's usage (its token budget and its cost line).
func (s *Session) foldSubagentUsage(child string, call *toolregistry.Call, u model.Usage) {
	if u == (model.Usage{}) {
		return
	}
	s.emit(session.Event{Type: session.EventUsage, Agent: child, Call: &session.CallInfo{ID: call.ID, Tool: call.Tool}, Usage: &u})
	s.mu.Lock()
	addUsage(&s.subUsage, u)
	s.mu.Unlock()
}

// takeSubagentUsage returns what subagents used since the last call, and forgets it.
func (s *Session) takeSubagentUsage() model.Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.subUsage
	s.subUsage = model.Usage{}
	return u
}
