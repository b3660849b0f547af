package mcpauth

import (
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Transport returns an http.RoundTripper that authorizes every request through base:
// it sets the current access token (refreshed before it expires); on a 401 it refreshes
// (or, for machine-to-machine grants, requests a new token; or, when interactive, runs
// the login flow) and retries once; without any of those it fails with a
// [*NeedsAuthError]. On a 403 with error="insufficient_scope" it re-authorizes with the
// union of the granted and the challenged scopes and retries, at most [MaxStepUps] times
// for one challenged scope set until a request is accepted again; with the authorization
// code grant that takes a browser, so it happens when the authorizer is interactive or
// Options.StepUp allows it, and otherwise fails with the login hint. A 403 that asks only
// for scopes the token was granted fails at once: a new login would get the same token.
// A request whose body cannot be replayed is not retried. The RoundTripper is safe for
// concurrent use and never modifies the caller's request.
func (a *Authorizer) Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{a: a, base: base}
}

type transport struct {
	a    *Authorizer
	base http.RoundTripper
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	cx := req.Context()
	a := t.a
	tok, err := a.AccessToken(cx)
	if err != nil {
		return nil, &AuthError{Server: a.opts.ServerName, Step: "token", Err: err}
	}
	retried401 := false
	for attempt := 0; ; attempt++ {
		r := req.Clone(cx)
		if attempt > 0 && req.Body != nil && req.Body != http.NoBody {
			if req.GetBody == nil {
				return nil, &AuthError{Server: a.opts.ServerName, Step: "token", Err: errNoReplay}
			}
			if r.Body, err = req.GetBody(); err != nil {
				return nil, err
			}
		}
		if tok != "" {
			r.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := t.base.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
		switch {
		case resp.StatusCode == http.StatusUnauthorized && !retried401 && replayable:
			retried401 = true
			challenges := parseChallenges(resp.Header)
			drain(resp)
			if tok, err = a.unauthorized(cx, tok, challenges); err != nil {
				return nil, err
			}
		case resp.StatusCode == http.StatusForbidden && challengeError(parseChallenges(resp.Header)) == "insufficient_scope" &&
			a.granted(cx, challengeScopes(parseChallenges(resp.Header))):
			// The token was granted every scope the server asks for: another login would get
			// the same token, so none is started (a server that refuses regardless does not
			// make the client loop).
			scopes := challengeScopes(parseChallenges(resp.Header))
			drain(resp)
			return nil, &AuthError{Server: a.opts.ServerName, Step: "step-up",
				Err: fmt.Errorf("the server refuses the token for want of scope %s, which the token was granted: a new login would not change it", strings.Join(scopes, " "))}
		case resp.StatusCode == http.StatusForbidden && replayable &&
			challengeError(parseChallenges(resp.Header)) == "insufficient_scope" &&
			t.a.takeStepUp(challengeScopes(parseChallenges(resp.Header))):
			challenges := parseChallenges(resp.Header)
			drain(resp)
			a.log.Info("mcp server asks for more scope", "server", a.opts.ServerName, "scope", challengeScopes(challenges))
			if a.opts.Grant == GrantAuthorizationCode && !a.opts.Interactive && (a.opts.StepUp == nil || !a.opts.StepUp(cx)) {
				// The next login asks for the union of the granted and the challenged scopes.
				a.noteChallenge(cx, challenges)
				return nil, &NeedsAuthError{Server: a.opts.ServerName, Hint: a.loginHint(),
					Reason: fmt.Sprintf("the server asks for more scope: %s", strings.Join(challengeScopes(challenges), " "))}
			}
			if err := a.authorize(cx, challenges, true); err != nil {
				return nil, err
			}
			if tok, err = a.AccessToken(cx); err != nil {
				return nil, err
			}
		default:
			if resp.StatusCode != http.StatusForbidden {
				a.resetStepUps()
			}
			return resp, nil
		}
	}
}

type replayError struct{}

func (replayError) Error() string { return "the request body cannot be replayed after authorization" }

var errNoReplay error = replayError{}

// drain discards and closes a response that is being retried.
func drain(resp *http.Response) {
	_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
	_ = resp.Body.Close()
}
