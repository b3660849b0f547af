package toolregistry

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cordisgo/harness/ctx/ctxtest"
)

// One timer serves calls with different timeouts: each call ends at its own deadline, as a
// context.WithTimeout context would, and a call that returns first leaves no trace.
func TestDeadlines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var d deadlines
		start := time.Now()
		begin := func(timeout time.Duration) *callContext {
			c := new(callContext)
			d.start(c, context.Background(), timeout)
			return c
		}
		long := begin(5 * time.Second)
		short := begin(time.Second) // earlier than the armed timer
		mid := begin(3 * time.Second)
		done := begin(2 * time.Second)
		d.stop(done) // returns before its deadline
		if !errors.Is(done.Err(), context.Canceled) || !errors.Is(context.Cause(done), context.Canceled) {
			t.Fatalf("stopped call: err %v, cause %v", done.Err(), context.Cause(done))
		}
		childcx, cancelChild := context.WithCancel(short)
		defer cancelChild()

		if dl, ok := mid.Deadline(); !ok || !dl.Equal(start.Add(3*time.Second)) {
			t.Fatalf("Deadline() = %v, %v", dl, ok)
		}
		for _, step := range []struct {
			c    *callContext
			want time.Duration
		}{{short, time.Second}, {mid, 3 * time.Second}, {long, 5 * time.Second}} {
			<-step.c.Done()
			if got := time.Since(start); got != step.want {
				t.Fatalf("a call with a %v timeout ended after %v", step.want, got)
			}
			if !errors.Is(step.c.Err(), context.DeadlineExceeded) || !errors.Is(context.Cause(step.c), errTimeout) {
				t.Fatalf("expired call: err %v, cause %v", step.c.Err(), context.Cause(step.c))
			}
		}
		// A derived context ends with the call, its cause saying why.
		<-childcx.Done()
		if !errors.Is(context.Cause(childcx), context.DeadlineExceeded) {
			t.Fatalf("derived context: cause %v", context.Cause(childcx))
		}
		for _, c := range []*callContext{short, mid, long} {
			d.stop(c) // after expiry: a no-op
		}
		if len(d.heap) != 0 {
			t.Fatalf("%d deadlines left", len(d.heap))
		}
	})
}

// A tool sees its deadline and, once it has passed, context.DeadlineExceeded.
func TestDeadlineSeenByTool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var d deadlines
		e := &entry{timeout: 2 * time.Second, tool: Tool{Execute: func(cx context.Context, _ *Call) (*Result, error) {
			if dl, ok := cx.Deadline(); !ok || time.Until(dl) != 2*time.Second {
				t.Errorf("Deadline() = %v, %v", dl, ok)
			}
			<-cx.Done()
			return nil, cx.Err()
		}}}
		o := &Config{}
		o.Default()
		_, terr := dispatch(&d, new(callContext), context.Background(), e, &Call{Tool: "slow"}, o)
		if terr == nil || terr.Code != CodeTimeout || !errors.Is(terr, context.DeadlineExceeded) {
			t.Fatalf("dispatch: %v", terr)
		}
	})
}

// A tool that never waits on its context still sees the call end: the caller's
// cancellation, the registry's timeout and Call.Cancel all show in Err, and a Done taken
// afterwards is closed at once with the cause.
func TestCallContextWithoutDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bcx, cancelBase := context.WithCancelCause(context.Background())
		var d deadlines
		c := new(callContext)
		d.start(c, bcx, time.Second)
		if c.Err() != nil || c.cause() != nil || c.std.Load() != nil {
			t.Fatalf("a fresh call: err %v, cause %v, standard context made %v", c.Err(), c.cause(), c.std.Load() != nil)
		}
		gone := errors.New("caller gone")
		cancelBase(gone)
		if !errors.Is(c.Err(), context.Canceled) || !errors.Is(c.cause(), gone) {
			t.Fatalf("caller cancelled: err %v, cause %v", c.Err(), c.cause())
		}
		<-c.Done()
		if !errors.Is(context.Cause(c), gone) {
			t.Fatalf("Done after the caller's end: cause %v", context.Cause(c))
		}
		d.stop(c)

		c = new(callContext)
		d.start(c, context.Background(), time.Second)
		time.Sleep(time.Second) // synctest: the fake clock
		synctest.Wait()
		if !errors.Is(c.Err(), context.DeadlineExceeded) || !errors.Is(c.cause(), errTimeout) {
			t.Fatalf("timed out: err %v, cause %v", c.Err(), c.cause())
		}
		childcx, cancelChild := context.WithCancel(c)
		defer cancelChild()
		<-childcx.Done()
		if !errors.Is(context.Cause(childcx), errTimeout) {
			t.Fatalf("derived after the timeout: cause %v", context.Cause(childcx))
		}
		d.stop(c)

		c = new(callContext)
		c.init(context.Background())
		call := &Call{cc: c}
		broken := errors.New("connection closed")
		call.Cancel(broken)
		call.Cancel(errors.New("second"))
		if !errors.Is(c.Err(), context.Canceled) || !errors.Is(c.cause(), broken) {
			t.Fatalf("Call.Cancel: err %v, cause %v", c.Err(), c.cause())
		}
		<-c.Done()
		if !errors.Is(context.Cause(c), broken) {
			t.Fatalf("Done after Call.Cancel: cause %v", context.Cause(c))
		}
	})
}

// A call that never waits on its context registers nothing with the caller's: the caller's
// context has no child left, during the call or after it.
func TestCallContextLazy(t *testing.T) {
	var d deadlines
	c := new(callContext)
	d.start(c, context.Background(), time.Minute)
	if c.std.Load() != nil {
		t.Fatal("the standard context was made before anyone waited")
	}
	_ = c.Done()
	if c.std.Load() == nil {
		t.Fatal("Done made no standard context")
	}
	d.stop(c)
	select {
	case <-c.Done():
	default:
		t.Fatal("the call's end did not close Done")
	}
}

// A tool that waited on its context may have derived contexts that outlive the call and
// read the call's values through it: its Call and context are never reused, and read after
// any number of later calls they still say the call ended, with its ID. (Those of a tool
// that never waited are reused; TestExecuteAllocations counts them.)
func TestWaitedContextIsNotReused(t *testing.T) {
	root := ctxtest.New(t)
	reg := ctxtest.MountService(t, root, Plugin, nil, Key)
	var callcx context.Context
	var keptCall *Call
	var keptcx context.Context // derived from the call's context, as a tool's request would be
	for _, tl := range []Tool{
		{Name: "waits", Execute: func(cx context.Context, call *Call) (*Result, error) {
			if callcx == nil {
				derivedcx, cancel := context.WithCancel(cx)
				defer cancel()
				callcx, keptCall, keptcx = cx, call, derivedcx
			}
			_ = cx.Done()
			return &Result{}, nil
		}},
		{Name: "noop", Execute: func(context.Context, *Call) (*Result, error) { return &Result{}, nil }},
	} {
		if _, err := reg.Register(root, tl); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 200 {
		name := "noop"
		if i%2 == 0 {
			name = "waits"
		}
		if _, err := reg.Execute(root, root, name, nil, ExecOptions{CallID: fmt.Sprintf("c%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if keptCall.ID != "c0" || keptCall.Tool != "waits" {
		t.Fatalf("the kept Call became another call's: id %q, tool %q", keptCall.ID, keptCall.Tool)
	}
	for what, cx := range map[string]context.Context{"the call's context": callcx, "a context derived from it": keptcx} {
		select {
		case <-cx.Done():
		default:
			t.Fatalf("%s is live again after later calls", what)
		}
		if !errors.Is(cx.Err(), context.Canceled) {
			t.Fatalf("%s: err %v, want context.Canceled", what, cx.Err())
		}
	}
}
