package mcpmanager

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/internal/oauthtest"
	"github.com/cordisgo/harness/mcpauth"
	"github.com/cordisgo/harness/plugins/mcpclient"
)

// A hosted server behind a real authorization server: the manager shows needs-auth (with
// the hint), the remote mcpManager/login stream reports the URL (the test browser follows
// it) and the live instance connects without a restart; mcpManager/logout forgets the
// token. No token appears in the views or the remote answers.
func TestRemoteLoginAndLogout(t *testing.T) {
	_, srv := oauthtest.StartProtected(t)
	store := mcpauth.NewFileStore(t.TempDir() + "/credentials.json")
	mcpclient.SetCredentialsStore(store)
	t.Cleanup(func() { mcpclient.SetCredentialsStore(nil) })

	settings := "servers:\n  hosted:\n    transport: streamable-http\n    url: " + srv.URL + "\n"
	h := newHost(t, hostOptions{settings: &settings})
	snap := h.waitStatus(StateNeedsAuth, "hosted")
	v, _ := find(snap, "hosted")
	if !strings.Contains(v.Error, "harness mcp login hosted") || v.Attempt != 0 {
		t.Fatalf("needs-auth view %+v", v)
	}
	starts := v.Starts

	cl := h.remoteClient()
	cx := ctxtest.Wait(t)
	var events []LoginEvent
	err := MethodLogin.Call(cx, cl, LoginParams{Name: "hosted", NoBrowser: true}, func(ev LoginEvent) error {
		events = append(events, ev)
		if ev.URL != "" {
			go func() { _ = oauthtest.Browse(cx, ev.URL) }()
		}
		return nil
	})
	if err != nil {
		t.Fatalf("login stream: %v", err)
	}
	if len(events) != 2 || events[0].URL == "" || !events[1].Done {
		t.Fatalf("login events %+v, want the URL then done", events)
	}
	snap = h.waitStatus(StateConnected, "hosted")
	if v, _ := find(snap, "hosted"); v.Starts != starts {
		t.Fatalf("the login restarted the instance (starts %d -> %d)", starts, v.Starts)
	}
	rec, err := store.Load(cx, mcpauth.Key{Server: srv.URL})
	if err != nil || rec == nil || rec.Token == nil {
		t.Fatalf("stored record %v %v", rec, err)
	}
	var list json.RawMessage
	if err := cl.Call(cx, "mcpManager/list", nil, &list); err != nil {
		t.Fatal(err)
	}
	all := string(list) + dump(events) + h.log.String()
	for _, secret := range []string{rec.Token.AccessToken, rec.Token.RefreshToken} {
		if secret != "" && strings.Contains(all, secret) {
			t.Fatalf("a credential leaked into the remote API or the log")
		}
	}

	if err := cl.Call(cx, "mcpManager/logout", NameParams{Name: "hosted"}, nil); err != nil {
		t.Fatalf("logout: %v", err)
	}
	if rec, _ := store.Load(cx, mcpauth.Key{Server: srv.URL}); rec != nil {
		t.Fatalf("logout left %v", rec)
	}
	if err := cl.Call(cx, "mcpManager/logout", NameParams{Name: "nope"}, nil); err == nil {
		t.Fatal("logout of an unknown server succeeded")
	}
}
