package ptc

import (
	"errors"
	"strconv"
)

// Kind is why a run failed. The strings are part of the API (the model reads them). A Kind
// is a plain value.
type Kind string

// The ways a run fails.
const (
	// KindCompile: the program is not valid TypeScript, or uses import/export.
	KindCompile Kind = "compile_error"
	// KindException: the program threw (or its returned promise rejected), a tool error
	// included when the program did not catch it.
	KindException Kind = "exception"
	// KindTimeout: the run took longer than Limits.WallTimeMs.
	KindTimeout Kind = "timeout"
	// KindCPU: the program's own code ran longer than Limits.CPUTimeMs.
	KindCPU Kind = "cpu_limit"
	// KindOutputLimit: console output plus the return value passed Limits.MaxOutputBytes.
	KindOutputLimit Kind = "output_limit"
	// KindToolCallLimit: the program made more than Limits.MaxToolCalls calls.
	KindToolCallLimit Kind = "tool_call_limit"
	// KindMemory: the run's heap passed Limits.MaxMemoryBytes, or one allocation asked for
	// more than that.
	KindMemory Kind = "memory_limit"
	// KindCancelled: the caller cancelled the run (a cancelled turn, Ctrl-C).
	KindCancelled Kind = "cancelled"
	// KindInvalidOutput: the return value cannot be written as JSON (a cycle, a BigInt).
	KindInvalidOutput Kind = "invalid_output"
	// KindStalled: the program waits for a promise that nothing can settle (no tool call
	// or sleep is pending).
	KindStalled Kind = "stalled"
)

// Error is why a run failed, as the model is told. Match a kind with [errors.Is] and the
// sentinels ([ErrTimeout], …) or read it with [errors.As].
//
// An Error is immutable once returned.
type Error struct {
	Kind Kind `json:"kind"`
	// Msg says what happened, for the model.
	Msg string `json:"message"`
	// Line is the line of the program the error came from (1-based), 0 when unknown.
	Line int `json:"line,omitempty"`
	// Source is the text of that line.
	Source string `json:"source,omitempty"`
}

// Error renders "<kind>: <message>", with the line when known.
func (e *Error) Error() string {
	s := string(e.Kind) + ": " + e.Msg
	if e.Line > 0 {
		s += " (line " + strconv.Itoa(e.Line)
		if e.Source != "" {
			s += ": " + e.Source
		}
		s += ")"
	}
	return s
}

// Is matches an *Error of the same kind whose message, when set, is the same.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Kind == e.Kind && (t.Msg == "" || t.Msg == e.Msg)
}

// Sentinels for errors.Is, one per kind.
var (
	ErrCompile       = &Error{Kind: KindCompile}
	ErrException     = &Error{Kind: KindException}
	ErrTimeout       = &Error{Kind: KindTimeout}
	ErrCPU           = &Error{Kind: KindCPU}
	ErrOutputLimit   = &Error{Kind: KindOutputLimit}
	ErrToolCallLimit = &Error{Kind: KindToolCallLimit}
	ErrMemory        = &Error{Kind: KindMemory}
	ErrCancelled     = &Error{Kind: KindCancelled}
	ErrInvalidOutput = &Error{Kind: KindInvalidOutput}
	ErrStalled       = &Error{Kind: KindStalled}
)

// ErrNoRegistry is returned by [New] without a registry.
var ErrNoRegistry = errors.New("ptc: no tool registry")
