package permission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

// Errors of [Approvals], matched with errors.Is.
var (
	// ErrUnknownApproval: no pending question of that id.
	ErrUnknownApproval = errors.New("no such pending approval")
	// ErrClosed: the approvals were closed (the session ended) while a question waited.
	ErrClosed = errors.New("the session was closed")
)

// Answer is a person's answer to a pending question. A plain value.
type Answer struct {
	// Decision is [Allow], [AllowSession] or [Deny].
	Decision Action `json:"decision"`
	// Reason is told to the model with a refusal.
	Reason string `json:"reason,omitempty"`
}

// Validate checks the decision.
func (a Answer) Validate() error {
	switch a.Decision {
	case Allow, AllowSession, Deny:
		return nil
	}
	return fmt.Errorf("decision %q: expected %q, %q or %q", a.Decision, Allow, AllowSession, Deny)
}

// Request describes a question to a person and, once decided, the answer. It is the
// approval of a session's approval.asked and approval.decided events.
type Request struct {
	// ID identifies the question; answer it with [Approvals.Answer].
	ID string `json:"id"`
	// Kind is "tool" (a tool call) or "sampling" (a server asks for a completion).
	Kind string `json:"kind"`
	// CallID, Tool and Args describe a tool call; Server the MCP server of a tool or of a
	// sampling request.
	CallID string          `json:"callId,omitempty"`
	Tool   string          `json:"tool,omitempty"`
	Args   json.RawMessage `json:"args,omitempty"`
	Server string          `json:"server,omitempty"`
	// Reason is the policy's reason for asking.
	Reason string `json:"reason,omitempty"`
	// Preview, for a tool call, is what the call would do as its tool says before it runs
	// (the diff of a write, the command of a shell call; toolregistry's Tool.Preview): what
	// a person approving it reads first. Absent for a tool that gives none.
	Preview *Preview `json:"preview,omitempty"`
	// Sampling is what a server's sampling request asks ("sampling" questions).
	Sampling *Sampling `json:"sampling,omitempty"`
	// Decision is set once decided: allow, allow_session or deny; Why is the reason
	// (the person's words, "nobody can be asked", ...).
	Decision Action `json:"decision,omitempty"`
	Why      string `json:"why,omitempty"`
}

// Preview is what a call would do, as an approval shows it. A plain value.
type Preview struct {
	// Kind is PreviewDiff (Text is a unified diff), PreviewCommand (a command line, then
	// where and how it runs) or PreviewText.
	Kind string `json:"kind"`
	Text string `json:"text"`
}

// The kinds of a [Preview].
const (
	PreviewDiff    = "diff"
	PreviewCommand = "command"
	PreviewText    = "text"
)

// Sampling is what an MCP server's sampling request asks of the model, for the person to
// judge before it is sent: the messages (their text; other content described), the
// system prompt, the token limit and the server's model preferences. A plain value.
type Sampling struct {
	SystemPrompt string            `json:"systemPrompt,omitempty"`
	Messages     []SamplingMessage `json:"messages"`
	MaxTokens    int64             `json:"maxTokens"`
	// ModelHints are the names the server would like, in its order; the priorities (0 to
	// 1) how much it weighs cost, speed and intelligence. The harness answers with the
	// session's model whatever they say.
	ModelHints           []string `json:"modelHints,omitempty"`
	CostPriority         float64  `json:"costPriority,omitempty"`
	SpeedPriority        float64  `json:"speedPriority,omitempty"`
	IntelligencePriority float64  `json:"intelligencePriority,omitempty"`
	Temperature          float64  `json:"temperature,omitempty"`
}

// SamplingMessage is one message of a [Sampling] request: its role (user or assistant)
// and text.
type SamplingMessage struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

// Approvals are the questions a session puts to the person driving it, and the tools that
// person allowed for the session. A non-interactive session has nobody to ask: every
// question is refused at once, saying so.
//
// Approvals is safe for concurrent use.
type Approvals struct {
	interactive bool

	mu      sync.Mutex
	n       int
	pending map[string]*pending
	grants  map[string]bool
	closed  bool
}

type pending struct {
	req    Request
	answer chan Answer
	gone   chan struct{} // closed by Close
}

// NewApprovals returns the approvals of a session; interactive says a person answers.
func NewApprovals(interactive bool) *Approvals {
	return &Approvals{interactive: interactive, pending: map[string]*pending{}, grants: map[string]bool{}}
}

// NotInteractive is the reason given when nobody can be asked.
const NotInteractive = "nobody can be asked for approval (the session is not interactive); allow the tool in the agent's permissions"

// Ask puts q to the person and waits for the answer, cx's end or [Approvals.Close]. record
// is called with the question as asked (ID set, Decision empty) and again as decided, on
// Ask's goroutine: the session logs both. It returns whether the request may go on and,
// when not, why; err is cx's cause or [ErrClosed] when the wait was cut short.
func (a *Approvals) Ask(cx context.Context, q Request, record func(Request)) (bool, string, error) {
	a.mu.Lock()
	a.n++
	q.ID = fmt.Sprintf("ap_%d", a.n)
	interactive := a.interactive && !a.closed
	p := &pending{req: q, answer: make(chan Answer, 1), gone: make(chan struct{})}
	if interactive {
		a.pending[q.ID] = p
	}
	a.mu.Unlock()
	record(q)
	decide := func(d Action, why string) {
		q.Decision, q.Why = d, why
		record(q)
	}
	if !interactive {
		decide(Deny, NotInteractive)
		return false, NotInteractive, nil
	}
	select {
	case ans := <-p.answer:
		why := ans.Reason
		if ans.Decision == Deny && why == "" {
			why = "the user refused"
		}
		// The record says why, whatever the answer: an allow is recorded as the person's.
		recorded := why
		switch {
		case recorded != "":
		case ans.Decision == AllowSession:
			recorded = "the user allowed the tool for the session"
		default:
			recorded = "the user allowed it"
		}
		decide(ans.Decision, recorded)
		if ans.Decision == AllowSession && q.Tool != "" {
			a.mu.Lock()
			a.grants[q.Tool] = true
			a.mu.Unlock()
		}
		return ans.Decision != Deny, why, nil
	case <-p.gone:
		decide(Deny, "the session was closed")
		return false, "the session was closed", ErrClosed
	case <-cx.Done():
		a.mu.Lock()
		delete(a.pending, q.ID)
		a.mu.Unlock()
		decide(Deny, "cancelled")
		return false, "cancelled", context.Cause(cx)
	}
}

// Answer answers the pending question id.
func (a *Approvals) Answer(id string, ans Answer) error {
	if err := ans.Validate(); err != nil {
		return err
	}
	a.mu.Lock()
	p, ok := a.pending[id]
	if ok {
		delete(a.pending, id)
	}
	a.mu.Unlock()
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownApproval, id)
	}
	p.answer <- ans
	return nil
}

// Pending lists the questions waiting for an answer (a page that reconnects shows them).
func (a *Approvals) Pending() []Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]Request, 0, len(a.pending))
	for _, p := range a.pending {
		out = append(out, p.req)
	}
	return out
}

// Granted reports whether the person allowed tool for the session.
func (a *Approvals) Granted(tool string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.grants[tool]
}

// Close refuses the questions waiting and every later one: they end with [ErrClosed].
func (a *Approvals) Close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	for id, p := range a.pending {
		close(p.gone)
		delete(a.pending, id)
	}
}
