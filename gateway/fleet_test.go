package gateway_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/gateway"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpmanager"
	"github.com/cordisgo/harness/testkit/mcptest"
)

// children counts the live child processes of this process (/proc/self/task/*/children).
func children(t *testing.T) int {
	t.Helper()
	tasks, err := filepath.Glob("/proc/self/task/*/children")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		n += len(strings.Fields(string(b)))
	}
	return n
}

func settingsYAML(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("servers:\n")
	for i := range n {
		name := fmt.Sprintf("s%02d", i)
		cmd, env := mcptest.Stdio(t, mcptest.Normal, name)
		fmt.Fprintf(&b, "  %s:\n    transport: stdio\n    command: %q\n    env:\n", name, cmd)
		for k, v := range env {
			fmt.Fprintf(&b, "      %s: %q\n", k, v)
		}
		b.WriteString("    reconnect: {enabled: true, initialDelayMs: 50, maxDelayMs: 1000, maxAttempts: 10}\n")
	}
	return b.String()
}

// TestFleet: 10 downstream sessions on 20 stdio servers run 20 server processes; a server
// that crashes mid-session serves the same sessions again once it has reconnected; a
// settings edit reaches every session as tools/list_changed.
func TestFleet(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts processes through /proc")
	}
	const servers, sessions = 20, 10
	root := newTree(t)
	connected := make(chan string, 256)
	if _, err := mcpclient.StatusEvent.On(root, func(st mcpclient.Status) error {
		if st.Phase == mcpclient.PhaseConnected {
			connected <- st.Server
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(t.TempDir(), "servers.yaml")
	if err := os.WriteFile(settings, []byte(settingsYAML(t, servers)), 0o600); err != nil {
		t.Fatal(err)
	}
	var cfg mcpmanager.Config
	cfg.Default()
	cfg.SettingsFile = settings
	cfg.DebounceMs = 20
	if _, err := root.Plugin(mcpmanager.Plugin, cfg); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for len(seen) < servers {
		select {
		case s := <-connected:
			seen[s] = true
		case <-t.Context().Done():
			t.Fatalf("connected: %v", seen)
		}
	}
	f := serveGateway(t, root, gateway.Options{})

	css := make([]*mcp.ClientSession, sessions)
	changes := make([]chan string, sessions)
	for i := range css {
		changes[i] = make(chan string, 1)
		css[i] = connect(t, f.url+"/mcp", changes[i])
		waitTools(t, css[i], changes[i], fmt.Sprintf("mcp__s%02d__echo", servers-1))
	}
	var wg sync.WaitGroup
	errs := make(chan error, sessions*servers)
	for i, cs := range css {
		wg.Go(func() {
			for j := range servers {
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: fmt.Sprintf("mcp__s%02d__echo", j), Arguments: map[string]any{"text": strconv.Itoa(i)}})
				if err != nil || res.IsError || text(res) != strconv.Itoa(i) {
					errs <- fmt.Errorf("session %d server %d: %w %+v", i, j, err, res)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := children(t); n != servers {
		t.Fatalf("%d child processes for %d servers and %d sessions, want %d", n, servers, sessions, servers)
	}

	// A crash mid-session: the next call after the reconnect works on the same session.
	who := func(cs *mcp.ClientSession) int {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp__s07__whoami"})
		if err != nil || res.IsError {
			t.Fatalf("whoami: %v %+v", err, res)
		}
		m := regexp.MustCompile(`pid=(\d+)`).FindStringSubmatch(text(res))
		if m == nil {
			t.Fatalf("whoami: %q", text(res))
		}
		pid, _ := strconv.Atoi(m[1])
		return pid
	}
	pid := who(css[3])
	for len(connected) > 0 {
		<-connected
	}
	if p, err := os.FindProcess(pid); err != nil {
		t.Fatal(err)
	} else if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	for s := range connected {
		if s == "s07" {
			break
		}
	}
	if again := who(css[3]); again == pid {
		t.Fatalf("whoami still answers from the killed process %d", pid)
	}
	if n := children(t); n != servers {
		t.Fatalf("%d child processes after the reconnect, want %d", n, servers)
	}

	// A settings edit reaches every session.
	for _, ch := range changes {
		select {
		case <-ch:
		default:
		}
	}
	began := time.Now()
	if err := os.WriteFile(settings, []byte(settingsYAML(t, servers+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	added := fmt.Sprintf("mcp__s%02d__echo", servers)
	for i, cs := range css {
		waitTools(t, cs, changes[i], added)
	}
	t.Logf("settings edit → %s listed by %d sessions in %v (debounce %d ms, process start and discovery included)",
		added, sessions, time.Since(began).Round(time.Millisecond), cfg.DebounceMs)
	if !slices.Contains(toolNames(t, css[0]), "mcp__s00__echo") {
		t.Fatal("unchanged servers lost their tools")
	}
}
