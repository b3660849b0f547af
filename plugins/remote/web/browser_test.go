//go:build browser

package web_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/elicitation"
	"github.com/cordisgo/harness/internal/demoserver"
	"github.com/cordisgo/harness/internal/npmci"
	"github.com/cordisgo/harness/plugins/console"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpmanager"
	"github.com/cordisgo/harness/plugins/mcpprompts"
	"github.com/cordisgo/harness/plugins/mcpresources"
	"github.com/cordisgo/harness/plugins/remote"
	"github.com/cordisgo/harness/plugins/sysprompt"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/testkit/harnessbin"
)

// demoEnv makes the test binary serve the demo MCP server over stdio.
const demoEnv = "HARNESS_WEBTEST_DEMO"

var updateScreenshots = flag.Bool("update-screenshots", false, "write the screenshots of docs/web")

func TestMain(m *testing.M) {
	var err error
	switch os.Getenv(demoEnv) {
	case "":
		goleak.VerifyTestMain(harnessbin.Main(m))
		return
	case "prompts":
		err = promptServer().Run(context.Background(), &mcp.StdioTransport{})
	default:
		err = demoserver.ServeStdio(context.Background(), demoserver.Options{})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// promptServer is a go-sdk server with two prompt templates, for the prompts tab: review
// (code required, language optional and completed from a list) and hello (no arguments).
func promptServer() *mcp.Server {
	langs := []string{"go", "javascript", "python", "rust"}
	s := mcp.NewServer(&mcp.Implementation{Name: "prompts-demo", Version: "1"}, &mcp.ServerOptions{
		CompletionHandler: func(_ context.Context, r *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			var vals []string
			if r.Params.Argument.Name == "language" {
				for _, l := range langs {
					if strings.HasPrefix(l, r.Params.Argument.Value) {
						vals = append(vals, l)
					}
				}
			}
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: vals, Total: len(vals)}}, nil
		},
	})
	s.AddPrompt(&mcp.Prompt{Name: "review", Title: "Code review", Description: "Asks for a review of a piece of code.",
		Arguments: []*mcp.PromptArgument{
			{Name: "code", Title: "Code", Description: "the code to review", Required: true},
			{Name: "language", Description: "its language"},
		}},
		func(_ context.Context, r *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			lang := r.Params.Arguments["language"]
			if lang == "" {
				lang = "an unnamed language"
			}
			return &mcp.GetPromptResult{Description: "a review request", Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "Review this code, written in " + lang + ":\n" + r.Params.Arguments["code"]}},
				{Role: "assistant", Content: &mcp.TextContent{Text: "I will look at it."}},
			}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "hello", Description: "Says hello."},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello"}}}}, nil
		})
	return s
}

// stack is a host tree like the web profile's under harness run: the tools, prompt,
// resources and prompts services, the page's prepared elicitation responder, a
// profile-row MCP client, the manager with servers from a temporary settings file, the
// remote API and the console.
type stack struct {
	root     *ctx.Context
	srv      *remote.Server
	client   *remote.Client
	settings string
}

// settingsDoc is the settings file of the browser tests: a demo server for each name
// (broken*: a command that does not exist; off*: disabled), then extra, raw entries.
func settingsDoc(names []string, extra string) string {
	var b strings.Builder
	b.WriteString("# MCP servers of the browser test\nservers:\n")
	for _, n := range names {
		switch {
		case strings.HasPrefix(n, "broken"):
			fmt.Fprintf(&b, "  %s:\n    transport: stdio\n    command: /nonexistent/mcp-server\n    reconnect: {maxAttempts: 1}\n", n)
		case strings.HasPrefix(n, "prompts"):
			fmt.Fprintf(&b, "  %s:\n    transport: stdio\n    command: %q\n    env: {%s: prompts}\n", n, os.Args[0], demoEnv)
		case strings.HasPrefix(n, "off"):
			fmt.Fprintf(&b, "  %s:\n    enabled: false\n    transport: stdio\n    command: %q\n    env: {%s: \"1\"}\n", n, os.Args[0], demoEnv)
		default:
			fmt.Fprintf(&b, "  %s:\n    transport: stdio\n    command: %q\n    env: {%s: \"1\"}\n", n, os.Args[0], demoEnv)
		}
	}
	b.WriteString(extra)
	return b.String()
}

func newStack(t *testing.T, names []string) *stack {
	t.Helper()
	return newStackWith(t, names, "")
}

// newStackWith is newStack with extra raw entries in the settings file.
func newStackWith(t *testing.T, names []string, extra string) *stack {
	t.Helper()
	dir := t.TempDir()
	s := &stack{root: ctxtest.New(t), settings: filepath.Join(dir, "mcp-servers.yaml")}
	if err := os.WriteFile(s.settings, []byte(settingsDoc(names, extra)), 0o600); err != nil {
		t.Fatal(err)
	}
	ctxtest.MountActive(t, s.root, toolregistry.Plugin, nil)
	ctxtest.MountActive(t, s.root, sysprompt.Plugin, nil)
	ctxtest.MountActive(t, s.root, mcpresources.Plugin, nil)
	ctxtest.MountActive(t, s.root, mcpprompts.Plugin, nil)
	// As harness run does for a profile with the console: the page's modes are offered
	// before the MCP clients connect, so they declare elicitation; the console, mounted
	// after them, answers.
	if _, err := elicitation.Offer(s.root, "host", elicitation.ModeForm, elicitation.ModeURL); err != nil {
		t.Fatal(err)
	}
	ctxtest.Mount(t, s.root, mcpclient.Plugin, map[string]any{"serverName": "demo", "transport": "stdio",
		"command": os.Args[0], "env": map[string]any{demoEnv: "1"}})
	ctxtest.Mount(t, s.root, mcpmanager.Plugin, map[string]any{"settingsFile": s.settings,
		"credentialsFile": filepath.Join(dir, "credentials.yaml"), "debounceMs": 20})
	rs := ctxtest.MountActive(t, s.root, remote.Plugin, map[string]any{"tokenFile": filepath.Join(dir, "remote.token")})
	ctxtest.MountActive(t, s.root, console.Plugin, nil)
	srv, ok := remote.Key.Get(rs.Context())
	if !ok {
		t.Fatal("no remote server")
	}
	s.srv, s.client = srv, remote.NewClient(srv.URL(), srv.Token())
	return s
}

// browser starts a headless Chromium with a fresh profile and returns its context.
func browser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		// A notice on the terminal, and a failure when CI is set, as for the npm suites.
		npmci.Suite{Name: "browser"}.Unavailable(t, "chromium is not installed (apt-get install -y chromium)")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		// Chromium's singleton socket goes under TMPDIR and stays when the process is
		// killed; a directory of the test's own is removed with it.
		chromedp.Env("TMPDIR=" + t.TempDir()),
		chromedp.WindowSize(1360, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bcx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
	})
	tcx, cancel := context.WithTimeout(bcx, 3*time.Minute)
	t.Cleanup(cancel)
	if err := chromedp.Do(bcx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return tcx
}

// run runs the steps in the browser, failing the test at the first error.
func run(t *testing.T, bcx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	scx, cancel := context.WithTimeout(bcx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(scx, steps...); err != nil {
		body, _ := chromedp.Run(bcx, chromedp.Evaluate[string](`document.body.innerText`))
		t.Fatalf("%v; the page shows:\n%s", err, body)
	}
}

// eval evaluates the JavaScript expression in the page.
func eval[T any](t *testing.T, bcx context.Context, expr string, opts ...chromedp.EvaluateOption) T {
	t.Helper()
	ecx, cancel := context.WithTimeout(bcx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ecx, chromedp.Evaluate[T](expr, opts...))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// text returns the text of the element the CSS selector finds.
func text(t *testing.T, bcx context.Context, sel string) string {
	t.Helper()
	v, err := chromedp.Run(bcx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("%s: %v", sel, err)
	}
	return v
}

// until waits for the JavaScript predicate to hold.
func until(expr string, timeout time.Duration) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(timeout))
}

// poll is until on a timer: background tabs run no animation frames, which until polls on.
func poll(expr string, timeout time.Duration) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(timeout), chromedp.WithPollingInterval(50*time.Millisecond))
}

func click(sel string) chromedp.Action[chromedp.Void] { return chromedp.Click(chromedp.CSS(sel)) }

// chatReady waits until the Chat view shows and lists the profile's one agent.
func chatReady(timeout time.Duration) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(visible(`#chat`), until(`document.querySelectorAll('#chat-agent option').length === 1`, timeout))
}

// say types text into the Chat view's input and sends it.
func say(text string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(chromedp.SendKeys(chromedp.ID(`chat-input`), text), click(`#chat-send`))
}

// openSession chooses the session id in the Chat view's list as a person does: SetValue
// fires the list's input and change events, so the view opens the session once.
func openSession(id string) chromedp.Action[chromedp.Void] {
	return chromedp.SetValue(chromedp.ID(`chat-sessions`), id)
}

func visible(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.WaitVisible(chromedp.CSS(sel))
}

func status(name, s string) string {
	return fmt.Sprintf(`document.querySelector('tr.server[data-name=%q]')?.dataset.status === %q`, name, s)
}

func TestPage(t *testing.T) {
	names := []string{"alpha", "beta", "broken", "off", "prompts"}
	s := newStack(t, names)
	b := browser(t)

	// Load the page: every server of the profile with its status; the token leaves the URL.
	run(t, b, chromedp.Navigate(s.srv.PageURL()),
		until(status("alpha", "connected")+" && "+status("beta", "connected")+" && "+
			status("broken", "failed")+" && "+status("off", "disabled"), 30*time.Second))
	if loc := eval[string](t, b, `location.href`); strings.Contains(loc, "token") {
		t.Fatalf("the token stayed in the address bar: %s", loc)
	}
	if errText := text(t, b, `[data-error="broken"]`); !strings.Contains(errText, "/nonexistent/mcp-server") {
		t.Fatalf("broken's error: %q", errText)
	}

	t.Run("restart", func(t *testing.T) {
		eval[float64](t, b, `window.__t0 = performance.now(); window.__harness.perf.changes.length = 0; 0`)
		run(t, b, click(`tr.server[data-name="alpha"] [data-action="restart"]`),
			until(`window.__harness.perf.changes.some(c => c.name === "alpha" && c.status === "connected")`, 10*time.Second))
		seen := eval[[]string](t, b, `window.__harness.perf.changes.filter(c => c.name === "alpha").map(c => c.status)`)
		took := eval[float64](t, b, `window.__harness.perf.changes.find(c => c.name === "alpha" && c.status === "connected").painted - window.__t0`)
		if i := slices.Index(seen, "starting"); i < 0 || slices.Index(seen[i:], "connected") < 0 {
			t.Fatalf("alpha went through %v, want starting then connected", seen)
		}
		t.Logf("restart: %v, connected on the page %.0f ms after the click", seen, took)
		if took > 2000 {
			t.Fatalf("connected after %.0f ms, want within 2 s", took)
		}
	})

	t.Run("probe", func(t *testing.T) {
		run(t, b, click(`tr.server[data-name="beta"] [data-action="probe"]`),
			visible(`[data-probe="beta"][data-stage="ok"]`))
		got := text(t, b, `[data-probe="beta"]`)
		for _, want := range []string{"Probe OK", "connect", "initialize", "list-tools", "mcp__beta__echo"} {
			if !strings.Contains(got, want) {
				t.Fatalf("probe result %q lacks %q", got, want)
			}
		}
		run(t, b, click(`tr.server[data-name="broken"] [data-action="probe"]`),
			visible(`[data-probe="broken"][data-stage="connect"]`))
	})

	t.Run("disable and enable", func(t *testing.T) {
		run(t, b, click(`tr.server[data-name="beta"] [data-action="disable"]`),
			until(status("beta", "disabled"), 10*time.Second))
		doc, _ := os.ReadFile(s.settings)
		if !strings.Contains(string(doc), "  beta:\n    enabled: false\n") || !strings.HasPrefix(string(doc), "# MCP servers of the browser test\n") {
			t.Fatalf("settings file after disable:\n%s", doc)
		}
		run(t, b, click(`tr.server[data-name="beta"] [data-action="enable"]`),
			until(status("beta", "connected"), 20*time.Second))
		doc, _ = os.ReadFile(s.settings)
		if !strings.Contains(string(doc), "  beta:\n    enabled: true\n") {
			t.Fatalf("settings file after enable:\n%s", doc)
		}
	})

	t.Run("call a tool", func(t *testing.T) {
		run(t, b, click(`tr.server[data-name="alpha"] [data-action="select"]`),
			visible(`[data-tool="mcp__alpha__echo"]`),
			click(`[data-tool="mcp__alpha__echo"] [data-action="open-call"]`),
			chromedp.SendKeys(chromedp.ID(`arg-mcp__alpha__echo-text`), "hello from the page"),
			click(`form[data-call="mcp__alpha__echo"] button[type=submit]`),
			visible(`form[data-call="mcp__alpha__echo"] [data-result="ok"]`))
		if out := text(t, b, `form[data-call="mcp__alpha__echo"] [data-result]`); !strings.Contains(out, "hello from the page") {
			t.Fatalf("echo result %q", out)
		}
		// add returns structured content.
		run(t, b, click(`[data-tool="mcp__alpha__add"] [data-action="open-call"]`),
			chromedp.SendKeys(chromedp.ID(`arg-mcp__alpha__add-a`), "2"),
			chromedp.SendKeys(chromedp.ID(`arg-mcp__alpha__add-b`), "40"),
			click(`form[data-call="mcp__alpha__add"] button[type=submit]`),
			visible(`form[data-call="mcp__alpha__add"] [data-result="ok"]`))
		if out := text(t, b, `form[data-call="mcp__alpha__add"] [data-result]`); !strings.Contains(out, `"sum": 42`) {
			t.Fatalf("add result %q", out)
		}
	})

	t.Run("prompts", func(t *testing.T) {
		// The prompts tab lists the server's templates with their arguments; the form
		// completes a value and gets the prompt, whose messages are shown.
		run(t, b, click(`tr.server[data-name="prompts"] [data-action="select"]`), click(`#tab-prompts`),
			visible(`[data-prompt="review"]`), visible(`[data-prompt="hello"]`))
		card := text(t, b, `[data-prompt="review"]`)
		for _, want := range []string{"Code review", "Asks for a review", "code", "required", "its language"} {
			if !strings.Contains(card, want) {
				t.Fatalf("the review prompt's card %q lacks %q", card, want)
			}
		}
		run(t, b, click(`[data-prompt="review"] [data-action="open-prompt"]`),
			chromedp.SendKeys(chromedp.ID(`parg-prompts-review-code`), "func f() {}"),
			chromedp.SendKeys(chromedp.ID(`parg-prompts-review-language`), "g"),
			until(`[...document.querySelectorAll('#parg-prompts-review-language-values option')].map(o => o.value).join() === "go"`, 10*time.Second),
			chromedp.SendKeys(chromedp.ID(`parg-prompts-review-language`), "o"),
			click(`form[data-get-prompt="review"] button[type=submit]`),
			visible(`form[data-get-prompt="review"] [data-result="ok"]`))
		out := text(t, b, `form[data-get-prompt="review"] [data-result]`)
		for _, want := range []string{"a review request", "Review this code, written in go:\nfunc f() {}", "I will look at it."} {
			if !strings.Contains(out, want) {
				t.Fatalf("the prompt's messages %q lack %q", out, want)
			}
		}
		if roles := eval[string](t, b, `[...document.querySelectorAll('form[data-get-prompt="review"] .message')].map(m => m.dataset.role).join()`); roles != "user,assistant" {
			t.Fatalf("the messages' roles: %q", roles)
		}
		// A required argument left out: the form refuses to send (the browser's check).
		eval[string](t, b, `document.querySelector('#parg-prompts-review-code').value = ""`)
		run(t, b, click(`form[data-get-prompt="review"] button[type=submit]`))
		if eval[bool](t, b, `document.querySelector('#parg-prompts-review-code').validity.valueMissing`) != true {
			t.Fatal("an empty required argument passed the form's check")
		}
		run(t, b, click(`#tab-tools`), click(`tr.server[data-name="alpha"] [data-action="select"]`), visible(`[data-tool="mcp__alpha__slow"]`))
	})

	t.Run("answer an elicitation", func(t *testing.T) {
		// The demo's ask tool asks through elicitation: the Activity shows the form built
		// from the requested schema, defaults filled in; the answer reaches the tool.
		// A question raised by the page's own call shows next to that call.
		q := `form[data-call="mcp__alpha__ask"] [data-question][data-server="alpha"]`
		askTool := func() {
			run(t, b, click(`form[data-call="mcp__alpha__ask"] button[type=submit]`), visible(q+` form`))
		}
		run(t, b, click(`[data-tool="mcp__alpha__ask"] [data-action="open-call"]`))
		askTool()
		id := eval[string](t, b, `document.querySelector('`+q+`').dataset.question`)
		if title := eval[string](t, b, `document.title`); !strings.HasPrefix(title, "(1) ") {
			t.Fatalf("the title with a question waiting: %q", title)
		}
		field := func(name string) string { return fmt.Sprintf("#elicit-%s-%s", id, name) }
		got := eval[string](t, b, fmt.Sprintf(`[%q, %q, %q, %q, %q].map(s => { const e = document.querySelector(s); return e.type === "checkbox" ? String(e.checked) : e.type + "=" + e.value; }).join(" ")`,
			field("name"), field("age"), field("color"), field("subscribe"), field("token")))
		if want := "text=Ada number=36 select-one=green false password="; got != want {
			t.Fatalf("the form's fields and defaults: %q, want %q", got, want)
		}
		if card := text(t, b, q); !strings.Contains(card, "would like to know you better") || !strings.Contains(card, "Favourite colour") || !strings.Contains(card, "In whole years") {
			t.Fatalf("the question's card: %q", card)
		}
		run(t, b, chromedp.SetValue(chromedp.CSS(field("name")), "Grace"),
			chromedp.SendKeys(chromedp.CSS(field("token")), "s3cr3t"),
			chromedp.SetValue(chromedp.CSS(field("color")), "blue"),
			click(q+` [data-answer="accept"]`),
			visible(`form[data-call="mcp__alpha__ask"] [data-result="ok"]`),
			until(`!document.querySelector('`+q+`') && document.querySelector('#questions-box').hidden`, 10*time.Second))
		if out := text(t, b, `form[data-call="mcp__alpha__ask"] [data-result]`); !strings.Contains(out, "accept: age=36, color=blue, name=Grace, subscribe=false, token=6 characters") {
			t.Fatalf("the ask tool's result after accept: %q", out)
		}
		// Decline.
		askTool()
		run(t, b, click(q+` [data-answer="decline"]`),
			until(`(r => r && r.innerText.includes("decline"))(document.querySelector('form[data-call="mcp__alpha__ask"] [data-result]'))`, 10*time.Second))
		if log := text(t, b, `#activity`); !strings.Contains(log, "alpha's question answered: decline") {
			t.Fatalf("activity after the decline:\n%s", log)
		}
		// A URL question: the link and its host; "Open and accept" opens it (window.open is
		// recorded here, the test stays offline) and the server confirms.
		eval[bool](t, b, `window.open = (u) => { window.__opened = u; return null; }; true`)
		run(t, b, chromedp.SetValue(chromedp.ID(`arg-mcp__alpha__ask-mode`), `"url"`),
			click(`form[data-call="mcp__alpha__ask"] button[type=submit]`), visible(q+`[data-mode="url"] [data-answer="accept"]`))
		if card := text(t, b, q); !strings.Contains(card, "Confirm on the demo page.") || !strings.Contains(card, "(example.com)") {
			t.Fatalf("the URL question's card: %q", card)
		}
		run(t, b, click(q+` [data-answer="accept"]`),
			until(`(r => r && r.innerText.includes("accept: confirmed demo-"))(document.querySelector('form[data-call="mcp__alpha__ask"] [data-result]'))`, 10*time.Second))
		if opened := eval[string](t, b, `window.__opened`); !strings.HasPrefix(opened, "https://example.com/harness-demo/confirm?id=demo-") {
			t.Fatalf("opened %q", opened)
		}
	})

	t.Run("progress of a call in flight", func(t *testing.T) {
		// slow reports progress every tenth of its time: the Activity shows the call with
		// its bar, message and elapsed time, and clears it when the call ends.
		row := `#inflight li[data-server="alpha"][data-target="slow"]`
		run(t, b, click(`[data-tool="mcp__alpha__slow"] [data-action="open-call"]`),
			chromedp.SetValue(chromedp.ID(`arg-mcp__alpha__slow-ms`), "2000"),
			click(`form[data-call="mcp__alpha__slow"] button[type=submit]`),
			until(`(b => b && b.max === 2000 && b.value > 0)(document.querySelector('`+row+` progress'))`, 10*time.Second))
		got := text(t, b, row)
		for _, want := range []string{"alpha · slow", "of 2000 ms", " s"} {
			if !strings.Contains(got, want) {
				t.Fatalf("the call in flight shows %q, lacking %q", got, want)
			}
		}
		run(t, b, visible(`form[data-call="mcp__alpha__slow"] [data-result="ok"]`),
			until(`!document.querySelector('`+row+`') && document.querySelector('#inflight-box').hidden`, 10*time.Second))
		if log := text(t, b, `#activity`); !strings.Contains(log, "alpha · slow finished after") {
			t.Fatalf("activity after the call:\n%s", log)
		}
	})
}

// TestLateAnswers: what the person chose last stays on the page when the answer to an
// earlier choice comes after it (claim). The page's fetch holds one answer until the later
// choice is drawn: alpha's tool listing, lost then as a dropped connection loses it, while
// beta's tools are shown; and the read of beta's readme while its config.json is shown.
func TestLateAnswers(t *testing.T) {
	s := newStack(t, []string{"alpha", "beta"})
	b := browser(t)
	run(t, b, chromedp.Navigate(s.srv.PageURL()), until(status("alpha", "connected")+" && "+status("beta", "connected"), 30*time.Second),
		chromedp.Evaluate[chromedp.Void](`(() => {
			window.holds = [];
			const f = window.fetch;
			window.fetch = async (...a) => {
				const r = await f(...a);
				const h = window.holds.find((h) => !h.held && String(a[0]).endsWith(h.path) && String(a[1] && a[1].body).includes(h.body));
				if (!h) return r;
				h.held = true;
				await new Promise((ok) => { const see = () => document.querySelector(h.until) ? ok() : setTimeout(see, 10); see(); });
				h.released = true; // a failure's handling runs in this task
				if (h.lose) throw new TypeError("Failed to fetch");
				return r;
			};
		})(); null`, chromedp.EvalAsValue),
		chromedp.Evaluate[chromedp.Void](`window.holds.push({path: "/v1/call/console/tools", body: '"server":"alpha"', until: '#pane-tools [data-tool^="mcp__beta__"]', lose: true}); null`, chromedp.EvalAsValue),
		click(`tr.server[data-name="alpha"] [data-action="select"]`),
		click(`tr.server[data-name="beta"] [data-action="select"]`),
		until(`window.holds[0].released === true`, 20*time.Second))
	if pane := text(t, b, `#pane-tools`); strings.Contains(pane, "Could not list the tools") || !strings.Contains(pane, "mcp__beta__echo") {
		t.Fatalf("beta's tools after alpha's late failure:\n%s", pane)
	}

	readme, config := `#pane-resources tr[data-uri="demo://readme"]`, `#pane-resources tr[data-uri="demo://config.json"]`
	run(t, b, click(`#tab-resources`), visible(config),
		chromedp.Evaluate[chromedp.Void](`window.holds.push({path: "/v1/call/console/callTool", body: '"uri":"demo://readme"', until: '#resource-out [data-read="demo://config.json"]'}); null`, chromedp.EvalAsValue),
		click(readme+` [data-action="read"]`),
		click(config+` [data-action="read"]`),
		until(`document.querySelector('#resource-out').dataset.reads === "2"`, 20*time.Second))
	if shown := eval[string](t, b, `document.querySelector('#resource-out [data-read]')?.dataset.read || ""`); shown != "demo://config.json" {
		t.Fatalf("the read shown after the readme's late answer: %q, want demo://config.json", shown)
	}
}

// TestPageWithoutToken: a browser that never saw the token gets the sign-in note and no
// data, and the API refuses it.
func TestPageWithoutToken(t *testing.T) {
	s := newStack(t, []string{"alpha"})
	b := browser(t)
	run(t, b, chromedp.Navigate(s.srv.URL()+"/"), visible(`#signin`))
	rows := eval[int](t, b, `document.querySelectorAll("tr.server").length`)
	status := eval[int](t, b, `fetch("/v1/call/mcpManager/list", {method: "POST"}).then(r => r.status)`, chromedp.EvalAwaitPromise)
	if rows != 0 || status != 401 {
		t.Fatalf("without the token: %d rows, list answered %v", rows, status)
	}
	// A wrong token is refused too.
	run(t, b, chromedp.Navigate("about:blank"), chromedp.Navigate(s.srv.URL()+"/#token="+strings.Repeat("0", 64)),
		visible(`#signin`))
}

// TestTabs: each tab keeps one connection to the host (the mux), so with several tabs open
// a call made from one of them is answered from it. With a connection per live view, three
// tabs would hold all six connections a browser allows per host on HTTP/1.1, and the
// answer — or the fourth tab's list — would wait behind them.
func TestTabs(t *testing.T) {
	s := newStack(t, []string{"alpha"})
	b := browser(t)
	tabs := []context.Context{b}
	for range 3 {
		tabcx, cancel := chromedp.NewContext(b)
		t.Cleanup(cancel)
		if err := chromedp.Do(tabcx); err != nil { // the tab lives as long as this first Run's context
			t.Fatalf("opening a tab: %v", err)
		}
		tabs = append(tabs, tabcx)
	}
	for _, tabcx := range tabs {
		run(t, tabcx, chromedp.Navigate(s.srv.PageURL()), poll(status("alpha", "connected"), 30*time.Second))
	}
	q := `[data-question][data-server="alpha"]` // next to the call in the tab that made it, in the Activity elsewhere
	last := tabs[len(tabs)-1]
	// Background tabs are not rendered, so the clicks are the elements' own.
	jsClick := func(sel string) string {
		return `(e => !!e && (e.click(), true))(document.querySelector('` + sel + `'))`
	}
	run(t, last, poll(jsClick(`tr.server[data-name="alpha"] [data-action="select"]`), 10*time.Second),
		poll(jsClick(`[data-tool="mcp__alpha__ask"] [data-action="open-call"]`), 10*time.Second),
		poll(jsClick(`form[data-call="mcp__alpha__ask"] button[type=submit]`), 10*time.Second),
		poll(`!!document.querySelector('`+q+` form')`, 10*time.Second))
	// Every tab shows the question while it waits.
	for _, tabcx := range tabs[:len(tabs)-1] {
		run(t, tabcx, poll(`!!document.querySelector('`+q+`')`, 10*time.Second))
	}
	run(t, last, poll(jsClick(q+` [data-answer="decline"]`), 10*time.Second),
		poll(`(r => r && r.innerText.includes("decline"))(document.querySelector('form[data-call="mcp__alpha__ask"] [data-result]'))`, 10*time.Second))
	for _, tabcx := range tabs {
		run(t, tabcx, poll(`!document.querySelector('`+q+`')`, 10*time.Second))
	}
}
