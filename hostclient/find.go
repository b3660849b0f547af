package hostclient

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/plugins/remote"
)

// FindOptions say which running host [Find] looks for, and what it says about it. It is a
// plain value.
type FindOptions struct {
	// EndpointFile is the endpoint file the host is found by; FileErr why there is none
	// (no user configuration directory).
	EndpointFile string
	FileErr      error
	// InProcess looks for no host: the command works in process (--local, or a command
	// line that chose its own profile).
	InProcess bool
	// Required makes a missing host, or one that cannot answer, an error (--host,
	// --endpoint) instead of a note and the work in process.
	Required bool
	// Note tells the person what was found ("answering for …", "…; working in process");
	// nil says nothing.
	Note func(format string, args ...any)
}

func (o FindOptions) note(format string, args ...any) {
	if o.Note != nil {
		o.Note(format, args...)
	}
}

// NoHostError is the error of a required host that is not there or does not answer.
type NoHostError struct{ Reason string }

func (e *NoHostError) Error() string { return "no running host: " + e.Reason }

// Find returns the running host that o.EndpointFile names and that answers, or nil to work
// in process: with InProcess; when there is no endpoint file, or a stale one, or its host
// does not answer (those two are noted). With Required, no host is a *NoHostError. A host
// that answers but fails harness/host is its *InfoError. When it returns a host it notes
// so.
func Find(cx context.Context, o FindOptions) (*Host, error) {
	if o.InProcess {
		return nil, nil
	}
	none := func(format string, args ...any) (*Host, error) {
		msg := fmt.Sprintf(format, args...)
		if o.Required {
			return nil, &NoHostError{Reason: msg}
		}
		o.note("%s; working in process", msg)
		return nil, nil
	}
	if o.FileErr != nil {
		return none("no endpoint file to find a host by: %v", o.FileErr)
	}
	rh, err := Dial(cx, o.EndpointFile)
	switch {
	case errors.Is(err, remote.ErrStaleEndpoint):
		return none("ignoring %v", err)
	case errors.Is(err, os.ErrNotExist) && !o.Required:
		return nil, nil
	case errors.Is(err, os.ErrNotExist):
		return none("the endpoint file %s does not exist", o.EndpointFile)
	case errors.Is(err, ErrNoAnswer):
		return none("%v", err)
	case errors.As(err, new(*InfoError)):
		return nil, err
	case err != nil:
		return none("ignoring the endpoint file: %v", err)
	}
	o.note("answering for %s; --local for this profile", rh)
	return rh, nil
}

// Start runs fn with a host started in this process, and stops it after (the CLI's
// application shell; an embedder's own). The host's methods must be exposed
// (host.Host.ExposeAPI).
type Start func(cx context.Context, fn func(context.Context, *host.Host) error) error

// RunOptions say where [Run] calls a host.
type RunOptions struct {
	FindOptions
	// Start starts the host in process when no running host is used.
	Start Start
	// Method, when set, is a method the running host must serve to be used; one that does
	// not is noted and the work goes in process, or with Required is an error naming What
	// (the command).
	Method, What string
}

// Run runs fn with the caller of the running host [Find] finds, else of a host started in
// this process (o.Start): one call for a command that answers for whichever there is.
func Run(cx context.Context, o RunOptions, fn func(context.Context, *Caller) error) error {
	rh, err := Find(cx, o.FindOptions)
	if err != nil {
		return err
	}
	if rh != nil {
		if o.Method == "" || rh.Serves(o.Method) {
			return fn(cx, Remote(rh))
		}
		if o.Required {
			return fmt.Errorf("%s cannot run %s (it does not serve %s); use --local to work in process", rh, o.What, o.Method)
		}
		o.note("%s cannot run %s; working in process", rh, o.What)
	}
	return o.Start(cx, func(cx context.Context, h *host.Host) error { return fn(cx, Local(h)) })
}
