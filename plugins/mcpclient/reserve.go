package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/cordisgo/harness/ctx"
)

// ErrDuplicateServer is matched (errors.Is) by the load error of a client whose serverName
// is already used by another client in the same registration scope.
var ErrDuplicateServer = errors.New("mcp serverName already in use")

// names reserves serverNames per registration scope. A registration scope is the layer a
// client registers its tools and prompt section into ([ctx.Context.Layer]): the agent scope
// it is mounted in, or the root. Scopes are unique to their tree, so two roots never share a
// key, and an entry is deleted with its last reservation: the table holds nothing for a
// scope whose clients are gone.
//
// It is safe for concurrent use.
var names = &reservations{byLayer: make(map[*ctx.Scope]map[string]*ctx.Scope)}

type reservations struct {
	mu      sync.Mutex
	byLayer map[*ctx.Scope]map[string]*ctx.Scope // layer → serverName → holding client scope
}

// reserve claims server in c's registration scope as an effect of c: the claim is released
// when c's scope unloads. A name held by another client of the same scope is an error naming
// the server; the holder is not affected.
func (r *reservations) reserve(c *ctx.Context, server string) error {
	layer, me := c.Layer(), c.Scope()
	r.mu.Lock()
	held := r.byLayer[layer]
	if holder, taken := held[server]; taken {
		r.mu.Unlock()
		return fmt.Errorf("mcp server %q: serverName is already used in scope %q by another mcpclient instance (%s) — pick a unique serverName: %w",
			server, layer.Name(), holder, ErrDuplicateServer)
	}
	if held == nil {
		held = make(map[string]*ctx.Scope)
		r.byLayer[layer] = held
	}
	held[server] = me
	r.mu.Unlock()

	release := func(context.Context) error {
		r.mu.Lock()
		defer r.mu.Unlock()
		if held := r.byLayer[layer]; held[server] == me {
			delete(held, server)
			if len(held) == 0 {
				delete(r.byLayer, layer)
			}
		}
		return nil
	}
	if _, err := c.Defer("mcpclient:serverName", release); err != nil {
		_ = release(context.Background())
		return fmt.Errorf("mcp server %q: %w", server, err)
	}
	return nil
}

// layers reports how many layers hold reservations (for tests).
func (r *reservations) layers() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.byLayer)
}
