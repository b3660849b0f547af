package mcpclient

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cordisgo/harness/plugins/mcpclient/transport"
)

// TestPermanentStartFailures: a server that can never start fails at once with the cause,
// without a single retry (an hour of the bubble's clock passes without one), while a transient
// failure (TestBackoffAndGiveUp) keeps the backoff.
func TestPermanentStartFailures(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "not-executable")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\nexit 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stdio := func(command string) Config {
		var c Config
		c.Default()
		c.Transport, c.Command = TransportStdio, command
		return c
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"missing-absolute", stdio(filepath.Join(dir, "no-such-server")), "no such file or directory"},
		{"missing-in-path", stdio("no-such-mcp-server-on-any-path"), "executable file not found"},
		{"permission", stdio(notExec), "permission denied"},
		{"missing-cwd", func() Config { c := stdio("/bin/sh"); c.Cwd = filepath.Join(dir, "gone"); return c }(), "no such file or directory"},
		{"bad-port", httpConfig("http://127.0.0.1:99999/mcp"), "invalid port"},
		{"missing-script", func() Config {
			c := stdio("node")
			c.Args = []string{"--no-warnings", "missing.js"}
			c.Cwd = dir
			return c
		}(),
			"run node script missing.js: file does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t)
				cfg := tc.cfg
				cfg.ServerName = "srv"
				cfg.Reconnect.MaxAttempts = 10
				e.mount(nil, cfg, &hooks{jitter: noJitter})
				st := e.st.waitPhase(t, "srv", PhaseFailed)
				if !strings.Contains(st.Err, "not retried") || !strings.Contains(st.Err, tc.want) {
					t.Errorf("failed status: %q, want the cause %q and not retried", st.Err, tc.want)
				}
				if got := e.st.phases("srv"); !phasesEqual(got, PhaseConnecting, PhaseFailed) {
					t.Errorf("phases %v, want connecting, failed", got)
				}
				// A retry would come after the initial delay: let the bubble's clock pass it.
				time.Sleep(time.Hour)
				synctest.Wait()
				if got := e.st.phases("srv"); !phasesEqual(got, PhaseConnecting, PhaseFailed) {
					t.Errorf("phases after an hour %v: it was retried", got)
				}
			})
		})
	}
}

func TestPermanentClassifiesTransientAsTransient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		ms := newMemServer(demo())
		ms.failNext.Store(1)
		cfg := memConfig("srv")
		e.mount(nil, cfg, &hooks{dial: ms.dial, jitter: noJitter})
		st := e.st.waitPhase(t, "srv", PhaseReconnecting)
		if st.Attempt != 1 {
			t.Errorf("reconnecting status %+v", st)
		}
		e.st.waitPhase(t, "srv", PhaseConnected)
	})
}

// TestMissingScript: only an interpreter's script argument with a script's extension is
// checked; programs given by a flag, module names and existing scripts are not refused.
func TestMissingScript(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "server.py")
	if err := os.WriteFile(script, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		command string
		args    []string
		refused bool
	}{
		{"node", []string{"missing.js"}, true},
		{"/usr/bin/python3", []string{"-u", filepath.Join(dir, "gone.py")}, true},
		{"python3", []string{script}, false},
		{"python3", []string{"server.py"}, false}, // relative to cwd
		{"python3", []string{"-m", "missing.py"}, false},
		{"node", []string{"-e", "x.js"}, false},
		{"npx", []string{"-y", "missing.js"}, false},
		{"node", []string{"server"}, false},
	} {
		var c Config
		c.Default()
		c.Transport, c.Command, c.Args, c.Cwd = TransportStdio, tc.command, tc.args, dir
		err := transport.MissingScript(c.Command, c.Args, c.Cwd)
		if (err != nil) != tc.refused || (err != nil && !permanent(err)) {
			t.Errorf("%s %v: %v, want refused %v (permanent)", tc.command, tc.args, err, tc.refused)
		}
	}
}
