package session

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrClosed is what [Subscription.Next] returns once the log is closed and every event was
// read.
var ErrClosed = errors.New("agent: closed")

// Log is one session's event log: its durable events, kept in memory and appended to the
// session's file, and the subscribers that receive every event as it happens.
//
// A Log is safe for concurrent use; events are numbered and delivered in the order of the
// Append calls.
type Log struct {
	failed func(error) // told once when the file fails

	mu     sync.Mutex
	file   *File
	events []Event
	seq    int64
	subs   map[*Subscription]struct{}
	closed bool
}

// NewLog returns a log that holds events (a resumed session's durable events, or none)
// and appends to file (nil: memory only). When a write fails, failed (if not nil) is told
// and the log goes on in memory.
func NewLog(events []Event, file *File, failed func(error)) *Log {
	l := &Log{failed: failed, file: file, events: events, subs: map[*Subscription]struct{}{}}
	if n := len(events); n > 0 {
		l.seq = events[n-1].Seq
	}
	return l
}

// Append records ev: a durable event gets the next Seq, is written to the file and kept;
// a live event carries the Seq of the last durable one. Every event is delivered to the
// subscribers. A zero Time is set to now. It returns the event as recorded.
func (l *Log) Append(ev Event) Event {
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if ev.Type.Durable() {
		l.seq++
		ev.Seq = l.seq
		l.events = append(l.events, ev)
		if l.file != nil {
			if err := l.file.Write(&ev); err != nil {
				if l.failed != nil {
					l.failed(err)
				}
				l.file = nil
			}
		}
	} else {
		ev.Seq = l.seq
	}
	for sub := range l.subs {
		sub.push(ev)
	}
	return ev
}

// Deliver hands ev to the subscribers as a live event (a subagent's events forwarded to
// its parent's subscribers), with the Seq of the last durable event. It is not logged.
func (l *Log) Deliver(ev Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ev.Seq = l.seq
	for sub := range l.subs {
		sub.push(ev)
	}
}

// Events returns a copy of the durable events so far.
func (l *Log) Events() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Event(nil), l.events...)
}

// Close ends the subscriptions (they read what is queued, then [ErrClosed]) and closes the
// file. It is idempotent.
func (l *Log) Close() error {
	l.mu.Lock()
	l.closed = true
	for sub := range l.subs {
		sub.done = true
		sub.signal()
	}
	clear(l.subs)
	f := l.file
	l.file = nil
	l.mu.Unlock()
	if f == nil {
		return nil
	}
	return f.Close()
}

// Subscription receives a log's events in order. Events are queued without bound for a
// subscriber that falls behind, so a subscriber must keep reading or Close.
//
// A Subscription is safe for concurrent use, though events are meant for one reader.
type Subscription struct {
	l     *Log
	queue []Event
	wake  chan struct{}
	done  bool
}

// Subscribe returns a subscription that first replays the durable events with a Seq above
// after (0: all of them), then delivers every event as it happens.
func (l *Log) Subscribe(after int64) *Subscription {
	sub := &Subscription{l: l, wake: make(chan struct{}, 1)}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ev := range l.events {
		if ev.Seq > after {
			sub.queue = append(sub.queue, ev)
		}
	}
	if l.closed {
		sub.done = true
	} else {
		l.subs[sub] = struct{}{}
	}
	if len(sub.queue) > 0 || sub.done {
		sub.signal()
	}
	return sub
}

func (sub *Subscription) signal() {
	select {
	case sub.wake <- struct{}{}:
	default:
	}
}

// push queues ev; l.mu is held.
func (sub *Subscription) push(ev Event) {
	sub.queue = append(sub.queue, ev)
	sub.signal()
}

// Next returns the next event. It blocks until there is one, cx is done (cx's error), or
// the log is closed and every event was read ([ErrClosed]).
func (sub *Subscription) Next(cx context.Context) (Event, error) {
	for {
		sub.l.mu.Lock()
		if len(sub.queue) > 0 {
			ev := sub.queue[0]
			sub.queue[0] = Event{}
			sub.queue = sub.queue[1:]
			sub.l.mu.Unlock()
			return ev, nil
		}
		done := sub.done
		sub.l.mu.Unlock()
		if done {
			return Event{}, ErrClosed
		}
		select {
		case <-sub.wake:
		case <-cx.Done():
			return Event{}, cx.Err()
		}
	}
}

// Close ends the subscription; Next then returns ErrClosed once the queue is read.
func (sub *Subscription) Close() {
	sub.l.mu.Lock()
	delete(sub.l.subs, sub)
	sub.done = true
	sub.signal()
	sub.l.mu.Unlock()
}
