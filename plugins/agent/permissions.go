package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/cordisgo/harness/plugins/toolregistry"
)

// The answers to an approval.
const (
	// DecisionAllow runs the call (or answers the sampling request) once.
	DecisionAllow = "allow"
	// DecisionAllowSession runs it and every later call of the same tool in this session
	// without asking again.
	DecisionAllowSession = "allow_session"
	// DecisionDeny refuses it; the model is told the person's reason.
	DecisionDeny = "deny"
)

// Answer is a person's answer to a pending approval.
type Answer struct {
	// Decision is DecisionAllow, DecisionAllowSession or DecisionDeny.
	Decision string `json:"decision"`
	// Reason is told to the model with a refusal.
	Reason string `json:"reason,omitempty"`
}

type pendingApproval struct {
	info   ApprovalInfo
	answer chan Answer
	gone   chan struct{} // closed when the session closes
}

// Pending lists the approvals waiting for an answer (a page that reconnects shows them).
func (s *Session) Pending() []ApprovalInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ApprovalInfo, 0, len(s.pending))
	for _, p := range s.pending {
		out = append(out, p.info)
	}
	return out
}

// Approve answers the pending approval id (of this session or of a subagent it runs).
func (s *Session) Approve(id string, a Answer) error {
	switch a.Decision {
	case DecisionAllow, DecisionAllowSession, DecisionDeny:
	default:
		return fmt.Errorf("agent: decision %q: expected %q, %q or %q", a.Decision, DecisionAllow, DecisionAllowSession, DecisionDeny)
	}
	s.mu.Lock()
	p, ok := s.pending[id]
	if ok {
		delete(s.pending, id)
	}
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownApproval, id)
	}
	p.answer <- a
	return nil
}

// granted reports whether tool was allowed for the session.
func (s *Session) granted(tool string) bool {
	r := s.root()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.grants[tool]
}

// ask puts a question to the person driving the session (the root of a delegation
// chain) and waits for the answer. It returns whether the request may go on and, when
// not, why.
func (s *Session) ask(cx context.Context, info ApprovalInfo) (bool, string, error) {
	r := s.root()
	var agent string
	if r != s {
		agent = s.agent
	}
	r.mu.Lock()
	r.approvals++
	info.ID = fmt.Sprintf("ap_%d", r.approvals)
	interactive := r.interactive && !r.closed
	p := &pendingApproval{info: info, answer: make(chan Answer, 1), gone: make(chan struct{})}
	if interactive {
		r.pending[info.ID] = p
	}
	r.mu.Unlock()
	asked := info
	r.emit(Event{Type: EventApprovalAsked, Agent: agent, Approval: &asked})
	decide := func(decision, why string) {
		d := info
		d.Decision, d.Why = decision, why
		r.emit(Event{Type: EventApprovalDecided, Agent: agent, Approval: &d})
	}
	if !interactive {
		why := "nobody can be asked for approval (the session is not interactive); allow the tool in the agent's permissions"
		decide(DecisionDeny, why)
		return false, why, nil
	}
	select {
	case a := <-p.answer:
		why := a.Reason
		if a.Decision == DecisionDeny && why == "" {
			why = "the user refused"
		}
		decide(a.Decision, why)
		if a.Decision == DecisionAllowSession && info.Tool != "" {
			r.mu.Lock()
			r.grants[info.Tool] = true
			r.mu.Unlock()
		}
		return a.Decision != DecisionDeny, why, nil
	case <-p.gone:
		decide(DecisionDeny, "the session was closed")
		return false, "the session was closed", ErrClosed
	case <-cx.Done():
		r.mu.Lock()
		delete(r.pending, info.ID)
		r.mu.Unlock()
		decide(DecisionDeny, "cancelled")
		return false, "cancelled", context.Cause(cx)
	}
}

// approve is the agent's Approver: the registry consults it when the policy answered Ask.
func (d *agentDef) approve(cx context.Context, req *toolregistry.PolicyRequest, reason string) (toolregistry.Approval, error) {
	s, ok := FromContext(req.Caller)
	if !ok {
		return toolregistry.Approval{Reason: "nobody can be asked for approval"}, nil
	}
	ok, why, err := s.ask(cx, ApprovalInfo{Kind: "tool", CallID: req.CallID, Tool: req.Tool.Name,
		Args: maskJSON(req.Args), Server: req.Tool.Meta["server"], Reason: reason})
	if err != nil {
		return toolregistry.Approval{}, err
	}
	return toolregistry.Approval{Approved: ok, Reason: why}, nil
}

// policy is the agent's link in the registry's Policy chain. It decides only calls made
// by this agent's sessions; the chain's other listeners run first, and their Deny stands.
func (d *agentDef) policy(req *toolregistry.PolicyRequest, next func() (toolregistry.Decision, error)) (toolregistry.Decision, error) {
	s, ok := FromContext(req.Caller)
	if !ok || s.agent != d.name {
		return next()
	}
	dec, err := next()
	if err != nil || dec.Action == toolregistry.Deny {
		return dec, err
	}
	mine := d.decide(s, req.Tool)
	switch mine.Action {
	case toolregistry.Deny, toolregistry.Ask:
		return mine, nil
	}
	return dec, nil
}

// decide applies the agent's permissions to one tool.
func (d *agentDef) decide(s *Session, t toolregistry.Info) toolregistry.Decision {
	p := &d.cfg.Permissions
	if rule, ok := matchRule(p.Deny, t); ok {
		return toolregistry.Decision{Action: toolregistry.Deny, Reason: fmt.Sprintf("the agent's permissions deny it (rule %q)", rule)}
	}
	if t.Meta["harness"] == "agent" || s.granted(t.Name) {
		return toolregistry.Decision{Action: toolregistry.Allow}
	}
	if rule, ok := matchRule(p.Ask, t); ok {
		return toolregistry.Decision{Action: toolregistry.Ask, Reason: fmt.Sprintf("rule %q asks", rule)}
	}
	if _, ok := matchRule(p.Allow, t); ok {
		return toolregistry.Decision{Action: toolregistry.Allow}
	}
	if p.allowReadOnly() && readOnly(t) {
		return toolregistry.Decision{Action: toolregistry.Allow}
	}
	switch p.Default {
	case ActionAllow:
		return toolregistry.Decision{Action: toolregistry.Allow}
	case ActionDeny:
		return toolregistry.Decision{Action: toolregistry.Deny, Reason: "no rule of the agent's permissions allows it (default deny)"}
	}
	return toolregistry.Decision{Action: toolregistry.Ask, Reason: "no rule of the agent's permissions allows it"}
}

// matchRule returns the first pattern of pats that matches t: a pattern without '/'
// matches the public name, one with '/' matches "SERVER/TOOL" of an MCP tool.
func matchRule(pats []string, t toolregistry.Info) (string, bool) {
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

// readOnly reports whether t is annotated read-only and not destructive.
func readOnly(t toolregistry.Info) bool {
	return t.Meta["readOnlyHint"] == "true" && t.Meta["destructiveHint"] != "true"
}

// parallelSafe reports whether calls of t may run alongside other calls.
func (d *agentDef) parallelSafe(t toolregistry.Info) bool {
	if readOnly(t) {
		return true
	}
	_, ok := matchRule(d.cfg.ParallelSafe, t)
	return ok
}

// maskJSON returns args with secret-looking values masked, as JSON (nil for none).
func maskJSON(args json.RawMessage) json.RawMessage {
	if len(args) == 0 {
		return nil
	}
	return json.RawMessage(maskArgs(string(args)))
}
