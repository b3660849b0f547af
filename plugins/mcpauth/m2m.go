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
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// clientAssertionType is RFC 7523's client_assertion_type for private_key_jwt.
const clientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// machineGrantLocked obtains a token without a user: the client credentials grant or
// enterprise-managed authorization. md nil reuses the stored endpoints.
func (a *Authorizer) machineGrantLocked(ctx context.Context, md *Metadata, challenges []oauthex.Challenge) error {
	rec, err := a.loadLocked(ctx)
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
		tok, err = a.clientCredentials(ctx, md, scopes)
	case GrantEnterprise:
		tok, err = a.enterprise(ctx, md, scopes)
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
	if err := Save(ctx, a.opts.Store, a.key, next); err != nil {
		return err
	}
	a.rec, a.loaded = next, true
	a.signalLocked()
	return nil
}

// clientCredentials runs the client credentials grant (RFC 6749 §4.4) with
// client_secret_basic / client_secret_post, or with a fresh private_key_jwt assertion.
func (a *Authorizer) clientCredentials(ctx context.Context, md *Metadata, scopes []string) (*Token, error) {
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
	t, err := cfg.Token(context.WithValue(ctx, oauth2.HTTPClient, a.opts.HTTPClient))
	if err != nil {
		return nil, err
	}
	return a.convert(t), nil
}

// enterprise runs enterprise-managed authorization through the SDK's
// extauth.EnterpriseHandler: the ID token exchanged at the identity provider (RFC 8693)
// for an identity assertion grant, then the JWT bearer grant at md's authorization server.
func (a *Authorizer) enterprise(ctx context.Context, md *Metadata, scopes []string) (*Token, error) {
	e := a.opts.Enterprise
	mcpCreds := &oauthex.ClientCredentials{ClientID: a.opts.ClientID}
	if a.opts.ClientSecret != "" {
		mcpCreds.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: a.opts.ClientSecret}
	}
	idpCreds := &oauthex.ClientCredentials{ClientID: e.IdPClientID}
	if e.IdPClientSecret != "" {
		idpCreds.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: e.IdPClientSecret}
	}
	h, err := extauth.NewEnterpriseHandler(&extauth.EnterpriseHandlerConfig{
		IdPIssuerURL:     e.IdPIssuer,
		IdPCredentials:   idpCreds,
		MCPAuthServerURL: md.AS.Issuer,
		MCPResourceURI:   md.Resource,
		MCPCredentials:   mcpCreds,
		MCPScopes:        scopes,
		IDTokenFetcher: func(ctx context.Context) (*oauth2.Token, error) {
			id, err := e.IDToken(ctx)
			if err != nil {
				return nil, err
			}
			return (&oauth2.Token{}).WithExtra(map[string]any{"id_token": id}), nil
		},
		HTTPClient: a.opts.HTTPClient,
	})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.opts.ServerURL, nil)
	if err != nil {
		return nil, err
	}
	// The handler only closes the response it is given.
	if err := h.Authorize(ctx, req, &http.Response{StatusCode: http.StatusUnauthorized, Body: io.NopCloser(strings.NewReader(""))}); err != nil {
		return nil, err
	}
	ts, err := h.TokenSource(ctx)
	if err != nil || ts == nil {
		return nil, fmt.Errorf("enterprise authorization produced no token: %w", err)
	}
	t, err := ts.Token()
	if err != nil {
		return nil, err
	}
	return a.convert(t), nil
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
