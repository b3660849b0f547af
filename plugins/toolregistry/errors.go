package toolregistry

import (
	"errors"
	"strconv"
)

// Code is the stable outcome of an execution. Every non-ok outcome of [Registry.Execute] is
// a [*ToolError] carrying one of the codes below; [Record.Outcome] holds the same value, or
// [CodeOK]. The strings are part of the API. A Code is a plain value.
type Code string

// Outcome codes.
const (
	// CodeOK is the outcome of a successful execution. It never appears in a ToolError.
	CodeOK Code = "ok"
	// CodeUnknownTool: no tool of that name is visible from the caller's scope (never
	// registered, unregistered, or hidden by [Registry.Restrict]).
	CodeUnknownTool Code = "unknown_tool"
	// CodeInvalidArgs: the arguments are not a JSON object or fail the parameters schema.
	CodeInvalidArgs Code = "invalid_arguments"
	// CodeDenied: the [Policy] denied the call, or asked and approval was refused or
	// unavailable.
	CodeDenied Code = "denied"
	// CodeTimeout: the tool's own timeout expired.
	CodeTimeout Code = "timeout"
	// CodeCancelled: the caller's context ended (cancelled, or its own deadline passed)
	// before or during the call.
	CodeCancelled Code = "cancelled"
	// CodeToolError: the tool returned an error or a result with IsError set, or a
	// PostExecute listener failed or turned the result into an error.
	CodeToolError Code = "tool_error"
	// CodeInvalidOutput: the structured result fails the tool's output schema.
	CodeInvalidOutput Code = "invalid_output"
	// CodePanic: the tool's Execute or Project panicked. The host is unaffected.
	CodePanic Code = "panic"
)

// ToolError is the error of every non-ok execution. Match a code with [errors.Is] and the
// sentinels ([ErrUnknownTool], [ErrDenied], …), or read it with [errors.As].
//
// A ToolError is immutable once returned.
type ToolError struct {
	Code Code   `json:"code"`
	Tool string `json:"tool,omitempty"`
	// Msg is the human-readable reason; the failed result shows it to the model as
	// "Error: <Msg>".
	Msg string `json:"message"`
	// Err is the underlying error, if any (the tool's error, a validation error,
	// context.DeadlineExceeded, a *ctx.PanicError …).
	Err error `json:"-"`
}

// Sentinels for errors.Is, one per code. errors.Is(err, ErrDenied) holds for every
// *ToolError with CodeDenied, whatever its tool and message.
var (
	ErrUnknownTool   = &ToolError{Code: CodeUnknownTool}
	ErrInvalidArgs   = &ToolError{Code: CodeInvalidArgs}
	ErrDenied        = &ToolError{Code: CodeDenied}
	ErrTimeout       = &ToolError{Code: CodeTimeout}
	ErrCancelled     = &ToolError{Code: CodeCancelled}
	ErrToolError     = &ToolError{Code: CodeToolError}
	ErrInvalidOutput = &ToolError{Code: CodeInvalidOutput}
	ErrPanic         = &ToolError{Code: CodePanic}
)

// Error renders `tool "<name>": <message>`, or `toolregistry: <code>` for a sentinel.
func (e *ToolError) Error() string {
	switch {
	case e.Tool == "" && e.Msg == "":
		return "toolregistry: " + string(e.Code)
	case e.Tool == "":
		return "toolregistry: " + e.Msg
	default:
		return "tool " + strconv.Quote(e.Tool) + ": " + e.Msg
	}
}

// Unwrap returns the underlying error.
func (e *ToolError) Unwrap() error { return e.Err }

// Is reports whether target is a *ToolError with the same code whose Tool and Msg, when set,
// match too; so the code sentinels match every error of their code.
func (e *ToolError) Is(target error) bool {
	t, ok := target.(*ToolError)
	return ok && t.Code == e.Code && (t.Tool == "" || t.Tool == e.Tool) && (t.Msg == "" || t.Msg == e.Msg)
}

// Registration errors. Match them with [errors.Is].
var (
	// ErrInvalidTool: a definition with a bad name, no Execute function, or a schema that
	// does not compile.
	ErrInvalidTool = errors.New("toolregistry: invalid tool")
	// ErrReservedName: the name is [ReservedRunCode], which no tool may take.
	ErrReservedName = errors.New("toolregistry: reserved tool name")
	// ErrDuplicateTool: the name is already registered in the same layer (scope); the error
	// names both owners.
	ErrDuplicateTool = errors.New("toolregistry: duplicate tool")
	// ErrInvalidPattern: a malformed [Registry.Restrict] pattern.
	ErrInvalidPattern = errors.New("toolregistry: invalid pattern")
	// ErrAttachmentTooLarge: an attachment larger than the whole store.
	ErrAttachmentTooLarge = errors.New("toolregistry: attachment too large")
	// ErrClosed: the [Set] was disposed, or the registry's scope unloaded.
	ErrClosed = errors.New("toolregistry: closed")
)
