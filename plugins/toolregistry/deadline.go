package toolregistry

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// deadlines enforces the registry's per-call timeouts with one runtime timer. A timer per
// call (context.WithTimeout) cost about 10 µs of CPU per call next to a stdio round trip of a
// few hundred, where a context without a timer cost nothing measurable (docs/performance.md);
// arming a timer likely wakes the runtime's sleeping network poller. Here a call's deadline goes into a heap, and the one timer is
// re-armed only when it fires or when a deadline earlier than the armed one arrives, which
// does not happen while every tool has the same timeout.
//
// deadlines is safe for concurrent use; its zero value is ready.
type deadlines struct {
	mu    sync.Mutex
	heap  callHeap
	timer *time.Timer
	armed time.Time // when the timer fires; zero when it is not armed
}

// start makes c (zero) the context of a call under bcx that ends timeout from now. The
// caller must call stop with it when the call returns.
func (d *deadlines) start(c *callContext, bcx context.Context, timeout time.Duration) {
	c.init(bcx)
	c.deadline = time.Now().Add(timeout)
	d.mu.Lock()
	heap.Push(&d.heap, c)
	if d.armed.IsZero() || c.deadline.Before(d.armed) {
		d.armLocked(c.deadline)
	}
	d.mu.Unlock()
}

// stop ends c (a no-op when its deadline already did) and forgets its deadline.
func (d *deadlines) stop(c *callContext) {
	d.mu.Lock()
	if c.index >= 0 {
		heap.Remove(&d.heap, c.index)
	}
	d.mu.Unlock()
	c.end(context.Canceled)
}

func (d *deadlines) armLocked(when time.Time) {
	d.armed = when
	if d.timer == nil {
		d.timer = time.AfterFunc(time.Until(when), d.fire)
	} else {
		d.timer.Reset(time.Until(when))
	}
}

// fire ends the calls whose deadline has passed and re-arms the timer for the next one. It
// ends them holding d.mu, so that a call's stop, which takes d.mu, returns only once no end
// of fire's is still to come: the call's context is reused once it returned (toolCall).
func (d *deadlines) fire() {
	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	for len(d.heap) > 0 && !d.heap[0].deadline.After(now) {
		heap.Pop(&d.heap).(*callContext).end(errTimeout)
	}
	d.armed = time.Time{}
	if len(d.heap) > 0 {
		d.armLocked(d.heap[0].deadline)
	}
}

// callHeap orders calls by deadline (container/heap).
type callHeap []*callContext

func (h callHeap) Len() int           { return len(h) }
func (h callHeap) Less(i, j int) bool { return h[i].deadline.Before(h[j].deadline) }
func (h callHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *callHeap) Push(x any) {
	c := x.(*callContext)
	c.index = len(*h)
	*h = append(*h, c)
}
func (h *callHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	c.index = -1
	return c
}
