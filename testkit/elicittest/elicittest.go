// Package elicittest holds the elicitation responder tests share: [Recorder] answers with a
// function of the test's and records every request it is asked. Only tests import it.
package elicittest

import (
	"context"
	"slices"
	"sync"

	"github.com/cordisgo/harness/elicitation"
)

// Recorder is an [elicitation.Responder] that supports Modes, answers with Answer, and
// records the requests it is asked, in order.
//
// A Recorder is safe for concurrent use once its fields are set; do not change them while a
// request may arrive.
type Recorder struct {
	Modes  []elicitation.Mode
	Answer func(cx context.Context, req *elicitation.Request) (*elicitation.Response, error)

	mu   sync.Mutex
	seen []*elicitation.Request
}

// Supports reports whether m is one of r's Modes.
func (r *Recorder) Supports(m elicitation.Mode) bool { return slices.Contains(r.Modes, m) }

// Elicit records req and answers with r.Answer.
func (r *Recorder) Elicit(cx context.Context, req *elicitation.Request) (*elicitation.Response, error) {
	r.mu.Lock()
	r.seen = append(r.seen, req)
	r.mu.Unlock()
	return r.Answer(cx, req)
}

// Requests returns the requests r was asked so far, in order.
func (r *Recorder) Requests() []*elicitation.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen)
}
