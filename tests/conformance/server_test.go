//go:build unix

package conformance

import (
	"bufio"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/gateway"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/testkit/gatewaytest"
)

// gatewayOwned are the server scenarios that fail on the per-server route because of known
// gateway work, with the reason; they are reported, not failed. A listed scenario that
// passes is logged so the entry can go. None is listed today: the route passes the suite.
var gatewayOwned = map[string]string{}

// TestServerSuite runs the suite's server scenarios (all of them, pending ones included)
// against go-sdk's conformance everything-server directly over Streamable HTTP, and
// against the gateway's per-server route (/mcp/servers/<name>, the route `harness serve`
// offers for one upstream) in front of the same server over stdio. Every scenario that
// passes directly must pass through the gateway, with the same checks reached. Warnings
// (SEP-1699's SHOULDs, which go-sdk's handler does not meet either) are reported.
func TestServerSuite(t *testing.T) {
	s := locate(t)
	bin := filepath.Join(t.TempDir(), "everything-server")
	if out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin,
		"github.com/modelcontextprotocol/go-sdk/conformance/everything-server").CombinedOutput(); err != nil {
		t.Fatalf("build go-sdk's conformance everything-server: %v\n%s", err, out)
	}
	direct := runServerSuite(t, s, directServer(t, bin), "")
	routeURL := gatewayRoute(t, bin)
	route := runServerSuite(t, s, routeURL, "")

	names := make([]string, 0, len(direct))
	for n := range direct {
		names = append(names, n)
	}
	sort.Strings(names)
	var sum [2]struct{ scenarios, passed, checks, passedChecks, warnings int }
	for _, n := range names {
		for i, cs := range [][]check{direct[n], route[n]} {
			p, f, w := tally(cs)
			sum[i].scenarios++
			sum[i].checks += p + f
			sum[i].passedChecks += p
			sum[i].warnings += w
			if f == 0 && len(cs) > 0 {
				sum[i].passed++
			}
		}
		dp, df, _ := tally(direct[n])
		rp, rf, rw := tally(route[n])
		if rw > 0 {
			t.Logf("%s: %d warnings through the gateway:\n  %s", n, rw, strings.Join(problems(route[n], "WARNING"), "\n  "))
		}
		if df > 0 {
			t.Logf("%s fails directly too (%d failed): not the gateway's", n, df)
			continue
		}
		ok := rf == 0 && rp == dp
		why, owned := gatewayOwned[n]
		switch {
		case ok && owned:
			t.Logf("%s passes through the gateway now (listed as gateway work: %s): remove it from gatewayOwned", n, why)
		case !ok && owned:
			t.Logf("%s through the gateway: %d of %d checks passed (gateway work, issue 23 %s)\n  %s", n, rp, dp, why, strings.Join(problems(route[n], "FAILURE"), "\n  "))
		case !ok && passesAlone(t, s, routeURL, n, dp):
			// Under load a server request or a late notification now and then misses the
			// calling session (the gateway's work, issue 23 items 7 and 11); a scenario that
			// passes when run again is reported, one that fails again is a failure.
			t.Logf("%s failed through the gateway once and passed when run again (intermittent)\n  %s", n, strings.Join(problems(route[n], "FAILURE"), "\n  "))
		case !ok:
			t.Errorf("%s passes directly (%d checks) but not through the gateway (%d passed, %d failed)\n  %s", n, dp, rp, rf, strings.Join(problems(route[n], "FAILURE"), "\n  "))
		}
	}
	for i, what := range []string{"go-sdk's everything-server directly", "the gateway's per-server route"} {
		t.Logf("server suite, %s: %d/%d scenarios, %d/%d checks passed, %d warnings", what,
			sum[i].passed, sum[i].scenarios, sum[i].passedChecks, sum[i].checks, sum[i].warnings)
	}
}

// problems lists the checks of one status.
func problems(cs []check, status string) []string {
	var out []string
	for _, c := range cs {
		if c.Status == status {
			out = append(out, c.ID+": "+c.Description+" "+c.ErrorMessage)
		}
	}
	return out
}

// directServer runs bin over Streamable HTTP (stateful, as the gateway is) and returns
// its MCP URL, once the server has said it listens (its log line, printed just before it
// binds) and its port answers.
func directServer(t *testing.T, bin string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	cmd := exec.Command(bin, "-http", addr, "-stateless=false")
	logs, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(logs)
	for sc.Scan() && !strings.Contains(sc.Text(), "listening at") {
	}
	go func() { _, _ = io.Copy(io.Discard, logs) }()
	// Between the line and the bind there is only the call to ListenAndServe; dial until the
	// port answers, each failed dial taking a tick, for at most 10 s.
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			_ = c.Close()
			return "http://" + addr + "/mcp"
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("the everything-server did not listen on %s: %v", addr, err)
		}
	}
}

// gatewayRoute mounts bin (stdio) as server "conf" behind a gateway, as `harness serve`
// does, and returns the per-server route's URL.
func gatewayRoute(t *testing.T, bin string) string {
	t.Helper()
	// As harness serve does before it mounts the profile: the gateway's responder and
	// sampler, so the upstream client offers elicitation and sampling to its server.
	root := gatewaytest.Tree(t, gatewaytest.TreeOptions{Offer: true})
	var cfg mcpclient.Config
	cfg.Default()
	cfg.ServerName, cfg.Transport, cfg.Command, cfg.FailOnStartupError = "conf", mcpclient.TransportStdio, bin, true
	ctxtest.MountActive(t, root, mcpclient.Plugin, cfg)
	_, url := gatewaytest.Serve(t, root, gateway.Options{}, gateway.HTTPOptions{NoAuth: true, Addr: "127.0.0.1:0"})
	return url + "/mcp/servers/conf"
}

// passesAlone runs scenario once more against url and reports whether it passes with want
// checks.
func passesAlone(t *testing.T, s suite, url, scenario string, want int) bool {
	t.Helper()
	p, f, _ := tally(runServerSuite(t, s, url, scenario)[scenario])
	return f == 0 && p == want
}

// runServerSuite runs every server scenario (or only scenario) against url and returns the
// checks by scenario.
func runServerSuite(t *testing.T, s suite, url, scenario string) map[string][]check {
	t.Helper()
	out := t.TempDir()
	cmd := exec.CommandContext(t.Context(), s.node, s.entry, "server", "--url", url, "--suite", "all", "-o", out)
	if scenario == "" {
		scenario = os.Getenv("CONFORMANCE_SCENARIO")
	}
	if scenario != "" {
		cmd.Args = append(cmd.Args, "--scenario", scenario, "--verbose")
	}
	cmd.Dir = t.TempDir()
	res, runErr := cmd.CombinedOutput()
	if os.Getenv("CONFORMANCE_VERBOSE") != "" {
		t.Logf("suite output against %s:\n%s", url, res)
	}
	byDir := readChecks(t, out)
	if len(byDir) == 0 {
		t.Fatalf("the suite wrote no results for %s (%v):\n%s", url, runErr, tail(string(res), 3000))
	}
	checks := map[string][]check{}
	for dir, cs := range byDir {
		checks[scenarioName(dir)] = cs
	}
	return checks
}

// scenarioName strips the suite's "server-" prefix and "-<timestamp>" suffix from a result
// directory's name.
func scenarioName(dir string) string {
	name := strings.TrimPrefix(filepath.Base(dir), "server-")
	if i := strings.Index(name, "-20"); i > 0 {
		name = name[:i]
	}
	return name
}
