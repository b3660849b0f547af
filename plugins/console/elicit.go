package console

import (
	"context"
	"errors"
	"strconv"
	"sync"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/elicitation"
	"github.com/cordisgo/harness/plugins/remote"
)

// Elicitation is one value of the console/elicitations stream: a server's question
// waiting for an answer (Type "pending"), or the end of one (Type "done"). It is a plain
// value.
type Elicitation struct {
	// Type is "pending" or "done".
	Type string `json:"type"`
	// ID identifies the question in console/answer.
	ID string `json:"id"`
	// Server is the MCP server asking; Mode is form or url; Message is the server's text.
	Server  string           `json:"server,omitempty"`
	Mode    elicitation.Mode `json:"mode,omitempty"`
	Message string           `json:"message,omitempty"`
	// Fields are the form's fields (form mode), parsed from the requested schema.
	Fields []elicitation.Field `json:"fields,omitempty"`
	// URL is the page to visit (url mode).
	URL string `json:"url,omitempty"`
	// Call names the call that raised the question, when the server's client could tell:
	// the Ref of a console/callTool call, or an agent's tool call ID with its Session; a
	// page shows the question next to that call.
	Call    string `json:"call,omitempty"`
	Session string `json:"session,omitempty"`
	// Action is how a question ended ("done"): accept, decline or cancel when the page
	// answered, "" when it ended otherwise (answered elsewhere, cancelled by the server,
	// timed out).
	Action elicitation.Action `json:"action,omitempty"`
}

// AnswerParams are the parameters of console/answer.
type AnswerParams struct {
	ID      string             `json:"id"`
	Action  elicitation.Action `json:"action"`
	Content map[string]any     `json:"content,omitempty"`
}

// Validate requires a known action.
func (a AnswerParams) Validate() error {
	switch a.Action {
	case elicitation.Accept, elicitation.Decline, elicitation.Cancel:
		return nil
	}
	return &ctx.ConfigError{Key: "action", Msg: "expected accept, decline or cancel"}
}

// AnswerResult is the answer of console/answer.
type AnswerResult struct {
	OK bool `json:"ok"`
}

// pageResponder is the management page's elicitation responder: it shows each question to
// the pages that follow console/elicitations and waits for console/answer. With no page
// following it passes, so a host with no page open answers as if it were not there. It is
// safe for concurrent use.
type pageResponder struct {
	mu      sync.Mutex
	seq     uint64
	pending map[string]*question
	order   []string // pending IDs, oldest first
	subs    map[*follower]struct{}
}

// question is one pending elicitation.
type question struct {
	ev     Elicitation
	form   *elicitation.Form
	answer chan *elicitation.Response // buffered 1; the first answer wins; nil: pass
}

// follower is one console/elicitations stream: the values not sent yet.
type follower struct {
	wake   chan struct{} // buffered 1
	queue  []Elicitation
	closed bool
}

func newPageResponder() *pageResponder {
	return &pageResponder{pending: make(map[string]*question), subs: make(map[*follower]struct{})}
}

// Supports reports that the page shows forms and URLs.
func (p *pageResponder) Supports(m elicitation.Mode) bool {
	return m == elicitation.ModeForm || m == elicitation.ModeURL
}

// Elicit shows r to the pages following the stream and waits for an answer, or passes when
// no page follows.
func (p *pageResponder) Elicit(cx context.Context, r *elicitation.Request) (*elicitation.Response, error) {
	p.mu.Lock()
	if len(p.subs) == 0 {
		p.mu.Unlock()
		return nil, elicitation.ErrPass
	}
	p.seq++
	q := &question{form: r.Form, answer: make(chan *elicitation.Response, 1),
		ev: Elicitation{Type: "pending", ID: "e" + strconv.FormatUint(p.seq, 10), Server: r.Server, Mode: r.Mode, Message: r.Message, URL: r.URL}}
	if o, ok := elicitation.OriginOf(r.Call); ok {
		q.ev.Call, q.ev.Session = o.Call, o.Session
	}
	if r.Form != nil {
		q.ev.Fields = r.Form.Fields
	}
	p.pending[q.ev.ID] = q
	p.order = append(p.order, q.ev.ID)
	p.broadcastLocked(q.ev)
	p.mu.Unlock()

	var res *elicitation.Response
	passed := false
	select {
	case res = <-q.answer:
		passed = res == nil
	case <-cx.Done():
	}
	done := Elicitation{Type: "done", ID: q.ev.ID, Server: r.Server}
	if res != nil {
		done.Action = res.Action
	}
	p.mu.Lock()
	delete(p.pending, q.ev.ID)
	for i, id := range p.order {
		if id == q.ev.ID {
			p.order = append(p.order[:i:i], p.order[i+1:]...)
			break
		}
	}
	p.broadcastLocked(done)
	p.mu.Unlock()
	switch {
	case passed:
		return nil, elicitation.ErrPass
	case res == nil:
		return nil, context.Cause(cx)
	}
	return res, nil
}

func (p *pageResponder) broadcastLocked(ev Elicitation) {
	for f := range p.subs {
		f.queue = append(f.queue, ev)
		select {
		case f.wake <- struct{}{}:
		default:
		}
	}
}

// answer delivers a page's answer to the pending question id. A form's content is checked
// against the requested schema first, so the page learns which field is wrong.
func (p *pageResponder) answer(_ context.Context, a AnswerParams) (AnswerResult, error) {
	p.mu.Lock()
	q := p.pending[a.ID]
	p.mu.Unlock()
	if q == nil {
		return AnswerResult{}, remote.Errorf(remote.CodeNotFound, "no pending elicitation %q (it was answered elsewhere, cancelled or timed out)", a.ID)
	}
	res := &elicitation.Response{Action: a.Action}
	if a.Action == elicitation.Accept && q.ev.Mode == elicitation.ModeForm {
		if a.Content == nil {
			a.Content = map[string]any{}
		}
		if err := q.form.Check(a.Content); err != nil {
			return AnswerResult{}, remote.Errorf(remote.CodeBadRequest, "the answer to %s's question: %v", q.ev.Server, err)
		}
		res.Content = a.Content
	}
	select {
	case q.answer <- res:
		return AnswerResult{OK: true}, nil
	default:
		return AnswerResult{}, remote.Errorf(remote.CodeNotFound, "elicitation %q was answered already", a.ID)
	}
}

// stream is console/elicitations: the pending questions at once, then each new question
// and each end.
func (p *pageResponder) stream(rcx context.Context, _ struct{}, send func(Elicitation) error) error {
	f := &follower{wake: make(chan struct{}, 1)}
	p.mu.Lock()
	for _, id := range p.order {
		f.queue = append(f.queue, p.pending[id].ev)
	}
	if len(f.queue) > 0 {
		f.wake <- struct{}{}
	}
	p.subs[f] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.subs, f)
		p.mu.Unlock()
	}()
	for {
		select {
		case <-rcx.Done():
			return context.Cause(rcx)
		case <-f.wake:
		}
		p.mu.Lock()
		vals, closed := f.queue, f.closed
		f.queue = nil
		p.mu.Unlock()
		for _, v := range vals {
			if err := send(v); err != nil {
				return err
			}
		}
		if closed {
			return errors.New("console: unloaded (the host is stopping or the console restarts)")
		}
	}
}

// close ends the streams of the console that unloads and passes on the questions they
// were showing: with no page left, the other responders answer.
func (p *pageResponder) close(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for f := range p.subs {
		f.closed = true
		delete(p.subs, f)
		select {
		case f.wake <- struct{}{}:
		default:
		}
	}
	for _, q := range p.pending {
		select {
		case q.answer <- nil:
		default:
		}
	}
	return nil
}

// responderName is the page responder's name among the elicitation responders.
const responderName = "web page"

// provideResponder makes the page a responder of the tree below c, and exposes its stream
// and answer method.
func provideResponder(c *ctx.Context) error {
	p := newPageResponder()
	if _, err := elicitation.Provide(c, responderName, p); err != nil {
		return err
	}
	if _, err := c.Defer("console:elicitations", p.close); err != nil {
		return err
	}
	if _, err := MethodElicitations.Expose(c, p.stream); err != nil {
		return err
	}
	_, err := MethodAnswer.Expose(c, p.answer)
	return err
}
