// Package agentapi is the main agent's remote API: each method declared once as a value
// with its parameters and answer, which the agent (plugins/agent) serves and its callers
// (package turn, the terminal chat, the management page's server side, an embedder) call
// over a remote.Caller, in process or on a running host. It holds declarations only, so
// that a caller needs neither the agent's loop nor its plugin.
//
// # Concurrency
//
// The method values are made once and never change; the parameter and answer types are
// plain values.
package agentapi

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/permission"
	"github.com/cordisgo/harness/plugins/agent/session"
	"github.com/cordisgo/harness/plugins/remote"
)

// ErrCancelled is the error of a turn that was cancelled (agent.ErrCancelled is this
// value): what a caller of the turn gets back.
var ErrCancelled = errors.New("agent: turn cancelled")

// The remote methods of the main agent, served by the remote API (plugins/remote) to the
// management page's Chat view and to other processes:
//
//	agent/agents     call   null           → []AgentInfo
//	agent/sessions   call   null           → SessionList
//	agent/start      call   StartParams    → session.Info (an interactive session, unless unattended)
//	agent/open       call   OpenParams     → session.Info (a stored session resumed, or the open one)
//	agent/send       call   SendParams     → {} (the turn runs in the host; follow agent/events)
//	agent/retry      call   SessionParams  → {} (the last turn's message again, as agent/send; Session.Retry)
//	agent/events     stream EventsParams   → Event… (durable events after seq `after` replayed, then live ones; ends when the session closes)
//	agent/cancel     call   SessionParams  → {}
//	agent/approve    call   ApproveParams  → {}
//	agent/close      call   SessionParams  → {}
//	agent/compact    call   CompactParams  → session.Compaction (the history summarised now; conflict while a turn runs)
//	agent/callTool   call   ViewCallParams → ViewResult (a call made by a tool's view shown in the session)
//	agent/background call   SessionParams  → {} (the turn stops waiting: its running tasks go on in the background)
//	agent/tasks      call   SessionParams  → []BackgroundTask (the calls whose work went on in the background, with their status now)
//	agent/taskResult call   TaskParams     → TaskResult (waits for a background task's end: its result)
//
// A turn started with agent/send belongs to the host, not to the request: it goes on when
// the page that sent it closes, and ends with agent/cancel, the session's close or the
// host's shutdown. Sessions started remotely are interactive: the policy's "ask" waits for
// agent/approve (from any page following the session) instead of refusing.

// The agent's remote methods, each declared once with its parameters and answer (the
// table above): the agent serves them and clients call them through these values.
var (
	MethodAgents     = remote.NewMethod[struct{}, []AgentInfo]("agent/agents")
	MethodSessions   = remote.NewMethod[struct{}, SessionList]("agent/sessions")
	MethodStart      = remote.NewMethod[StartParams, session.Info]("agent/start")
	MethodOpen       = remote.NewMethod[OpenParams, session.Info]("agent/open")
	MethodSend       = remote.NewMethod[SendParams, struct{}]("agent/send")
	MethodRetry      = remote.NewMethod[SessionParams, struct{}]("agent/retry")
	MethodEvents     = remote.NewStreamMethod[EventsParams, session.Event]("agent/events")
	MethodCancel     = remote.NewMethod[SessionParams, struct{}]("agent/cancel")
	MethodApprove    = remote.NewMethod[ApproveParams, struct{}]("agent/approve")
	MethodClose      = remote.NewMethod[SessionParams, struct{}]("agent/close")
	MethodCompact    = remote.NewMethod[CompactParams, session.Compaction]("agent/compact")
	MethodCallTool   = remote.NewMethod[ViewCallParams, ViewResult]("agent/callTool")
	MethodTasks      = remote.NewMethod[SessionParams, []BackgroundTask]("agent/tasks")
	MethodBackground = remote.NewMethod[SessionParams, struct{}]("agent/background")
	MethodTaskResult = remote.NewMethod[TaskParams, TaskResult]("agent/taskResult")
)

// CompactParams are the parameters of agent/compact: the session, and what the summary
// must give particular attention to ("" for nothing in particular).
type CompactParams struct {
	Session string `json:"session"`
	Focus   string `json:"focus,omitempty"`
}

// Validate requires the session.
func (p CompactParams) Validate() error { return requireSession(p.Session) }

// StartParams are the parameters of agent/start: the agent ("" the main one), the model
// ("" the agent's), the mode ("" the agent's; see agent.StartOptions.Mode) and whether nobody
// answers approvals (Unattended: calls that need one are refused, the model told why, as
// harness ask does in process); sessions started remotely are interactive otherwise.
type StartParams struct {
	Agent      string `json:"agent"`
	Model      string `json:"model"`
	Mode       string `json:"mode,omitempty"`
	Unattended bool   `json:"unattended,omitempty"`
}

// SessionParams name an open session: the parameters of agent/cancel and agent/close.
type SessionParams struct {
	Session string `json:"session"`
}

// OpenParams are the parameters of agent/open: a stored session resumed with the model
// ("" its own), the mode and whether nobody answers approvals (as in [StartParams]), or
// the open one.
type OpenParams struct {
	Session    string `json:"session"`
	Model      string `json:"model"`
	Mode       string `json:"mode,omitempty"`
	Unattended bool   `json:"unattended,omitempty"`
}

// SendParams are the parameters of agent/send: the text of the session's next turn.
type SendParams struct {
	Session string `json:"session"`
	Text    string `json:"text"`
}

// EventsParams are the parameters of agent/events: the session, and the sequence number
// after which its durable events are replayed.
type EventsParams struct {
	Session string `json:"session"`
	After   int64  `json:"after"`
}

// ApproveParams are the parameters of agent/approve: the answer to the session's approval
// ID.
type ApproveParams struct {
	Session string `json:"session"`
	ID      string `json:"id"`
	permission.Answer
}

// SessionList is the answer of agent/sessions.
type SessionList struct {
	Open   []session.Info `json:"open"`
	Stored []session.Info `json:"stored"`
}

// AgentInfo describes a mounted agent: an answer of agent/agents.
type AgentInfo struct {
	// Name is "" for the main agent, else the agent scope's path ("coder.review").
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Model       string `json:"model,omitempty"`
	// Parent is the agent this one is a subagent of.
	Parent   string `json:"parent,omitempty"`
	MaxSteps int    `json:"maxSteps"`
	// ModelProblem says why the agent's model cannot answer now (no API key, say: what to
	// set), "" when it can.
	ModelProblem string `json:"modelProblem,omitempty"`
}

// Validate requires the session.
func (p SessionParams) Validate() error { return requireSession(p.Session) }

// Validate requires the session.
func (p OpenParams) Validate() error { return requireSession(p.Session) }

// Validate requires the session.
func (p SendParams) Validate() error { return requireSession(p.Session) }

// Validate requires the session.
func (p EventsParams) Validate() error { return requireSession(p.Session) }

// Validate requires the session.
func (p ApproveParams) Validate() error { return requireSession(p.Session) }

// OnSession is what the parameters of a method on one open session have: the session's
// id, which the agent looks up before the method runs.
type OnSession interface{ SessionID() string }

// SessionID returns the session's id.
func (p SessionParams) SessionID() string { return p.Session }

// SessionID returns the session's id.
func (p SendParams) SessionID() string { return p.Session }

// SessionID returns the session's id.
func (p ApproveParams) SessionID() string { return p.Session }

// SessionID returns the session's id.
func (p CompactParams) SessionID() string { return p.Session }

// SessionID returns the session's id.
func (p ViewCallParams) SessionID() string { return p.Session }

// SessionID returns the session's id.
func (p TaskParams) SessionID() string { return p.Session }

func requireSession(id string) error {
	var p ctx.Problems
	p.Require("session", id, "the session's id")
	return p.Err()
}

// ViewCall is a tool call made by a view shown in a session: the tool by its MCP server
// and its name there (the view's own server; SEP-1865's tools/call), and its arguments.
// A plain value.
type ViewCall struct {
	Server string          `json:"server"`
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args,omitempty"`
}

// ViewResult is a view's call's outcome: the registry's code ("ok", "denied", …), the
// MCP server's own CallToolResult when it answered, else the text of the failure. A plain
// value.
type ViewResult struct {
	Outcome string          `json:"outcome"`
	IsError bool            `json:"isError,omitempty"`
	Raw     json.RawMessage `json:"raw,omitempty"`
	Text    string          `json:"text,omitempty"`
}

// ViewCallParams are the parameters of agent/callTool: the session the view is shown in,
// and the call.
type ViewCallParams struct {
	Session string `json:"session"`
	ViewCall
}

// Validate requires the session, the server and the tool.
func (p ViewCallParams) Validate() error {
	var probs ctx.Problems
	probs.Require("session", p.Session, "the session's id")
	probs.Require("server", p.Server, "the view's MCP server")
	probs.Require("tool", p.Tool, "the tool's name on its server")
	return probs.Err()
}

// BackgroundTask is a call of a session whose work went on in the background (a task of
// its MCP server): what agent/tasks lists.
type BackgroundTask struct {
	// ID is the task's ID (its server's); Server, Tool and CallID say which call made it.
	ID     string    `json:"id"`
	Server string    `json:"server"`
	Tool   string    `json:"tool"`
	CallID string    `json:"callId"`
	Since  time.Time `json:"since"`
	// Status and Message are the task's status now, as its server says ("unknown" and
	// the reason when it cannot say: the server's connection, and the task with it, ended).
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
	// Fetched says its result was read (task_result, agent/taskResult).
	Fetched bool `json:"fetched,omitempty"`
}

// TaskParams names a background task of a session.
type TaskParams struct {
	Session string `json:"session"`
	ID      string `json:"id"`
}

// Validate implements remote.Validator.
func (p TaskParams) Validate() error {
	if p.ID == "" {
		return errors.New(`"id" is required: the task's ID (agent/tasks lists them)`)
	}
	return requireSession(p.Session)
}

// TaskResult is a background task's result as the model would get it.
type TaskResult struct {
	Text    string `json:"text"`
	IsError bool   `json:"isError,omitempty"`
}
