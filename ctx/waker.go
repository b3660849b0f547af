package ctx

import "context"

// Waker wakes one loop that follows an event: a listener registered by [Event.Wake] marks
// the waker for each event it admits, and the loop's [Waker.Wait] (or a receive from
// [Waker.C]) returns once for all the marks made since it last returned. Events that fire
// while the loop is busy coalesce into one wake-up, so the emitter never blocks on a slow
// loop and the loop is never more than one round behind; what each event said is the
// note function's to keep (or the loop reads the current state when it wakes).
//
// Concurrency contract: the listener (and the note function passed to Wake) runs on the
// emitter's goroutine, concurrently with the loop and, for events emitted from several
// goroutines, with itself; it never blocks. No wake-up is lost: an event admitted after
// Wait returned makes the next Wait return, and everything the note function did before
// its event's mark is visible to the loop once that Wait returns (state shared with the
// loop still needs its own lock, since notes go on while the loop reads). One goroutine
// waits at a time; Stop may be called from any goroutine, more than once.
type Waker struct {
	ch   chan struct{}
	stop Disposer
}

// Wake registers on c a listener of e that wakes the returned [Waker] for each event note
// admits. note (nil admits every event) is called with each event before the wake-up: it
// reports whether the event concerns the loop, and may record what the loop should do
// about it. The listener is an effect of c's scope, like [Event.On]'s: it ends with the
// scope, or earlier with [Waker.Stop]. See [Waker] for the concurrency contract.
func (e Event[A]) Wake(c *Context, note func(A) bool, opts ...ListenOption) (*Waker, error) {
	w := &Waker{ch: make(chan struct{}, 1)}
	stop, err := e.On(c, func(a A) error {
		if note == nil || note(a) {
			w.kick()
		}
		return nil
	}, opts...)
	if err != nil {
		return nil, err
	}
	w.stop = stop
	return w, nil
}

// kick marks the waker; a mark not consumed yet absorbs it.
func (w *Waker) kick() {
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// C returns the channel that receives a value when the waker is marked, for a loop that
// selects on more than [Waker.Wait] does. A receive consumes the mark.
func (w *Waker) C() <-chan struct{} { return w.ch }

// Wait blocks until the waker is marked (it returns nil, consuming the mark), rcx ends (it
// returns rcx's cause) or done is closed (it returns doneErr; a nil done never is). When
// several are ready at once any of them may be chosen.
func (w *Waker) Wait(rcx context.Context, done <-chan struct{}, doneErr error) error {
	select {
	case <-w.ch:
		return nil
	case <-rcx.Done():
		return context.Cause(rcx)
	case <-done:
		return doneErr
	}
}

// Stop unregisters the listener: events after Stop returns do not mark the waker (a mark
// already made stays). It returns at once; later calls do nothing.
func (w *Waker) Stop() {
	// Removing a listener only unlinks it from the event's list: it neither blocks nor
	// fails (a scope unloading at the same moment has removed it already).
	_ = w.stop(context.Background())
}
