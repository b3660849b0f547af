//go:build browser

package web_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cordisgo/harness/internal/modeltest"
)

// longAnswer is an answer of n numbered lines, longer than the conversation's view.
func longAnswer(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d of the long answer\n", i)
	}
	return b.String()
}

// atEnd is true when the conversation is scrolled to its end; inView when the element of
// sel is inside the conversation's visible part.
const atEnd = `(l => l.scrollHeight > l.clientHeight && l.scrollHeight - l.scrollTop - l.clientHeight < 2)(document.querySelector('#chat-log'))`

func inView(sel string) string {
	return `(() => { const l = document.querySelector('#chat-log'), c = document.querySelector(` + "`" + sel + "`" + `);
		if (!c) return false;
		const a = l.getBoundingClientRect(), b = c.getBoundingClientRect();
		return b.top >= a.top - 1 && b.bottom <= a.bottom + 1; })()`
}

// TestChatFollows: the Chat view opens a reopened session at its end, and follows a
// pending approval into view although the person scrolled up to read (a question waiting
// for them is never left out of sight).
func TestChatFollows(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{Replies: []modeltest.Reply{
		{Content: longAnswer(120)},
		{ToolCalls: []modeltest.ToolCall{{ID: "call_1", Name: "mcp__alpha__echo", Arguments: `{"text":"follow me"}`}}},
		{Content: "echoed"},
	}})
	s, b := alphaChat(t, srv)
	run(t, b, say("a long one"),
		until(`!!document.querySelector('#chat-log [data-turn-end]')`, 20*time.Second),
		until(atEnd, 5*time.Second))

	// Reopened after a reload: replayed from its log, it opens at its end. Chosen twice at
	// once (the list's change event twice in one task), it is followed once: the answer to
	// the first choice comes after the second was made, and is dropped.
	id := eval[string](t, b, `document.querySelector('#chat').dataset.session`)
	run(t, b, chromedp.Navigate(s.srv.URL()+"/"), visible(`#chat`),
		until(`[...document.querySelectorAll('#chat-sessions option')].some(o => o.value === `+"`"+id+"`"+`)`, 10*time.Second),
		chromedp.Evaluate[chromedp.Void](`window.follows = 0; new MutationObserver((ms) => { window.follows += ms.filter(m => m.attributeName === "data-session").length; })
			.observe(document.querySelector('#chat'), { attributes: true }); null`, chromedp.EvalAsValue),
		chromedp.Evaluate[chromedp.Void](`(l => { l.value = `+"`"+id+"`"+`; l.dispatchEvent(new Event("change")); l.dispatchEvent(new Event("change")); })(document.querySelector('#chat-sessions')); null`, chromedp.EvalAsValue),
		until(`document.querySelector('#chat').dataset.opens === "2"`, 10*time.Second),
		until(`!!document.querySelector('#chat-log [data-turn-end]')`, 10*time.Second),
		until(atEnd, 5*time.Second))
	if n := eval[int](t, b, `window.follows`); n != 1 {
		t.Errorf("the session chosen twice was followed %d times, want once", n)
	}

	// Scrolled up to read, the person is not pulled down by what arrives; a question for
	// them is brought into view.
	run(t, b, chromedp.Evaluate[chromedp.Void](`document.querySelector('#chat-log').scrollTop = 0; null`, chromedp.EvalAsValue),
		until(`document.querySelector('#chat-log').scrollTop === 0`, 5*time.Second),
		say("echo it"),
		until(`!!document.querySelector('#chat-log [data-approval] [data-decision="allow"]')`, 20*time.Second),
		until(inView(`#chat-log [data-approval]`), 5*time.Second))
	run(t, b, click(`#chat-log [data-approval] [data-decision="allow"]`),
		until(`(document.querySelector('#chat-log')?.innerText || "").includes("echoed")`, 20*time.Second))
}
