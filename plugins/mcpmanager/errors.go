package mcpmanager

import (
	"fmt"

	"github.com/cordisgo/harness/plugins/remote"
)

// Error codes of [*Error]: the remote API's codes ([remote.Code]) the manager uses.
const (
	// CodeNotFound: no configured or registered server has that name.
	CodeNotFound = remote.CodeNotFound
	// CodeConflict: the current state refuses the operation: the name is taken, the server's
	// cleanup is incomplete, the server is disabled or being replaced.
	CodeConflict = remote.CodeConflict
	// CodeUnavailable: the manager is disposed (or stopping), or a probe needs a
	// credentials provider and there is none.
	CodeUnavailable = remote.CodeUnavailable
	// CodeBadRequest: invalid parameters: a malformed name, entry or probe options.
	CodeBadRequest = remote.CodeBadRequest
)

// Error is an error of a manager operation, with a stable code. Its RemoteCode method makes
// the remote API send the code as is. Match a kind with errors.Is against [ErrNotFound],
// [ErrConflict], [ErrUnavailable] or [ErrBadRequest] (codes compare equal), or against
// [ErrCleanupIncomplete]. Messages never contain secret values.
//
// An *Error is immutable.
type Error struct {
	// Code is one of the Code constants.
	Code remote.Code
	// Server is the server name the error is about, if any.
	Server string
	// Msg explains the error.
	Msg string
	// cleanup marks a refusal caused by an incomplete cleanup.
	cleanup bool
}

// Sentinels for errors.Is; an [*Error] matches the sentinel of its code.
var (
	// ErrNotFound matches errors with code not_found.
	ErrNotFound = &Error{Code: CodeNotFound, Msg: "no such server"}
	// ErrConflict matches errors with code conflict, ErrCleanupIncomplete included.
	ErrConflict = &Error{Code: CodeConflict, Msg: "conflict"}
	// ErrUnavailable matches errors with code unavailable.
	ErrUnavailable = &Error{Code: CodeUnavailable, Msg: "manager unavailable"}
	// ErrBadRequest matches errors with code bad_request.
	ErrBadRequest = &Error{Code: CodeBadRequest, Msg: "bad request"}
	// ErrCleanupIncomplete is matched by refusals caused by a server whose previous
	// instance could not be confirmed gone (code conflict). Only a host restart clears it.
	ErrCleanupIncomplete = &Error{Code: CodeConflict, Msg: "cleanup incomplete", cleanup: true}
)

// Error formats "mcp manager: server "<name>": <msg>".
func (e *Error) Error() string {
	if e.Server != "" {
		return fmt.Sprintf("mcp manager: server %q: %s", e.Server, e.Msg)
	}
	return "mcp manager: " + e.Msg
}

// RemoteCode returns the code for the remote API.
func (e *Error) RemoteCode() remote.Code { return e.Code }

// Is matches sentinels by code (and, for [ErrCleanupIncomplete], by cause).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok {
		return false
	}
	if t.cleanup {
		return e.cleanup
	}
	return t.Code == e.Code && (t == ErrNotFound || t == ErrConflict || t == ErrUnavailable || t == ErrBadRequest)
}

func errorf(code remote.Code, server, format string, args ...any) *Error {
	return &Error{Code: code, Server: server, Msg: fmt.Sprintf(format, args...)}
}

func errCleanup(server string) *Error {
	return &Error{Code: CodeConflict, Server: server, cleanup: true,
		Msg: "the previous instance's process group could not be confirmed gone; no replacement is started until the host restarts"}
}

func errClosed() *Error {
	return &Error{Code: CodeUnavailable, Msg: "the manager is disposed"}
}
