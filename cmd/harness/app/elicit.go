package app

import (
	"os"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/elicitation"
	"github.com/cordisgo/harness/mcpauth"
	"github.com/cordisgo/harness/profiles"
	"github.com/cordisgo/harness/termform"
	"github.com/cordisgo/harness/termui"
)

// elicitationPolicy returns the policy of this invocation (elicitation.ResolvePolicy): the
// --elicitation flag, else $HARNESS_ELICITATION, else the profile's elicitation key (which
// --set overlays), else ask.
func (a *invocation) elicitationPolicy(p *profiles.Profile) (elicitation.Policy, error) {
	env, _ := lookupEnv(a.env, elicitation.PolicyEnv)
	profile := ""
	if p != nil {
		profile = p.Elicitation
	}
	pol, err := elicitation.ResolvePolicy(a.elicitation, env, profile)
	if err != nil {
		return "", usageErrorf("%v", err)
	}
	return pol, nil
}

// provideResponder provides the invocation's own elicitation responder in root, as its
// policy says (termform.Provide): the terminal's form when stdin and stderr are a terminal
// and stdin is not the MCP stream of serve --stdio; off a terminal, none for a host (its
// page and gateway sessions answer), else every question declined with a line that says how
// to answer. While a form is shown, the live lines at the bottom of the terminal (progress
// bar, start-up spinner) are held off the screen.
func (a *invocation) provideResponder(root *ctx.Context, p *profiles.Profile) error {
	pol, err := a.elicitationPolicy(p)
	if err != nil {
		return err
	}
	in, _ := a.stdin.(*os.File)
	ch := termform.Choice{Policy: pol, Terminal: in != nil && !a.stdinIsProtocol && a.term != nil && termui.IsTerminal(in),
		Answered: a.hosting || a.stdinIsProtocol,
		Note: func(server string) {
			a.out().Note("mcp server %s asked a question, and there is no terminal to answer it on: declined; "+
				"run on a terminal, or answer with the form's defaults (--elicitation defaults)", server)
		},
		Debug: func(err error) { a.logger.Debug("no terminal form for elicitations", "err", err) }}
	if ch.Terminal {
		ch.Form = termform.Options{In: in, Keyboard: a.keyboard(), Out: a.stderr, Open: mcpauth.OpenBrowser, Hold: a.term.Hold, Events: root}
	}
	return termform.Provide(root, ch)
}

// keyboard is the terminal's one reader (termform.Keyboard), shared by the servers' forms
// and the chat, made the first time it is asked for; nil when stdin is not a terminal or is
// the MCP stream of serve --stdio.
func (a *invocation) keyboard() *termform.Keyboard {
	a.keysOnce.Do(func() {
		if in, ok := a.stdin.(*os.File); ok && !a.stdinIsProtocol && termui.IsTerminal(in) {
			a.keys, _ = termform.NewKeyboard(in)
		}
	})
	return a.keys
}
