package ctxbench

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/cordisgo/harness/ctx"
)

const (
	mountCount     = 10_000
	emitListeners  = 100
	emitCount      = 1_000_000
	injectConsumer = 1_000
)

// BenchmarkWorkloadMount mounts 10,000 plugins that each register one effect, waits until
// all are active, then disposes them all and waits for the disposals.
func BenchmarkWorkloadMount(b *testing.B) {
	var applied, disposed atomic.Int64
	def := ctx.Define(ctx.Meta{Name: "effectful"}, func(c *ctx.Context, _ struct{}) error {
		applied.Add(1)
		_, err := c.Defer("one", func(context.Context) error { disposed.Add(1); return nil })
		return err
	})
	bgcx := context.Background()
	for b.Loop() {
		b.StopTimer()
		root := ctx.New(ctx.Options{})
		applied.Store(0)
		disposed.Store(0)
		scopes := make([]*ctx.Scope, mountCount)
		b.StartTimer()
		for i := range scopes {
			s, err := root.Plugin(def, nil)
			if err != nil {
				b.Fatal(err)
			}
			scopes[i] = s
		}
		if err := root.Settle(bgcx); err != nil {
			b.Fatal(err)
		}
		for _, s := range scopes {
			if err := s.Dispose(bgcx); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		if applied.Load() != mountCount || disposed.Load() != mountCount || root.Registry().Len() != 0 {
			b.Fatalf("applied %d disposed %d registry %d", applied.Load(), disposed.Load(), root.Registry().Len())
		}
		_ = root.Scope().Dispose(bgcx)
		b.StartTimer()
	}
}

var tick = ctx.NewEvent[int]("bench/tick")

// BenchmarkWorkloadEmit emits one event to 100 listeners 1,000,000 times.
func BenchmarkWorkloadEmit(b *testing.B) {
	bgcx := context.Background()
	for b.Loop() {
		b.StopTimer()
		root := ctx.New(ctx.Options{})
		var sum int64
		for range emitListeners {
			if _, err := tick.On(root, func(n int) error { sum += int64(n); return nil }); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		for range emitCount {
			if err := tick.Emit(root, 1); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		if sum != emitListeners*emitCount {
			b.Fatalf("sum %d", sum)
		}
		_ = root.Scope().Dispose(bgcx)
		b.StartTimer()
	}
}

type token struct{ n int }

var svcKey = ctx.NewKey[*token]("svc")

// BenchmarkWorkloadInject: 1,000 pending dependents of one service (setup not timed); a
// provider appears and all of them become active; the provider leaves and all of them
// unload.
func BenchmarkWorkloadInject(b *testing.B) {
	var applied atomic.Int64
	consumer := ctx.Define(ctx.Meta{Name: "consumer", Inject: []ctx.Dependency{svcKey}}, func(c *ctx.Context, _ struct{}) error {
		if svcKey.Use(c) == nil {
			panic("no service")
		}
		applied.Add(1)
		return nil
	})
	provider := ctx.Define(ctx.Meta{Name: "provider"}, func(c *ctx.Context, _ struct{}) error {
		_, err := svcKey.Provide(c, &token{1})
		return err
	})
	bgcx := context.Background()
	for b.Loop() {
		b.StopTimer()
		root := ctx.New(ctx.Options{})
		applied.Store(0)
		consumers := make([]*ctx.Scope, injectConsumer)
		for i := range consumers {
			consumers[i], _ = root.Plugin(consumer, nil)
		}
		_ = root.Settle(bgcx)
		b.StartTimer()
		p, err := root.Plugin(provider, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := root.Settle(bgcx); err != nil {
			b.Fatal(err)
		}
		if err := p.Dispose(bgcx); err != nil {
			b.Fatal(err)
		}
		if err := root.Settle(bgcx); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if applied.Load() != injectConsumer {
			b.Fatalf("applied %d", applied.Load())
		}
		for _, c := range consumers {
			if c.State() != ctx.Pending {
				b.Fatalf("consumer %v", c.State())
			}
		}
		_ = root.Scope().Dispose(bgcx)
		b.StartTimer()
	}
}
