//go:build browser

package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/plugins/agent"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/plugins/model/openaicompat"
)

// TestChat: the Chat view talks to the host's agent through agent/*: a message sent from
// the page, the model's reasoning and answer streamed into the conversation, its tool call
// shown as a row with arguments and result, the approval the policy asks answered inline,
// the turn's usage, /compact marking where the conversation was summarised, and the
// session listed to reopen.
func TestChat(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{Replies: []modeltest.Reply{
		{Reasoning: "Echo it back.", ToolCalls: []modeltest.ToolCall{{ID: "call_1", Name: "mcp__alpha__echo", Arguments: `{"text":"hello from the chat"}`}}},
		{Reasoning: "It echoed.", Content: "The server said: hello from the chat"},
		{Content: "The user had the server echo a greeting."}, // the summary of /compact
	}})
	s, b := alphaChat(t, srv)
	run(t, b, say("Echo hello from the chat"),
		until(`!!document.querySelector('#chat-log [data-approval] [data-decision="allow"]')`, 20*time.Second))
	if card := text(t, b, `#chat-log [data-approval]`); !strings.Contains(card, "mcp__alpha__echo") || !strings.Contains(card, "hello from the chat") {
		t.Fatalf("the approval card: %q", card)
	}
	run(t, b, click(`#chat-log [data-approval] [data-decision="allow"]`),
		until(`!!document.querySelector('#chat-log [data-turn-end]')`, 20*time.Second))
	log := text(t, b, `#chat-log`)
	for _, want := range []string{"Echo hello from the chat", "The server said: hello from the chat", "mcp__alpha__echo", "ok ·", "allow", "prompt tokens"} {
		if !strings.Contains(log, want) {
			t.Fatalf("the conversation lacks %q:\n%s", want, log)
		}
	}
	// The call's row expands to its arguments and result.
	if row := eval[string](t, b, `(d => d.textContent)(document.querySelector('#chat-log details.call[data-tool="mcp__alpha__echo"]'))`); !strings.Contains(row, `"text": "hello from the chat"`) || !strings.Contains(row, "hello from the chat") {
		t.Fatalf("the call's row: %q", row)
	}
	if r := eval[string](t, b, `document.querySelector('#chat-log details.reasoning pre').textContent`); !strings.Contains(r, "Echo it back.") {
		t.Fatalf("reasoning: %q", r)
	}
	// /compact summarises the conversation (agent/compact) and marks the place.
	run(t, b, say("/compact the greeting"),
		until(`!!document.querySelector('#chat-log details.compaction[data-compaction="manual"]')`, 20*time.Second))
	if mark := eval[string](t, b, `document.querySelector('#chat-log details.compaction').textContent`); !strings.Contains(mark, "conversation compacted (manual: the greeting)") ||
		!strings.Contains(mark, "The user had the server echo a greeting.") {
		t.Fatalf("the compaction's mark: %q", mark)
	}
	// A reload reopens the session from its events: the same conversation.
	id := eval[string](t, b, `document.querySelector('#chat').dataset.session`)
	run(t, b, chromedp.Navigate(s.srv.URL()+"/"), visible(`#chat`),
		until(`[...document.querySelectorAll('#chat-sessions option')].some(o => o.value === `+"`"+id+"`"+`)`, 10*time.Second),
		openSession(id),
		until(`(document.querySelector('#chat-log')?.innerText || "").includes("The server said: hello from the chat")`, 10*time.Second))
}

// TestChatSessionListLate: the sessions' listing asked for by the first New session,
// answered only after the second New session's listing was drawn, is dropped: the list
// keeps the newer session, chosen.
func TestChatSessionListLate(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{})
	s := newStack(t, nil)
	withAgent(t, s, srv, nil)
	b := browser(t)
	const sessions = `[...document.querySelectorAll('#chat-sessions option')].filter(o => o.value)`
	run(t, b, chromedp.Navigate(s.srv.PageURL()), chatReady(10*time.Second),
		until(`document.querySelector('#chat').dataset.listings === "1"`, 10*time.Second),
		chromedp.Evaluate[chromedp.Void](`(() => {
			const f = window.fetch;
			window.fetch = async (...a) => {
				const r = await f(...a);
				if (String(a[0]).endsWith("/v1/call/agent/sessions") && !window.held) {
					window.held = true; // answered with one session; drawn after the list shows two
					await new Promise((ok) => { const see = () => `+sessions+`.length === 2 ? ok() : setTimeout(see, 10); see(); });
				}
				return r;
			};
		})(); null`, chromedp.EvalAsValue),
		click(`#chat-new`),
		until(`window.held === true`, 10*time.Second),
		click(`#chat-new`),
		until(`document.querySelector('#chat').dataset.listings === "3"`, 20*time.Second))
	got := eval[string](t, b, `(l => l.length + " " + l.filter(o => o.selected).map(o => o.value).join(",") + " " + document.querySelector('#chat').dataset.session)(`+sessions+`)`)
	if f := strings.Fields(got); len(f) != 3 || f[0] != "2" || f[1] != f[2] {
		t.Fatalf("the session list after a late listing: %q (count, chosen, the view's session): want both sessions, the view's chosen", got)
	}
}

// alphaChat is a stack with the server alpha and the main agent on srv, which asks before
// alpha's echo runs, and a browser on its page once alpha is connected and the Chat view
// lists the agent.
func alphaChat(t *testing.T, srv *modeltest.Server) (*stack, context.Context) {
	t.Helper()
	s := newStack(t, []string{"alpha"})
	withAgent(t, s, srv, map[string]any{"ask": []string{"alpha/echo"}})
	b := browser(t)
	run(t, b, chromedp.Navigate(s.srv.PageURL()), until(status("alpha", "connected"), 30*time.Second), chatReady(10*time.Second))
	return s, b
}

// withAgent mounts the main agent on the stack, on the model server srv, with the
// permissions perms.
func withAgent(t *testing.T, s *stack, srv *modeltest.Server, perms map[string]any) {
	t.Helper()
	chat, err := openaicompat.NewChat(openaicompat.ChatConfig{Name: "flash", BaseURL: srv.URL, APIKey: srv.Key, Provider: openaicompat.ProviderDeepSeek})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := model.Key.Provide(s.root, model.NewService(map[string]model.Model{"flash": chat}, "")); err != nil {
		t.Fatal(err)
	}
	ctxtest.MountActive(t, s.root, agent.Plugin, map[string]any{"sessionsDir": t.TempDir(), "permissions": perms})
}

// TestChatFastTurn: Send works after a turn that ends before agent/send's answer arrives
// (the page holds the answer until it has drawn the turn's end): the page shows no turn
// running, and the next message is sent and answered.
func TestChatFastTurn(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{Replies: []modeltest.Reply{{Content: "first answer"}, {Content: "second answer"}}})
	s := newStack(t, nil)
	withAgent(t, s, srv, nil)
	b := browser(t)
	run(t, b, chromedp.Navigate(s.srv.PageURL()), chatReady(10*time.Second),
		chromedp.Evaluate[chromedp.Void](`(() => {
			const f = window.fetch;
			window.fetch = async (...a) => {
				const r = await f(...a);
				if (String(a[0]).includes("/v1/call/agent/send") && !window.__held) {
					window.__held = true;
					await new Promise((ok) => { const see = () => document.querySelector("#chat-log [data-turn-end]") ? ok() : setTimeout(see, 10); see(); });
				}
				return r;
			};
		})(); null`, chromedp.EvalAsValue),
		say("one"),
		until(`document.querySelector('#chat').dataset.sends === "1"`, 20*time.Second))
	if st := eval[string](t, b, `[document.querySelector('#chat').dataset.running, document.querySelector('#chat-send').disabled, document.querySelector('#chat-cancel').hidden].join(" ")`); st != "false false true" {
		t.Fatalf("after a turn that ended before its send's answer: running, Send disabled, Cancel hidden = %s", st)
	}
	run(t, b, say("two"),
		until(`(document.querySelector('#chat-log')?.innerText || "").includes("second answer")`, 20*time.Second))
}
