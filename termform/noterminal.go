package termform

import (
	"context"
	"fmt"
	"sync"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/elicitation"
)

// NoTerminal is the responder of the ask policy where there is no terminal to ask on: it
// declines every question, and calls Note once per server that asked, to say how to
// answer. Servers are offered elicitation as on a terminal, so that they list the same
// tools. It is safe for concurrent use.
type NoTerminal struct {
	// Note is told the name of a server the first time it asks.
	Note func(server string)

	told sync.Map // server name → struct{}
}

// Supports reports true: every mode is declined alike.
func (*NoTerminal) Supports(elicitation.Mode) bool { return true }

// Elicit declines r.
func (n *NoTerminal) Elicit(_ context.Context, r *elicitation.Request) (*elicitation.Response, error) {
	if _, told := n.told.LoadOrStore(r.Server, struct{}{}); !told && n.Note != nil {
		n.Note(r.Server)
	}
	return &elicitation.Response{Action: elicitation.Decline}, nil
}

// Choice is what [Provide] needs to pick a process's own responder of servers' questions.
// It is a plain value.
type Choice struct {
	// Policy is the process's elicitation policy.
	Policy elicitation.Policy
	// Terminal is set when the form can be shown: stdin and stderr are a terminal, and
	// stdin is not an MCP stream (serve --stdio). Form (In set) is then the form's options.
	Terminal bool
	Form     Options
	// Answered is set when others answer questions off a terminal (a host's page, a
	// gateway's sessions): the process provides no responder of its own then.
	Answered bool
	// Note says how to answer, once per server that asked where nobody can ([NoTerminal]).
	Note func(server string)
	// Debug is told why the terminal's form could not be made (the process then has none).
	Debug func(err error)
}

// Provide provides the process's own elicitation responder in root as ch says: none for
// decline (servers are then not offered elicitation, unless a plugin provides a responder
// of its own), elicitation.Defaults for defaults, and for ask the terminal's form
// ([Responder]) on a terminal; off one, none when others answer, else [NoTerminal] (servers
// are offered elicitation as on a terminal, so that they list the same tools, and every
// question is declined with Note). Run it before the clients mount, so that they declare
// the capability from their first connection.
func Provide(root *ctx.Context, ch Choice) error {
	var r elicitation.Responder
	name := ""
	switch {
	case ch.Policy == elicitation.PolicyDefaults:
		r, name = elicitation.Defaults{}, "defaults"
	case ch.Policy != elicitation.PolicyAsk, !ch.Terminal && ch.Answered:
		return nil
	case !ch.Terminal:
		r, name = &NoTerminal{Note: ch.Note}, "no-terminal"
	default:
		form, err := New(ch.Form)
		if err != nil {
			if ch.Debug != nil {
				ch.Debug(err)
			}
			return nil
		}
		r, name = form, "terminal"
	}
	if _, err := elicitation.Provide(root, name, r); err != nil {
		return fmt.Errorf("providing the %s elicitation responder: %w", name, err)
	}
	return nil
}
