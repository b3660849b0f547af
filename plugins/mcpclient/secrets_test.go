//go:build unix

package mcpclient

import (
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx/ctxtest"

	"github.com/cordisgo/harness/testkit/mcptest"
)

// Values listed in Config.Secrets (the manager passes the values its templates resolved)
// never appear in logs, status reports or probe results, even when the server echoes them.
func TestConfiguredSecretsMasked(t *testing.T) {
	t.Parallel()
	const secret = mcptest.ExitMarker // the exit-with-args server writes it to stderr
	cfg := quickReconnect(stdioConfig(t, mcptest.ExitWithArgs))
	cfg.ServerName = "leaky"
	cfg.Reconnect.MaxAttempts = 1
	cfg.Secrets = []string{secret}

	res := Probe(ctxtest.Wait(t), cfg, ProbeOptions{})
	if strings.Contains(res.Err+res.StderrTail+res.Cleanup.Err, secret) {
		t.Fatalf("probe result leaks the secret: %+v", res)
	}
	e := newEnv(t)
	e.mount(nil, cfg, fastKill)
	st := e.st.waitPhase(t, "leaky", PhaseFailed)
	if strings.Contains(st.Err+st.StderrTail, secret) || !strings.Contains(st.StderrTail, redactedValue) {
		t.Fatalf("status leaks or lost the masked stderr: %+v", st)
	}
	ctxtest.Settle(t, e.root)
	if strings.Contains(e.log.String(), secret) {
		t.Fatalf("log leaks the secret:\n%s", e.log.String())
	}
}
