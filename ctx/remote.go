package ctx

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// RemoteMethod is a service method marked as callable from outside the process, for
// example "mcpManager/restart". A transport plugin (plugins/remote) serves every method
// exposed in its tree; ctx itself has no transport.
//
// Exactly one of Call and Stream is set. Parameters arrive as JSON; results are marshalled
// to JSON by the transport. The context is cancelled when the remote client goes away.
// Services expose typed methods with [ExposeRemote] and [ExposeRemoteStream], which build
// a RemoteMethod that decodes the parameters strictly; this untyped form is what they and
// transports share.
type RemoteMethod struct {
	// Name is "<service>/<method>", for example "mcpManager/list".
	Name string
	// Call answers one request.
	Call func(cx context.Context, params json.RawMessage) (any, error)
	// Stream sends values until it returns or cx ends.
	Stream func(cx context.Context, params json.RawMessage, send func(any) error) error
}

var remoteName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*/[A-Za-z][A-Za-z0-9_-]*$`)

// ExposeRemote marks m as remote, as an effect of c's scope: the method disappears when the
// returned disposer runs or the scope unloads. Names are unique per tree.
func (c *Context) ExposeRemote(m RemoteMethod) (Disposer, error) {
	if !remoteName.MatchString(m.Name) {
		return nil, fmt.Errorf("remote method %q: name must look like service/method", m.Name)
	}
	if (m.Call == nil) == (m.Stream == nil) {
		return nil, fmt.Errorf("remote method %q: exactly one of Call and Stream must be set", m.Name)
	}
	r := c.scope.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.remotes == nil {
		r.remotes = make(map[string]*RemoteMethod)
	}
	if _, dup := r.remotes[m.Name]; dup {
		return nil, fmt.Errorf("remote method %q: already exposed", m.Name)
	}
	p := &m
	n, err := c.attachLocked("remote:"+m.Name, func(context.Context) error {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.remotes[m.Name] == p {
			delete(r.remotes, m.Name)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	r.remotes[m.Name] = p
	return n.dispose, nil
}

// RemoteMethods lists the methods exposed in c's tree, sorted by name.
func (c *Context) RemoteMethods() []RemoteMethod {
	r := c.scope.r
	r.mu.RLock()
	out := make([]RemoteMethod, 0, len(r.remotes))
	for _, m := range r.remotes {
		out = append(out, *m)
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b RemoteMethod) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// RemoteMethod returns the exposed method called name.
func (c *Context) RemoteMethod(name string) (RemoteMethod, bool) {
	r := c.scope.r
	r.mu.RLock()
	defer r.mu.RUnlock()
	if m := r.remotes[name]; m != nil {
		return *m, true
	}
	return RemoteMethod{}, false
}

// ParamsError is a remote method's parameters refused before the method ran: they do not
// decode strictly into the method's parameter type (an unknown key, a key in the wrong
// case, a value of the wrong kind) or the type's Validate failed. The typed exposers
// ([ExposeRemote], [ExposeRemoteStream]) return it; a transport answers it as invalid
// parameters (plugins/remote: bad_request). Err holds the [*ConfigError] problems, whose
// Key names the bad field.
//
// A ParamsError is not modified after it is returned; it is safe to share.
type ParamsError struct {
	// Method is the remote method's name, such as "mcpManager/restart".
	Method string
	// Err is the decoding or validation problem (one or more joined [*ConfigError]s).
	Err error
}

// Error formats `remote method "M": invalid params: PROBLEM`.
func (e *ParamsError) Error() string {
	return fmt.Sprintf("remote method %q: invalid params: %v", e.Method, e.Err)
}

// Unwrap returns the problem, so errors.Is(err, ErrInvalidConfig) holds.
func (e *ParamsError) Unwrap() error { return e.Err }

// decodeParams decodes raw strictly as P, the way configuration is decoded ([Decode]: P's
// defaults, the keys checked, P's Validate); no parameters (null) is P's zero value.
func decodeParams[P any](method string, raw json.RawMessage) (P, error) {
	p, err := Decode[P](raw)
	if err != nil {
		return p, &ParamsError{Method: method, Err: err}
	}
	return p, nil
}

// ExposeRemote exposes fn as the request/response remote method name (see
// [Context.ExposeRemote]), typed: the JSON parameters are decoded into P once, strictly, by
// [Decode] (defaults, unknown keys refused with a did-you-mean, P's Validate), before fn
// runs; a refusal is a [*ParamsError] naming the method and the key. fn's result R is
// what the transport encodes as JSON. Clients decode the answer into the same R (in
// plugins/remote, a remote.Method[P, R] declares the method once for both sides), so a
// method's parameter and result types, exported next to the service, are its whole wire
// contract.
//
// Use struct{} for a method without parameters (null and {} are accepted).
func ExposeRemote[P, R any](c *Context, name string, fn func(context.Context, P) (R, error)) (Disposer, error) {
	if fn == nil {
		return nil, fmt.Errorf("remote method %q: no function", name)
	}
	return c.ExposeRemote(RemoteMethod{Name: name, Call: func(rcx context.Context, raw json.RawMessage) (any, error) {
		p, err := decodeParams[P](name, raw)
		if err != nil {
			return nil, err
		}
		return fn(rcx, p)
	}})
}

// ExposeRemoteStream exposes fn as the stream remote method name, typed like
// [ExposeRemote]: the parameters are decoded strictly into P before fn runs, and each
// value fn sends is a V.
func ExposeRemoteStream[P, V any](c *Context, name string, fn func(context.Context, P, func(V) error) error) (Disposer, error) {
	if fn == nil {
		return nil, fmt.Errorf("remote method %q: no function", name)
	}
	return c.ExposeRemote(RemoteMethod{Name: name, Stream: func(rcx context.Context, raw json.RawMessage, send func(any) error) error {
		p, err := decodeParams[P](name, raw)
		if err != nil {
			return err
		}
		return fn(rcx, p, func(v V) error { return send(v) })
	}})
}
