package mcpmanager

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/remote"
	"github.com/cordisgo/harness/testkit/mcptest"
)

// remoteClient mounts the remote plugin in h's tree and returns a client with its token.
func (h *host) remoteClient() *remote.Client {
	h.t.Helper()
	ctxtest.MountActive(h.t, h.root, remote.Plugin, map[string]any{"tokenFile": filepath.Join(h.dir, "remote.token")})
	srv, ok := remote.Key.Get(h.root)
	if !ok {
		h.t.Fatal("remote API not provided")
	}
	return remote.NewClient(srv.URL(), srv.Token())
}

// The remote API end to end over real HTTP: list, watch (a stream that follows changes and
// ends when the client leaves), restart, probe, error codes and auth refusals.
func TestRemoteAPI(t *testing.T) {
	t.Parallel()
	const secret = "REMOTESECRET-5e6f7a8b9c"
	settings := "servers:\n" + stdioEntryEnv(t, "a", "normal", map[string]string{mcptest.TokenEnv: "${secret:tok}"}, "") +
		stdioEntry(t, "off", "normal", "enabled: false")
	h := newHost(t, hostOptions{settings: &settings, creds: map[string]string{"tok": secret}})
	cl := h.remoteClient()
	h.waitStatus(StateConnected, "a")
	cx := ctxtest.Wait(t)
	var bodies []string

	methods, err := cl.Methods(cx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range methods {
		got = append(got, m.Name+":"+m.Kind)
	}
	for _, want := range []string{"mcpManager/list:call", "mcpManager/watch:stream", "mcpManager/restart:call", "mcpManager/probe:call"} {
		if !slices.Contains(got, want) {
			t.Fatalf("methods %v lack %s", got, want)
		}
	}

	var raw json.RawMessage
	if err := cl.Call(cx, "mcpManager/list", nil, &raw); err != nil {
		t.Fatal(err)
	}
	bodies = append(bodies, string(raw))
	var snap Snapshot
	if err := json.Unmarshal(raw, &snap); err != nil {
		t.Fatal(err)
	}
	if v, ok := find(snap, "a"); !ok || v.Status != StateConnected || !strings.HasSuffix(snap.Settings.File, "mcp-servers.yaml") {
		t.Fatalf("list: %s", raw)
	}

	// watch: the current list, then the list after a change; leaving ends the call.
	wcx, stop := context.WithCancel(cx)
	stream := make(chan Snapshot, 16)
	streamErr := make(chan error, 1)
	go func() {
		streamErr <- cl.Stream(wcx, "mcpManager/watch", nil, func(m json.RawMessage) error {
			var s Snapshot
			if err := json.Unmarshal(m, &s); err != nil {
				return err
			}
			bodies = append(bodies, string(m))
			stream <- s
			return nil
		})
	}()
	if first := <-stream; len(first.Servers) != 2 {
		t.Fatalf("first streamed list: %s", dump(first))
	}
	h.write(settings + stdioEntry(t, "b", "normal", ""))
	for s := range stream {
		if v, ok := find(s, "b"); ok && v.Status == StateConnected {
			break
		}
	}
	h.m.mu.Lock()
	watching := len(h.m.watchers)
	h.m.mu.Unlock()
	if watching != 1 {
		t.Fatalf("%d watchers while one stream is open", watching)
	}
	stop()
	if err := <-streamErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("stream after leaving: %v", err)
	}
	// The host notices the client left and ends its subscription.
	deadline := time.Now().Add(ctxtest.Timeout)
	for {
		h.m.mu.Lock()
		watching = len(h.m.watchers)
		h.m.mu.Unlock()
		if watching == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the host kept the watch subscription of a client that left")
		}
		time.Sleep(5 * time.Millisecond) // polling a condition, not waiting for a duration
	}

	// restart answers the server's view once the new instance is mounted.
	var rr RestartResult
	if err := cl.Call(cx, "mcpManager/restart", NameParams{Name: "a"}, &rr); err != nil {
		t.Fatal(err)
	}
	if rr.Server.Name != "a" || rr.Server.Starts != 2 {
		t.Fatalf("restart: %s", dump(rr))
	}

	// probe, on a disabled entry.
	var pr ProbeResult
	if err := cl.Call(cx, "mcpManager/probe", ProbeParams{Name: "off", Options: ProbeOptions{MaxTools: 1}}, &pr); err != nil {
		t.Fatal(err)
	}
	if !pr.OK() || len(pr.Tools) != 1 || !pr.ToolsTruncated || pr.Cleanup.Outcome != "closed" {
		t.Fatalf("probe: %s", dump(pr))
	}
	if err := cl.Call(cx, "mcpManager/probe", ProbeParams{Name: "a"}, &raw); err != nil {
		t.Fatal(err)
	}
	bodies = append(bodies, string(raw))

	// Errors carry stable codes and statuses.
	for _, tc := range []struct {
		method string
		params any
		code   remote.Code
		status int
	}{
		{"mcpManager/restart", NameParams{Name: "nope"}, CodeNotFound, http.StatusNotFound},
		{"mcpManager/restart", NameParams{Name: "off"}, CodeConflict, http.StatusConflict},
		{"mcpManager/restart", map[string]any{}, CodeBadRequest, http.StatusBadRequest},
		{"mcpManager/restart", map[string]any{"name": "a", "extra": 1}, CodeBadRequest, http.StatusBadRequest},
		{"mcpManager/probe", ProbeParams{Name: "a", Options: ProbeOptions{BudgetMs: -5}}, CodeBadRequest, http.StatusBadRequest},
		{"mcpManager/probe", ProbeParams{Name: "nope"}, CodeNotFound, http.StatusNotFound},
	} {
		err := cl.Call(cx, tc.method, tc.params, nil)
		var re *remote.Error
		if !errors.As(err, &re) || re.Code != tc.code || re.Status != tc.status {
			t.Fatalf("%s %v: %v (want %s %d)", tc.method, tc.params, err, tc.code, tc.status)
		}
	}
	// Parameters are decoded strictly, once: an unknown or missing key is named.
	for _, tc := range []struct {
		params any
		want   string
	}{
		{map[string]any{"name": "a", "nmae": "b"}, `remote method "mcpManager/restart": invalid params: key "nmae": unknown key (did you mean "name"?)`},
		{map[string]any{}, `key "name": required`},
	} {
		err := cl.Call(cx, "mcpManager/restart", tc.params, nil)
		if re, ok := errors.AsType[*remote.Error](err); !ok || re.Code != remote.CodeBadRequest || !strings.Contains(re.Message, tc.want) {
			t.Fatalf("restart %v: %v, want bad_request %q", tc.params, err, tc.want)
		}
	}

	// Auth refusals: a wrong or missing token is 401, for calls and streams alike.
	for _, bad := range []*remote.Client{remote.NewClient(cl.BaseURL, strings.Repeat("0", 64)), remote.NewClient(cl.BaseURL, "")} {
		err := bad.Call(cx, "mcpManager/list", nil, nil)
		var re *remote.Error
		if !errors.As(err, &re) || re.Code != remote.CodeUnauthorized || re.Status != http.StatusUnauthorized {
			t.Fatalf("bad token list: %v", err)
		}
		err = bad.Stream(cx, "mcpManager/watch", nil, func(json.RawMessage) error { return nil })
		if !errors.As(err, &re) || re.Code != remote.CodeUnauthorized {
			t.Fatalf("bad token watch: %v", err)
		}
	}

	// Disposing the manager ends open streams with code unavailable.
	stream2 := make(chan error, 1)
	opened := make(chan struct{}, 1)
	go func() {
		stream2 <- cl.Stream(cx, "mcpManager/watch", nil, func(json.RawMessage) error {
			select {
			case opened <- struct{}{}:
			default:
			}
			return nil
		})
	}()
	<-opened
	if err := h.scope.Dispose(cx); err != nil {
		t.Fatal(err)
	}
	var re *remote.Error
	if err := <-stream2; !errors.As(err, &re) || re.Code != CodeUnavailable {
		t.Fatalf("stream at the manager's disposal: %v", err)
	}
	for _, b := range bodies {
		if strings.Contains(b, secret) {
			t.Fatalf("a remote answer carries the secret: %s", b)
		}
	}
}
