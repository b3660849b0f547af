package mcpclient

import (
	"time"

	"github.com/cordisgo/harness/ctx"
)

// Phase is where a server's connection stands.
type Phase string

// Connection phases reported to a [StatusSink].
const (
	PhaseConnecting   Phase = "connecting"
	PhaseConnected    Phase = "connected"
	PhaseReconnecting Phase = "reconnecting"
	// PhaseNeedsAuth: the server wants an OAuth login (`harness mcp login NAME`); the
	// client waits for one without spending its reconnect budget.
	PhaseNeedsAuth Phase = "needs-auth"
	PhaseFailed    Phase = "failed"
	PhaseDisposed  Phase = "disposed"
	// PhaseLazy: a lazy server (startup: lazy) that has not started; its tools are the
	// catalog cache's, and the first call starts it.
	PhaseLazy Phase = "lazy"
	// PhaseIdle: a lazy server stopped after its idle timeout (or to start again after it
	// gave up); its tools stay, and the next call starts it.
	PhaseIdle Phase = "idle"
)

// StatusLogKey is the attribute (value true) of every log record in which a client repeats
// a status report (connected, reconnecting, failed, the connection lost), so that a host
// that shows statuses itself — from a [StatusSink] or [StatusEvent] — can leave those
// records out of its log instead of showing each event twice. Library users without such a
// display keep them.
const StatusLogKey = "status_report"

// Status is one report of a server's connection state. It never carries secrets: the
// error and stderr text come from the server process and the SDK, not from configuration.
type Status struct {
	// Server is the configured serverName.
	Server string `json:"server"`
	// Scope is the client plugin's scope, which identifies the instance.
	Scope *ctx.Scope `json:"-"`
	Phase Phase      `json:"phase"`
	// Attempt counts connection attempts in the current run of failures (1 for the first);
	// MaxAttempts is the reconnect budget (0 when reconnection is off).
	Attempt     int `json:"attempt,omitempty"`
	MaxAttempts int `json:"maxAttempts,omitempty"`
	// Err describes the last failure, if any; StderrTail is the end of a stdio server's
	// stderr.
	Err string `json:"error,omitempty"`
	// AuthHint, in phase needs-auth, is what logs the server in (never a token).
	AuthHint   string `json:"authHint,omitempty"`
	StderrTail string `json:"stderrTail,omitempty"`
	// Transport is "stdio", "streamable-http" or "sse" once connected.
	Transport string `json:"transport,omitempty"`
	// ServerName, ServerVersion and ProtocolVersion come from the server's initialize
	// answer.
	ServerName      string `json:"serverName,omitempty"`
	ServerVersion   string `json:"serverVersion,omitempty"`
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	// ServerDescription is the server's one-line description of itself
	// (serverInfo.description), such as the workspace server's sandbox.
	ServerDescription string `json:"serverDescription,omitempty"`
	// Tools lists the public names of the registered tools.
	Tools []string `json:"tools,omitempty"`
	// InstructionBytes is the size of the published instructions.
	InstructionBytes int `json:"instructionBytes,omitempty"`
	// CleanupIncomplete is set when the server's process group could not be confirmed
	// gone: no new process is started for this instance.
	CleanupIncomplete bool      `json:"cleanupIncomplete,omitempty"`
	At                time.Time `json:"at"`
}

// StatusSink receives connection status reports from every MCP client plugin in its
// realm. The MCP server manager provides one. ReportStatus must not block: copy the report
// and return.
type StatusSink interface {
	ReportStatus(Status)
}

// StatusSinkKey is the optional status sink service; clients look it up with Get on every
// report, so a sink mounted later starts receiving reports at the next change.
var StatusSinkKey = ctx.NewKey[StatusSink]("mcpStatusSink")

// StatusEvent is emitted with every status report, from the client's context, after the
// status sink (if any) has received it. The sink is one service per realm, owned by the MCP
// server manager when one is mounted; the event lets any number of other observers, such as
// the harness binary's server list, follow every client. Listeners run on the reporting
// goroutine and must return quickly; they must copy Status.Tools to keep it. A listener error
// or panic is logged and stops the dispatch to later listeners, never the client.
var StatusEvent = ctx.NewEvent[Status]("mcp-client/status")
