package toolregistry

import (
	"context"
	"errors"
)

// Background is a call's work that goes on after its caller stopped waiting for it: a task
// its MCP server runs (MCP's tasks utility), kept when the call's timeout passed or its
// caller stopped waiting ([ErrStopWaiting]) instead of being cancelled. Its fields are set by
// the tool; its functions are safe for concurrent use.
type Background struct {
	// ID names the work where it runs (the server's task ID); Server is its MCP server,
	// Tool the tool called and CallID the call.
	ID, Server, Tool, CallID string
	// Status asks how the work is doing: its status ("working", "input_required",
	// "completed", "failed", "cancelled") and the server's message.
	Status func(cx context.Context) (status, message string, err error)
	// Result waits for the work's end and returns what the call would have returned.
	// Questions the server asks meanwhile are attributed to the caller of Result (cx).
	Result func(cx context.Context) (*Result, error)
	// Cancel stops the work.
	Cancel func(cx context.Context) error
}

// ErrStopWaiting is the cause with which a caller that stops waiting for its calls (a turn
// a person sends to the background) ends their context: a call whose work can go on is then
// kept in the background ([WithBackground]) instead of cancelled.
var ErrStopWaiting = errors.New("the caller stopped waiting: the call's work goes on in the background")

type backgroundKey struct{}

// WithBackground returns cx whose calls keep their work going, where the tool can, when the
// caller stops waiting: the call's timeout (or a deadline of cx) passed, or cx ended with
// [ErrStopWaiting]. keep is handed the work and returns the result the call gives instead
// (what the caller is told of it). Without WithBackground such work is cancelled with its
// call. keep may be called concurrently with itself.
func WithBackground(cx context.Context, keep func(*Background) *Result) context.Context {
	return context.WithValue(cx, backgroundKey{}, keep)
}

// KeepInBackground is for a tool whose call's context cx ended while its work can go on: when
// the caller asked for it ([WithBackground]) and cx ended because the caller stopped waiting
// (a deadline, or [ErrStopWaiting]), b is handed to the caller and the call's result is
// returned; otherwise false, and the tool cancels the work.
func KeepInBackground(cx context.Context, b *Background) (*Result, bool) {
	keep, ok := cx.Value(backgroundKey{}).(func(*Background) *Result)
	if !ok {
		return nil, false
	}
	cause := context.Cause(cx)
	if !errors.Is(cause, context.DeadlineExceeded) && !errors.Is(cause, ErrStopWaiting) {
		return nil, false
	}
	return keep(b), true
}
