package agent

import (
	"context"
	"encoding/json"
	"time"

	"github.com/cordisgo/harness/permission"
	"github.com/cordisgo/harness/plugins/agent/session"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// Pending lists the approvals waiting for an answer (a page that reconnects shows them).
func (s *Session) Pending() []permission.Request { return s.approvals.Pending() }

// Approve answers the pending approval id (of this session or of a subagent it runs).
func (s *Session) Approve(id string, a permission.Answer) error {
	return s.approvals.Answer(id, a)
}

// ask puts a question to the person driving the session (the root of a delegation
// chain) and waits for the answer; the question and the answer are logged in the root's
// log. It returns whether the request may go on and, when not, why.
func (s *Session) ask(cx context.Context, q permission.Request) (bool, string, error) {
	r := s.root()
	var agent string
	if r != s {
		agent = s.agent
	}
	return r.approvals.Ask(cx, q, func(q permission.Request) {
		typ := session.EventApprovalAsked
		if q.Decision != "" {
			typ = session.EventApprovalDecided
		}
		r.emit(session.Event{Type: typ, Agent: agent, Approval: &q})
	})
}

// approve is the session's Approver, passed with each of its calls: the registry consults
// it when the policy answered Ask.
func (s *Session) approve(cx context.Context, req *toolregistry.PolicyRequest, reason string) (toolregistry.Approval, error) {
	ok, why, err := s.ask(cx, permission.Request{Kind: "tool", CallID: req.CallID, Tool: req.Tool.Name,
		Args: maskJSON(req.Args), Server: req.Tool.Meta["server"], Reason: reason, Preview: callPreview(cx, req)})
	if err != nil {
		return toolregistry.Approval{}, err
	}
	return toolregistry.Approval{Approved: ok, Reason: why}, nil
}

// previewTimeout bounds the wait for a tool's preview of a call (a dry run on its server).
const previewTimeout = 10 * time.Second

// callPreview asks the tool what the call would do; a failure is said in the preview's
// place, and the person decides without it.
func callPreview(cx context.Context, req *toolregistry.PolicyRequest) *permission.Preview {
	pcx, cancel := context.WithTimeout(cx, previewTimeout)
	defer cancel()
	p, err := req.Preview(pcx)
	if err != nil {
		return &permission.Preview{Kind: permission.PreviewText, Text: "(no preview: " + err.Error() + ")"}
	}
	return p
}

// policy is the agent's link in the registry's Policy chain. It decides only calls made
// for this agent's sessions; the chain's other listeners run first, and their Deny stands.
func (d *agentDef) policy(req *toolregistry.PolicyRequest, next func() (permission.Decision, error)) (permission.Decision, error) {
	s, ok := req.Session.(*Session)
	if !ok || s.agent != d.name {
		return next()
	}
	dec, err := next()
	if err != nil || dec.Action == permission.Deny {
		return dec, err
	}
	mine := d.decide(s, req.Tool)
	switch mine.Action {
	case permission.Deny, permission.Ask:
		return mine, nil
	}
	return dec, nil
}

// decide applies the agent's permissions to one tool: the harness's own tools
// (read_tool_result, subagents) and the tools the person allowed for the session need no
// approval, unless a deny rule says otherwise.
func (d *agentDef) decide(s *Session, t toolregistry.Info) permission.Decision {
	granted := t.Meta["harness"] == "agent" || s.root().approvals.Granted(t.Name)
	return d.cfg.Permissions.Decide(permission.Tool{Name: t.Name, Meta: t.Meta}, granted)
}

// parallelSafe reports whether calls of t may run alongside other calls: it is annotated
// read-only, or matches the agent's parallelSafe patterns.
func (d *agentDef) parallelSafe(t toolregistry.Info) bool {
	if permission.ReadOnly(t.Meta) {
		return true
	}
	_, ok := permission.Match(d.cfg.ParallelSafe, permission.Tool{Name: t.Name, Meta: t.Meta})
	return ok
}

// maskJSON returns args with secret-looking values masked, as JSON (nil for none).
func maskJSON(args json.RawMessage) json.RawMessage {
	if len(args) == 0 {
		return nil
	}
	return json.RawMessage(maskArgs(string(args)))
}
