package mcpauth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// clientAssertionType is RFC 7523's client_assertion_type for private_key_jwt.
const clientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// machineGrantLocked obtains a token without a user: the client credentials grant or
// enterprise-managed authorization. md nil reuses the stored endpoints.
func (a *Authorizer) machineGrantLocked(cx context.Context, md *Metadata, challenges []oauthex.Challenge) error {
	rec, err := a.loadLocked(cx)
	if err != nil {
		return err
	}
	if md == nil {
		if rec == nil || rec.TokenEndpoint == "" {
			return &AuthError{Server: a.opts.ServerName, Step: "token", Err: errors.New("no token endpoint known yet")}
		}
		md = &Metadata{Resource: rec.Resource, AS: &oauthex.AuthServerMeta{
			Issuer: rec.Issuer, TokenEndpoint: rec.TokenEndpoint, TokenEndpointAuthMethodsSupported: rec.TokenMethods}}
	}
	var granted []string
	if rec != nil {
		granted = rec.Scopes
	}
	scopes := a.selectScopes(md, challenges, granted)
	next := a.recordFor(md, rec)
	var tok *Token
	switch a.opts.Grant {
	case GrantClientCredentials:
		tok, err = a.clientCredentials(cx, md, scopes)
	case GrantEnterprise:
		tok, err = a.enterprise(cx, md, scopes)
	}
	if err != nil {
		return &AuthError{Server: a.opts.ServerName, Step: "token", Err: err}
	}
	if tok.Scope == "" {
		tok.Scope = strings.Join(scopes, " ")
	}
	method := a.preregisteredMethod(md.AS.TokenEndpointAuthMethodsSupported)
	next.Client = &ClientInfo{ID: a.opts.ClientID, AuthMethod: method, Kind: KindPreregistered, Issuer: md.AS.Issuer}
	next.Token = tok
	next.Scopes = strings.Fields(tok.Scope)
	next.UpdatedAt = a.now()
	if err := Save(cx, a.opts.Store, a.key, next); err != nil {
		return err
	}
	a.rec, a.loaded = next, true
	a.signalLocked()
	return nil
}

// clientCredentials runs the client credentials grant (RFC 6749 §4.4) with
// client_secret_basic / client_secret_post, or with a fresh private_key_jwt assertion.
func (a *Authorizer) clientCredentials(cx context.Context, md *Metadata, scopes []string) (*Token, error) {
	cfg := &clientcredentials.Config{
		ClientID:       a.opts.ClientID,
		TokenURL:       md.AS.TokenEndpoint,
		Scopes:         scopes,
		EndpointParams: map[string][]string{"resource": {md.Resource}},
	}
	if a.opts.PrivateKeyFile != "" {
		aud := md.AS.Issuer
		if aud == "" {
			aud = md.AS.TokenEndpoint
		}
		assertion, err := a.assertion(aud)
		if err != nil {
			return nil, err
		}
		cfg.EndpointParams["client_assertion_type"] = []string{clientAssertionType}
		cfg.EndpointParams["client_assertion"] = []string{assertion}
		cfg.AuthStyle = oauth2.AuthStyleInParams
	} else {
		cfg.ClientSecret = a.opts.ClientSecret
		if a.preregisteredMethod(md.AS.TokenEndpointAuthMethodsSupported) == AuthClientSecretPost {
			cfg.AuthStyle = oauth2.AuthStyleInParams
		} else {
			cfg.AuthStyle = oauth2.AuthStyleInHeader
		}
	}
	t, err := cfg.Token(context.WithValue(cx, oauth2.HTTPClient, a.opts.HTTPClient))
	if err != nil {
		return nil, err
	}
	return a.convert(t), nil
}

// enterprise runs enterprise-managed authorization (SEP-990): the user's ID token is
// exchanged at the identity provider's token endpoint for an identity assertion grant
// (RFC 8693, the go-sdk's oauthex.ExchangeToken), which buys the access token in a JWT
// bearer grant (RFC 7523) at md's authorization server. The identity provider is used for
// that exchange only, so its token endpoint is configured (EnterpriseOptions.IdPTokenEndpoint)
// or read from its metadata without the PKCE requirement that applies to an authorization
// server used for logins (the go-sdk's extauth.EnterpriseHandler demands it, and identity
// providers that only exchange tokens do not advertise it).
func (a *Authorizer) enterprise(cx context.Context, md *Metadata, scopes []string) (*Token, error) {
	e := a.opts.Enterprise
	tokenURL := e.IdPTokenEndpoint
	if tokenURL == "" {
		var err error
		if tokenURL, err = idpTokenEndpoint(cx, a.opts.HTTPClient, e.IdPIssuer); err != nil {
			return nil, err
		}
	}
	idToken, err := e.IDToken(cx)
	if err != nil {
		return nil, fmt.Errorf("the ID token: %w", err)
	}
	idpCreds := &oauthex.ClientCredentials{ClientID: e.IdPClientID}
	if e.IdPClientSecret != "" {
		idpCreds.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: e.IdPClientSecret}
	}
	jag, err := oauthex.ExchangeToken(cx, tokenURL, &oauthex.TokenExchangeRequest{
		RequestedTokenType: oauthex.TokenTypeIDJAG,
		Audience:           md.AS.Issuer,
		Resource:           md.Resource,
		Scope:              scopes,
		SubjectToken:       idToken,
		SubjectTokenType:   oauthex.TokenTypeIDToken,
	}, idpCreds, a.opts.HTTPClient)
	if err != nil {
		return nil, fmt.Errorf("token exchange at the identity provider %s: %w", tokenURL, err)
	}
	rec := &Record{TokenEndpoint: md.AS.TokenEndpoint, Client: &ClientInfo{ID: a.opts.ClientID, Secret: a.opts.ClientSecret,
		AuthMethod: a.preregisteredMethod(md.AS.TokenEndpointAuthMethodsSupported)}}
	tok, err := a.tokenRequest(cx, rec, func(cfg *oauth2.Config, hcx context.Context) (*oauth2.Token, error) {
		return cfg.Exchange(hcx, "", oauth2.SetAuthURLParam("grant_type", grantJWTBearer),
			oauth2.SetAuthURLParam("assertion", jag.AccessToken))
	})
	if err != nil {
		return nil, fmt.Errorf("JWT bearer grant at %s: %w", md.AS.TokenEndpoint, err)
	}
	return tok, nil
}

// grantJWTBearer is RFC 7523's grant type.
const grantJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// idpTokenEndpoint reads the identity provider's token endpoint from its metadata (OpenID
// Connect discovery, then RFC 8414, the issuer's path placed as each says), checking the
// issuer and the endpoint's scheme but not PKCE support.
func idpTokenEndpoint(cx context.Context, hc *http.Client, issuer string) (string, error) {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("identity provider issuer %q: not an absolute URL", issuer)
	}
	p := strings.Trim(u.Path, "/")
	origin := u.Scheme + "://" + u.Host
	cands := []string{strings.TrimRight(issuer, "/") + "/.well-known/openid-configuration"}
	if p == "" {
		cands = append(cands, origin+"/.well-known/oauth-authorization-server")
	} else {
		cands = append(cands, origin+"/.well-known/oauth-authorization-server/"+p, origin+"/.well-known/openid-configuration/"+p)
	}
	var errs []error
	for _, c := range cands {
		var doc oauthex.AuthServerMeta
		if err := getJSON(cx, hc, c, &doc); err != nil {
			errs = append(errs, err)
			continue
		}
		if strings.TrimRight(doc.Issuer, "/") != strings.TrimRight(issuer, "/") {
			return "", fmt.Errorf("the identity provider's metadata at %s names issuer %q, not %q", c, doc.Issuer, issuer)
		}
		t, err := url.Parse(doc.TokenEndpoint)
		if err != nil || doc.TokenEndpoint == "" || (t.Scheme != "https" && !isLoopback(t.Hostname())) {
			return "", fmt.Errorf("the identity provider's token endpoint %q is not an https (or loopback) URL", doc.TokenEndpoint)
		}
		return doc.TokenEndpoint, nil
	}
	return "", fmt.Errorf("identity provider %s: no metadata (set oauth.idpTokenEndpoint): %w", issuer, errors.Join(errs...))
}

// isLoopback reports whether host names this machine (localhost or a loopback address).
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loadSigningKey reads a PEM private key (PKCS#8, SEC 1 EC or PKCS#1 RSA) and decides the
// JWS algorithm: alg if set (ES256 or RS256, checked against the key), else by the key.
func loadSigningKey(path, alg string) (crypto.Signer, string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("private key file: %w", err)
	}
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, "", fmt.Errorf("private key file %s: no PEM block", path)
	}
	var key any
	switch block.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, "", fmt.Errorf("private key file %s: %w", path, err)
	}
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		if k.Curve != elliptic.P256() {
			return nil, "", fmt.Errorf("private key file %s: an EC key must be on P-256 for ES256", path)
		}
		if alg != "" && alg != "ES256" {
			return nil, "", fmt.Errorf("private key file %s: an EC P-256 key signs ES256, not %s", path, alg)
		}
		return k, "ES256", nil
	case *rsa.PrivateKey:
		if alg != "" && alg != "RS256" {
			return nil, "", fmt.Errorf("private key file %s: an RSA key signs RS256, not %s", path, alg)
		}
		return k, "RS256", nil
	default:
		return nil, "", fmt.Errorf("private key file %s: unsupported key type %T (want EC P-256 or RSA)", path, key)
	}
}

// assertion signs a fresh RFC 7523 client assertion for aud (one minute, unique jti).
func (a *Authorizer) assertion(aud string) (string, error) {
	key, alg, err := loadSigningKey(a.opts.PrivateKeyFile, a.opts.SigningAlg)
	if err != nil {
		return "", err
	}
	now := a.now()
	header := map[string]string{"alg": alg, "typ": "JWT"}
	claims := map[string]any{
		"iss": a.opts.ClientID, "sub": a.opts.ClientID, "aud": aud,
		"jti": rand.Text(), "iat": now.Unix(), "exp": now.Add(time.Minute).Unix(),
	}
	return signJWT(key, alg, header, claims)
}

// signJWT produces a compact JWS (RFC 7515) over the JSON header and claims.
func signJWT(key crypto.Signer, alg string, header map[string]string, claims map[string]any) (string, error) {
	h, err := json.Marshal(header)
	if err != nil {
		return "", err
	}
	c, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	input := enc.EncodeToString(h) + "." + enc.EncodeToString(c)
	digest := sha256.Sum256([]byte(input))
	var sig []byte
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		r, s, err := ecdsa.Sign(rand.Reader, k, digest[:])
		if err != nil {
			return "", err
		}
		sig = make([]byte, 64) // JWS wants r||s, each 32 bytes big-endian
		r.FillBytes(sig[:32])
		s.FillBytes(sig[32:])
	case *rsa.PrivateKey:
		sig, err = rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, digest[:])
		if err != nil {
			return "", err
		}
	default:
		return "", fmt.Errorf("unsupported key %T for %s", key, alg)
	}
	return input + "." + enc.EncodeToString(sig), nil
}
