package mcpclient

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/mcpresources"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/testkit/mcptest"
)

// subEnv is a tree with the resource service and a client "s" of a subscribable test server
// (ss, dialled through m) on protocol ("" pins 2025-11-25; "auto" negotiates 2026-07-28,
// where subscriptions are listen streams), recording the resource update events.
type subEnv struct {
	*env
	m       *memServer
	svc     *mcpresources.Service
	ss      *mcptest.Subscribable
	updates *ctxtest.Recorder[ResourceChange]
}

func newSubEnv(t *testing.T, subscribe bool, protocol string) *subEnv {
	t.Helper()
	e := &subEnv{env: newEnv(t), ss: mcptest.NewSubscribable(subscribe)}
	ctxtest.MountActive(t, e.root, mcpresources.Plugin, nil)
	var ok bool
	if e.svc, ok = mcpresources.Key.Get(e.root); !ok {
		t.Fatal("no mcpResources service")
	}
	e.updates = ctxtest.Record(t, e.root, ResourceUpdatedEvent)
	cfg := memConfig("s")
	cfg.ProtocolVersion = protocol
	cfg.Reconnect.InitialDelayMs = 1
	e.m = newMemServer(e.ss.Server)
	e.mount(nil, cfg, &hooks{dial: e.m.dial})
	st := e.st.waitPhase(t, "s", PhaseConnected)
	if protocol == ProtocolAuto && st.ProtocolVersion < newProtocol {
		t.Fatalf("negotiated %s, want the listen-stream protocol %s", st.ProtocolVersion, newProtocol)
	}
	ctxtest.Settle(t, e.root) // the provider's sub-scope has loaded
	return e
}

// eachProtocol runs test on a subscribable server with both protocols.
func eachProtocol(t *testing.T, test func(t *testing.T, e *subEnv)) {
	for _, protocol := range []string{"", ProtocolAuto} {
		t.Run("protocol="+protocol, func(t *testing.T) { test(t, newSubEnv(t, true, protocol)) })
	}
}

func TestSubscriptionRefcount(t *testing.T) {
	eachProtocol(t, func(t *testing.T, e *subEnv) {
		u, ok := LookupUpstream(e.root, "s")
		if !ok {
			t.Fatal("no upstream s")
		}
		cx := ctxtest.Wait(t)
		first, err := e.svc.Subscribe(cx, e.root, "s", "sub://a")
		must(t, err)
		if got := <-e.ss.Subscribed; got != "sub://a" {
			t.Fatalf("server saw a subscription of %q", got)
		}
		second, err := u.Subscribe(cx, "sub://a")
		must(t, err)
		// Subscribing is a request the server has answered when Subscribe returns: a
		// second one would have been counted.
		if n, _ := e.ss.Counts(); n != 1 {
			t.Fatalf("two subscribers sent %d subscriptions, want one", n)
		}

		e.ss.Update(t, "sub://a")
		ev := e.updates.WaitFor(t, func(evs []ResourceChange) bool { return len(evs) > 0 })[0]
		if ev.Server != "s" || ev.URI != "sub://a" || ev.Scope == nil {
			t.Fatalf("update event %+v", ev)
		}

		// One reference left: still subscribed, so updates still come.
		must(t, first.Close())
		must(t, first.Close()) // idempotent: it never releases the other reference
		e.ss.Update(t, "sub://a")
		e.updates.WaitFor(t, func(evs []ResourceChange) bool { return len(evs) > 1 })
		if _, n := e.ss.Counts(); n != 0 {
			t.Fatalf("closing one of two references sent %d unsubscriptions", n)
		}

		must(t, second.Close())
		if got := <-e.ss.Unsubscribed; got != "sub://a" {
			t.Fatalf("server saw an unsubscription of %q", got)
		}

		// A fresh subscriber subscribes again.
		third, err := e.svc.Subscribe(cx, e.root, "s", "sub://a")
		must(t, err)
		<-e.ss.Subscribed
		must(t, third.Close())
		<-e.ss.Unsubscribed
	})
}

// A reconnect (a new session) subscribes again to every URI that still has subscribers;
// released ones are not.
func TestSubscriptionResentAfterReconnect(t *testing.T) {
	eachProtocol(t, func(t *testing.T, e *subEnv) {
		cx := ctxtest.Wait(t)
		a, err := e.svc.Subscribe(cx, e.root, "s", "sub://a")
		must(t, err)
		defer func() { _ = a.Close() }()
		b, err := e.svc.Subscribe(cx, e.root, "s", "sub://b")
		must(t, err)
		<-e.ss.Subscribed
		<-e.ss.Subscribed
		must(t, b.Close())
		<-e.ss.Unsubscribed

		e.m.crash()
		if got := <-e.ss.Subscribed; got != "sub://a" {
			t.Fatalf("after the reconnect the server saw a subscription of %q, want sub://a", got)
		}
		e.st.waitFor(t, "s", "reconnected", func(st Status) bool { return st.Phase == PhaseConnected && e.m.dials.Load() == 2 })
		e.ss.Update(t, "sub://a")
		e.updates.WaitFor(t, func(evs []ResourceChange) bool { return len(evs) > 0 && evs[0].URI == "sub://a" })
		if n, _ := e.ss.Counts(); n != 3 {
			t.Fatalf("%d subscriptions, want a, b, then a again", n)
		}
	})
}

// A server without resources.subscribe gets a clear error naming it, and the resource list
// changes it announces are events.
func TestSubscribeUnsupported(t *testing.T) {
	e := newSubEnv(t, false, "")
	changes := ctxtest.Record(t, e.root, ResourceListChangedEvent)
	_, err := e.svc.Subscribe(ctxtest.Wait(t), e.root, "s", "sub://a")
	if !errors.Is(err, mcpresources.ErrNoSubscribe) || !strings.Contains(err.Error(), `mcp server "s"`) {
		t.Fatalf("err = %v, want ErrNoSubscribe naming the server", err)
	}
	_, err = e.svc.Subscribe(ctxtest.Wait(t), e.root, "nope", "sub://a")
	if !errors.Is(err, mcpresources.ErrUnknownServer) || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("err = %v, want ErrUnknownServer", err)
	}

	e.ss.Server.AddResource(&mcp.Resource{URI: "sub://c", Name: "c"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	})
	ev := changes.WaitFor(t, func(evs []ResourceChange) bool { return len(evs) > 0 })[0]
	if ev.Server != "s" || ev.URI != "" {
		t.Fatalf("list change event %+v", ev)
	}
}

// TestResourceProvider (item 8): the server's resources are reachable through the shared
// resource tools while the client lives; the provider goes with the client.
func TestResourceProvider(t *testing.T) {
	e := newEnv(t)
	ctxtest.MountActive(t, e.root, mcpresources.Plugin, nil)
	s := e.mount(nil, memConfig("srv"), &hooks{dial: newMemServer(demo()).dial})
	ctxtest.Settle(t, e.root)
	if got := e.mustCall(nil, mcpresources.ToolList, `{"server":"srv"}`).Text(); !strings.Contains(got, "demo://readme") {
		t.Errorf("list: %q", got)
	}
	if got := e.mustCall(nil, mcpresources.ToolTemplates, `{"server":"srv"}`).Text(); !strings.Contains(got, "demo://notes/{id}") {
		t.Errorf("templates: %q", got)
	}
	if got := e.mustCall(nil, mcpresources.ToolRead, `{"server":"srv","uri":"demo://notes/7"}`).Text(); got == "" {
		t.Errorf("read: %q", got)
	}
	must(t, s.Dispose(ctxtest.Wait(t)))
	if _, err := e.call(nil, mcpresources.ToolList, `{"server":"srv"}`); !errors.Is(err, toolregistry.ErrUnknownTool) {
		t.Errorf("resource tools after the last provider left: %v", err)
	}
}

// TestResourcesWithoutCapability (item 8): a server without resources lists nothing and
// refuses reads; a disconnected one fails fast.
func TestResourcesWithoutCapability(t *testing.T) {
	e := newEnv(t)
	srv := bareServer()
	rawTool(srv, &mcp.Tool{Name: "t"}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return textResult("t"), nil
	})
	var sup *supervisor
	e.mount(nil, memConfig("srv"), &hooks{dial: newMemServer(srv).dial, observe: func(s *supervisor) { sup = s }})
	p := resourceProvider{sup}
	raw, err := p.Request(e.root, mcpresources.Request{Method: mcpresources.MethodList}, mcpresources.CallerInfo{})
	if err != nil || string(raw) != `{"resources":[]}` {
		t.Errorf("list: %s %v", raw, err)
	}
	if _, err := p.Request(e.root, mcpresources.Request{Method: mcpresources.MethodRead, URI: "x://y"}, mcpresources.CallerInfo{}); err == nil ||
		!strings.Contains(err.Error(), "does not offer resources") {
		t.Errorf("read: %v", err)
	}
	sup.live.Store(nil)
	if _, err := p.Request(e.root, mcpresources.Request{Method: mcpresources.MethodList}, mcpresources.CallerInfo{}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("disconnected: %v", err)
	}
}
