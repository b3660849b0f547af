package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/gateway"
)

// TestSessions: the gateway records each downstream session (client, route, start, last
// activity) and its requests (method, target, status, duration), tells of every change
// (SessionsEvent, the gateway/sessions stream) and keeps an ended session, with no token,
// session id or argument value anywhere.
func TestSessions(t *testing.T) {
	f := demoFleet(t)
	root := f.root
	stop, err := f.gw.ExposeRemote(root)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stop(context.Background()) }()
	m, ok := root.RemoteMethod(gateway.MethodSessions.Name())
	if !ok || m.Stream == nil {
		t.Fatal("no gateway/sessions stream")
	}
	scx, cancel := context.WithCancel(t.Context())
	snaps := make(chan gateway.SessionsSnapshot, 64)
	done := make(chan error, 1)
	go func() {
		done <- m.Stream(scx, nil, func(v any) error {
			snaps <- v.(gateway.SessionsSnapshot)
			return nil
		})
	}()
	defer func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("the sessions stream ended with %v, want its cancellation", err)
		}
	}()
	await := func(what string, ok func(gateway.SessionsSnapshot) bool) gateway.SessionsSnapshot {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case s := <-snaps:
				if ok(s) {
					return s
				}
			case <-deadline:
				t.Fatalf("%s: never seen; now %+v", what, f.gw.Sessions())
			}
		}
	}
	await("the first snapshot", func(s gateway.SessionsSnapshot) bool { return len(s.Sessions) == 0 })

	changed := make(chan string, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "2.5"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- "tools":
			default:
			}
		}})
	cs := dial(t, client, f.url+"/mcp/servers/demo", nil)
	waitTools(t, cs, changed, "echo")
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "secret-argument"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "fail", Arguments: map[string]any{"message": "boom"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "demo://notes/7"}); err != nil {
		t.Fatal(err)
	}
	s := await("the calls", func(s gateway.SessionsSnapshot) bool {
		return len(s.Sessions) == 1 && len(s.Sessions[0].Recent) > 0 && s.Sessions[0].Recent[0].Target == "demo://notes/7"
	})
	se := s.Sessions[0]
	if se.ID != 1 || se.Route != "/mcp/servers/demo" || se.Client != "test-client" || se.ClientVersion != "2.5" || se.ProtocolVersion == "" ||
		se.Started.IsZero() || se.LastActive.Before(se.Started) || !se.Ended.IsZero() || len(se.InFlight) != 0 {
		t.Fatalf("session %+v", se)
	}
	got := map[string]string{}
	for _, c := range se.Recent {
		got[c.Method+" "+c.Target] = c.Status
	}
	for call, status := range map[string]string{"tools/call echo": gateway.CallOK, "tools/call fail": gateway.CallError,
		"resources/read demo://notes/7": gateway.CallOK, "tools/list ": gateway.CallOK} {
		if got[call] != status {
			t.Errorf("%s: status %q, want %q (recent: %v)", call, got[call], status, got)
		}
	}
	b, _ := json.Marshal(s)
	for _, secret := range []string{token, "secret-argument", "boom", cs.ID()} {
		if strings.Contains(string(b), secret) {
			t.Errorf("the snapshot shows %q: %s", secret, b)
		}
	}

	// A call in flight, cancelled by the client; then the session's end.
	ccx, cancelCall := context.WithCancel(t.Context())
	callDone := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ccx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 60000}})
		callDone <- err
	}()
	await("slow in flight", func(s gateway.SessionsSnapshot) bool {
		return len(s.Sessions) == 1 && len(s.Sessions[0].InFlight) == 1 && s.Sessions[0].InFlight[0].Target == "slow"
	})
	cancelCall()
	t.Logf("the cancelled call returned %v", <-callDone)
	await("slow cancelled", func(s gateway.SessionsSnapshot) bool {
		r := s.Sessions[0].Recent
		return len(s.Sessions[0].InFlight) == 0 && r[0].Target == "slow" && r[0].Status == gateway.CallCancelled
	})
	_ = cs.Close()
	s = await("the end", func(s gateway.SessionsSnapshot) bool { return len(s.Sessions) == 1 && !s.Sessions[0].Ended.IsZero() })
	if se := s.Sessions[0]; len(se.InFlight) != 0 || se.Requests != 5 {
		t.Fatalf("ended session %+v", se)
	}
}
