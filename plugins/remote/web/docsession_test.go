//go:build browser

package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// docSession is a session with the document of a target the test did not open itself: an
// app's view (the inner frame of its sandbox proxy, a target of its own) or the tab a
// click opened. The test only evaluates scripts in it.
//
// The session is the browser's own, not flat: Target.attachToTarget without flatten, each
// command sent in Target.sendMessageToTarget and each reply read from the browser's
// Target.receivedMessageFromTarget events. chromedp's attach to a target (WithTargetID)
// does not serve here: it fetches the document on the attaching goroutine and fills the
// frame's node map there, while the target's event loop reads that map without a lock
// for each DOM event. A document that changes while the test attaches (an app applying
// the host's styles as it initializes, a page loading) makes that a data race inside
// chromedp, and the race detector failed TestChatApps on it in CI. This session enables
// no domain, so the target sends it no events at all.
//
// A docSession is used by its test's goroutine only, one call at a time.
type docSession struct {
	t       *testing.T
	b       *chromedp.Browser
	session target.SessionID
	msgs    <-chan jsonv2.Value // the browser's Target.receivedMessageFromTarget events
	next    int64               // the last command's id
}

// attachDoc attaches to the target id of the browser of bcx, and detaches when the test
// ends.
func attachDoc(t *testing.T, bcx context.Context, id target.ID) *docSession {
	t.Helper()
	b := chromedp.FromContext(bcx).Browser
	msgs, unsubscribe := b.Subscribe(cdproto.EventTargetReceivedMessageFromTarget)
	acx, cancel := context.WithTimeout(bcx, 30*time.Second)
	defer cancel()
	flat := false
	res, err := cdp.Call(acx, b, target.AttachToTarget, target.AttachToTargetParams{TargetID: id, Flatten: &flat})
	if err != nil {
		unsubscribe()
		t.Fatalf("attaching to the target %s: %v", id, err)
	}
	t.Cleanup(func() {
		// The browser may have ended first, and the session with it.
		dcx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = cdp.Call(dcx, b, target.DetachFromTarget, target.DetachFromTargetParams(res))
		unsubscribe()
	})
	return &docSession{t: t, b: b, session: res.SessionID, msgs: msgs}
}

// call sends one command to the target and decodes its reply's result into res.
func (d *docSession) call(cx context.Context, method string, params, res any) error {
	d.next++
	p, err := jsonv2.Marshal(params, chromedp.DefaultMarshalOptions)
	if err != nil {
		return err
	}
	msg, err := jsonv2.Marshal(cdproto.Message{ID: d.next, Method: cdproto.MethodType(method), Params: p}, chromedp.DefaultMarshalOptions)
	if err != nil {
		return err
	}
	send := struct {
		Message   string           `json:"message"`
		SessionID target.SessionID `json:"sessionId"`
	}{string(msg), d.session}
	if err := d.b.Call(cx, "Target.sendMessageToTarget", send, nil); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	for {
		select {
		case <-cx.Done():
			return fmt.Errorf("%s: no reply: %w", method, cx.Err())
		case ev, ok := <-d.msgs:
			if !ok {
				return fmt.Errorf("%s: the browser is gone", method)
			}
			var got target.EventReceivedMessageFromTarget
			if err := jsonv2.Unmarshal(ev, &got, chromedp.DefaultUnmarshalOptions); err != nil {
				return err
			}
			if got.SessionID != d.session {
				continue
			}
			var reply cdproto.Message
			if err := jsonv2.Unmarshal([]byte(got.Message), &reply, chromedp.DefaultUnmarshalOptions); err != nil {
				return err
			}
			if reply.ID != d.next {
				continue // the reply to a command whose wait ended
			}
			if reply.Error != nil {
				return fmt.Errorf("%s: %w", method, reply.Error)
			}
			return jsonv2.Unmarshal(reply.Result, res, chromedp.DefaultUnmarshalOptions)
		}
	}
}

// evaluate runs the JavaScript expression in the target's document, awaiting it when it
// is a promise, and decodes its value into out.
func (d *docSession) evaluate(cx context.Context, expr string, out any) error {
	yes := true
	var res runtime.EvaluateResult
	if err := d.call(cx, runtime.CommandEvaluate, runtime.EvaluateParams{Expression: expr, AwaitPromise: &yes, ReturnByValue: &yes}, &res); err != nil {
		return err
	}
	if e := res.ExceptionDetails; e != nil {
		why := e.Text
		if e.Exception != nil && e.Exception.Description != "" {
			why = e.Exception.Description
		}
		return fmt.Errorf("the script failed: %s", why)
	}
	if err := json.Unmarshal(res.Result.Value, out); err != nil {
		return fmt.Errorf("the value %s: %w", res.Result.Value, err)
	}
	return nil
}

// docEval evaluates the JavaScript expression once in the target's document and returns
// its value.
func docEval[T any](d *docSession, expr string) T {
	d.t.Helper()
	cx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out T
	if err := d.evaluate(cx, expr, &out); err != nil {
		d.t.Fatalf("%s: %v", expr, err)
	}
	return out
}

// until waits until the JavaScript expression is truthy in the target's document.
func (d *docSession) until(expr string, timeout time.Duration) {
	d.t.Helper()
	docValue[any](d, expr, timeout)
}

// docValue waits until the JavaScript expression is truthy in the target's document and
// returns its value. The document evaluates it every 50 ms (a throw counts as not yet);
// when the document goes away under the wait (a navigation), the wait starts again in the
// next one.
func docValue[T any](d *docSession, expr string, timeout time.Duration) T {
	d.t.Helper()
	deadline := time.Now().Add(timeout)
	cx, cancel := context.WithDeadline(context.Background(), deadline.Add(10*time.Second))
	defer cancel()
	for {
		script := fmt.Sprintf(`new Promise((resolve, reject) => {
	const until = Date.now() + %d;
	let last;
	const tick = () => {
		try {
			const v = (%s);
			if (v) return resolve(v);
		} catch (e) { last = e; }
		if (Date.now() > until) return reject(new Error("timed out" + (last ? " (last: " + last + ")" : "")));
		setTimeout(tick, 50);
	};
	tick();
})`, max(time.Until(deadline).Milliseconds(), 0), expr)
		var out T
		err := d.evaluate(cx, script, &out)
		if err == nil {
			return out
		}
		var refused *cdproto.Error
		if !errors.As(err, &refused) || time.Now().After(deadline) {
			d.t.Fatalf("%s: %v", expr, err)
		}
		// The target refused the command: the document it ran in went away. The next one
		// may not be there yet, and no event says when it is (the session enables no
		// domain): ask again at the polling's pace.
		d.t.Logf("waiting across a navigation: %v", err)
		select {
		case <-time.After(50 * time.Millisecond):
		case <-cx.Done():
			d.t.Fatalf("%s: %v", expr, err)
		}
	}
}
