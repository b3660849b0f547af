package console_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/elicitation"
	"github.com/cordisgo/harness/plugins/console"
	"github.com/cordisgo/harness/plugins/remote"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// The console as an elicitation responder: it passes while no page follows; a follower
// sees the question with its fields, a wrong answer is refused naming the field and the
// question stays pending, the right one reaches the asker, and the end is announced.
func TestElicitationResponder(t *testing.T) {
	t.Run("console's own", func(t *testing.T) { testResponder(t, newTree(t)) })
	t.Run("offered", func(t *testing.T) {
		// Offered in the root before the console loads (as a host that mounts a console
		// does), then answered by the console; a console that unloads passes on the
		// questions it showed.
		root := ctxtest.New(t)
		if _, err := elicitation.Offer(root, "host", elicitation.ModeForm, elicitation.ModeURL); err != nil {
			t.Fatal(err)
		}
		ctxtest.MountActive(t, root, toolregistry.Plugin, nil)
		ctxtest.MountActive(t, root, tools, nil)
		cs := ctxtest.MountActive(t, root, console.Plugin, nil)
		testResponder(t, root)

		m, _ := root.RemoteMethod("console/elicitations")
		vals := make(chan console.Elicitation, 4)
		ended := make(chan error, 1)
		go func() {
			ended <- m.Stream(ctxtest.Wait(t), nil, func(v any) error { vals <- v.(console.Elicitation); return nil })
		}()
		asked := make(chan error, 1)
		for {
			go func() {
				_, err := elicitation.Elicit(ctxtest.Wait(t), root, &elicitation.Request{Server: "demo", Mode: elicitation.ModeURL, URL: "https://example.com/x"})
				asked <- err
			}()
			select {
			case <-vals:
			case err := <-asked:
				t.Logf("declined before the stream was registered (%v): asking again", err)
				continue
			}
			break
		}
		if err := cs.Dispose(ctxtest.Wait(t)); err != nil {
			t.Fatal(err)
		}
		if err := <-asked; !errors.Is(err, elicitation.ErrNoResponder) {
			t.Fatalf("a question shown by a console that unloaded: %v, want it declined (passed on)", err)
		}
		if err := <-ended; err == nil {
			t.Fatal("the stream outlived its console")
		}
	})
}

func testResponder(t *testing.T, root *ctx.Context) {
	if modes := elicitation.Modes(root); len(modes) != 2 {
		t.Fatalf("modes %v, want form and url", modes)
	}
	form, err := elicitation.ParseForm(json.RawMessage(`{"type":"object","required":["age"],
		"properties":{"age":{"type":"integer","title":"Age","minimum":1,"maximum":150,"default":36},"nick":{"type":"string"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	ask := func(cx context.Context) (*elicitation.Response, error) {
		return elicitation.Elicit(cx, root, &elicitation.Request{Server: "demo", Mode: elicitation.ModeForm, Message: "How old?", Form: form})
	}

	// No page follows: the console passes, and with nobody else the request is declined.
	res, err := ask(ctxtest.Wait(t))
	if res == nil || res.Action != elicitation.Decline || !errors.Is(err, elicitation.ErrNoResponder) {
		t.Fatalf("without a page: %+v %v", res, err)
	}

	m, ok := root.RemoteMethod("console/elicitations")
	if !ok || m.Stream == nil {
		t.Fatal("no console/elicitations stream")
	}
	scx, stop := context.WithCancel(ctxtest.Wait(t))
	vals := make(chan console.Elicitation, 16)
	ended := make(chan error, 1)
	subscribed := make(chan struct{})
	go func() {
		close(subscribed)
		ended <- m.Stream(scx, nil, func(v any) error { vals <- v.(console.Elicitation); return nil })
	}()
	<-subscribed
	answered := make(chan *elicitation.Response, 1)
	var pending console.Elicitation
	for pending.ID == "" {
		// The stream may not be registered yet: ask until the console takes the question.
		go func() {
			r, err := ask(ctxtest.Wait(t))
			if err != nil && (r == nil || !errors.Is(err, elicitation.ErrNoResponder)) {
				// Declined for want of a responder (the stream not registered yet) comes
				// with ErrNoResponder and the Decline the loop asks again on; any other
				// error is an answer the test fails on.
				r = &elicitation.Response{Action: "error: " + elicitation.Action(err.Error())}
			}
			answered <- r
		}()
		select {
		case pending = <-vals:
		case r := <-answered:
			if r.Action != elicitation.Decline {
				t.Fatalf("an answer before the page saw the question: %+v", r)
			}
		}
	}
	if pending.Type != "pending" || pending.Server != "demo" || pending.Message != "How old?" || len(pending.Fields) != 2 ||
		pending.Fields[0].Name != "age" || pending.Fields[0].Default != 36.0 {
		t.Fatalf("pending: %+v", pending)
	}

	_, err = call[console.AnswerResult](t, root, "console/answer", `{"id":"`+pending.ID+`","action":"accept","content":{"age":200}}`)
	if err == nil || !strings.Contains(err.Error(), "age") {
		t.Fatalf("an age of 200 accepted: %v", err)
	}
	if code := remote.CodeOf(err); code != "bad_request" {
		t.Fatalf("code %s", code)
	}
	if _, err := call[console.AnswerResult](t, root, "console/answer", `{"id":"`+pending.ID+`","action":"maybe"}`); err == nil {
		t.Fatal("action maybe accepted")
	}
	if r, err := call[console.AnswerResult](t, root, "console/answer", `{"id":"`+pending.ID+`","action":"accept","content":{"age":41}}`); err != nil || !r.OK {
		t.Fatalf("answer: %+v %v", r, err)
	}
	if r := <-answered; r.Action != elicitation.Accept || r.Content["age"] != 41.0 {
		t.Fatalf("the asker got %+v", r)
	}
	if done := <-vals; done.Type != "done" || done.ID != pending.ID || done.Action != elicitation.Accept {
		t.Fatalf("done: %+v", done)
	}
	_, err = call[console.AnswerResult](t, root, "console/answer", `{"id":"`+pending.ID+`","action":"decline"}`)
	if err == nil || remote.CodeOf(err) != "not_found" {
		t.Fatalf("an answer to a question gone: %v", err)
	}

	// A question whose asker gives up ends with no action.
	cx, giveUp := context.WithCancel(ctxtest.Wait(t))
	go func() { _, _ = ask(cx); close(answered) }()
	if p := <-vals; p.Type != "pending" {
		t.Fatalf("second question: %+v", p)
	}
	giveUp()
	if done := <-vals; done.Type != "done" || done.Action != "" {
		t.Fatalf("done after the asker left: %+v", done)
	}
	<-answered
	stop()
	if err := <-ended; !errors.Is(err, context.Canceled) {
		t.Fatalf("stream end: %v", err)
	}
}
