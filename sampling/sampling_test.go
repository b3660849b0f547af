package sampling_test

import (
	"context"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/sampling"
)

func answer(model string) sampling.Func {
	return func(context.Context, *sampling.Request) (*mcp.CreateMessageResult, error) { //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
		return &mcp.CreateMessageResult{Model: model, Role: "assistant", Content: &mcp.TextContent{Text: "ok"}}, nil //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
	}
}

func TestSample(t *testing.T) {
	root := ctxtest.New(t)
	if sampling.Available(root) {
		t.Fatal("available without a sampler")
	}
	if _, err := sampling.Sample(context.Background(), root, &sampling.Request{}); !errors.Is(err, sampling.ErrNoSampler) {
		t.Fatalf("error %v", err)
	}
	if _, err := sampling.Provide(root, "b", answer("b")); err != nil {
		t.Fatal(err)
	}
	if _, err := sampling.Provide(root, "a", answer("a")); err != nil {
		t.Fatal(err)
	}
	res, err := sampling.Sample(context.Background(), root, &sampling.Request{})
	if err != nil || res.Model != "a" {
		t.Fatalf("result %+v, %v; want the first sampler by name", res, err)
	}
	// A call's own sampler answers first; when it passes, the scoped one does.
	callcx := sampling.WithSampler(context.Background(), answer("mine"))
	if res, _ := sampling.Sample(context.Background(), root, &sampling.Request{Call: callcx}); res.Model != "mine" {
		t.Fatalf("model %s, want mine", res.Model)
	}
	pass := sampling.WithSampler(context.Background(), sampling.Func(func(context.Context, *sampling.Request) (*mcp.CreateMessageResult, error) { //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
		return nil, sampling.ErrPass
	}))
	if res, _ := sampling.Sample(context.Background(), root, &sampling.Request{Call: pass}); res.Model != "a" {
		t.Fatalf("model %s, want a", res.Model)
	}
}

// A scoped sampler that passes (a gateway's, there to have the capability advertised) lets
// the next one by name answer; when every sampler passes, nobody answered.
func TestSamplePassingScopedSampler(t *testing.T) {
	root := ctxtest.New(t)
	passing := sampling.Func(func(context.Context, *sampling.Request) (*mcp.CreateMessageResult, error) { //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
		return nil, sampling.ErrPass
	})
	if _, err := sampling.Provide(root, "a-gateway", passing); err != nil {
		t.Fatal(err)
	}
	if _, err := sampling.Sample(context.Background(), root, &sampling.Request{}); !errors.Is(err, sampling.ErrNoSampler) {
		t.Fatalf("error %v, want ErrNoSampler", err)
	}
	if _, err := sampling.Provide(root, "b-model", answer("b")); err != nil {
		t.Fatal(err)
	}
	if res, err := sampling.Sample(context.Background(), root, &sampling.Request{}); err != nil || res.Model != "b" {
		t.Fatalf("result %+v, %v; want the sampler after the passing one", res, err)
	}
}

// An offer declares sampling (Available) before any sampler answers: a request nobody
// answers fails with ErrNoSampler, a call's own sampler answers it, and ChangedEvent tells
// the clients each time a sampler or an offer comes or goes.
func TestOffer(t *testing.T) {
	root := ctxtest.New(t)
	changes := ctxtest.Record(t, root, sampling.ChangedEvent)
	dispose, err := sampling.Offer(root, "host")
	if err != nil {
		t.Fatal(err)
	}
	if !sampling.Available(root) {
		t.Fatal("an offer does not make sampling available")
	}
	if _, err := sampling.Sample(context.Background(), root, &sampling.Request{}); !errors.Is(err, sampling.ErrNoSampler) {
		t.Fatalf("error %v, want ErrNoSampler", err)
	}
	callcx := sampling.WithSampler(context.Background(), answer("session"))
	if res, err := sampling.Sample(context.Background(), root, &sampling.Request{Call: callcx}); err != nil || res.Model != "session" {
		t.Fatalf("result %+v, %v; want the call's sampler", res, err)
	}
	if err := dispose(context.Background()); err != nil {
		t.Fatal(err)
	}
	if sampling.Available(root) {
		t.Fatal("available after the offer went")
	}
	if ch := changes.Events(); len(ch) != 2 || ch[0].Name != "host" || ch[1].Name != "host" {
		t.Fatalf("changes %+v, want the offer coming and going", ch)
	}
}

// A sampler that panics fails the request with a *ctx.PanicError; the process goes on.
func TestPanickingSampler(t *testing.T) {
	root := ctxtest.New(t)
	buggy := sampling.Func(func(context.Context, *sampling.Request) (*mcp.CreateMessageResult, error) { //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
		panic("a sampler's bug")
	})
	if _, err := sampling.Provide(root, "buggy", buggy); err != nil {
		t.Fatal(err)
	}
	if _, err := sampling.Sample(context.Background(), root, &sampling.Request{}); !errors.As(err, new(*ctx.PanicError)) {
		t.Fatalf("error %v, want the panic", err)
	}
	if _, err := sampling.Sample(context.Background(), root, &sampling.Request{Call: sampling.WithSampler(context.Background(), buggy)}); !errors.As(err, new(*ctx.PanicError)) {
		t.Fatalf("a call's own sampler: error %v, want the panic", err)
	}
}
