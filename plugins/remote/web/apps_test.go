//go:build browser

package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/internal/npmci"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// appServers is the suite of the MCP org's example MCP App servers, pinned in
// testdata/appservers.
var appServers = npmci.Suite{Name: "page apps", Dir: "testdata/appservers", Prefix: "plugins/remote/web/testdata/appservers"}

// appServer is one example server of the suite: its npm package and bin, the tool with a
// view, and what its view shows once it rendered the tool's result (a JavaScript
// predicate run in the view's document).
type appServer struct {
	name, pkg, bin, tool, rendered string
}

var exampleApps = []appServer{
	{"basic", "@modelcontextprotocol/server-basic-vanillajs", "mcp-server-basic-vanillajs", "get-time",
		`/\d{4}-\d\d-\d\dT/.test(document.getElementById("server-time")?.textContent || "")`},
	{"react", "@modelcontextprotocol/server-basic-react", "mcp-server-basic-react", "get-time",
		`/\d{4}-\d\d-\d\dT/.test(document.body.innerText)`},
	{"budget", "@modelcontextprotocol/server-budget-allocator", "mcp-budget-allocator-server", "get-budget-data",
		`!!document.querySelector("canvas") && /\$[\d,]+/.test(document.body.innerText)`},
	{"cohort", "@modelcontextprotocol/server-cohort-heatmap", "mcp-cohort-heatmap-server", "get-cohort-data",
		`document.querySelectorAll('[class*="_cell_"]').length >= 50`},
	{"segments", "@modelcontextprotocol/server-customer-segmentation", "mcp-customer-segmentation-server", "get-customer-data",
		`!!document.querySelector("canvas#scatter-chart") && document.querySelectorAll("#legend .legend-item").length === 4`},
	{"scenario", "@modelcontextprotocol/server-scenario-modeler", "mcp-scenario-modeler-server", "get-scenario-data",
		`document.querySelectorAll(".template-select option").length > 1 && document.querySelectorAll(".slider-row").length >= 4`},
	{"monitor", "@modelcontextprotocol/server-system-monitor", "mcp-system-monitor-server", "get-system-info",
		`/\d+%/.test(document.getElementById("memory-percent")?.textContent || "") && !!document.getElementById("info-hostname")?.textContent`},
}

// appSettings is the settings entries of the example servers (stdio, node on the bin).
func appSettings(t *testing.T, servers []appServer) string {
	t.Helper()
	node := appServers.Node(t)
	var b strings.Builder
	for _, a := range servers {
		entry, _ := appServers.Bin(t, a.pkg, a.bin)
		fmt.Fprintf(&b, "  %s:\n    transport: stdio\n    command: %q\n    args: [%q, --stdio]\n", a.name, node, entry)
	}
	return b.String()
}

// openView attaches to the document of the app whose view is inside the element sel: the
// inner frame of the view's sandbox proxy, which Chromium runs in a process of its own (a
// sandboxed frame of an opaque origin) and lists as a target whose ID is the frame's.
func openView(t *testing.T, bcx context.Context, sel string) *docSession {
	t.Helper()
	fcx, cancel := context.WithTimeout(bcx, 30*time.Second)
	defer cancel()
	outer, err := chromedp.Run(fcx, chromedp.Nodes(chromedp.CSS(sel+` iframe.app-frame`)))
	if err != nil || len(outer) == 0 {
		t.Fatalf("the view's frame in %s: %v", sel, err)
	}
	inner, err := chromedp.Run(fcx, chromedp.Nodes(chromedp.CSS(`iframe`), chromedp.FromNode(outer[0])))
	if err != nil || len(inner) == 0 || inner[0].FrameID == "" {
		t.Fatalf("the app's frame in the sandbox proxy: %v", err)
	}
	return attachDoc(t, bcx, target.ID(inner[0].FrameID))
}

// TestApps: the views of the MCP org's example app servers render on the page. For each
// server: its tool card says it has a view; calling the tool from its form renders the view
// in the sandbox (the outer frame from the sandbox's origin, the app in an inner frame of
// an opaque origin), the view reports initialized, gets the call's input and result and
// shows them. Then basic's view calls get-time from inside (its button), which reaches the
// server (a second execution of the tool in the registry's history, the view showing the
// new time), and system-monitor's view polls its app-only tool (visibility ["app"]), which
// the page allows to its view only.
func TestApps(t *testing.T) {
	// Seven node servers start at once: on a busy machine the tree settles later than
	// ctxtest's default allows.
	was := ctxtest.Timeout
	ctxtest.Timeout = 2 * time.Minute
	t.Cleanup(func() { ctxtest.Timeout = was })
	s := newStackWith(t, nil, appSettings(t, exampleApps))
	b := browser(t)
	run(t, b, chromedp.Navigate(s.srv.PageURL()), until(status("basic", "connected"), 60*time.Second))
	for _, a := range exampleApps {
		t.Run(a.name, func(t *testing.T) {
			tool := "mcp__" + a.name + "__" + a.tool
			card := fmt.Sprintf(`[data-tool=%q]`, tool)
			form := fmt.Sprintf(`form[data-call=%q]`, tool)
			run(t, b, until(status(a.name, "connected"), 60*time.Second),
				click(fmt.Sprintf(`tr.server[data-name=%q] [data-action="select"]`, a.name)),
				visible(card+` [data-view]`),
				click(card+` [data-action="open-call"]`),
				click(form+` button[type=submit]`),
				until(fmt.Sprintf(`(e => e && (e.dataset.state === "initialized" || e.dataset.state === "failed"))(document.querySelector('%s .app'))`, form), 60*time.Second))
			if st := eval[string](t, b, fmt.Sprintf(`document.querySelector('%s .app').dataset.state + ": " + document.querySelector('%s .app').innerText`, form, form)); !strings.HasPrefix(st, "initialized") {
				t.Fatalf("the view of %s: %s", tool, st)
			}
			run(t, b, visible(form+` [data-result="ok"]`))
			openView(t, b, form).until(a.rendered, 20*time.Second)
		})
	}

	// The bridge loads with the first view: logged, never asserted.
	t.Logf("the apps' bridge (vendor/ext-apps-bridge.js, %.0f KiB) loaded and ran in %.1f ms",
		eval[float64](t, b, `performance.getEntriesByType("resource").find(e => e.name.endsWith("/vendor/ext-apps-bridge.js")).decodedBodySize / 1024`),
		eval[float64](t, b, `window.__harness.perf.bridgeMs`))

	t.Run("a call from inside a view", func(t *testing.T) {
		form := `form[data-call="mcp__basic__get-time"]`
		run(t, b, click(`tr.server[data-name="basic"] [data-action="select"]`),
			click(`[data-tool="mcp__basic__get-time"] [data-action="open-call"]`),
			click(form+` button[type=submit]`),
			until(`document.querySelector('`+form+` .app')?.dataset.state === "initialized"`, 60*time.Second))
		view := openView(t, b, form)
		view.until(exampleApps[0].rendered, 20*time.Second)
		shown := docValue[string](view, `document.getElementById("server-time")?.textContent`, 20*time.Second)
		before := executions(t, s, "mcp__basic__get-time")
		view.until(`(document.getElementById("get-time-btn").click(), true)`, 5*time.Second)
		view.until(`document.getElementById("server-time").textContent !== `+"`"+shown+"`", 20*time.Second)
		run(t, b, until(`[...document.querySelectorAll('#activity li')].some(li => li.textContent.includes("basic's view calls get-time"))`, 20*time.Second))
		waitExecuted(t, s, "mcp__basic__get-time", before, 20*time.Second, "the view's call of get-time to reach the server")
	})

	t.Run("an app-only tool, called by its view", func(t *testing.T) {
		// system-monitor's view polls poll-system-stats, which only its view may call.
		run(t, b, until(`[...document.querySelectorAll('#activity li')].some(li => li.textContent.includes("monitor's view calls poll-system-stats"))`, 30*time.Second))
		waitExecuted(t, s, "mcp__monitor__poll-system-stats", 0, 20*time.Second, "the view's polls to reach the server")
	})
}

// executions counts the calls of tool that reached it (not those refused before) in the
// tools service's history.
func executions(t *testing.T, s *stack, tool string) int {
	t.Helper()
	reg, ok := toolregistry.Key.Get(s.root)
	if !ok {
		t.Fatal("no tools service")
	}
	n := 0
	for _, r := range reg.History() {
		if r.Tool == tool && r.Outcome != toolregistry.CodeDenied {
			n++
		}
	}
	return n
}

// waitExecuted waits until the tools service has run tool more than n times, woken by
// each execution of it; it fails the test after timeout, naming what it waited for.
func waitExecuted(t *testing.T, s *stack, tool string, n int, timeout time.Duration, what string) {
	t.Helper()
	w, err := toolregistry.Executed.Wake(s.root, func(r toolregistry.Record) bool { return r.Tool == tool })
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	wcx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for executions(t, s, tool) <= n {
		if err := w.Wait(wcx, nil, nil); err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
	}
}

// TestChatApps: the Chat view shows a tool's view under the model's call of it, with the
// call's input and result; the view's own call goes through the session: the agent's
// permissions ask, the question shows in the conversation as the view's, and allowed it
// reaches the server (the view shows the new time), denied it does not.
func TestChatApps(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{Replies: []modeltest.Reply{
		{ToolCalls: []modeltest.ToolCall{{ID: "call_1", Name: "mcp__basic__get-time", Arguments: `{}`}}},
		{Content: "The view shows the time."},
	}})
	s := newStackWith(t, nil, appSettings(t, exampleApps[:1]))
	withAgent(t, s, srv, map[string]any{"ask": []string{"basic/get-time"}})
	const tool = "mcp__basic__get-time"
	pending := `[...document.querySelectorAll('#chat-log [data-approval]')].filter(e => e.querySelector('[data-decision]'))`
	b := browser(t)
	run(t, b, chromedp.Navigate(s.srv.PageURL()), until(status("basic", "connected"), 60*time.Second), chatReady(10*time.Second),
		say("What time is it?"),
		until(pending+`.length === 1`, 20*time.Second),
		click(`#chat-log [data-approval] [data-decision="allow"]`),
		until(`!!document.querySelector('#chat-log [data-turn-end]')`, 20*time.Second),
		until(`(e => e && (e.dataset.state === "initialized" || e.dataset.state === "failed"))(document.querySelector('#chat-log .app'))`, 60*time.Second))
	if st := eval[string](t, b, `(e => e.dataset.state + " " + e.dataset.tool + ": " + e.innerText)(document.querySelector('#chat-log .app'))`); !strings.HasPrefix(st, "initialized "+tool) {
		t.Fatalf("the view in the conversation: %s", st)
	}
	if prev := eval[string](t, b, `document.querySelector('#chat-log .app').previousElementSibling.dataset.tool`); prev != tool {
		t.Errorf("the view follows the row of %q, want the call's", prev)
	}
	view := openView(t, b, `#chat-log`)
	view.until(exampleApps[0].rendered, 20*time.Second)
	shown := docValue[string](view, `document.getElementById("server-time")?.textContent`, 20*time.Second)
	before := executions(t, s, tool)

	// The view's call asks, as the permissions say; allowed, it reaches the server.
	view.until(`(document.getElementById("get-time-btn").click(), true)`, 5*time.Second)
	run(t, b, until(pending+`.length === 1`, 20*time.Second))
	if q := eval[string](t, b, pending+`[0].innerText`); !strings.Contains(q, tool) || !strings.Contains(q, "Its interactive view calls it") {
		t.Fatalf("the view's question: %q", q)
	}
	if n := executions(t, s, tool); n != before {
		t.Fatalf("the view's call ran before it was allowed: %d runs, want %d", n, before)
	}
	run(t, b, chromedp.Evaluate[chromedp.Void](pending+`[0].querySelector('[data-decision="allow"]').click(); null`, chromedp.EvalAsValue))
	waitExecuted(t, s, tool, before, 20*time.Second, "the view's allowed call to reach the server")
	view.until(`document.getElementById("server-time").textContent !== `+"`"+shown+"`", 20*time.Second)

	// Denied, it does not.
	view.until(`(document.getElementById("get-time-btn").click(), true)`, 5*time.Second)
	run(t, b, until(pending+`.length === 1`, 20*time.Second),
		chromedp.Evaluate[chromedp.Void](pending+`[0].querySelector('[data-decision="deny"]').click(); null`, chromedp.EvalAsValue),
		until(pending+`.length === 0 && document.querySelector('#chat-log').innerText.includes("deny — the user refused")`, 20*time.Second))
	if n := executions(t, s, tool); n != before+1 {
		t.Errorf("the view's denied call ran: %d runs, want %d", n, before+1)
	}
}
