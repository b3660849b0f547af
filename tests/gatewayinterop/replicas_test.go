//go:build replicas && unix

// The replica suite (build tag replicas, run once by .ci/run): three `harness serve`
// processes sharing Redis behind HAProxy, fifty sessions of the TypeScript SDK client
// calling through HAProxy; one replica killed mid-run, and a rolling restart of all three.

package gatewayinterop

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cordisgo/harness/internal/loopback"
	"github.com/cordisgo/harness/testkit/harnessbin"
	"github.com/cordisgo/harness/testkit/proctest"
	"github.com/cordisgo/harness/testkit/redistest"
)

// replicaError is what HAProxy answers for a request in flight on a replica that died
// (docs/gateway.md has the same error page): the message the clients must show.
const replicaError = "the gateway replica serving this request stopped before it answered"

// cluster is Redis, N replicas and HAProxy in front of them.
type cluster struct {
	t       *testing.T
	bin     string // the harness binary
	redis   *redistest.Server
	dir     string
	ports   []int
	procs   []*replicaProc
	lbURL   string
	haproxy *exec.Cmd

	logMu    sync.Mutex
	lbLog    []string // HAProxy's log lines of the answers other than 200 and 202
	timeline []string // the restarts, and the replicas' warnings and drains, with their times
}

type replicaProc struct {
	name   string
	cmd    *exec.Cmd
	exited <-chan error
}

// lookOrSkip returns the path of a program a Debian package installs, or fails the test
// under CI and skips it otherwise.
func lookOrSkip(t *testing.T, prog, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(prog)
	if err == nil {
		return p
	}
	msg := fmt.Sprintf("%s is not installed (apt-get install -y %s; .ci/run installs it)", prog, pkg)
	if os.Getenv("CI") != "" {
		t.Fatalf("%s: CI is set, the replica suite must run", msg)
	}
	t.Skip("SKIPPED: " + msg)
	return ""
}

func newCluster(t *testing.T, n int) *cluster {
	t.Helper()
	suite.File(t, "@modelcontextprotocol/sdk/package.json")
	haproxy := lookOrSkip(t, "haproxy", "haproxy")
	c := &cluster{t: t, dir: t.TempDir()}
	c.redis = redistest.Start(t, redistest.Options{})
	c.bin = harnessbin.Path(t) // built once for the suite's tests
	// The replicas' ports, then the balancer's.
	for range n + 1 {
		port, err := loopback.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		c.ports = append(c.ports, port)
	}
	lbPort := c.ports[n]
	c.ports = c.ports[:n]
	for i := range n {
		c.procs = append(c.procs, nil)
		if err := c.start(i); err != nil {
			t.Fatal(err)
		}
	}
	c.lbURL = fmt.Sprintf("http://127.0.0.1:%d/mcp", lbPort)
	cfg := filepath.Join(c.dir, "haproxy.cfg")
	errPage := filepath.Join(c.dir, "502.http")
	if err := os.WriteFile(errPage, []byte(haproxyErrorPage), 0o600); err != nil {
		t.Fatal(err)
	}
	var servers strings.Builder
	for i, p := range c.ports {
		fmt.Fprintf(&servers, "    server r%d 127.0.0.1:%d check inter 300ms fall 1 rise 2\n", i+1, p)
	}
	conf := strings.NewReplacer("{{bind}}", "127.0.0.1:"+strconv.Itoa(lbPort), "{{errorfile}}", errPage, "{{servers}}", servers.String()).Replace(haproxyConfig)
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	// -W: master-worker mode, which says "Loading success." once the worker listens.
	c.haproxy = exec.Command(haproxy, "-W", "-db", "-f", cfg)
	ready := make(chan struct{})
	var once bool
	proctest.Start(t, c.haproxy, func(line []byte) {
		if l := string(line); strings.Contains(l, "POST") && !strings.Contains(l, " 200 ") && !strings.Contains(l, " 202 ") || strings.Contains(l, "POST") && !strings.Contains(l, " ---- ") || !strings.Contains(l, "HTTP/1.1") {
			c.logMu.Lock()
			c.lbLog = append(c.lbLog, l)
			c.logMu.Unlock()
		}
		if !once && strings.Contains(string(line), "Loading success") {
			once = true
			close(ready)
		}
	})
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatal("haproxy did not start")
	}
	return c
}

// haproxyConfig is the configuration docs/gateway.md explains, with the test's addresses.
const haproxyConfig = `global
    maxconn 4096
defaults
    mode http
    log stderr format raw local0
    option httplog
    timeout connect 2s
    timeout client 1h
    timeout server 1h
    option httpclose
    option redispatch
    retries 2
    retry-on conn-failure 503
    errorfile 502 {{errorfile}}
frontend mcp
    bind {{bind}}
    default_backend gateways
backend gateways
    balance roundrobin
    option httpchk GET /healthz
    http-check expect status 200
    stick-table type string len 64 size 1m expire 30m
    stick on req.hdr(mcp-session-id)
    stick store-response res.hdr(mcp-session-id)
{{servers}}`

// haproxyErrorPage is HAProxy's answer to a request whose replica died before answering.
const haproxyErrorPage = "HTTP/1.1 502 Bad Gateway\r\nContent-Type: application/json\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n" +
	`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"` + replicaError + `: it may or may not have taken effect; retry it (the session goes on on another replica)"}}` + "\n"

// start starts replica i on its port, and returns once it serves. It may run on a goroutine
// other than the test's: it returns its failure.
func (c *cluster) start(i int) error {
	t := c.t
	name := fmt.Sprintf("r%d", i+1)
	home := filepath.Join(c.dir, name)
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	cmd := exec.Command(c.bin, "serve", "--addr", fmt.Sprintf("127.0.0.1:%d", c.ports[i]), "--store", c.redis.URL, "--replica", name,
		"--set", "plugins.remote.enabled=false", "--set", "plugins.manager.enabled=false", "--endpoint-file", filepath.Join(home, "gateway.json"))
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home+"/config", "XDG_STATE_HOME="+home+"/state",
		"XDG_CACHE_HOME="+home+"/cache", "XDG_DATA_HOME="+home+"/data", "XDG_RUNTIME_DIR="+home, "HARNESS_GATEWAY_TOKEN="+token)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	ready := make(chan struct{})
	var logged strings.Builder
	seen := false
	exited := proctest.Start(t, cmd, func(line []byte) {
		if !seen {
			logged.Write(line)
			logged.WriteByte('\n')
		}
		if l := string(line); strings.Contains(l, " WRN ") || strings.Contains(l, " ERR ") || strings.Contains(l, "drained:") {
			c.event(name, l)
		}
		if !seen && strings.Contains(string(line), "gateway listening") {
			seen = true
			close(ready)
		}
	})
	select {
	case <-ready:
	case err := <-exited:
		return fmt.Errorf("replica %s ended before serving: %w\n%s", name, err, logged.String())
	case <-time.After(60 * time.Second):
		return fmt.Errorf("replica %s did not serve within a minute", name)
	}
	c.procs[i] = &replicaProc{name: name, cmd: cmd, exited: exited}
	return nil
}

// event adds what happened to replica name to the timeline, with the time (milliseconds since
// the epoch, as replicas.mjs reports the calls').
func (c *cluster) event(name, what string) {
	c.logMu.Lock()
	defer c.logMu.Unlock()
	c.timeline = append(c.timeline, fmt.Sprintf("%d %s: %s", time.Now().UnixMilli(), name, what))
}

// kill kills replica i with SIGKILL (its process group: the demo server with it) and
// returns when it was killed, in milliseconds since the epoch.
func (c *cluster) kill(i int) int64 {
	p := c.procs[i]
	at := time.Now().UnixMilli()
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	if err := <-p.exited; err == nil {
		c.t.Errorf("replica %s exited cleanly after SIGKILL", p.name)
	}
	return at
}

// restart stops replica i as an orchestrator does (SIGTERM, the replica drains) and starts it
// again on the same port.
func (c *cluster) restart(i int) {
	p := c.procs[i]
	c.event(p.name, "SIGTERM")
	defer c.event(p.name, "restarted")
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		c.t.Error(err)
		return
	}
	select {
	case err := <-p.exited:
		if err != nil {
			c.t.Errorf("replica %s after SIGTERM: %v", p.name, err)
		}
	case <-time.After(60 * time.Second):
		c.t.Errorf("replica %s did not stop within a minute of SIGTERM", p.name)
		return
	}
	if err := c.start(i); err != nil {
		c.t.Error(err)
	}
}

// callLine is one call of replicas.mjs.
type callLine struct {
	Session, Call   int
	Start, End      int64
	OK              bool
	Error           string
	Replica, Before string
}

// clients runs replicas.mjs: sessions sessions making calls calls each, and calls during
// with each line as it comes; it returns every call.
func (c *cluster) clients(sessions, calls int, during func(n int, l callLine)) []callLine {
	t := c.t
	t.Helper()
	var lines []callLine
	stderr, err := runNode(t.Context(), t, "replicas.mjs", []string{c.lbURL, token, strconv.Itoa(sessions), strconv.Itoa(calls),
		"demo__slow", `{"ms":40}`}, // serve offers SERVER__TOOL (gateway.Options.ShortNames)
		func(text string) {
			if text == `"READY"` || text == `"DONE"` {
				return
			}
			var l callLine
			if err := json.Unmarshal([]byte(text), &l); err != nil {
				t.Fatalf("replicas.mjs: %q: %v", text, err)
			}
			lines = append(lines, l)
			if during != nil {
				during(len(lines), l)
			}
		})
	if err != nil {
		t.Fatalf("replicas.mjs: %v\n%s", err, stderr)
	}
	if len(lines) != sessions*calls {
		t.Fatalf("%d calls reported, want %d\n%s", len(lines), sessions*calls, stderr)
	}
	return lines
}

// TestReplicaKilled: 50 sessions of the TypeScript SDK client through HAProxy to three
// replicas; one replica is killed (SIGKILL) mid-run. Every call succeeds except those in
// flight on the killed replica, and each of those fails with HAProxy's clear error; the
// killed replica's sessions go on, on the other replicas.
func TestReplicaKilled(t *testing.T) {
	c := newCluster(t, 3)
	const sessions, calls = 50, 40
	var killedAt int64
	victim := 1 // r2
	lines := c.clients(sessions, calls, func(n int, _ callLine) {
		if killedAt == 0 && n == sessions*calls/4 {
			killedAt = c.kill(victim)
		}
	})
	killed := c.procs[victim].name
	var failed, inFlight, moved, after int
	onKilled := map[int]bool{}
	for _, l := range lines {
		if l.Before == killed {
			onKilled[l.Session] = true
		}
		wasInFlight := l.Before == killed && l.Start <= killedAt && l.End >= killedAt
		if wasInFlight {
			inFlight++
		}
		if !l.OK {
			failed++
			if !wasInFlight {
				t.Errorf("session %d call %d failed but was not in flight on the killed replica (on %q, %d..%d, killed at %d): %s",
					l.Session, l.Call, l.Before, l.Start, l.End, killedAt, l.Error)
			} else if !strings.Contains(l.Error, replicaError) {
				t.Errorf("session %d call %d failed without the clear error: %s", l.Session, l.Call, l.Error)
			}
			continue
		}
		if l.Start > killedAt {
			after++
			if l.Replica == killed {
				t.Errorf("session %d call %d answered by the killed replica", l.Session, l.Call)
			}
			if onKilled[l.Session] {
				moved++
			}
		}
	}
	c.logMu.Lock()
	var cut []string
	for _, l := range c.lbLog {
		if strings.Contains(l, "POST") {
			cut = append(cut, l)
		}
	}
	c.logMu.Unlock()
	t.Logf("HAProxy's log of the POSTs it did not answer with the replica's 200 or 202:\n%s", strings.Join(cut, "\n"))
	if len(onKilled) == 0 || moved == 0 {
		t.Fatalf("no session was on the killed replica (%d) or none went on after it died (%d)", len(onKilled), moved)
	}
	t.Logf("%d calls of %d sessions; replica %s killed with %d sessions on it and %d calls in flight there, of which %d failed (each with the clear error); %d calls after the kill succeeded, %d of them in sessions that moved",
		len(lines), sessions, killed, len(onKilled), inFlight, failed, after, moved)
}

// TestRollingRestart: the three replicas restart one after the other (SIGTERM, drain, start
// again) while 50 sessions call through HAProxy: no call fails.
func TestRollingRestart(t *testing.T) {
	c := newCluster(t, 3)
	const sessions, calls = 50, 80
	// Restart one replica after each sixth of the calls, on a goroutine of its own: the
	// client's output is read meanwhile.
	progress := make(chan int, sessions*calls)
	restarted := make(chan int, 1)
	go func() {
		next := 0
		for n := range progress {
			if next < len(c.procs) && n >= (next+1)*sessions*calls/6 {
				c.restart(next)
				next++
			}
		}
		restarted <- next
	}()
	lines := c.clients(sessions, calls, func(n int, _ callLine) { progress <- n })
	close(progress)
	if got := <-restarted; got != len(c.procs) {
		t.Fatalf("%d replicas restarted, want %d", got, len(c.procs))
	}
	moves := 0
	for _, l := range lines {
		if !l.OK {
			t.Errorf("session %d call %d failed during the rolling restart (on %q, %d..%d): %s", l.Session, l.Call, l.Before, l.Start, l.End, l.Error)
		}
		if l.OK && l.Before != "" && l.Replica != l.Before {
			moves++
		}
	}
	if moves < sessions {
		t.Errorf("sessions moved %d times in all; each replica's restart should move its sessions", moves)
	}
	c.logMu.Lock()
	t.Logf("the restarts (each replica's drain: how many requests came while it drained, and after its health check failed):\n%s", strings.Join(c.timeline, "\n"))
	if t.Failed() {
		t.Logf("HAProxy's log of the answers other than 200 and 202:\n%s", strings.Join(c.lbLog, "\n"))
	}
	c.logMu.Unlock()
	if t.Failed() {
		return
	}
	t.Logf("%d calls of %d sessions, %d replicas restarted one after the other, sessions moved %d times: no call failed", len(lines), sessions, len(c.procs), moves)
}
