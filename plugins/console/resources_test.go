package console_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/internal/demoserver"
	"github.com/cordisgo/harness/plugins/console"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpresources"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// TestSubscribe: console/subscribe holds a subscription to a resource of a real server (the
// demo server over HTTP) while the stream is open: a value once subscribed, one per
// notifications/resources/updated (add_tool changes demo://config.json).
func TestSubscribe(t *testing.T) {
	h, closeDemo := demoserver.HandlerWithClose(demoserver.Options{})
	hs := httptest.NewServer(h)
	t.Cleanup(func() { closeDemo(); hs.Close() })
	root := ctxtest.New(t)
	ctxtest.MountActive(t, root, toolregistry.Plugin, nil)
	ctxtest.MountActive(t, root, mcpresources.Plugin, nil)
	ctxtest.MountActive(t, root, console.Plugin, nil)
	connected := make(chan struct{})
	stop, err := mcpclient.StatusEvent.On(root, func(st mcpclient.Status) error {
		if st.Server == "demo" && st.Phase == mcpclient.PhaseConnected {
			select {
			case <-connected:
			default:
				close(connected)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stop(context.Background()) }()
	ctxtest.Mount(t, root, mcpclient.Plugin, map[string]any{"serverName": "demo", "transport": "streamable-http", "url": hs.URL})
	select {
	case <-connected:
	case <-time.After(20 * time.Second):
		t.Fatal("the demo server did not connect")
	}

	m, ok := root.RemoteMethod("console/subscribe")
	if !ok || m.Stream == nil {
		t.Fatal("no console/subscribe stream")
	}
	scx, cancel := context.WithCancel(ctxtest.Wait(t))
	defer cancel()
	values := make(chan console.ResourceUpdate, 4)
	done := make(chan error, 1)
	go func() {
		done <- m.Stream(scx, json.RawMessage(`{"server":"demo","uri":"demo://config.json"}`), func(v any) error {
			values <- v.(console.ResourceUpdate)
			return nil
		})
	}()
	next := func(what string) console.ResourceUpdate {
		t.Helper()
		select {
		case v := <-values:
			return v
		case err := <-done:
			t.Fatalf("%s: the stream ended: %v", what, err)
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: nothing came", what)
		}
		panic("unreachable")
	}
	if v := next("subscribed"); !v.Subscribed || v.URI != "demo://config.json" || v.Server != "demo" {
		t.Fatalf("first value %+v", v)
	}
	if r, err := call[console.CallResult](t, root, "console/callTool", `{"tool":"mcp__demo__add_tool","args":{"name":"s1"}}`); err != nil || r.IsError {
		t.Fatalf("add_tool: %+v %v", r, err)
	}
	if v := next("update"); v.Subscribed || v.URI != "demo://config.json" {
		t.Fatalf("update %+v", v)
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the stream ended without its context's cause")
	}

	// A server nobody has is refused, naming it.
	err = m.Stream(ctxtest.Wait(t), json.RawMessage(`{"server":"nope","uri":"x://y"}`), func(any) error { return nil })
	if err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("unknown server: %v", err)
	}
}
