//go:build unix

package interop

import (
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/mcpclient"
)

// TestEverythingProtocol checks the protocol services against the reference server over
// stdio: progress of trigger-long-running-operation keeps a call alive past its idle
// timeout, and toggle-simulated-logging's messages reach ServerLogEvent after
// logging/setLevel.
func TestEverythingProtocol(t *testing.T) {
	srv := locate(t)
	cfg := newConfig(mcpclient.TransportStdio)
	cfg.Command = srv.node
	cfg.Args = []string{srv.entry, "stdio"}
	cfg.ToolCallTimeoutMs = 1500 // the operation below reports every second, and lasts four
	cfg.LogLevel = "debug"
	root := ctxtest.New(t)
	progress := ctxtest.Record(t, root, mcpclient.ProgressEvent)
	logs := ctxtest.Record(t, root, mcpclient.ServerLogEvent)
	e := mountOn(t, root, cfg)

	t.Run("progress", func(t *testing.T) {
		res := e.call(t, public("trigger-long-running-operation"), `{"duration":4,"steps":4}`)
		if !strings.Contains(res.Text(), "Long running operation completed") {
			t.Fatalf("result %q", res.Text())
		}
		evs := progress.WaitFor(t, func(evs []mcpclient.Progress) bool { return len(evs) > 0 && evs[len(evs)-1].Done })
		if len(evs) < 4 || evs[0].Progress != 1 || evs[0].Total != 4 || evs[0].Target != "trigger-long-running-operation" {
			t.Fatalf("progress events %+v", evs)
		}
	})
	t.Run("logging", func(t *testing.T) {
		e.call(t, public("toggle-simulated-logging"), `{}`)
		defer e.call(t, public("toggle-simulated-logging"), `{}`)
		l := logs.WaitFor(t, func(l []mcpclient.ServerLog) bool { return len(l) > 0 })
		if l[0].Server != serverName || !strings.Contains(strings.ToLower(l[0].Message), l[0].Level) {
			t.Fatalf("server log %+v", l[0])
		}
	})
}
