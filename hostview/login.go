package hostview

import (
	"fmt"

	"github.com/cordisgo/harness/plugins/mcpmanager"
)

// LoginURL tells the person, on Notes, where to log in to server: the browser is opening
// at u (opened), or the URL to open themselves.
func (o Output) LoginURL(server, u string, opened bool) {
	if opened {
		fmt.Fprintf(o.Notes, "Opening the browser to log in to %s. If it does not open, visit:\n  %s\n", server, u)
		return
	}
	fmt.Fprintf(o.Notes, "To log in to %s, open this URL in a browser on this machine:\n  %s\n", server, u)
}

// Login writes a login's event (mcp login NAME): the URL to visit ([Output.LoginURL]),
// then the outcome on Out.
func (o Output) Login(ev mcpmanager.LoginEvent, opened bool) {
	switch {
	case ev.URL != "":
		o.LoginURL(ev.Server, ev.URL, opened)
	case ev.Done && ev.Scope != "":
		fmt.Fprintf(o.Out, "%s: logged in (scope %s)\n", ev.Server, ev.Scope)
	case ev.Done:
		fmt.Fprintf(o.Out, "%s: logged in\n", ev.Server)
	}
}
