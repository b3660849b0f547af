//go:build browser

package web_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/mcpmanager"
)

// TestPerformance measures, with 20 servers, how long the page takes to paint the
// snapshot after the watch stream delivered it (first paint and each status change), and
// the latency of mcpManager/list from Go and from the page. It logs the numbers and
// asserts none: the machine is shared. .ci/run runs it again without -race (docs/web.md).
func TestPerformance(t *testing.T) {
	names := make([]string, 20)
	for i := range names {
		names[i] = fmt.Sprintf("s%02d", i+1)
	}
	s := newStack(t, names)
	b := browser(t)
	all := ""
	for _, n := range names {
		all += status(n, "connected") + " && "
	}
	// The page records a snapshot's paint after the frame is drawn: wait for that record too.
	run(t, b, chromedp.Navigate(s.srv.PageURL()), until(all+"window.__harness.perf.snapshots.length > 0", 60*time.Second))
	first := eval[float64](t, b, `(s => s.painted - s.recv)(window.__harness.perf.snapshots[0])`)
	t.Logf("first paint: %.1f ms after the first snapshot arrived (%d servers)", first, len(names))

	eval[int](t, b, `window.__harness.perf.changes.length = 0`)
	for _, n := range names[:5] {
		if err := s.client.Call(ctxtest.Wait(t), "mcpManager/restart", mcpmanager.NameParams{Name: n}, nil); err != nil {
			t.Fatal(err)
		}
		run(t, b, until(fmt.Sprintf(`window.__harness.perf.changes.some(c => c.name === %q && c.status === "connected")`, n), 20*time.Second))
	}
	lags := eval[[]float64](t, b, `window.__harness.perf.changes.map(c => c.painted - c.recv)`)
	slices.Sort(lags)
	t.Logf("status changes: %d painted, median %.1f ms, max %.1f ms after the snapshot arrived", len(lags), lags[len(lags)/2], lags[len(lags)-1])

	const n = 200
	d := make([]time.Duration, n)
	for i := range d {
		start := time.Now()
		if err := s.client.Call(ctxtest.Wait(t), "mcpManager/list", nil, nil); err != nil {
			t.Fatal(err)
		}
		d[i] = time.Since(start)
	}
	slices.Sort(d)
	t.Logf("mcpManager/list from Go over HTTP, %d calls: p50 %v, p95 %v, max %v%s", n, d[n/2], d[n*95/100], d[n-1], raceNote())

	// The same from the page: fetch with the session cookie, the answer parsed.
	ms := eval[[]float64](t, b, fmt.Sprintf(`(async () => {
		const d = [];
		for (let i = 0; i < %d; i++) {
			const t0 = performance.now();
			const r = await fetch("/v1/call/mcpManager/list", {method: "POST", credentials: "same-origin",
				headers: {"Content-Type": "application/json"}, body: "null"});
			if (!r.ok) throw new Error("list: HTTP " + r.status);
			await r.json();
			d.push(performance.now() - t0);
		}
		return d;
	})()`, n), chromedp.EvalAwaitPromise)
	slices.Sort(ms)
	t.Logf("mcpManager/list from the page (fetch), %d calls: p50 %.2f ms, p95 %.2f ms, max %.2f ms%s", n, ms[n/2], ms[n*95/100], ms[n-1], raceNote())
}

// raceNote says whether the test binary runs under the race detector, which slows the
// host's side of each call several times.
func raceNote() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-race" && s.Value == "true" {
				return " (under -race)"
			}
		}
	}
	return ""
}

// TestScreenshots writes docs/web/*.png with -update-screenshots:
//
//	go test -tags browser -run TestScreenshots ./plugins/remote/web/ -update-screenshots
func TestScreenshots(t *testing.T) {
	if !*updateScreenshots {
		t.Skip("run with -update-screenshots to write docs/web/*.png")
	}
	dir := filepath.Join("..", "..", "..", "docs", "web")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := newStack(t, []string{"github", "filesystem", "notes", "prompts", "broken", "off"})
	b := browser(t)
	shot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(b, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(t, b, chromedp.EmulateViewport(1280, 820),
		chromedp.Navigate(s.srv.PageURL()),
		until(status("github", "connected")+" && "+status("filesystem", "connected")+" && "+status("notes", "connected")+" && "+
			status("broken", "failed")+" && "+status("off", "disabled"), 30*time.Second),
		click(`tr.server[data-name="notes"] [data-action="probe"]`),
		visible(`[data-probe="notes"][data-stage="ok"]`))
	shot("servers.png")

	run(t, b, click(`[data-probe="notes"] button`),
		click(`tr.server[data-name="github"] [data-action="select"]`),
		visible(`[data-tool="mcp__github__add"]`),
		click(`[data-tool="mcp__github__add"] [data-action="open-call"]`),
		chromedp.SendKeys(chromedp.ID(`arg-mcp__github__add-a`), "2"),
		chromedp.SendKeys(chromedp.ID(`arg-mcp__github__add-b`), "40"),
		click(`form[data-call="mcp__github__add"] button[type=submit]`),
		visible(`form[data-call="mcp__github__add"] [data-result="ok"]`),
		click(`[data-tool="mcp__github__image"] [data-action="open-call"]`),
		click(`form[data-call="mcp__github__image"] button[type=submit]`),
		visible(`form[data-call="mcp__github__image"] [data-result="ok"] img`),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#detail').scrollIntoView(); null`, chromedp.EvalAsValue))
	shot("detail-tools.png")

	run(t, b, click(`#tab-resources`), visible(`#pane-resources table`),
		click(`#pane-resources tbody tr:first-child button`), visible(`#pane-resources .out h3`),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#detail').scrollIntoView(); null`, chromedp.EvalAsValue))
	shot("detail-resources.png")

	run(t, b, click(`tr.server[data-name="prompts"] [data-action="select"]`), click(`#tab-prompts`),
		visible(`[data-prompt="review"]`),
		click(`[data-prompt="review"] [data-action="open-prompt"]`),
		chromedp.SendKeys(chromedp.ID(`parg-prompts-review-code`), "for i := range n { total += i }"),
		chromedp.SendKeys(chromedp.ID(`parg-prompts-review-language`), "go"),
		click(`form[data-get-prompt="review"] button[type=submit]`),
		visible(`form[data-get-prompt="review"] [data-result="ok"]`),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#detail').scrollIntoView(); null`, chromedp.EvalAsValue))
	shot("detail-prompts.png")

	// Activity: a question from a server (the demo's ask tool) and a call in flight.
	run(t, b, click(`#tab-tools`), click(`tr.server[data-name="github"] [data-action="select"]`),
		visible(`[data-tool="mcp__github__ask"]`),
		click(`[data-tool="mcp__github__slow"] [data-action="open-call"]`),
		chromedp.SetValue(chromedp.ID(`arg-mcp__github__slow-ms`), "60000"),
		click(`form[data-call="mcp__github__slow"] button[type=submit]`),
		click(`[data-tool="mcp__github__ask"] [data-action="open-call"]`),
		click(`form[data-call="mcp__github__ask"] button[type=submit]`),
		visible(`[data-question][data-server="github"] form`),
		until(`(b => b && b.value > 0)(document.querySelector('#inflight li[data-target="slow"] progress'))`, 20*time.Second),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#activity-h').scrollIntoView(); null`, chromedp.EvalAsValue))
	shot("activity.png")
	run(t, b, click(`[data-question][data-server="github"] [data-answer="cancel"]`),
		until(`!document.querySelector('[data-question]')`, 10*time.Second))
}
