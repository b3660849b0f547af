package mcpclient

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"strings"
	"sync"

	"github.com/cordisgo/harness/internal/redact"
	"github.com/cordisgo/harness/mcpauth"
)

// OAuthConfig is the authorization of a streamable-http entry. Its zero value is what most
// hosted servers need: when the server answers 401 with an OAuth challenge, the client
// discovers its authorization server, registers itself dynamically and waits for
// `harness mcp login NAME` (status "needs-auth"); the token is stored and refreshed. Set
// fields only for servers that need a pre-registered client, fixed scopes, a fixed redirect
// port or a machine-to-machine grant. Secrets belong in ${secret:…} or ${VAR} templates.
// It is a plain value; see docs/authorization.md.
type OAuthConfig struct {
	// Disabled turns authorization off: a 401 is then an ordinary connection failure (default false).
	Disabled bool `json:"disabled"`
	// Grant is "authorization_code" (a browser login, the default), "client_credentials" (machine-to-machine) or "enterprise" (an identity provider's ID token exchanged for access).
	Grant string `json:"grant,omitempty"`
	// ClientID is a pre-registered client, used instead of dynamic registration; required for client_credentials and enterprise.
	ClientID string `json:"clientId,omitempty"`
	// ClientSecret is the pre-registered client's secret (use a ${secret:…} template); default none, a public client.
	ClientSecret string `json:"clientSecret,omitempty"`
	// AuthMethod is the token endpoint authentication: client_secret_basic, client_secret_post, private_key_jwt or none; default chosen from the server's metadata.
	AuthMethod string `json:"authMethod,omitempty"`
	// ClientMetadataURL is an https client ID metadata document URL, used as the client ID when the server supports that; default none.
	ClientMetadataURL string `json:"clientMetadataUrl,omitempty"`
	// PrivateKeyFile is a PEM private key (EC P-256 or RSA) for private_key_jwt client authentication; default none.
	PrivateKeyFile string `json:"privateKeyFile,omitempty"`
	// SigningAlg is the private_key_jwt algorithm, ES256 or RS256; default by the key's type.
	SigningAlg string `json:"signingAlg,omitempty"`
	// Scopes are requested instead of the server's challenge or scopes_supported; default none (discovered).
	Scopes []string `json:"scopes,omitempty"`
	// RedirectPort is the port of the 127.0.0.1 redirect listener for browser logins; default 0, any free port.
	RedirectPort int `json:"redirectPort"`
	// IdPIssuer is the identity provider's issuer URL for the enterprise grant.
	IdPIssuer string `json:"idpIssuer,omitempty"`
	// IdPTokenEndpoint is the identity provider's token endpoint, where the ID token is exchanged (enterprise grant); default read from the provider's metadata at idpIssuer.
	IdPTokenEndpoint string `json:"idpTokenEndpoint,omitempty"`
	// IdPClientID is the harness's client ID at the identity provider (enterprise grant).
	IdPClientID string `json:"idpClientId,omitempty"`
	// IdPClientSecret is that client's secret at the identity provider (enterprise grant).
	IdPClientSecret string `json:"idpClientSecret,omitempty"`
	// IDTokenFile is a file holding the user's current ID token from the identity provider, read at each exchange (enterprise grant).
	IDTokenFile string `json:"idTokenFile,omitempty"`
	// LoginCommand is the command line the needs-auth status tells the user to run; default `harness mcp login NAME`. The CLI sets it for a server of its --http flag, with the flags that define it.
	LoginCommand string `json:"loginCommand,omitempty"`
}

// set reports whether any field differs from the zero value.
func (o OAuthConfig) set() bool { return !reflect.ValueOf(o).IsZero() }

// redacted masks the secrets (references such as ${secret:…} stay visible).
func (o OAuthConfig) redacted() OAuthConfig {
	r := o
	r.Scopes = append([]string(nil), o.Scopes...)
	r.ClientSecret = redact.Value(o.ClientSecret)
	r.IdPClientSecret = redact.Value(o.IdPClientSecret)
	return r
}

// templateFields calls f with the oauth block's template-capable strings (the client and
// identity provider credentials, the key and ID token files).
func (o *OAuthConfig) templateFields(f func(key string, v *string)) {
	f("oauth.clientId", &o.ClientID)
	f("oauth.clientSecret", &o.ClientSecret)
	f("oauth.privateKeyFile", &o.PrivateKeyFile)
	f("oauth.idpIssuer", &o.IdPIssuer)
	f("oauth.idpTokenEndpoint", &o.IdPTokenEndpoint)
	f("oauth.idpClientId", &o.IdPClientID)
	f("oauth.idpClientSecret", &o.IdPClientSecret)
	f("oauth.idTokenFile", &o.IDTokenFile)
}

// secrets lists the values to mask in reports.
func (o OAuthConfig) secrets() []string { return []string{o.ClientSecret, o.IdPClientSecret} }

func (c Config) validateOAuth(v *validator) {
	o := c.OAuth
	if !o.set() {
		return
	}
	if c.Transport != TransportStreamableHTTP {
		v.addf("oauth", "only for transport %q", TransportStreamableHTTP)
		return
	}
	switch o.Grant {
	case "", mcpauth.GrantAuthorizationCode:
	case mcpauth.GrantClientCredentials:
		if o.ClientID == "" || (o.ClientSecret == "" && o.PrivateKeyFile == "") {
			v.addf("oauth.grant", "client_credentials needs clientId and clientSecret or privateKeyFile")
		}
	case mcpauth.GrantEnterprise:
		if o.ClientID == "" || (o.IdPIssuer == "" && o.IdPTokenEndpoint == "") || o.IDTokenFile == "" {
			v.addf("oauth.grant", "enterprise needs clientId, idpIssuer or idpTokenEndpoint, and idTokenFile")
		}
		if o.IdPTokenEndpoint != "" {
			if u, err := url.Parse(o.IdPTokenEndpoint); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
				v.addf("oauth.idpTokenEndpoint", "expected an http(s) URL, got %q", o.IdPTokenEndpoint)
			}
		}
	default:
		v.addf("oauth.grant", "expected %q, %q or %q, got %q", mcpauth.GrantAuthorizationCode,
			mcpauth.GrantClientCredentials, mcpauth.GrantEnterprise, o.Grant)
	}
	switch o.AuthMethod {
	case "", mcpauth.AuthClientSecretBasic, mcpauth.AuthClientSecretPost, mcpauth.AuthPrivateKeyJWT, mcpauth.AuthNone:
	default:
		v.addf("oauth.authMethod", "expected client_secret_basic, client_secret_post, private_key_jwt or none, got %q", o.AuthMethod)
	}
	switch o.SigningAlg {
	case "", "ES256", "RS256":
	default:
		v.addf("oauth.signingAlg", "expected ES256 or RS256, got %q", o.SigningAlg)
	}
	if o.ClientMetadataURL != "" {
		if u, err := url.Parse(o.ClientMetadataURL); err != nil || u.Scheme != "https" || u.Host == "" || u.Path == "" || u.Path == "/" {
			v.addf("oauth.clientMetadataUrl", "expected an https URL with a path, got %q", o.ClientMetadataURL)
		}
	}
	if o.RedirectPort < 0 || o.RedirectPort > 65535 {
		v.addf("oauth.redirectPort", "expected a port 0-65535, got %d", o.RedirectPort)
	}
	for i, s := range o.Scopes {
		if s == "" || strings.ContainsAny(s, " \t\r\n\"\\") {
			v.addf(fmt.Sprintf("oauth.scopes[%d]", i), "not a valid scope token: %q", s)
		}
	}
}

// UsesOAuth reports whether c's HTTP connections go through an authorizer: every
// streamable-http entry unless oauth.disabled is set or a static Authorization header
// is configured.
func (c Config) UsesOAuth() bool {
	if c.Transport != TransportStreamableHTTP || c.OAuth.Disabled {
		return false
	}
	for k := range c.Headers {
		if http.CanonicalHeaderKey(k) == "Authorization" {
			return false
		}
	}
	return true
}

// AuthOptions returns the mcpauth options of c's entry (store and interaction are the
// caller's). The MCP manager's login and probe use it so they share the client's key.
func (c Config) AuthOptions(store mcpauth.Store) mcpauth.Options {
	o := c.OAuth
	opts := mcpauth.Options{
		ServerName:        c.ServerName,
		ServerURL:         c.URL,
		Grant:             o.Grant,
		ClientID:          o.ClientID,
		ClientSecret:      o.ClientSecret,
		AuthMethod:        o.AuthMethod,
		ClientMetadataURL: o.ClientMetadataURL,
		PrivateKeyFile:    o.PrivateKeyFile,
		SigningAlg:        o.SigningAlg,
		Scopes:            o.Scopes,
		RedirectPort:      o.RedirectPort,
		LoginCommand:      o.LoginCommand,
		Store:             store,
	}
	if o.Grant == mcpauth.GrantEnterprise {
		file := o.IDTokenFile
		opts.Enterprise = &mcpauth.EnterpriseOptions{
			IdPIssuer: o.IdPIssuer, IdPTokenEndpoint: o.IdPTokenEndpoint, IdPClientID: o.IdPClientID, IdPClientSecret: o.IdPClientSecret,
			IDToken: func(context.Context) (string, error) {
				b, err := os.ReadFile(file)
				if err != nil {
					return "", fmt.Errorf("oauth.idTokenFile: %w", err)
				}
				return strings.TrimSpace(string(b)), nil
			},
		}
	}
	return opts
}

// CredentialsStore is the process's credentials store: the one set with
// SetCredentialsStore, else the file at mcpauth.DefaultStorePath (read from the
// environment at each call, so $XDG_STATE_HOME is honoured as it is now).
func CredentialsStore() (mcpauth.Store, error) {
	storeMu.Lock()
	defer storeMu.Unlock()
	if store != nil {
		return store, nil
	}
	path, err := mcpauth.DefaultStorePath()
	if err != nil {
		return nil, err
	}
	return mcpauth.NewFileStore(path), nil
}

// SetCredentialsStore replaces the process's credentials store (nil: back to the default
// file). Tests and embedders call it before any client starts.
func SetCredentialsStore(s mcpauth.Store) {
	storeMu.Lock()
	store = s
	storeMu.Unlock()
}

var (
	storeMu sync.Mutex
	store   mcpauth.Store
)

// newAuthorizer builds the authorizer of c's entry for a supervisor or a probe.
func newAuthorizer(c Config, opts dialOptions) (*mcpauth.Authorizer, error) {
	st := opts.authStore
	if st == nil {
		var err error
		if st, err = CredentialsStore(); err != nil {
			return nil, err
		}
	}
	o := c.AuthOptions(st)
	o.Logger = opts.log()
	o.Interactive = opts.authInteractive
	o.OpenURL = opts.authOpenURL
	o.StepUp = opts.authStepUp
	o.Sensitive = opts.authSensitive
	if opts.httpBase != nil {
		o.HTTPClient = &http.Client{Transport: opts.httpBase}
	}
	return mcpauth.New(o)
}

// loginCommand is the command line that logs c's server in (OAuthConfig.LoginCommand).
func (c Config) loginCommand() string {
	if c.OAuth.LoginCommand != "" {
		return c.OAuth.LoginCommand
	}
	return mcpauth.LoginCommand(c.ServerName)
}
