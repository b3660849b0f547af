package elicitation_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/elicitation"
)

// fixed answers every request of its modes with res (or err), after wait is closed (nil:
// at once), and reports whether it was cancelled.
type fixed struct {
	modes     []elicitation.Mode
	res       *elicitation.Response
	err       error
	wait      chan struct{}
	cancelled chan struct{}
}

func (f *fixed) Supports(m elicitation.Mode) bool {
	for _, x := range f.modes {
		if x == m {
			return true
		}
	}
	return false
}

func (f *fixed) Elicit(cx context.Context, _ *elicitation.Request) (*elicitation.Response, error) {
	if f.wait != nil {
		select {
		case <-f.wait:
		case <-cx.Done():
			if f.cancelled != nil {
				close(f.cancelled)
			}
			return nil, cx.Err()
		}
	}
	return f.res, f.err
}

var form = []elicitation.Mode{elicitation.ModeForm}

func formRequest(t *testing.T) *elicitation.Request {
	f, err := elicitation.ParseForm(map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "string"}}})
	if err != nil {
		t.Fatal(err)
	}
	return &elicitation.Request{Server: "s", Mode: elicitation.ModeForm, Message: "?", Form: f}
}

func TestModes(t *testing.T) {
	root := ctxtest.New(t)
	if m := elicitation.Modes(root); m != nil {
		t.Fatalf("modes %v without responders", m)
	}
	mustProvide(t, root, "url", &fixed{modes: []elicitation.Mode{elicitation.ModeURL}})
	mustProvide(t, root, "defaults", elicitation.Defaults{})
	if m := elicitation.Modes(root); len(m) != 2 || m[0] != elicitation.ModeForm || m[1] != elicitation.ModeURL {
		t.Fatalf("modes %v", m)
	}
}

func mustProvide(t *testing.T, c *ctx.Context, name string, r elicitation.Responder) {
	t.Helper()
	if _, err := elicitation.Provide(c, name, r); err != nil {
		t.Fatal(err)
	}
}

// The first answer wins; the slower responder is cancelled; one that passes is ignored.
func TestFirstAnswerWins(t *testing.T) {
	root := ctxtest.New(t)
	slow := &fixed{modes: form, wait: make(chan struct{}), cancelled: make(chan struct{}), res: &elicitation.Response{Action: elicitation.Decline}}
	for name, r := range map[string]elicitation.Responder{
		"slow": slow,
		"pass": &fixed{modes: form, err: elicitation.ErrPass},
		"fast": &fixed{modes: form, res: &elicitation.Response{Action: elicitation.Accept, Content: map[string]any{"n": "x"}}},
	} {
		if _, err := elicitation.Provide(root, name, r); err != nil {
			t.Fatal(err)
		}
	}
	res, err := elicitation.Elicit(context.Background(), root, formRequest(t))
	if err != nil || res.Action != elicitation.Accept || res.Content["n"] != "x" {
		t.Fatalf("answer %+v, %v", res, err)
	}
	<-slow.cancelled
}

// Nobody to answer, or only invalid answers: declined, with the reasons.
func TestDeclinedWhenNobodyAnswers(t *testing.T) {
	root := ctxtest.New(t)
	res, err := elicitation.Elicit(context.Background(), root, formRequest(t))
	if res.Action != elicitation.Decline || !errors.Is(err, elicitation.ErrNoResponder) {
		t.Fatalf("answer %+v, %v", res, err)
	}
	if _, err := elicitation.Provide(root, "bad", &fixed{modes: form, res: &elicitation.Response{Action: elicitation.Accept, Content: map[string]any{"n": 3.0}}}); err != nil {
		t.Fatal(err)
	}
	res, err = elicitation.Elicit(context.Background(), root, formRequest(t))
	if res.Action != elicitation.Decline || err == nil || !strings.Contains(err.Error(), "answer refused: n: expected text, got a number") {
		t.Fatalf("answer %+v, %v", res, err)
	}
}

// A call's own responder answers alone; when it passes, the scoped ones do.
func TestDirectedResponder(t *testing.T) {
	root := ctxtest.New(t)
	if _, err := elicitation.Provide(root, "scoped", &fixed{modes: form, res: &elicitation.Response{Action: elicitation.Decline}}); err != nil {
		t.Fatal(err)
	}
	req := formRequest(t)
	req.Call = elicitation.WithResponder(context.Background(), &fixed{modes: form, res: &elicitation.Response{Action: elicitation.Cancel}})
	if res, err := elicitation.Elicit(context.Background(), root, req); err != nil || res.Action != elicitation.Cancel {
		t.Fatalf("answer %+v, %v", res, err)
	}
	req.Call = elicitation.WithResponder(context.Background(), &fixed{modes: form, err: elicitation.ErrPass})
	if res, err := elicitation.Elicit(context.Background(), root, req); err != nil || res.Action != elicitation.Decline {
		t.Fatalf("answer %+v, %v", res, err)
	}
}

// The defaults policy accepts a form from its defaults and declines when a required field
// has none.
func TestDefaultsPolicy(t *testing.T) {
	root := ctxtest.New(t)
	if _, err := elicitation.Provide(root, "defaults", elicitation.Defaults{}); err != nil {
		t.Fatal(err)
	}
	req := formRequest(t)
	if res, err := elicitation.Elicit(context.Background(), root, req); err != nil || res.Action != elicitation.Accept || len(res.Content) != 0 {
		t.Fatalf("answer %+v, %v", res, err)
	}
	f, _ := elicitation.ParseForm(map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "string"}}, "required": []any{"n"}})
	req.Form = f
	if res, err := elicitation.Elicit(context.Background(), root, req); err != nil || res.Action != elicitation.Decline {
		t.Fatalf("answer %+v, %v", res, err)
	}
	for _, name := range []string{"decline", "defaults", "ask"} {
		if p, err := elicitation.ParsePolicy(name); err != nil || string(p) != name {
			t.Errorf("ParsePolicy(%q) = %q, %v", name, p, err)
		}
	}
	if _, err := elicitation.ParsePolicy("never"); err == nil || !strings.Contains(err.Error(), `want "decline", "defaults" or "ask"`) {
		t.Fatalf("error %v", err)
	}
}

// An offer declares its modes (Modes) before any responder answers: a request nobody
// answers is declined, a call's own responder answers it, and ChangedEvent tells the
// clients each time a responder or an offer comes or goes.
func TestOffer(t *testing.T) {
	root := ctxtest.New(t)
	changes := ctxtest.Record(t, root, elicitation.ChangedEvent)
	if _, err := elicitation.Offer(root, "empty"); err == nil {
		t.Fatal("an offer of no mode was taken")
	}
	dispose, err := elicitation.Offer(root, "host", elicitation.ModeURL)
	if err != nil {
		t.Fatal(err)
	}
	if m := elicitation.Modes(root); len(m) != 1 || m[0] != elicitation.ModeURL {
		t.Fatalf("modes %v, want the offered url", m)
	}
	r := &elicitation.Request{Mode: elicitation.ModeURL, URL: "https://example.com"}
	if res, err := elicitation.Elicit(context.Background(), root, r); !errors.Is(err, elicitation.ErrNoResponder) || res.Action != elicitation.Decline {
		t.Fatalf("unanswered offer: %+v, %v; want a decline for want of a responder", res, err)
	}
	mine := &fixed{modes: []elicitation.Mode{elicitation.ModeURL}, res: &elicitation.Response{Action: elicitation.Accept}}
	r.Call = elicitation.WithResponder(context.Background(), mine)
	if res, err := elicitation.Elicit(context.Background(), root, r); err != nil || res.Action != elicitation.Accept {
		t.Fatalf("the call's responder: %+v, %v", res, err)
	}
	if err := dispose(context.Background()); err != nil {
		t.Fatal(err)
	}
	if m := elicitation.Modes(root); m != nil {
		t.Fatalf("modes %v after the offer went", m)
	}
	if ch := changes.Events(); len(ch) != 2 || ch[0].Name != "host" || ch[1].Name != "host" {
		t.Fatalf("changes %+v, want the offer coming and going", ch)
	}
}

// panicky is a responder with a bug: it panics on every question.
type panicky struct{}

func (panicky) Supports(elicitation.Mode) bool { return true }
func (panicky) Elicit(context.Context, *elicitation.Request) (*elicitation.Response, error) {
	panic("a responder's bug")
}

// A responder that panics fails its answer, as a *ctx.PanicError among the reasons; the
// others still answer, and the process goes on.
func TestPanickingResponder(t *testing.T) {
	root := ctxtest.New(t)
	mustProvide(t, root, "buggy", panicky{})
	res, err := elicitation.Elicit(context.Background(), root, formRequest(t))
	if pe, ok := errors.AsType[*ctx.PanicError](err); !ok || res.Action != elicitation.Decline || pe.Value != "a responder's bug" || len(pe.Stack) == 0 {
		t.Fatalf("answer %+v, %v; want declined with the panic", res, err)
	}
	mustProvide(t, root, "fine", &fixed{modes: form, res: &elicitation.Response{Action: elicitation.Accept, Content: map[string]any{"n": "x"}}})
	if res, err := elicitation.Elicit(context.Background(), root, formRequest(t)); err != nil || res.Action != elicitation.Accept {
		t.Fatalf("with a working responder too: %+v, %v", res, err)
	}
}
