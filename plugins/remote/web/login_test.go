//go:build browser

package web_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/cordisgo/harness/internal/oauthtest"
	"github.com/cordisgo/harness/mcpauth"
	"github.com/cordisgo/harness/plugins/mcpclient"
)

// fillAndSubmit fills oidc-provider's development login form (user alice) and submits the
// first form of the page; it reports whether there was one.
const fillAndSubmit = `(() => {
	const f = document.querySelector("form");
	if (!f) return false;
	const set = (n, v) => { const i = f.querySelector("input[name=" + n + "]"); if (i) i.value = v; };
	set("login", "alice");
	set("password", "secret");
	f.requestSubmit ? f.requestSubmit() : f.submit();
	return true;
})()`

// TestLogin: a server behind the real authorization server (oidc-provider) shows
// needs-auth with a Log in button; clicking it opens the authorization page in a new
// tab, where the user logs in and consents, and the row turns connected without a
// restart.
func TestLogin(t *testing.T) {
	_, hosted := oauthtest.StartProtected(t)
	mcpclient.SetCredentialsStore(mcpauth.NewFileStore(t.TempDir() + "/credentials.json"))
	t.Cleanup(func() { mcpclient.SetCredentialsStore(nil) })

	s := newStackWith(t, nil, fmt.Sprintf("  hosted:\n    transport: streamable-http\n    url: %s\n", hosted.URL))
	b := browser(t)
	login := `tr.server[data-name="hosted"] [data-action="login"]`
	run(t, b, chromedp.Navigate(s.srv.PageURL()), until(status("hosted", "needs-auth"), 30*time.Second), visible(login))
	if errText := text(t, b, `[data-error="hosted"]`); !strings.Contains(errText, "harness mcp login hosted") {
		t.Fatalf("hosted's needs-auth hint: %q", errText)
	}

	// The click opens the authorization URL in a new tab.
	tabs := chromedp.WaitNewTarget(b, func(i *target.Info) bool { return i.Type == "page" && i.URL != "" && i.URL != "about:blank" })
	run(t, b, click(login))
	var tab *docSession
	select {
	case id := <-tabs:
		tab = attachDoc(t, b, id)
	case <-time.After(20 * time.Second):
		t.Fatal("no tab opened for the authorization URL")
	}
	// The user: the login form, then the consent form, until the redirect's answer.
	tab.until(`location.href !== "about:blank" && document.readyState === "complete"`, 20*time.Second)
	for step := 0; ; step++ {
		if step == 6 {
			t.Fatal("the authorization flow did not end after 6 forms")
		}
		before := docEval[string](tab, `location.href`)
		t.Logf("step %d at %s", step, before)
		if !docEval[bool](tab, fillAndSubmit) {
			break
		}
		// The next page, loaded (across the navigation, which the wait survives).
		tab.until(fmt.Sprintf(`location.href !== %q && document.readyState === "complete"`, before), 20*time.Second)
	}
	if body := docEval[string](tab, `document.body.innerText`); strings.Contains(strings.ToLower(body), "error") {
		t.Fatalf("the redirect answered: %s", body)
	}

	// Back on the page (brought to the front: a background tab gets no animation frames,
	// which the polling uses): the row turns connected through the watch stream.
	if _, err := chromedp.CallBrowser(b, target.ActivateTarget, target.ActivateTargetParams{TargetID: chromedp.FromContext(b).Target.TargetID}); err != nil {
		t.Fatalf("activating the page's tab: %v", err)
	}
	run(t, b, until(status("hosted", "connected"), 20*time.Second))
	if log := text(t, b, `#activity`); !strings.Contains(log, "hosted: logged in") && !strings.Contains(log, "hosted: login finished") {
		t.Fatalf("activity after the login:\n%s", log)
	}
}
