package app

import (
	"errors"
	"fmt"

	"github.com/cordisgo/harness/profiles"
)

// Exit statuses of the harness binary.
const (
	// ExitOK: the command did what was asked.
	ExitOK = 0
	// ExitFailure: the command failed at run time (a tool returned an
	// error, a server could not be reached, the command was interrupted).
	ExitFailure = 1
	// ExitUsage: the command line or the profile is wrong (unknown command
	// or flag, bad argument, invalid profile or plugin configuration); it
	// did not run.
	ExitUsage = 2
)

// exitError carries the exit status a command's error maps to.
type exitError struct {
	code int
	err  error
	hint bool // point at --help: the command line is wrong
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErrorf reports a usage error (ExitUsage).
func usageErrorf(format string, args ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, args...), hint: true}
}

// profileError reports an invalid profile or configuration (ExitUsage).
func profileError(err error) error { return &exitError{code: ExitUsage, err: err} }

// failure reports a run-time failure (ExitFailure).
func failure(err error) error { return &exitError{code: ExitFailure, err: err} }

// silentFailure is a failure that the command has already reported on
// its output (a tool error, say): nothing more is printed.
var silentFailure = &exitError{code: ExitFailure, err: errors.New("")}

// wantsHint reports whether the usage hint should follow err's message:
// for errors in the command line, not in a profile.
func wantsHint(err error) bool {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.hint
	}
	var pe *profiles.Error
	return !errors.As(err, &pe)
}

// exitCode maps an error returned by command execution to the exit status.
// Commands wrap their errors (see action); anything else comes from
// argument parsing in cobra and is a usage error.
func exitCode(err error) int {
	var ee *exitError
	var pe *profiles.Error
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &pe):
		return ExitUsage
	default:
		return ExitUsage
	}
}
