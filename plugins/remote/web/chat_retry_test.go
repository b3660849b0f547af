//go:build browser

package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cordisgo/harness/internal/modeltest"
)

// TestChatRetry: a turn that ended incomplete (its answer's stream cut after part of it was
// shown) or failed (a model error) offers Retry, which runs the message again through
// agent/retry; the answer comes, and the button goes with the new turn. A turn that ended
// well offers none.
func TestChatRetry(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{Replies: []modeltest.Reply{
		{Content: "the first half of an answer that the stream cuts off somewhere", Cut: modeltest.CutDrop},
		{Content: "the whole answer"},
		{Status: 400, Message: "a request the model refused"},
		{Content: "answered after the failure"},
	}})
	s := newStack(t, nil)
	withAgent(t, s, srv, nil)
	b := browser(t)
	last := `[...document.querySelectorAll('#chat-log [data-turn-end]')].pop()`
	run(t, b, chromedp.Navigate(s.srv.PageURL()), chatReady(10*time.Second),
		say("answer me"),
		until(last+`?.dataset.turnEnd === "incomplete"`, 20*time.Second),
		until(`document.querySelector('#chat').dataset.running === "false"`, 10*time.Second))
	if n := eval[int](t, b, `document.querySelectorAll('#chat-log [data-retry]').length`); n != 1 {
		t.Fatalf("%d Retry buttons after an incomplete turn, want 1", n)
	}
	run(t, b, click(`#chat-log [data-retry]`),
		until(last+`?.dataset.turnEnd === "done"`, 20*time.Second))
	if log := text(t, b, `#chat-log`); !strings.Contains(log, "the whole answer") || strings.Count(log, "answer me") != 2 {
		t.Fatalf("after Retry, the conversation:\n%s", log)
	}
	if n := eval[int](t, b, `document.querySelectorAll('#chat-log [data-retry]').length`); n != 0 {
		t.Fatalf("%d Retry buttons after a turn that ended well", n)
	}

	// A failed turn: the same.
	run(t, b, say("and again"),
		until(last+`?.dataset.turnEnd === "error"`, 20*time.Second),
		until(`!!document.querySelector('#chat-log [data-retry]')`, 10*time.Second),
		click(`#chat-log [data-retry]`),
		until(`(document.querySelector('#chat-log')?.innerText || "").includes("answered after the failure")`, 20*time.Second),
		until(`document.querySelectorAll('#chat-log [data-retry]').length === 0`, 10*time.Second))
}
