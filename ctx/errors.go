package ctx

import (
	"errors"
	"fmt"
)

// Sentinel errors. Match them with [errors.Is].
var (
	// ErrInactive is returned when an effect, listener, service or child plugin is registered
	// on a context whose scope is unloading or disposed, or when a service is used through a
	// context whose activation has ended.
	ErrInactive = errors.New("inactive context")
	// ErrNotInjected is returned (inside a panic from [Key.Use]) when a scope reads a service
	// that neither it nor an ancestor declared in its plugin's Inject list.
	ErrNotInjected = errors.New("service not injected")
	// ErrDuplicateService is returned when a service name already has a provider in the same
	// isolation realm.
	ErrDuplicateService = errors.New("service already provided")
	// ErrScopeUnloaded is the cancellation cause of an activation's [Context] once that
	// activation is unloading; read it with [context.Cause].
	ErrScopeUnloaded = errors.New("scope unloaded")
	// ErrInvalidPlugin is returned when a nil plugin definition is mounted.
	ErrInvalidPlugin = errors.New("invalid plugin")
	// ErrNextCalled is returned by a waterfall's next function when it is called twice.
	ErrNextCalled = errors.New("waterfall next called more than once")
	// ErrRootOnly is returned by operations that only plugin scopes support, such as Update on
	// the root.
	ErrRootOnly = errors.New("not supported on the root scope")
)

// PanicError is a panic recovered from user code (an apply function, disposer, listener or
// hook) and turned into an error.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// Unwrap returns the panic value when it is an error.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}
