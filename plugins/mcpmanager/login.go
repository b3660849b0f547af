package mcpmanager

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/cordisgo/harness/mcpauth"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/secrets"
)

// DefaultLoginTimeout bounds a login: long enough to sign in (and pass a second factor)
// in a browser, short enough that an abandoned login frees its redirect listener.
const DefaultLoginTimeout = 5 * time.Minute

// LoginOptions shape [Manager.Login]. The zero value opens the browser on the host. It is
// a plain value.
type LoginOptions struct {
	// NoBrowser: do not open a browser; the authorization URL is only reported.
	NoBrowser bool `json:"noBrowser,omitempty"`
}

// LoginEvent is what the mcpManager/login stream sends: first the URL to visit, then the
// outcome. It never carries a token. It is a plain value.
type LoginEvent struct {
	Server string `json:"server"`
	// URL is the authorization URL to open (sent once the flow waits for the browser).
	URL string `json:"url,omitempty"`
	// Done is set on the last event; Scope is the granted scope.
	Done  bool   `json:"done,omitempty"`
	Scope string `json:"scope,omitempty"`
}

// authorizerFor resolves name's entry and builds an authorizer sharing the live client's
// credentials key.
func (m *Manager) authorizerFor(name string, openURL func(context.Context, string) error) (*mcpauth.Authorizer, error) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, errClosed()
	}
	var d desired
	ok := false
	if rec := m.records[name]; rec != nil {
		d, ok = m.desiredLocked(rec)
	} else if e := m.settingsEntryLocked(name); e != nil {
		d, ok = desired{e: e, src: SourceSettings}, true
	}
	m.mu.Unlock()
	if !ok {
		return nil, errorf(CodeNotFound, name, "no configured or registered server has this name")
	}
	res, err := d.e.resolve(&secrets.Resolver{LookupEnv: m.hk.lookupEnv, Secrets: m.credentials, Scrubber: secrets.ScrubberOf(m.c)})
	if err != nil {
		if errors.Is(err, secrets.ErrNoCredentials) {
			return nil, errorf(CodeUnavailable, name, "%v", err)
		}
		msg := err.Error()
		if res != nil {
			msg = res.scrub.Replace(msg)
		}
		return nil, errorf(CodeBadRequest, name, "%s", msg)
	}
	a, err := Authorizer(res.cfg, m.log, openURL)
	if e, ok := errors.AsType[*Error](err); ok && e.Code == CodeBadRequest {
		return nil, errorf(e.Code, name, "%s", res.scrub.Replace(e.Msg))
	}
	return a, err
}

// Authorizer returns the interactive OAuth authorizer of the server cfg describes (its
// references expanded) on the user's credentials store, which shares a live client's
// credentials key; openURL shows the authorization URL. It fails with an [*Error]:
// bad_request for a server that does not use OAuth or a configuration mcpauth refuses,
// unavailable when the store cannot be opened.
func Authorizer(cfg mcpclient.Config, log *slog.Logger, openURL func(context.Context, string) error) (*mcpauth.Authorizer, error) {
	if !cfg.UsesOAuth() {
		return nil, errorf(CodeBadRequest, cfg.ServerName, "the server does not use OAuth (a stdio server, oauth.disabled, or a static Authorization header)")
	}
	store, err := mcpclient.CredentialsStore()
	if err != nil {
		return nil, errorf(CodeUnavailable, cfg.ServerName, "credentials store: %v", err)
	}
	opts := cfg.AuthOptions(store)
	opts.Logger = log
	opts.Interactive = true
	opts.OpenURL = openURL
	a, err := mcpauth.New(opts)
	if err != nil {
		return nil, errorf(CodeBadRequest, cfg.ServerName, "%s", err.Error())
	}
	return a, nil
}

// Login runs the OAuth login of server name in this process (the host), so the live client,
// which shares the credentials key, picks the token up at once without a restart. onURL (if
// set) receives the authorization URL; the browser is opened on the host unless
// opts.NoBrowser. It returns when the token is stored, the login fails, or rc ends
// (bounded by [DefaultLoginTimeout]).
//
// It fails with [ErrNotFound] for an unknown name, [ErrBadRequest] for an entry that does
// not use OAuth, [ErrUnavailable] when the manager is stopped; a failed flow is returned
// as is (it matches mcpauth.ErrAuthorization).
func (m *Manager) Login(rcx context.Context, name string, opts LoginOptions, onURL func(string)) (LoginEvent, error) {
	ev, err := login(rcx, name, opts, onURL, m.log, func(open func(context.Context, string) error) (*mcpauth.Authorizer, error) {
		return m.authorizerFor(name, open)
	})
	if err == nil {
		m.log.Info("mcp server logged in", "server", name)
	}
	return ev, err
}

// LoginConfig runs the OAuth login of the server cfg describes (its references expanded)
// in this process as [Manager.Login] does for the manager's entries: a profile's own
// client row, say. Its errors are [Authorizer]'s and the flow's.
func LoginConfig(rcx context.Context, cfg mcpclient.Config, opts LoginOptions, onURL func(string), log *slog.Logger) (LoginEvent, error) {
	return login(rcx, cfg.ServerName, opts, onURL, log, func(open func(context.Context, string) error) (*mcpauth.Authorizer, error) {
		return Authorizer(cfg, log, open)
	})
}

// LogoutConfig deletes the stored token of the server cfg describes (its references
// expanded), as [Manager.Logout] does for the manager's entries.
func LogoutConfig(rcx context.Context, cfg mcpclient.Config, log *slog.Logger) error {
	a, err := Authorizer(cfg, log, nil)
	if err != nil {
		return err
	}
	return a.Logout(rcx)
}

// login is the one login flow: the authorizer made with an opener that reports the URL
// and opens the browser unless opts.NoBrowser, the flow bounded by DefaultLoginTimeout,
// the granted scope read back from the store.
func login(rcx context.Context, name string, opts LoginOptions, onURL func(string), log *slog.Logger,
	authorizer func(open func(context.Context, string) error) (*mcpauth.Authorizer, error)) (LoginEvent, error) {
	a, err := authorizer(func(cx context.Context, u string) error {
		if onURL != nil {
			onURL(u)
		}
		if opts.NoBrowser {
			return nil
		}
		if err := mcpauth.OpenBrowser(cx, u); err != nil {
			log.Warn("mcp login: the browser could not be opened; the URL was reported instead", "server", name, "err", err)
		}
		return nil
	})
	if err != nil {
		return LoginEvent{}, err
	}
	lcx, cancel := context.WithTimeout(rcx, DefaultLoginTimeout)
	defer cancel()
	if err := a.Login(lcx); err != nil {
		return LoginEvent{}, err
	}
	ev := LoginEvent{Server: name, Done: true}
	if rec, err := a.Record(rcx); err == nil && rec != nil {
		ev.Scope = strings.Join(rec.Scopes, " ")
	}
	return ev, nil
}

// Logout deletes server name's stored token; the live client then needs a new login.
func (m *Manager) Logout(rcx context.Context, name string) error {
	a, err := m.authorizerFor(name, nil)
	if err != nil {
		return err
	}
	return a.Logout(rcx)
}
