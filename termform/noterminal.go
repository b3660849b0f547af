package termform

import (
	"context"
	"sync"

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
