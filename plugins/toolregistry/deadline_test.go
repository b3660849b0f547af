package toolregistry

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
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
