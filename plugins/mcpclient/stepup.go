package mcpclient

import (
	"context"
	"fmt"
	"slices"

	"github.com/cordisgo/harness/elicitation"
)

// personHere reports whether a person can be asked to open a page now: a responder (or an
// offer) of URL-mode elicitations is visible from the client's scope — the terminal's form,
// the management page. A step-up (403 insufficient_scope) then runs the browser flow in
// band and retries the call; otherwise the call fails with the login hint.
func (s *supervisor) personHere(context.Context) bool {
	return slices.Contains(elicitation.Modes(s.c), elicitation.ModeURL)
}

// openAuthorization asks the person, as a URL-mode elicitation of the server's, to open the
// authorization page of a step-up; the login goes on when the browser comes back to the
// redirect listener. A decline or a cancel ends the login.
func (s *supervisor) openAuthorization(cx context.Context, url string) error {
	r := &elicitation.Request{Server: s.cfg.ServerName, Scope: s.c.Scope(), Mode: elicitation.ModeURL, URL: url, Call: cx,
		Message: fmt.Sprintf("MCP server %q asks for more access than the harness was granted: open the page to authorize it", s.cfg.ServerName)}
	res, err := elicitation.Elicit(cx, s.c, r)
	switch {
	case res == nil:
		return err
	case res.Action != elicitation.Accept:
		return fmt.Errorf("the authorization page was not opened (%s)", res.Action)
	}
	return nil
}
