package mcpauth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// callbackPath is the loopback redirect URI's path.
const callbackPath = "/callback"

// resolveClient picks the client identity, in the order the MCP specification and this
// project prescribe: a pre-registered client from configuration; a client ID metadata
// document URL when the server advertises support; a stored dynamic registration for this
// issuer and redirect URI; a new dynamic registration (RFC 7591), which the caller stores.
func (a *Authorizer) resolveClient(cx context.Context, md *Metadata, rec *Record, redirect string) (*ClientInfo, error) {
	asm := md.AS
	if a.opts.ClientID != "" {
		return &ClientInfo{ID: a.opts.ClientID, Secret: a.opts.ClientSecret, AuthMethod: a.preregisteredMethod(asm.TokenEndpointAuthMethodsSupported),
			Kind: KindPreregistered, Issuer: asm.Issuer}, nil
	}
	if a.opts.ClientMetadataURL != "" && asm.ClientIDMetadataDocumentSupported {
		return &ClientInfo{ID: a.opts.ClientMetadataURL, AuthMethod: AuthNone, Kind: KindMetadataDocument, Issuer: asm.Issuer}, nil
	}
	if rec != nil && rec.Client != nil && rec.Client.Kind == KindDynamic && rec.Client.Issuer == asm.Issuer &&
		rec.Client.RedirectURI == redirect &&
		(rec.Client.SecretExpiresAt.IsZero() || a.now().Before(rec.Client.SecretExpiresAt)) {
		return rec.Client, nil
	}
	if asm.RegistrationEndpoint == "" {
		return nil, &AuthError{Server: a.opts.ServerName, Step: "registration", Err: fmt.Errorf(
			"authorization server %s supports no dynamic client registration and no client ID is configured (set oauth.clientId)", asm.Issuer)}
	}
	method := AuthNone
	if sup := asm.TokenEndpointAuthMethodsSupported; len(sup) > 0 && !slices.Contains(sup, AuthNone) {
		method = selectSecretMethod(sup, true)
	}
	meta := &oauthex.ClientRegistrationMetadata{
		RedirectURIs:            []string{redirect},
		TokenEndpointAuthMethod: method,
		GrantTypes:              []string{"authorization_code", "refresh_token"},
		ResponseTypes:           []string{"code"},
		ClientName:              a.opts.ClientName,
		ApplicationType:         "native",
	}
	resp, err := oauthex.RegisterClient(cx, asm.RegistrationEndpoint, meta, a.opts.HTTPClient)
	if err != nil {
		return nil, &AuthError{Server: a.opts.ServerName, Step: "registration", Err: err}
	}
	method = registeredMethod(method, resp)
	if method == AuthPrivateKeyJWT {
		return nil, &AuthError{Server: a.opts.ServerName, Step: "registration", Err: fmt.Errorf(
			"authorization server %s registered the client for private_key_jwt, which a dynamic registration without a key cannot use", asm.Issuer)}
	}
	a.log.Info("mcp client registered", "server", a.opts.ServerName, "issuer", asm.Issuer)
	return &ClientInfo{ID: resp.ClientID, Secret: resp.ClientSecret, AuthMethod: method, Kind: KindDynamic,
		Issuer: asm.Issuer, RedirectURI: redirect, SecretExpiresAt: resp.ClientSecretExpiresAt}, nil
}

// registeredMethod is the token endpoint authentication the registration response assigns
// (RFC 7591 §3.2.1: the server may replace what was asked for): its
// token_endpoint_auth_method when it names one, else what was asked for; a client given no
// secret authenticates with none.
func registeredMethod(asked string, resp *oauthex.ClientRegistrationResponse) string {
	m := asked
	if resp.TokenEndpointAuthMethod != "" {
		m = resp.TokenEndpointAuthMethod
	}
	if resp.ClientSecret == "" && (m == AuthClientSecretBasic || m == AuthClientSecretPost) {
		m = AuthNone
	}
	return m
}

// listen opens the loopback redirect listener on 127.0.0.1 only: the configured port, else
// the port a stored dynamic registration names (so the registration stays valid), else
// any free port.
func (a *Authorizer) listen(rec *Record) (net.Listener, error) {
	if a.opts.RedirectPort != 0 {
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(a.opts.RedirectPort)))
		if err != nil {
			return nil, fmt.Errorf("redirect listener on the configured port %d: %w", a.opts.RedirectPort, err)
		}
		return ln, nil
	}
	if rec != nil && rec.Client != nil && rec.Client.RedirectURI != "" {
		if u, err := url.Parse(rec.Client.RedirectURI); err == nil && u.Hostname() == "127.0.0.1" && u.Port() != "" {
			if ln, err := net.Listen("tcp", u.Host); err == nil {
				return ln, nil
			}
		}
	}
	return net.Listen("tcp", "127.0.0.1:0")
}

// callbackResult is what the redirect brought.
type callbackResult struct {
	code, iss string
	err       error
}

// authorizationCode runs the authorization code flow with PKCE (S256), the state check
// and the RFC 8707 resource parameter in both requests, and stores the token.
func (a *Authorizer) authorizationCode(cx context.Context, md *Metadata, rec *Record, scopes []string) error {
	if !slices.Contains(md.AS.CodeChallengeMethodsSupported, "S256") && !md.Defaulted {
		return &AuthError{Server: a.opts.ServerName, Step: "authorize", Err: fmt.Errorf("authorization server %s does not support PKCE S256", md.AS.Issuer)}
	}
	ln, err := a.listen(rec)
	if err != nil {
		return &AuthError{Server: a.opts.ServerName, Step: "authorize", Err: err}
	}
	defer func() { _ = ln.Close() }()
	redirect := "http://" + ln.Addr().String() + callbackPath
	client, err := a.resolveClient(cx, md, rec, redirect)
	if err != nil {
		return err
	}
	next := a.recordFor(md, rec)
	next.Client = client
	cfg := a.oauthConfig(next, redirect, scopes)
	state := rand.Text()
	verifier := oauth2.GenerateVerifier()
	authOpts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", md.Resource)}
	if slices.Contains(scopes, "offline_access") {
		// OpenID Connect Core §11: offline_access is honoured only with prompt=consent.
		authOpts = append(authOpts, oauth2.SetAuthURLParam("prompt", "consent"))
	}
	authURL := cfg.AuthCodeURL(state, authOpts...)

	results := make(chan callbackResult, 1)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != callbackPath {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		var res callbackResult
		switch {
		case q.Get("state") != state:
			res.err = errors.New("the redirect's state does not match the request (a forged or stale redirect)")
		case q.Get("error") != "":
			res.err = fmt.Errorf("the authorization server refused: %s %s", q.Get("error"), q.Get("error_description"))
		case q.Get("code") == "":
			res.err = errors.New("the redirect carries no authorization code")
		default:
			res.code, res.iss = q.Get("code"), q.Get("iss")
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if res.err != nil {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, "<!doctype html><title>harness</title><p>Authorization failed: %s</p>", html.EscapeString(res.err.Error()))
		} else {
			fmt.Fprint(w, "<!doctype html><title>harness</title><p>Authorization complete. You can close this window.</p>")
		}
		select {
		case results <- res:
		default:
		}
	})}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(ln)
	}()
	defer func() {
		_ = srv.Close()
		<-served
	}()

	a.mu.Lock()
	a.pending = authURL
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.pending = ""
		a.mu.Unlock()
	}()
	a.log.Info("mcp authorization: waiting for the browser", "server", a.opts.ServerName)
	// The opener may return at once (xdg-open) or only when the browser exits; the
	// redirect may come before either.
	opened := make(chan error, 1)
	go func() { opened <- a.opts.OpenURL(cx, authURL) }()
	var res callbackResult
	for waiting := true; waiting; {
		select {
		case res = <-results:
			waiting = false
		case err := <-opened:
			opened = nil
			if err != nil {
				return &AuthError{Server: a.opts.ServerName, Step: "authorize", Err: fmt.Errorf("open the browser: %w", err)}
			}
		case <-cx.Done():
			return &AuthError{Server: a.opts.ServerName, Step: "authorize", Err: fmt.Errorf("waiting for the browser: %w", context.Cause(cx))}
		}
	}
	if opened != nil {
		// Give an opener that is finishing (a script that drove the login) a moment, so it
		// is reaped; a browser that keeps running is left alone.
		select {
		case err := <-opened:
			if err != nil {
				a.log.Debug("mcp authorization: the browser opener failed after the redirect", "server", a.opts.ServerName, "err", err)
			}
		case <-time.After(2 * time.Second):
		}
	}
	if res.err != nil {
		return &AuthError{Server: a.opts.ServerName, Step: "authorize", Err: res.err}
	}
	// RFC 9207: a present iss must be the issuer; an advertised one must be present.
	if (res.iss != "" && res.iss != md.AS.Issuer) || (res.iss == "" && md.AS.AuthorizationResponseIssParameterSupported) {
		return &AuthError{Server: a.opts.ServerName, Step: "authorize", Err: fmt.Errorf("the redirect's issuer %q is not %q", res.iss, md.AS.Issuer)}
	}
	hcx := context.WithValue(cx, oauth2.HTTPClient, a.opts.HTTPClient)
	t, err := cfg.Exchange(hcx, res.code, oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", md.Resource))
	if err != nil {
		return &AuthError{Server: a.opts.ServerName, Step: "token", Err: err}
	}
	tok := a.convert(t)
	if tok.Scope == "" {
		tok.Scope = strings.Join(scopes, " ")
	}
	next.Token = tok
	next.Scopes = strings.Fields(tok.Scope)
	next.UpdatedAt = a.now()
	return a.store(cx, next)
}

// store saves rec as the current record and wakes waiters.
func (a *Authorizer) store(cx context.Context, rec *Record) error {
	if err := Save(cx, a.opts.Store, a.key, rec); err != nil {
		return err
	}
	a.mu.Lock()
	a.rec, a.loaded = rec.clone(), true
	a.signalLocked()
	a.mu.Unlock()
	a.log.Info("mcp authorization stored", "server", a.opts.ServerName, "scope", rec.Token.Scope)
	return nil
}

// OpenBrowser opens url with $BROWSER when it is set (a list separated like PATH; "%s" in
// an entry is replaced by the URL, else the URL is appended: the convention of git, gh
// and Python's webbrowser), else the platform's opener (xdg-open, open, or rundll32 on
// Windows). Like Python's webbrowser and git, it waits for the command to exit (openers
// return at once; a $BROWSER script may drive the whole login), and tries the next entry
// when one fails.
func OpenBrowser(cx context.Context, url string) error {
	var cmds [][]string
	if b := os.Getenv("BROWSER"); b != "" {
		for _, entry := range strings.Split(b, string(os.PathListSeparator)) {
			f := strings.Fields(entry)
			if len(f) == 0 {
				continue
			}
			subst := false
			for i, arg := range f {
				if strings.Contains(arg, "%s") {
					f[i], subst = strings.ReplaceAll(arg, "%s", url), true
				}
			}
			if !subst {
				f = append(f, url)
			}
			cmds = append(cmds, f)
		}
	}
	switch runtime.GOOS {
	case "darwin":
		cmds = append(cmds, []string{"open", url})
	case "windows":
		cmds = append(cmds, []string{"rundll32", "url.dll,FileProtocolHandler", url})
	default:
		cmds = append(cmds, []string{"xdg-open", url})
	}
	var errs []error
	for _, c := range cmds {
		cmd := exec.CommandContext(cx, c[0], c[1:]...)
		if err := cmd.Run(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c[0], err))
			continue
		}
		return nil
	}
	return fmt.Errorf("no browser could be started (set $BROWSER, or use --no-browser): %w", errors.Join(errs...))
}
