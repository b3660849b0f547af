package mcpauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// Grant names accepted in [Options.Grant].
const (
	// GrantAuthorizationCode is the interactive flow (a browser): authorization code
	// with PKCE, then refresh tokens. The default.
	GrantAuthorizationCode = "authorization_code"
	// GrantClientCredentials is machine-to-machine: the client's own credentials
	// (a secret, or a private key for private_key_jwt) buy the token; no user.
	GrantClientCredentials = "client_credentials"
	// GrantEnterprise is enterprise-managed authorization: an identity provider's ID
	// token exchanged (RFC 8693) for an identity assertion, then a JWT bearer grant
	// (RFC 7523) at the MCP server's authorization server.
	GrantEnterprise = "enterprise"
)

// Token endpoint authentication methods.
const (
	AuthClientSecretBasic = "client_secret_basic"
	AuthClientSecretPost  = "client_secret_post"
	AuthPrivateKeyJWT     = "private_key_jwt"
	AuthNone              = "none"
)

// Client identity kinds stored in [ClientInfo.Kind].
const (
	KindPreregistered    = "preregistered"
	KindMetadataDocument = "metadata-document"
	KindDynamic          = "dynamic"
)

// MaxStepUps bounds the re-authorizations one request may trigger with 403
// insufficient_scope.
const MaxStepUps = 3

// refreshSkew: a token this close to its expiry is refreshed before it is sent, so a
// request never races the expiry on the wire.
const refreshSkew = 30 * time.Second

// Options configure an [Authorizer]. The zero value of every optional field is usable.
type Options struct {
	// ServerName is the configured name, used in messages and the login hint.
	ServerName string
	// LoginCommand is the command line the login hint names (default LoginCommand(ServerName)):
	// a server the command line defines, not a profile or settings file, needs its flags.
	LoginCommand string
	// ServerURL is the MCP endpoint; required.
	ServerURL string
	// Grant is GrantAuthorizationCode (default), GrantClientCredentials or GrantEnterprise.
	Grant string
	// ClientID and ClientSecret are a pre-registered client; tried first.
	ClientID     string
	ClientSecret string
	// ClientMetadataURL is a client ID metadata document URL (an https URL that is the
	// client ID), used when the authorization server advertises support.
	ClientMetadataURL string
	// AuthMethod is the pre-registered client's token endpoint authentication method
	// (client_secret_basic, client_secret_post, private_key_jwt or none); default: chosen
	// from the server's metadata (client_secret_basic when it allows it, else
	// client_secret_post; none without a secret; private_key_jwt with a key file).
	AuthMethod string
	// PrivateKeyFile is a PEM private key (EC P-256 or RSA) for private_key_jwt client
	// authentication; SigningAlg is ES256 or RS256 (default: by the key's type).
	PrivateKeyFile string
	SigningAlg     string
	// Scopes, when set, are requested instead of the discovered ones.
	Scopes []string
	// RedirectPort is the loopback redirect listener's port (0: any free port, reusing a
	// dynamic client's registered port when it is free).
	RedirectPort int
	// ClientName is the client_name sent with dynamic registration (default "harness").
	ClientName string
	// Enterprise configures GrantEnterprise.
	Enterprise *EnterpriseOptions
	// Store keeps credentials (nil: an in-memory store).
	Store Store
	// HTTPClient sends metadata, registration and token requests (nil: a default client).
	HTTPClient *http.Client
	// Interactive lets a 401 start the browser flow; otherwise it yields [ErrNeedsAuth].
	Interactive bool
	// StepUp, if set, reports whether a 403 insufficient_scope may start the browser flow
	// now (through OpenURL) although Interactive is false: a step-up in band, when a person
	// is there to open the page. When it reports false, the request fails with
	// [ErrNeedsAuth] and the login hint, as without it.
	StepUp func(cx context.Context) bool
	// OpenURL shows the authorization URL to the user (nil: [OpenBrowser]).
	OpenURL func(cx context.Context, url string) error
	// Now is the clock for token expiry (nil: time.Now).
	Now func() time.Time
	// Logger receives diagnostics, never token values (nil: discard).
	Logger *slog.Logger
	// Sensitive, if set, is told the token values the authorizer hands out and holds (the
	// access token it returns, the refresh token beside it), so that the host can mask them
	// wherever they show up ([secrets.Scrubber]). It must be safe for concurrent use and
	// quick: it is called with the authorizer's lock held.
	Sensitive func(value string)
}

// EnterpriseOptions configure enterprise-managed authorization.
type EnterpriseOptions struct {
	// IdPIssuer is the identity provider's issuer URL; its token endpoint performs the
	// RFC 8693 exchange.
	IdPIssuer string
	// IdPTokenEndpoint is the identity provider's token endpoint; "" reads it from the
	// provider's metadata.
	IdPTokenEndpoint string
	// IdPClientID and IdPClientSecret authenticate the exchange at the identity provider.
	IdPClientID     string
	IdPClientSecret string
	// IDToken returns the user's ID token from the identity provider (e.g. read from the
	// file a single sign-on agent maintains).
	IDToken func(cx context.Context) (string, error)
}

// Authorizer obtains, stores and refreshes the tokens of one MCP server entry. It is
// safe for concurrent use: token refreshes are serialised (so a rotated refresh token is
// used once), and so are interactive flows.
type Authorizer struct {
	opts Options
	key  Key
	now  func() time.Time
	log  *slog.Logger

	flow sync.Mutex // serialises authorization flows (held while a browser login runs)

	mu      sync.Mutex // guards the fields below; held across a refresh
	rec     *Record    // the stored record as last seen; nil: none
	loaded  bool
	gen     uint64 // the hub generation rec was loaded at
	meta    *Metadata
	pending string // the authorization URL of a flow in progress
	// stepUps counts re-authorizations per challenged scope set since the last answer
	// that was not a 403 insufficient_scope, so a server that keeps refusing costs at most
	// MaxStepUps logins overall, not per request.
	stepUps map[string]int
}

// takeStepUp reports whether another step-up for scopes is allowed and counts it.
func (a *Authorizer) takeStepUp(scopes []string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	k := strings.Join(scopes, " ")
	if a.stepUps[k] >= MaxStepUps {
		return false
	}
	if a.stepUps == nil {
		a.stepUps = map[string]int{}
	}
	a.stepUps[k]++
	return true
}

// granted reports whether the stored token was granted every one of scopes (and there is
// at least one).
func (a *Authorizer) granted(cx context.Context, scopes []string) bool {
	if len(scopes) == 0 {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	rec, err := a.loadLocked(cx)
	if err != nil || rec == nil || rec.Token == nil {
		return false
	}
	for _, sc := range scopes {
		if !slices.Contains(rec.Scopes, sc) {
			return false
		}
	}
	return true
}

// resetStepUps forgets step-up attempts after an accepted request.
func (a *Authorizer) resetStepUps() {
	a.mu.Lock()
	if len(a.stepUps) > 0 {
		a.stepUps = nil
	}
	a.mu.Unlock()
}

// New returns an Authorizer for opts.
func New(opts Options) (*Authorizer, error) {
	if opts.ServerURL == "" {
		return nil, errors.New("mcpauth: ServerURL is required")
	}
	switch opts.Grant {
	case "":
		opts.Grant = GrantAuthorizationCode
	case GrantAuthorizationCode:
	case GrantClientCredentials:
		if opts.ClientID == "" || (opts.ClientSecret == "" && opts.PrivateKeyFile == "") {
			return nil, fmt.Errorf("mcp server %q: the client_credentials grant needs a client ID and a secret or a private key file", opts.ServerName)
		}
	case GrantEnterprise:
		if e := opts.Enterprise; e == nil || (e.IdPIssuer == "" && e.IdPTokenEndpoint == "") || e.IDToken == nil || opts.ClientID == "" {
			return nil, fmt.Errorf("mcp server %q: the enterprise grant needs an identity provider (its issuer or token endpoint), an ID token source and a client ID", opts.ServerName)
		}
	default:
		return nil, fmt.Errorf("mcp server %q: unknown grant %q (want %s, %s or %s)", opts.ServerName, opts.Grant,
			GrantAuthorizationCode, GrantClientCredentials, GrantEnterprise)
	}
	switch opts.AuthMethod {
	case "", AuthClientSecretBasic, AuthClientSecretPost, AuthPrivateKeyJWT, AuthNone:
	default:
		return nil, fmt.Errorf("mcp server %q: unknown token endpoint auth method %q", opts.ServerName, opts.AuthMethod)
	}
	if opts.PrivateKeyFile != "" {
		if _, _, err := loadSigningKey(opts.PrivateKeyFile, opts.SigningAlg); err != nil {
			return nil, fmt.Errorf("mcp server %q: %w", opts.ServerName, err)
		}
	}
	if opts.Store == nil {
		opts.Store = &MemoryStore{}
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	if opts.OpenURL == nil {
		opts.OpenURL = OpenBrowser
	}
	if opts.ClientName == "" {
		opts.ClientName = "harness"
	}
	a := &Authorizer{opts: opts, now: opts.Now, log: opts.Logger}
	if a.now == nil {
		a.now = time.Now
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	a.key = Key{Server: opts.ServerURL, Client: opts.ClientID}
	return a, nil
}

// Key returns the store key of this server entry.
func (a *Authorizer) Key() Key { return a.key }

// Changed returns a channel closed when a new token is stored for this entry's key by any
// Authorizer of this process (a login, a refresh, a machine grant, a logout). Take a
// fresh channel after each wake-up.
func (a *Authorizer) Changed() <-chan struct{} {
	_, ch := changes.current(a.key)
	return ch
}

// PendingURL returns the authorization URL of a login in progress, or "".
func (a *Authorizer) PendingURL() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.pending
}

// LoggedIn reports whether a token (or a refresh token) is stored.
func (a *Authorizer) LoggedIn(cx context.Context) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	rec, err := a.loadLocked(cx)
	return err == nil && rec != nil && rec.Token != nil && (rec.Token.AccessToken != "" || rec.Token.RefreshToken != "")
}

// Logout revokes the stored tokens at the authorization server when it has a revocation
// endpoint (RFC 7009; a failure there is logged, not returned) and deletes the stored
// record (tokens and dynamic registration) of this entry.
func (a *Authorizer) Logout(cx context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if rec, err := a.loadLocked(cx); err == nil && rec != nil && rec.Token != nil && rec.RevocationEndpoint != "" {
		// The refresh token first: revoking it ends the grant, access tokens included.
		for _, t := range []struct{ value, hint string }{{rec.Token.RefreshToken, "refresh_token"}, {rec.Token.AccessToken, "access_token"}} {
			if t.value == "" {
				continue
			}
			if err := a.revoke(cx, rec, t.value, t.hint); err != nil {
				a.log.Warn("mcp logout: revocation at the authorization server failed; the token is deleted locally",
					"server", a.opts.ServerName, "err", err)
			}
		}
	}
	if err := Delete(cx, a.opts.Store, a.key); err != nil {
		return err
	}
	a.rec, a.loaded = nil, true
	a.signalLocked()
	return nil
}

func (a *Authorizer) loadLocked(cx context.Context) (*Record, error) {
	gen, _ := changes.current(a.key)
	if a.loaded && gen == a.gen {
		return a.rec, nil
	}
	rec, err := a.opts.Store.Load(cx, a.key)
	if err != nil {
		return nil, err
	}
	a.rec, a.loaded, a.gen = rec, true, gen
	return rec, nil
}

// signalLocked tells the process's other Authorizers of this key that the store changed;
// a.rec is already current.
func (a *Authorizer) signalLocked() {
	changes.notify(a.key)
	a.gen, _ = changes.current(a.key)
}

// usable reports whether t's access token may be sent now.
func (a *Authorizer) usable(t *Token) bool {
	return t != nil && t.AccessToken != "" && (t.Expiry.IsZero() || a.now().Add(refreshSkew).Before(t.Expiry))
}

// AccessToken returns the access token to send, refreshing it first when it is about to
// expire (and, for machine-to-machine grants with known endpoints, requesting a new one).
// It returns "" when there is none: the request then goes out without one and a 401
// starts the flow.
func (a *Authorizer) AccessToken(cx context.Context) (tok string, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.opts.Sensitive != nil {
		defer func() {
			if tok != "" {
				a.opts.Sensitive(tok)
			}
			if a.rec != nil && a.rec.Token != nil && a.rec.Token.RefreshToken != "" {
				a.opts.Sensitive(a.rec.Token.RefreshToken)
			}
		}()
	}
	rec, err := a.loadLocked(cx)
	if err != nil {
		return "", err
	}
	if rec != nil && a.usable(rec.Token) {
		return rec.Token.AccessToken, nil
	}
	if rec != nil && rec.Token != nil && rec.Token.RefreshToken != "" && rec.TokenEndpoint != "" {
		tok, err := a.refreshLocked(cx, "")
		if err == nil {
			return tok, nil
		}
		a.log.Info("mcp token refresh failed", "server", a.opts.ServerName, "err", err)
	}
	if a.opts.Grant != GrantAuthorizationCode && rec != nil && rec.TokenEndpoint != "" {
		if err := a.machineGrantLocked(cx, nil, nil); err == nil && a.rec != nil && a.rec.Token != nil {
			return a.rec.Token.AccessToken, nil
		}
	}
	return "", nil
}

// refreshLocked refreshes with the stored refresh token under the store's lock. When
// another process or goroutine rotated it meanwhile, the stored (newer) token is adopted
// instead, so a refresh token is never sent twice. rejected, when set, is an access
// token the server refused: a stored token equal to it is not adopted.
func (a *Authorizer) refreshLocked(cx context.Context, rejected string) (string, error) {
	var out string
	var refreshErr error
	err := a.opts.Store.Update(cx, a.key, func(cur *Record) (*Record, error) {
		if cur == nil || cur.Token == nil || cur.Token.RefreshToken == "" {
			return cur, errors.New("no refresh token stored")
		}
		if a.usable(cur.Token) && cur.Token.AccessToken != rejected &&
			(a.rec == nil || a.rec.Token == nil || cur.Token.AccessToken != a.rec.Token.AccessToken) {
			out = cur.Token.AccessToken // someone else refreshed: adopt theirs
			return cur, nil
		}
		tok, err := a.tokenRequest(cx, cur, func(cfg *oauth2.Config, hcx context.Context) (*oauth2.Token, error) {
			// x/oauth2 refreshes an expired token through its token source.
			return cfg.TokenSource(hcx, &oauth2.Token{RefreshToken: cur.Token.RefreshToken, Expiry: time.Unix(1, 0)}).Token()
		})
		if err != nil {
			refreshErr = err
			var re *oauth2.RetrieveError
			if errors.As(err, &re) && (re.ErrorCode == "invalid_grant" || re.ErrorCode == "invalid_client") {
				cur.Token = nil // the grant is gone: log in again
				return cur, nil
			}
			return cur, err
		}
		if tok.Scope == "" {
			tok.Scope = cur.Token.Scope
		}
		cur.Token = tok
		cur.UpdatedAt = a.now()
		out = tok.AccessToken
		return cur, nil
	})
	if rec, lerr := a.opts.Store.Load(cx, a.key); lerr == nil {
		a.rec, a.loaded = rec, true
	}
	if refreshErr != nil {
		return "", &AuthError{Server: a.opts.ServerName, Step: "refresh", Err: refreshErr}
	}
	if err != nil {
		return "", &AuthError{Server: a.opts.ServerName, Step: "refresh", Err: err}
	}
	a.log.Debug("mcp token refreshed", "server", a.opts.ServerName)
	a.signalLocked()
	return out, nil
}

// tokenRequest runs one token endpoint request for rec's client with do and converts the
// answer. Expiry is computed with the Authorizer's clock.
func (a *Authorizer) tokenRequest(cx context.Context, rec *Record, do func(*oauth2.Config, context.Context) (*oauth2.Token, error)) (*Token, error) {
	cfg := a.oauthConfig(rec, "", nil)
	hcx := context.WithValue(cx, oauth2.HTTPClient, a.opts.HTTPClient)
	t, err := do(cfg, hcx)
	if err != nil {
		return nil, err
	}
	return a.convert(t), nil
}

func (a *Authorizer) convert(t *oauth2.Token) *Token {
	out := &Token{AccessToken: t.AccessToken, TokenType: t.TokenType, RefreshToken: t.RefreshToken}
	if t.ExpiresIn > 0 {
		out.Expiry = a.now().Add(time.Duration(t.ExpiresIn) * time.Second)
	} else if !t.Expiry.IsZero() {
		out.Expiry = t.Expiry
	}
	if s, ok := t.Extra("scope").(string); ok {
		out.Scope = s
	}
	return out
}

// oauthConfig builds the x/oauth2 configuration of rec's client.
func (a *Authorizer) oauthConfig(rec *Record, redirect string, scopes []string) *oauth2.Config {
	cfg := &oauth2.Config{
		Endpoint:    oauth2.Endpoint{AuthURL: rec.AuthEndpoint, TokenURL: rec.TokenEndpoint},
		RedirectURL: redirect,
		Scopes:      scopes,
	}
	if rec.Client != nil {
		cfg.ClientID = rec.Client.ID
		switch rec.Client.AuthMethod {
		case AuthClientSecretBasic:
			cfg.ClientSecret = rec.Client.Secret
			cfg.Endpoint.AuthStyle = oauth2.AuthStyleInHeader
		case AuthClientSecretPost:
			cfg.ClientSecret = rec.Client.Secret
			cfg.Endpoint.AuthStyle = oauth2.AuthStyleInParams
		default: // none, private_key_jwt: client_id in the body, no secret
			cfg.Endpoint.AuthStyle = oauth2.AuthStyleInParams
		}
	}
	return cfg
}

// preregisteredMethod is the configured client's token endpoint authentication.
func (a *Authorizer) preregisteredMethod(supported []string) string {
	switch {
	case a.opts.AuthMethod != "":
		return a.opts.AuthMethod
	case a.opts.PrivateKeyFile != "":
		return AuthPrivateKeyJWT
	default:
		return selectSecretMethod(supported, a.opts.ClientSecret != "")
	}
}

// selectSecretMethod picks the token endpoint authentication for a client with a secret
// (or none without one) from what the server supports; RFC 8414 makes
// client_secret_basic the default when it lists nothing.
func selectSecretMethod(supported []string, hasSecret bool) string {
	if !hasSecret {
		return AuthNone
	}
	if len(supported) == 0 || slices.Contains(supported, AuthClientSecretBasic) {
		return AuthClientSecretBasic
	}
	if slices.Contains(supported, AuthClientSecretPost) {
		return AuthClientSecretPost
	}
	return AuthClientSecretBasic
}

// unionScopes returns a's scopes followed by b's that a lacks.
func unionScopes(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// selectScopes implements the MCP scope selection: configured scopes, else the
// challenge's, else the resource's scopes_supported, else none; offline_access added for
// the interactive grant when the authorization server supports it; and, on step-up, the
// union with what was granted before.
func (a *Authorizer) selectScopes(md *Metadata, challenges []oauthex.Challenge, granted []string) []string {
	scopes := slices.Clone(a.opts.Scopes)
	if len(scopes) == 0 {
		scopes = challengeScopes(challenges)
	}
	if len(scopes) == 0 && md.PRM != nil {
		scopes = slices.Clone(md.PRM.ScopesSupported)
	}
	if a.opts.Grant == GrantAuthorizationCode && slices.Contains(md.AS.ScopesSupported, "offline_access") &&
		!slices.Contains(scopes, "offline_access") {
		scopes = append(scopes, "offline_access")
	}
	return unionScopes(granted, scopes)
}

// recordFor starts a record for md, keeping rec's client and scopes.
func (a *Authorizer) recordFor(md *Metadata, rec *Record) *Record {
	out := &Record{}
	if rec != nil {
		out = rec.clone()
	}
	out.Resource = md.Resource
	out.Issuer = md.AS.Issuer
	out.AuthEndpoint = md.AS.AuthorizationEndpoint
	out.TokenEndpoint = md.AS.TokenEndpoint
	out.TokenMethods = slices.Clone(md.AS.TokenEndpointAuthMethodsSupported)
	out.RevocationEndpoint = md.AS.RevocationEndpoint
	out.Challenge = nil // answered by the token this record is for
	return out
}

// discover runs [Discover] and caches the result.
func (a *Authorizer) discover(cx context.Context, challenges []oauthex.Challenge) (*Metadata, error) {
	md, err := Discover(cx, a.opts.HTTPClient, a.opts.ServerURL, challenges)
	if err != nil {
		return nil, &AuthError{Server: a.opts.ServerName, Step: "discovery", Err: err}
	}
	a.mu.Lock()
	a.meta = md
	a.mu.Unlock()
	return md, nil
}

// Login runs the authorization flow now (interactive or not, whatever Options.Interactive
// says: a login is always allowed to open the browser). Discovery starts from the challenge
// a refused request of this entry last met (stored by [Authorizer.Transport], so a client
// that reported needs-auth hands its challenge to the login, in this process or another),
// else from the server's answer to a real MCP exchange (initialize, then tools/list)
// without a token: its resource_metadata URL and its scope are used. When that challenge
// said insufficient_scope, the login asks for the union of the granted and the challenged
// scopes (step-up). It returns when the token is stored.
func (a *Authorizer) Login(cx context.Context) error {
	a.mu.Lock()
	rec, err := a.loadLocked(cx)
	a.mu.Unlock()
	if err != nil {
		return err
	}
	var challenges []oauthex.Challenge
	if rec != nil && rec.Challenge != nil {
		challenges = rec.Challenge.challenges()
	} else if challenges, err = a.challenge(cx); err != nil {
		return err
	}
	return a.authorize(cx, challenges, challengeError(challenges) == "insufficient_scope")
}

// challenge runs the start of an MCP session without a token (the go-sdk client: initialize,
// then tools/list, as a client would) and returns the WWW-Authenticate challenges of the
// first answer that refused it (none when the server answered everything).
func (a *Authorizer) challenge(cx context.Context) ([]oauthex.Challenge, error) {
	base := a.opts.HTTPClient.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	ct := &captureChallenge{base: base}
	client := mcp.NewClient(&mcp.Implementation{Name: a.opts.ClientName, Version: "login"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	cs, err := client.Connect(cx, &mcp.StreamableClientTransport{
		Endpoint: a.opts.ServerURL, HTTPClient: &http.Client{Transport: ct}, DisableStandaloneSSE: true, MaxRetries: -1,
	}, nil)
	if err == nil {
		_, _ = cs.ListTools(cx, nil)
		_ = cs.Close()
	}
	if c := ct.get(); c != nil {
		return c, nil
	}
	if err != nil && cx.Err() != nil {
		return nil, &AuthError{Server: a.opts.ServerName, Step: "discovery", Err: err}
	}
	return nil, nil
}

// captureChallenge is the RoundTripper of a login's probe: it keeps the challenges of the
// first 401 or 403 and ends the exchange there.
type captureChallenge struct {
	base http.RoundTripper
	mu   sync.Mutex
	cs   []oauthex.Challenge
}

func (c *captureChallenge) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(r)
	if err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
		return resp, err
	}
	cs := parseChallenges(resp.Header)
	drain(resp)
	c.mu.Lock()
	if c.cs == nil {
		c.cs = cs
	}
	c.mu.Unlock()
	return nil, errChallenged
}

func (c *captureChallenge) get() []oauthex.Challenge {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cs
}

var errChallenged = errors.New("the server asks for authorization")

// noteChallenge stores the Bearer challenge of a refused request, when it differs from
// the stored one, so the next login starts from it.
func (a *Authorizer) noteChallenge(cx context.Context, challenges []oauthex.Challenge) {
	ch := challengeOf(challenges)
	if ch == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if rec, err := a.loadLocked(cx); err == nil && rec != nil && reflect.DeepEqual(rec.Challenge, ch) {
		return
	}
	err := a.opts.Store.Update(cx, a.key, func(cur *Record) (*Record, error) {
		if cur == nil {
			cur = &Record{Resource: a.opts.ServerURL}
		}
		cur.Challenge = ch
		return cur, nil
	})
	if err != nil {
		a.log.Warn("mcp authorization: storing the server's challenge failed", "server", a.opts.ServerName, "err", err)
		return
	}
	if rec, err := a.opts.Store.Load(cx, a.key); err == nil {
		a.rec, a.loaded = rec, true
	}
}

// authorize obtains a new token by the configured grant. stepUp unions the granted
// scopes with the challenge's.
func (a *Authorizer) authorize(cx context.Context, challenges []oauthex.Challenge, stepUp bool) error {
	a.flow.Lock()
	defer a.flow.Unlock()
	md, err := a.discover(cx, challenges)
	if err != nil {
		return err
	}
	if a.opts.Grant != GrantAuthorizationCode {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.machineGrantLocked(cx, md, challenges)
	}
	a.mu.Lock()
	rec, err := a.loadLocked(cx)
	a.mu.Unlock()
	if err != nil {
		return err
	}
	var granted []string
	if stepUp && rec != nil {
		granted = rec.Scopes
	}
	return a.authorizationCode(cx, md, rec, a.selectScopes(md, challenges, granted))
}

// unauthorized handles a 401 answered to a request that carried sent (maybe ""): a newer
// token obtained meanwhile is used as is; a rejected token is refreshed; a machine grant
// requests a new token; an interactive authorizer runs the flow; anything else is
// [ErrNeedsAuth].
func (a *Authorizer) unauthorized(cx context.Context, sent string, challenges []oauthex.Challenge) (string, error) {
	a.mu.Lock()
	rec, err := a.loadLocked(cx)
	if err != nil {
		a.mu.Unlock()
		return "", err
	}
	if rec != nil && a.usable(rec.Token) && rec.Token.AccessToken != sent {
		tok := rec.Token.AccessToken
		a.mu.Unlock()
		return tok, nil
	}
	reason := "not logged in"
	if rec != nil && rec.Token != nil && rec.Token.RefreshToken != "" && rec.TokenEndpoint != "" {
		tok, err := a.refreshLocked(cx, sent)
		if err == nil {
			a.mu.Unlock()
			return tok, nil
		}
		reason = "the stored login expired or was revoked"
		a.log.Info("mcp token refresh after 401 failed", "server", a.opts.ServerName, "err", err)
	} else if sent != "" {
		reason = "the server rejected the stored token"
	}
	a.mu.Unlock()
	if a.opts.Grant == GrantAuthorizationCode && !a.opts.Interactive {
		a.noteChallenge(cx, challenges)
		return "", &NeedsAuthError{Server: a.opts.ServerName, Hint: a.loginHint(), Reason: reason}
	}
	if err := a.authorize(cx, challenges, false); err != nil {
		return "", err
	}
	return a.AccessToken(cx)
}

// Record returns a copy of the stored record (nil when there is none). Its token values
// are the caller's to protect: print it only through its String method.
func (a *Authorizer) Record(cx context.Context) (*Record, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	rec, err := a.loadLocked(cx)
	return rec.clone(), err
}

// Reload makes the next use re-read the store, for a login stored by another process
// (whose writes this process's Authorizers are not told about).
func (a *Authorizer) Reload() {
	a.mu.Lock()
	a.loaded = false
	a.mu.Unlock()
}

// loginHint is what a NeedsAuthError tells the user to do.
func (a *Authorizer) loginHint() string {
	if a.opts.LoginCommand != "" {
		return "run `" + a.opts.LoginCommand + "`"
	}
	return LoginHint(a.opts.ServerName)
}
