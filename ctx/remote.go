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
type RemoteMethod struct {
	// Name is "<service>/<method>", for example "mcpManager/list".
	Name string
	// Call answers one request.
	Call func(ctx context.Context, params json.RawMessage) (any, error)
	// Stream sends values until it returns or ctx ends.
	Stream func(ctx context.Context, params json.RawMessage, send func(any) error) error
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
