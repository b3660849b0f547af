package mcpauth

import (
	"errors"
	"fmt"
)

// ErrNeedsAuth is matched (errors.Is) by [*NeedsAuthError].
var ErrNeedsAuth = errors.New("mcp server needs authorization")

// NeedsAuthError says a server answered 401 and the client has no usable token and may
// not run the login flow itself (it is not interactive). It is not a connection failure:
// a supervisor waits for a login instead of retrying. It is immutable.
type NeedsAuthError struct {
	// Server is the configured server name.
	Server string
	// Hint is what the user should do, e.g. "harness mcp login NAME".
	Hint string
	// Reason says why the stored credentials, if any, could not be used.
	Reason string
}

// Error formats the server, the reason and the hint.
func (e *NeedsAuthError) Error() string {
	msg := fmt.Sprintf("mcp server %q needs authorization", e.Server)
	if e.Reason != "" {
		msg += " (" + e.Reason + ")"
	}
	if e.Hint != "" {
		msg += ": " + e.Hint
	}
	return msg
}

// Is reports whether target is [ErrNeedsAuth].
func (e *NeedsAuthError) Is(target error) bool { return target == ErrNeedsAuth }

// LoginHint is the command that logs in to server.
func LoginHint(server string) string { return "run `" + LoginCommand(server) + "`" }

// LoginCommand is the default command line that logs in to server (Options.LoginCommand).
func LoginCommand(server string) string { return "harness mcp login " + server }

// ErrAuthorization is matched by failures of an authorization flow or token request (as
// opposed to a missing login): discovery, registration, a refused grant, a state or
// issuer mismatch.
var ErrAuthorization = errors.New("mcp authorization failed")

// AuthError is one failed authorization step. It matches [ErrAuthorization]. It is
// immutable.
type AuthError struct {
	Server string
	// Step is "discovery", "registration", "authorize", "token", "refresh" or "step-up".
	Step string
	Err  error
}

// Error formats the server, the step and the cause.
func (e *AuthError) Error() string {
	return fmt.Sprintf("mcp server %q: authorization %s: %v", e.Server, e.Step, e.Err)
}

// Unwrap returns the cause.
func (e *AuthError) Unwrap() error { return e.Err }

// Is reports whether target is [ErrAuthorization].
func (e *AuthError) Is(target error) bool { return target == ErrAuthorization }
