package mcpauth

import "sync"

// hub tells every Authorizer of this process that a key's stored record changed, so a
// login performed by one (the `mcp login` path through a running host) is picked up by
// the live client's without a restart. Safe for concurrent use.
type hub struct {
	mu   sync.Mutex
	gens map[Key]*keyState
}

type keyState struct {
	gen uint64
	ch  chan struct{} // closed at the next change
}

var changes = &hub{gens: map[Key]*keyState{}}

func (h *hub) state(k Key) *keyState {
	st := h.gens[k]
	if st == nil {
		st = &keyState{ch: make(chan struct{})}
		h.gens[k] = st
	}
	return st
}

// current returns k's generation and the channel closed at its next change.
func (h *hub) current(k Key) (uint64, <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := h.state(k)
	return st.gen, st.ch
}

// notify records a change of k and wakes its waiters.
func (h *hub) notify(k Key) {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := h.state(k)
	st.gen++
	close(st.ch)
	st.ch = make(chan struct{})
}
