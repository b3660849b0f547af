package ctx

import "context"

// Settle waits until no scope of c's tree has a transition in flight: every mount, load,
// unload and disposal started so far has finished, including the ones they started. It is
// how tests and start-up code wait for the tree to become quiet.
func (c *Context) Settle(cx context.Context) error {
	r := c.scope.r
	for {
		r.mu.RLock()
		if r.inflight == 0 {
			r.mu.RUnlock()
			return nil
		}
		ch := r.idle
		r.mu.RUnlock()
		select {
		case <-ch:
		case <-cx.Done():
			return cx.Err()
		}
	}
}
