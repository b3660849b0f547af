package toolregistry

import "context"

// Progress is how far a running call got, as its tool reports it: an MCP server's progress
// notification, or the status of the task the call runs as ("task working: Gathering
// sources..."). It is a plain value.
type Progress struct {
	// Progress is how far the call got; Total the total when the tool knows it (0:
	// unknown); Message the tool's description, if any.
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
}

type progressKey struct{}

// WithProgress returns cx whose tool calls report their progress to fn: a caller that
// follows its calls (an agent's session) passes it to [Registry.Execute]. fn runs on the
// tool's goroutine (an MCP client's notification goroutine) and must return quickly; it may
// be called concurrently with itself.
func WithProgress(cx context.Context, fn func(Progress)) context.Context {
	return context.WithValue(cx, progressKey{}, fn)
}

// ReportProgress passes p to the function [WithProgress] set on the caller's context cx, if
// any: a tool reports its progress with the context it was called with.
func ReportProgress(cx context.Context, p Progress) {
	if cx == nil {
		return
	}
	if fn, ok := cx.Value(progressKey{}).(func(Progress)); ok {
		fn(p)
	}
}
