//go:build browser

package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/sampling"
	"github.com/cordisgo/harness/testkit/mcptest"
)

// TestChatQuestions: what a server asks during a chat's tool call shows in the
// conversation. The demo server's ask, called by the model, raises a form that shows next
// to the call's row (not in the page's questions box), answered there; a server's sampling
// request shows what it asks (the messages, the system prompt, the token limit, the model
// preferences) before the person allows it.
func TestChatQuestions(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{Reply: func(c *modeltest.Call) modeltest.Reply {
		last := c.Messages[len(c.Messages)-1]
		switch last.Content {
		case "ask me":
			return modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: "call_ask", Name: "mcp__demo__ask", Arguments: `{}`}}}
		case "summarize":
			return modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: "call_sum", Name: "mcp__s__summarize", Arguments: `{}`}}}
		case "summarize the notes of 2.0":
			return modeltest.Reply{Content: "a summary"}
		}
		return modeltest.Reply{Content: "done: " + last.Content}
	}})
	s := newStack(t, nil)
	// Sampling is offered before the sampler's client connects, as a host with an agent
	// row does.
	if _, err := sampling.Offer(s.root, "host"); err != nil {
		t.Fatal(err)
	}
	h := mcptest.NewHTTP(t, mcptest.NewSampler(mcp.CreateMessageParams{MaxTokens: 321, SystemPrompt: "You summarize release notes.", //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
		ModelPreferences: &mcp.ModelPreferences{Hints: []*mcp.ModelHint{{Name: "claude-3-sonnet"}}, SpeedPriority: 0.25},          //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
		Messages:         []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "summarize the notes of 2.0"}}}})) //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
	ctxtest.Mount(t, s.root, mcpclient.Plugin, map[string]any{"serverName": "s", "transport": "streamable-http", "url": h.URL()})
	withAgent(t, s, srv, map[string]any{"allow": []string{"demo/*", "s/*"}})
	b := browser(t)
	run(t, b, chromedp.Navigate(s.srv.PageURL()), chatReady(10*time.Second),
		say("ask me"),
		until(`!!document.querySelector('#chat-log [data-question]')`, 20*time.Second))
	if next := eval[string](t, b, `document.querySelector('#chat-log [data-question]').previousElementSibling?.dataset.tool || ""`); next != "mcp__demo__ask" {
		t.Errorf("the question follows %q, want the call's row", next)
	}
	if n := eval[int](t, b, `document.querySelectorAll('#questions [data-question]').length`); n != 0 {
		t.Errorf("the question is also in the questions box (%d)", n)
	}
	run(t, b, click(`#chat-log [data-question] [data-answer="accept"]`),
		until(`!document.querySelector('#chat-log [data-question]') && (document.querySelector('#chat-log').innerText.includes("done: "))`, 20*time.Second))

	run(t, b, say("summarize"),
		until(`!!document.querySelector('#chat-log [data-approval] [data-decision="allow"]')`, 20*time.Second))
	card := text(t, b, `#chat-log [data-approval]`)
	for _, want := range []string{"summarize the notes of 2.0", "You summarize release notes.", "321 tokens", "claude-3-sonnet", "speed 0.25"} {
		if !strings.Contains(card, want) {
			t.Errorf("the sampling question lacks %q:\n%s", want, card)
		}
	}
	run(t, b, click(`#chat-log [data-approval] [data-decision="allow"]`),
		until(`document.querySelector('#chat-log').innerText.includes("done: sampled: a summary")`, 20*time.Second))
}
