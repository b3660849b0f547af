// Package session is an agent session's event log and the store of logs: the durable
// events (the header, the user's messages, the model's answers exactly as sent, tool
// calls and results, approvals, usage, turn ends) numbered from 1, appended one JSON line
// each to events.jsonl in the session's directory, delivered live to subscribers, and read
// back — a torn last line dropped — to rebuild the history the model saw ([History]).
//
// # Concurrency
//
// [Store] and [Log] are safe for concurrent use; a session's file is written by its Log
// only. Events and the other types are plain values.
package session

import (
	"encoding/json"
	"time"

	"github.com/cordisgo/harness/permission"
	"github.com/cordisgo/harness/plugins/model"
)

// EventType names what an [Event] reports. The strings are part of the session log's
// format and of the remote API.
type EventType string

// The event types. Durable events are written to the session's log and replayed to late
// subscribers; live events (the deltas and retries) only reach subscribers that are
// listening when they happen.
const (
	// EventSession opens a log: Header describes the session. Durable.
	EventSession EventType = "session"
	// EventUser is the user's message (Text). Durable.
	EventUser EventType = "user"
	// EventContext is a message the harness adds to the conversation before a user's
	// message (Message, role user): project instructions that changed during the session.
	// Durable.
	EventContext EventType = "context"
	// EventReasoningDelta is a piece of the model's reasoning (Text). Live.
	EventReasoningDelta EventType = "reasoning.delta"
	// EventTextDelta is a piece of the model's answer (Text). Live.
	EventTextDelta EventType = "text.delta"
	// EventRetry reports a model request that failed and is sent again (Error). Live.
	EventRetry EventType = "retry"
	// EventAssistant is the model's whole answer of one step (Message: text, reasoning and
	// tool calls exactly as the model sent them). Durable.
	EventAssistant EventType = "assistant"
	// EventToolStart reports a tool call dispatched to the registry (Call). Durable.
	EventToolStart EventType = "tool.start"
	// EventToolProgress reports how far a running call got (Call: its ID and tool;
	// Progress): its MCP server's progress message, or the status of the task the call
	// runs as ("task input_required: ..."). Recorded when the message changes. Durable.
	EventToolProgress EventType = "tool.progress"
	// EventTaskBackground reports a call whose work goes on in the background after the
	// turn stopped waiting for it (Call, Task): a task of its MCP server, whose result the
	// model fetches with task_result and a person with /tasks. Durable.
	EventTaskBackground EventType = "task.background"
	// EventToolResult is a call's outcome (Call, Result, and Message: the tool message as
	// the model gets it). Results are recorded in the model's order of the calls. Durable.
	EventToolResult EventType = "tool.result"
	// EventApprovalAsked reports a call (or a sampling request) waiting for a person's
	// answer (Approval); the agent's Session.Approve answers it. Durable.
	EventApprovalAsked EventType = "approval.asked"
	// EventApprovalDecided reports the answer (Approval). Durable.
	EventApprovalDecided EventType = "approval.decided"
	// EventUsage is one model request's token accounting (Usage). Durable.
	EventUsage EventType = "usage"
	// EventError reports a failure of the turn (Error). Durable.
	EventError EventType = "error"
	// EventTurnEnd ends a turn (End). Durable.
	EventTurnEnd EventType = "turn.end"
	// EventCodeCall is one tool call made by a PTC program (run_code): Call (its id is
	// "<run_code call id>:code:<n>", Args its arguments) and Result (its outcome). Logged
	// when the program ends, before the run_code call's EventToolResult. Durable.
	EventCodeCall EventType = "code.call"
	// EventCompacting reports that a compaction started (Text: its trigger), so a surface
	// can say so while the summary is written. Live.
	EventCompacting EventType = "compaction.start"
	// EventCompaction is a compaction of the history (Compaction): from here on the model
	// sees the compacted view. Durable.
	EventCompaction EventType = "compaction"
)

// Durable reports whether events of type t are written to the session log.
func (t EventType) Durable() bool {
	switch t {
	case EventReasoningDelta, EventTextDelta, EventRetry, EventCompacting:
		return false
	}
	return true
}

// Event is one thing that happened in a session. Only the fields of its Type are set.
//
// An Event is a plain value; its pointers are shared by every subscriber and must not be
// modified.
type Event struct {
	// Seq numbers the session's durable events from 1; live events carry the Seq of the
	// last durable event before them.
	Seq  int64     `json:"seq"`
	Time time.Time `json:"time"`
	Type EventType `json:"type"`
	// Turn numbers the session's turns from 1, Step the model requests of a turn from 1.
	Turn int `json:"turn,omitempty"`
	Step int `json:"step,omitempty"`
	// Agent is the subagent's name for events of a subagent's run forwarded to its
	// parent's subscribers; "" for the session's own agent.
	Agent    string              `json:"agent,omitempty"`
	Text     string              `json:"text,omitempty"`
	Header   *Header             `json:"header,omitempty"`
	Message  *model.Message      `json:"message,omitempty"`
	Call     *CallInfo           `json:"call,omitempty"`
	Result   *ResultInfo         `json:"result,omitempty"`
	Progress *ProgressInfo       `json:"progress,omitempty"`
	Task     *TaskInfo           `json:"task,omitempty"`
	Approval *permission.Request `json:"approval,omitempty"`
	Usage    *model.Usage        `json:"usage,omitempty"`
	End      *TurnEnd            `json:"end,omitempty"`
	// Compaction is set on an EventCompaction.
	Compaction *Compaction `json:"compaction,omitempty"`
	Error      string      `json:"error,omitempty"`
}

// Header describes a session; it is the first event of its log.
type Header struct {
	ID string `json:"id"`
	// Agent is the agent's name ("" for the main agent).
	Agent string `json:"agent,omitempty"`
	// Model is the model's name in the profile, ModelID the provider's id.
	Model   string    `json:"model,omitempty"`
	ModelID string    `json:"modelId,omitempty"`
	Created time.Time `json:"created"`
	// Parent is the session that started this one (a subagent's run), and Depth how deep
	// in delegation it runs (0 for a session a person started).
	Parent string `json:"parent,omitempty"`
	Depth  int    `json:"depth,omitempty"`
	// Resumed counts how many times the session was resumed.
	Resumed int `json:"resumed,omitempty"`
	// Mode is "ptc" for a session in PTC mode, "" for standard mode.
	Mode string `json:"mode,omitempty"`
	// Profile is the profile the harness ran when the session was started (or, in a
	// resumed session's header, when it was resumed).
	Profile string `json:"profile,omitempty"`
}

// CallInfo describes one tool call of the model.
type CallInfo struct {
	ID   string `json:"id"`
	Tool string `json:"tool"`
	// Args are the arguments as the model wrote them (secret-looking values masked in the
	// log). Not necessarily valid JSON.
	Args string `json:"args"`
	// Parallel says the call was allowed to run alongside other calls of its step.
	Parallel bool `json:"parallel,omitempty"`
}

// ResultInfo describes a call's outcome.
type ResultInfo struct {
	// Outcome is the registry's code ("ok", "denied", "cancelled", …) or "aborted" for a
	// call never dispatched because the turn ended first, "invalid_json" for arguments
	// that were not JSON.
	Outcome  string `json:"outcome"`
	IsError  bool   `json:"isError,omitempty"`
	Duration int64  `json:"durationMs"`
	// Saved is the file holding the whole result text when the model got a preview.
	Saved string `json:"saved,omitempty"`
	// Bytes is the size of the whole result text.
	Bytes int `json:"bytes"`
	// View is the MCP server's own CallToolResult, as it sent it, for a tool with an
	// interactive view (MCP Apps): a page drawing the session renders the view with it,
	// also when it replays the log. Left out above 1 MiB (the view then gets the text).
	View json.RawMessage `json:"view,omitempty"`
}

// ProgressInfo is how far a running call got, as its tool reported it.
type ProgressInfo struct {
	// Progress is how far the call got; Total the total when the tool knows it (0:
	// unknown); Message the tool's words (a task's: "task <status>: <message>").
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
}

// TaskInfo names a call's work that went on in the background: the task ID its MCP
// server gave it, the server and the tool.
type TaskInfo struct {
	ID     string `json:"id"`
	Server string `json:"server"`
	Tool   string `json:"tool"`
}

// StopReason says why a turn ended.
type StopReason string

// The stop reasons.
const (
	// StopDone: the model answered without calling tools.
	StopDone StopReason = "done"
	// StopMaxSteps: the turn reached the agent's maxSteps model requests.
	StopMaxSteps StopReason = "max_steps"
	// StopTokenBudget: the turn used the agent's tokenBudget tokens.
	StopTokenBudget StopReason = "token_budget"
	// StopLength: the model's answer was cut at its output limit (finish_reason length).
	StopLength StopReason = "length"
	// StopIncomplete: the model's answer stream was cut after part of it (text, a tool
	// call) was shown; the text shown is kept in the conversation. Session.Retry runs the
	// turn's message again.
	StopIncomplete StopReason = "incomplete"
	// StopCancelled: the turn was cancelled (the session's Cancel or the caller's context).
	StopCancelled StopReason = "cancelled"
	// StopError: the model request failed (or the prompt could not be assembled).
	StopError StopReason = "error"
)

// TurnEnd is how a turn ended.
type TurnEnd struct {
	Reason StopReason `json:"reason"`
	// Text is the final answer (the last assistant text of the turn).
	Text  string      `json:"text,omitempty"`
	Steps int         `json:"steps"`
	Usage model.Usage `json:"usage"`
}
