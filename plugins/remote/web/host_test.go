//go:build browser

package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/testkit/harnessbin"
)

// The tests of this file run the page exactly as a user opens it: the harness binary,
// built from this checkout, runs `harness run -p web --gateway` in a home of its own (the
// web profile's demo server, the user's empty settings files), and Chromium opens the URL
// it printed. A go-sdk client connected to the gateway plays an MCP client (Claude Code,
// say) beside the page.

// host is a running `harness run -p web --gateway`.
type host struct {
	page     string // the management page's URL (with the token)
	gateway  string // the gateway's aggregated route
	token    string // the gateway's token
	stderrMu sync.Mutex
	stderr   strings.Builder
}

func (h *host) log() string {
	h.stderrMu.Lock()
	defer h.stderrMu.Unlock()
	return h.stderr.String()
}

// startHost runs `harness run -p web --gateway` as a user would, in a fresh home, until
// the test ends.
func startHost(t *testing.T) *host {
	t.Helper()
	return startHostWith(t, harnessbin.Path(t), nil, "run", "-p", "web", "--gateway", "--addr", "127.0.0.1:0")
}

// startHostWith runs bin with args (a run command) in a fresh home, its environment the
// home's, PATH and extra, until the test ends. With --gateway it reads the gateway's
// endpoint file too.
func startHostWith(t *testing.T, bin string, extra []string, args ...string) *host {
	t.Helper()
	home := t.TempDir()
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"), "XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "PATH=" + os.Getenv("PATH")}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(env, extra...)
	cmd.Dir = home
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &host{}
	ready := make(chan struct{})
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
		once := sync.Once{}
		for sc.Scan() {
			line := sc.Text()
			h.stderrMu.Lock()
			h.stderr.WriteString(line + "\n")
			h.stderrMu.Unlock()
			if u, ok := strings.CutPrefix(line, "management page: "); ok {
				h.page = u
			}
			if strings.Contains(line, "running; interrupt to stop") {
				once.Do(func() { close(ready) })
			}
		}
		_, _ = io.Copy(io.Discard, pipe)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { <-scanned; done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("harness run ended with %v:\n%s", err, h.log())
			}
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Errorf("harness run did not stop on interrupt (killed: %v):\n%s", <-done, h.log())
		}
	})
	select {
	case <-ready:
	case <-scanned:
		t.Fatalf("harness run ended before running:\n%s", h.log())
	case <-time.After(60 * time.Second):
		t.Fatalf("harness run did not start:\n%s", h.log())
	}
	if h.page == "" {
		t.Fatalf("harness run printed no page URL:\n%s", h.log())
	}
	if !slices.Contains(args, "--gateway") {
		return h
	}
	// The gateway's endpoint file, next to the remote API's.
	files, _ := filepath.Glob(filepath.Join(home, "*", "*", "harness", "gateway.json"))
	if more, _ := filepath.Glob(filepath.Join(home, "*", "harness", "gateway.json")); len(more) > 0 {
		files = append(files, more...)
	}
	if len(files) != 1 {
		t.Fatalf("gateway endpoint files %v under %s:\n%s", files, home, h.log())
	}
	var ep struct{ URL, Token string }
	b, err := os.ReadFile(files[0])
	if err == nil {
		err = json.Unmarshal(b, &ep)
	}
	if err != nil || ep.URL == "" || ep.Token == "" {
		t.Fatalf("gateway endpoint file %s: %v %s", files[0], err, b)
	}
	h.gateway, h.token = ep.URL, ep.Token
	return h
}

type bearerRT struct{ tok string }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return http.DefaultTransport.RoundTrip(r)
}

// gatewayClient connects an MCP client called name to the gateway's route path.
func (h *host) gatewayClient(t *testing.T, name, path string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "9.9"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: strings.TrimSuffix(h.gateway, "/mcp") + path,
		HTTPClient: &http.Client{Transport: bearerRT{h.token}}}, nil)
	if err != nil {
		t.Fatalf("connecting to the gateway: %v\n%s", err, h.log())
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func callOK(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("%s: %v %+v", tool, err, res)
	}
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			return tc.Text
		}
	}
	return ""
}

// TestHostPage: the page of `harness run -p web --gateway` shows the gateway's sessions
// and their calls live (an MCP client's session, its calls with status and duration, a call
// in flight, the session's end; never the token or an argument value); the tool list of a
// server with 107 tools narrows to what the filter's words match; a resource template's
// form reads the URI it expands; a subscription to a resource shows each update live.
func TestHostPage(t *testing.T) {
	h := startHost(t)
	b := browser(t)
	run(t, b, chromedp.Navigate(h.page), until(status("demo", "connected"), 60*time.Second))

	// An MCP client on the demo server's route: the page lists its session.
	cs := h.gatewayClient(t, "browser-test-client", "/mcp/servers/demo")
	callOK(t, cs, "echo", map[string]any{"text": "an argument the page must not show"})
	row := `#gateway-sessions tr.gw-session[data-client="browser-test-client"]`
	run(t, b, visible(`#gateway`), until(`!!document.querySelector('`+row+`')`, 20*time.Second),
		until(`!!document.querySelector('#gateway-sessions tr.gw-calls tr[data-method="tools/call"][data-target="echo"][data-status="ok"]')`, 20*time.Second))
	got := text(t, b, row)
	for _, want := range []string{"browser-test-client 9.9", "/mcp/servers/demo", "protocol "} {
		if !strings.Contains(got, want) {
			t.Fatalf("the session's row %q lacks %q", got, want)
		}
	}

	t.Run("gateway calls live", func(t *testing.T) {
		// A call in flight shows in its session's row, and moves to the recent calls,
		// cancelled, when the client cancels it.
		ccx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			_, err := cs.CallTool(ccx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 60000}})
			done <- err
		}()
		run(t, b, until(`!!document.querySelector('`+row+` .gw-inflight li[data-target="slow"]')`, 20*time.Second))
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("the cancelled call ended with %v, want the cancellation", err)
		}
		run(t, b, until(`!!document.querySelector('#gateway-sessions tr.gw-calls tr[data-target="slow"][data-status="cancelled"]')`+
			` && !document.querySelector('`+row+` .gw-inflight')`, 20*time.Second))
	})

	t.Run("tool filter over 107 tools", func(t *testing.T) {
		// The demo server grows to 107 tools (add_tool, through the gateway).
		for i := range 99 { // the demo allows 100 extra tools: the last is for the subscription
			callOK(t, cs, "add_tool", map[string]any{"name": fmt.Sprintf("t%03d", i)})
		}
		run(t, b, until(`(r => r && Number(r.children[5].textContent) === 107)(document.querySelector('tr.server[data-name="demo"]'))`, 30*time.Second),
			click(`tr.server[data-name="demo"] [data-action="select"]`),
			until(`document.querySelectorAll('#pane-tools article.tool').length === 107`, 20*time.Second))
		filter := func(q string) (int, string) {
			t.Helper()
			eval[bool](t, b, fmt.Sprintf(`(i => { i.value = %q; i.dispatchEvent(new Event("input")); return true; })(document.querySelector('#tool-filter'))`, q))
			return eval[int](t, b, `[...document.querySelectorAll('#pane-tools article.tool')].filter(a => !a.hidden).length`),
				text(t, b, `#tool-filter-count`)
		}
		for _, c := range []struct {
			q     string
			shown int
		}{
			{"extra_t04", 10},              // by name
			{"Extra tool t042", 1},         // by title
			{"registered at run time", 99}, // by description
			{"ECHO", 1},                    // any case
			{"mcp__demo__ slow", 1},        // every word
			{"no such tool anywhere", 0},   // none
			{"", 107},                      // cleared
		} {
			shown, count := filter(c.q)
			if shown != c.shown {
				t.Errorf("filter %q shows %d tools, want %d", c.q, shown, c.shown)
			}
			want := fmt.Sprintf("%d of 107 tools", c.shown)
			if c.q == "" {
				want = "107 tools"
			}
			if count != want {
				t.Errorf("filter %q: the count says %q, want %q", c.q, count, want)
			}
		}
		if shown, _ := filter("extra_t098"); shown != 1 {
			t.Fatalf("extra_t098: %d", shown)
		}
		// The filter stays while the tab is shown again.
		run(t, b, click(`#tab-info`), click(`#tab-tools`), until(`document.querySelectorAll('#pane-tools article.tool:not([hidden])').length === 1`, 10*time.Second))
		if v := eval[string](t, b, `document.querySelector('#tool-filter').value`); v != "extra_t098" {
			t.Fatalf("the filter after switching tabs: %q", v)
		}
	})

	t.Run("resource template", func(t *testing.T) {
		run(t, b, click(`#tab-resources`), visible(`[data-resource-template="note"]`),
			chromedp.SendKeys(chromedp.ID(`uri-demo-note-id`), "a b/c"),
			until(`document.querySelector('[data-resource-template="note"] [data-expanded]').dataset.expanded === "demo://notes/a%20b%2Fc"`, 10*time.Second),
			click(`[data-resource-template="note"] button[type=submit]`),
			visible(`[data-read="demo://notes/a%20b%2Fc"][data-result="ok"]`))
		if out := text(t, b, `[data-read="demo://notes/a%20b%2Fc"]`); !strings.Contains(out, "Note a b/c") {
			t.Fatalf("the note read from the template: %q", out)
		}
	})

	t.Run("subscribe", func(t *testing.T) {
		sub := `[data-subscription="demo demo://config.json"]`
		subSel := fmt.Sprintf(`document.querySelector(%q)`, sub)
		run(t, b, click(`tr[data-uri="demo://config.json"] [data-action="subscribe"]`),
			until(subSel+`?.querySelector('.sub-state').textContent === "subscribed, no update yet"`, 20*time.Second))
		callOK(t, cs, "add_tool", map[string]any{"name": "live"})
		run(t, b, until(subSel+`?.dataset.updates === "1"`, 20*time.Second),
			until(`(`+subSel+`?.querySelector('.sub-body').textContent || "").includes("extra_live")`, 20*time.Second))
		run(t, b, click(`tr[data-uri="demo://config.json"] [data-action="unsubscribe"]`),
			until(`!`+subSel+` && !!document.querySelector('tr[data-uri="demo://config.json"] [data-action="subscribe"]')`, 10*time.Second))
		// A resource the server will not subscribe to: the refusal stays, with its reason,
		// until dismissed.
		refused := `document.querySelector('[data-subscription="demo demo://readme"][data-error="true"]')`
		run(t, b, click(`tr[data-uri="demo://readme"] [data-action="subscribe"]`),
			until(`(`+refused+`?.textContent || "").includes("only demo://config.json can be subscribed to")`, 20*time.Second),
			click(`[data-subscription="demo demo://readme"] [data-action="dismiss"]`),
			until(`!`+refused+` && !!document.querySelector('tr[data-uri="demo://readme"] [data-action="subscribe"]')`, 10*time.Second))
		if log := text(t, b, `#activity`); !strings.Contains(log, "demo: subscribed to demo://config.json") ||
			!strings.Contains(log, "demo: demo://config.json updated") || !strings.Contains(log, "demo: unsubscribed from demo://config.json") {
			t.Fatalf("activity:\n%s", log)
		}
	})

	t.Run("session ends", func(t *testing.T) {
		_ = cs.Close()
		run(t, b, until(`!!document.querySelector('#gateway-sessions tr.gw-session.ended[data-client="browser-test-client"]')`, 20*time.Second))
		body := eval[string](t, b, `document.body.innerText`)
		for _, secret := range []string{h.token, "an argument the page must not show"} {
			if strings.Contains(body, secret) {
				t.Fatalf("the page shows %q", secret)
			}
		}
	})
}

// TestBuiltinProfilesChat: the built-in profiles run the agent, so the page of `harness
// run` and of `harness -p web run` opens with the Chat view. Without a key the view says
// what to set; with one (the local model server's, through DEEPSEEK_API_KEY and
// DEEPSEEK_BASE_URL, as a user points the harness at a DeepSeek-compatible endpoint) a
// message sent from the page is answered.
func TestBuiltinProfilesChat(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{Reply: func(*modeltest.Call) modeltest.Reply {
		return modeltest.Reply{Content: "hello from the built-in agent"}
	}})
	bin := harnessbin.Path(t)
	t.Run("run, no key", func(t *testing.T) {
		h := startHostWith(t, bin, nil, "run")
		b := browser(t)
		run(t, b, chromedp.Navigate(h.page), chatReady(20*time.Second),
			until(`(document.querySelector('#chat-notice')?.innerText || "").includes("DEEPSEEK_API_KEY")`, 10*time.Second))
		if n := text(t, b, `#chat-notice`); !strings.Contains(n, "no API key") || strings.Contains(n, srv.Key) {
			t.Errorf("the notice without a key: %q", n)
		}
	})
	t.Run("-p web run, a key", func(t *testing.T) {
		h := startHostWith(t, bin, []string{"DEEPSEEK_API_KEY=" + srv.Key, "DEEPSEEK_BASE_URL=" + srv.URL}, "-p", "web", "run")
		b := browser(t)
		run(t, b, chromedp.Navigate(h.page), chatReady(20*time.Second),
			say("hello"),
			until(`(document.querySelector('#chat-log')?.innerText || "").includes("hello from the built-in agent")`, 30*time.Second))
		if n := eval[bool](t, b, `document.querySelector('#chat-notice').hidden`); !n {
			t.Errorf("a notice with a key: %q", text(t, b, `#chat-notice`))
		}
	})
}
