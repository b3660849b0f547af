//go:build unix

package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/toolregistry"

	"github.com/cordisgo/harness/testkit/mcptest"
)

// quickReconnect makes retries fast with the real clock.
func quickReconnect(cfg Config) Config {
	cfg.Reconnect.InitialDelayMs, cfg.Reconnect.MaxDelayMs = 10, 100
	return cfg
}

// fastKill shortens the stdio shutdown grace periods.
var fastKill = &hooks{tune: func(o *dialOptions) {
	o.terminateDuration, o.killGrace = 200*time.Millisecond, 200*time.Millisecond
}}

// TestStdioPluginCrashReconnect (items 1, 6, 7): a real stdio server that dies is replaced
// by a new process after the old one is gone; status carries its stderr.
func TestStdioPluginCrashReconnect(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.mount(nil, quickReconnect(stdioConfig(t, "normal")), fastKill)
	st := e.st.waitPhase(t, "t", PhaseConnected)
	if st.Transport != TransportStdio || st.ProtocolVersion != DefaultStdioProtocolVersion {
		t.Errorf("status %+v", st)
	}
	pid := stderrPID(t, st.StderrTail)
	if _, err := e.call(nil, "mcp__t__crash", `{"text":""}`); err == nil {
		t.Fatal("crash call succeeded")
	}
	re := e.st.waitPhase(t, "t", PhaseReconnecting)
	if !strings.Contains(re.StderrTail, mcptest.CrashMarker) {
		t.Errorf("reconnecting status without the stderr tail: %+v", re)
	}
	st = e.st.waitPhase(t, "t", PhaseConnected)
	if newPID := stderrPID(t, st.StderrTail); newPID == pid || !processGone(pid) {
		t.Errorf("old pid %d (gone: %v), new pid %d", pid, processGone(pid), newPID)
	}
	if got := e.mustCall(nil, "mcp__t__echo", `{"text":"again"}`).Text(); got != "again" {
		t.Errorf("echo %q", got)
	}
}

// serverStatsOf calls the stats tool.
func serverStatsOf(t *testing.T, e *env) mcptest.Stats {
	t.Helper()
	var st mcptest.Stats
	must(t, json.Unmarshal([]byte(e.mustCall(nil, "mcp__t__stats", `{}`).Text()), &st))
	return st
}

// TestStdioPluginStorm (item 3): 1,000 tools/list_changed over stdio cost a handful of
// re-lists, counted by the server.
func TestStdioPluginStorm(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.mount(nil, stdioConfig(t, "normal"), fastKill)
	changed := ctxtest.Record(t, e.root, toolregistry.Changed)
	stormed := e.mustCall(nil, "mcp__t__storm", `{"n":1000}`).Text()
	changed.WaitFor(t, func(ch []toolregistry.Change) bool {
		for _, c := range ch {
			if slices.Contains(c.Added, "mcp__t__"+stormed) {
				return true
			}
		}
		return false
	})
	if n := serverStatsOf(t, e).Lists - 1; n < 1 || n > 3 {
		t.Errorf("%d re-lists for 1000 notifications", n)
	}
}

// TestStdioPluginCancellation (item 4): a call that never answers is cancelled by its
// caller, and the server sees notifications/cancelled and its handler ends.
func TestStdioPluginCancellation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.mount(nil, stdioConfig(t, "normal"), fastKill)
	cx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := e.reg.Execute(cx, e.root, "mcp__t__block", json.RawMessage(`{}`), toolregistry.ExecOptions{}); !errors.Is(err, toolregistry.ErrCancelled) {
		t.Fatalf("block: %v", err)
	}
	// The SDK sends the cancellation asynchronously: ask until the server saw it.
	deadline := time.Now().Add(ctxtest.Timeout)
	for st := serverStatsOf(t, e); st.Cancelled != 1 || st.Aborted != 1; st = serverStatsOf(t, e) {
		if time.Now().After(deadline) {
			t.Fatalf("server stats %+v", st)
		}
	}
}

// TestStdioPluginProcessHygiene (item 1): a server started through sh -c that leaves a
// grandchild; disposing the client leaves no process of its group.
func TestStdioPluginProcessHygiene(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	must(t, err)
	e := newEnv(t)
	cfg := stdioConfig(t, "normal")
	cfg.Command, cfg.Args = "sh", []string{"-c", `sleep 1000 & exec "$0"`, exe}
	s := e.mount(nil, cfg, fastKill)
	pgid := stderrPID(t, e.st.waitPhase(t, "t", PhaseConnected).StderrTail)
	if members := liveGroupMembers(t, pgid); len(members) < 2 {
		t.Fatalf("want the server and its grandchild in group %d, got %q", pgid, members)
	}
	must(t, s.Dispose(ctxtest.Wait(t)))
	if survivors := liveGroupMembers(t, pgid); len(survivors) > 0 {
		t.Fatalf("survivors in group %d: %q", pgid, survivors)
	}
	if got := e.st.phases("t"); got[len(got)-1] != PhaseDisposed {
		t.Errorf("phases %v", got)
	}
}

// TestStdioPluginDisposeDuringConnect (item 6): a server that never initializes is killed
// when the client is disposed during its startup.
func TestStdioPluginDisposeDuringConnect(t *testing.T) {
	t.Parallel()
	ev := mcptest.NewEvents(t, nil)
	e := newEnv(t)
	cfg := stdioConfig(t, mcptest.NeverInitialize)
	cfg.Env[mcptest.EventsEnv] = ev.Path()
	s := ctxtest.Mount(t, e.root.With(hooksKey{}, fastKill), Plugin, cfg)
	pid := ev.Wait(t, 0, "start").PID
	must(t, s.Dispose(ctxtest.Wait(t)))
	if !processGone(pid) {
		t.Errorf("server %d survived", pid)
	}
	if got := e.st.phases("t"); !phasesEqual(got, PhaseConnecting, PhaseDisposed) {
		t.Errorf("phases %v", got)
	}
}

// TestHTTPPluginServerRestart (items 1, 6): a Streamable HTTP server that restarts forgets
// the session (404); the client reconnects and serves calls again.
func TestHTTPPluginServerRestart(t *testing.T) {
	t.Parallel()
	// A demo server over Streamable HTTP; Restart replaces it with a fresh one that knows
	// no session, as a restarted process would (the old one's sessions are only closed when
	// the test ends, so the client learns of the restart from a 404).
	hs := mcptest.NewHTTP(t, demo)
	e := newEnv(t)
	cfg := quickReconnect(httpConfig(hs.URL()))
	cfg.ServerName = "web"
	e.mount(nil, cfg, nil)
	if st := e.st.waitPhase(t, "web", PhaseConnected); st.Transport != TransportStreamableHTTP || st.ProtocolVersion != "2025-11-25" {
		t.Errorf("status %+v", st)
	}
	e.mustCall(nil, "mcp__web__echo", `{"text":"before"}`)
	hs.Restart()
	// The call fails fast: either its POST meets the 404 of the forgotten session, or the
	// client has already seen the old session's stream end and is reconnecting.
	_, err := e.call(nil, "mcp__web__echo", `{"text":"lost"}`)
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("call after the restart: %v", err)
	}
	e.st.waitFor(t, "web", "reconnected", func(s Status) bool {
		return s.Phase == PhaseConnected && slices.Contains(e.st.phases("web"), PhaseReconnecting)
	})
	if got := e.mustCall(nil, "mcp__web__echo", `{"text":"after"}`).Text(); got != "after" {
		t.Errorf("echo after restart %q", got)
	}
}

// TestProbe: connect, list tools (capped), close, with stage, timings and cleanup.
func TestProbe(t *testing.T) {
	t.Parallel()
	t.Run("stdio ok", func(t *testing.T) {
		t.Parallel()
		res := Probe(ctxtest.Wait(t), stdioConfig(t, "normal"), ProbeOptions{MaxTools: 2, MaxDescriptionBytes: 8})
		if !res.OK() || res.Err != "" || res.Transport != TransportStdio || res.ServerName != mcptest.Implementation.Name ||
			res.ProtocolVersion != DefaultStdioProtocolVersion || len(res.Tools) != 2 || !res.ToolsTruncated ||
			res.InstructionBytes == 0 || res.Cleanup.Outcome != CleanupClosed {
			t.Fatalf("result %+v", res)
		}
		for _, tl := range res.Tools {
			if len(tl.Description) > 8 || tl.Name != PublicToolName("t", tl.RawName) || !tl.Allowed {
				t.Errorf("tool %+v", tl)
			}
		}
		if res.Timings.Connect <= 0 || res.Timings.Initialize <= 0 || res.Timings.Total < res.Timings.Connect ||
			!strings.Contains(res.StderrTail, "test-server normal") {
			t.Errorf("timings %+v, stderr %q", res.Timings, res.StderrTail)
		}
	})
	t.Run("stdio connect", func(t *testing.T) {
		t.Parallel()
		cfg := stdioConfig(t, "normal")
		cfg.Command = "/nonexistent/server"
		if res := Probe(ctxtest.Wait(t), cfg, ProbeOptions{}); res.Stage != ProbeConnect || res.Cleanup.Outcome != CleanupClosed {
			t.Errorf("result %+v", res)
		}
	})
	t.Run("stdio initialize", func(t *testing.T) {
		t.Parallel()
		res := Probe(ctxtest.Wait(t), stdioConfig(t, mcptest.ExitWithArgs), ProbeOptions{})
		if res.Stage != ProbeInitialize || !strings.Contains(res.StderrTail, mcptest.ExitMarker) || !strings.Contains(res.Err, mcptest.ExitMarker) {
			t.Errorf("result %+v", res)
		}
	})
	t.Run("http ok", func(t *testing.T) {
		t.Parallel()
		hs := mcptest.NewHTTP(t, demo)
		res := Probe(ctxtest.Wait(t), httpConfig(hs.URL()), ProbeOptions{})
		if !res.OK() || res.Transport != TransportStreamableHTTP || len(res.Tools) != 8 || res.ToolsTruncated || res.Cleanup.Outcome != CleanupClosed {
			t.Errorf("result %+v", res)
		}
	})
	t.Run("http connect without secrets", func(t *testing.T) {
		t.Parallel()
		l, err := net.Listen("tcp", "127.0.0.1:0")
		must(t, err)
		addr := l.Addr().String()
		_ = l.Close() // nothing listens there now
		cfg := httpConfig("http://user:pa55word-x@" + addr + "/mcp?token=s3cret-token-value")
		cfg.Headers = map[string]string{"Authorization": "Bearer sk-live-0123456789"}
		cfg.StartupTimeoutMs = 2000
		res := Probe(ctxtest.Wait(t), cfg, ProbeOptions{})
		if res.Stage != ProbeConnect || res.Err == "" {
			t.Errorf("result %+v", res)
		}
		blob, _ := json.Marshal(res)
		for _, secret := range []string{"pa55word-x", "s3cret-token-value", "sk-live-0123456789"} {
			if strings.Contains(string(blob), secret) {
				t.Errorf("probe result leaks %q: %s", secret, blob)
			}
		}
	})
}
