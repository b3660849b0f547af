package access

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// MetadataPath is where the gateway serves its protected-resource metadata for a resource
// whose path is resourcePath (RFC 9728 §3.1: the well-known prefix inserted before the
// path).
func MetadataPath(resourcePath string) string {
	return "/.well-known/oauth-protected-resource" + strings.TrimSuffix(resourcePath, "/")
}

// Metadata returns the gateway's protected-resource metadata (RFC 9728).
func (p *Policy) Metadata() *oauthex.ProtectedResourceMetadata {
	scopes := p.cfg.ScopesSupported
	if len(scopes) == 0 {
		scopes = p.cfg.Scopes
	}
	return &oauthex.ProtectedResourceMetadata{
		Resource:               p.cfg.Resource,
		AuthorizationServers:   []string{p.cfg.Issuer},
		ScopesSupported:        scopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "harness gateway",
	}
}

// MetadataURL is the URL of the metadata, for the WWW-Authenticate challenge.
func (p *Policy) MetadataURL() string {
	u, err := url.Parse(p.cfg.Resource)
	if err != nil {
		return ""
	}
	u.Path = MetadataPath(u.Path)
	return u.String()
}

// Verifier returns the function that checks a bearer token for the go-sdk's
// auth.RequireBearerToken: by introspection when the access file configures it, else as a
// JWT signed with a key of the issuer's JWKS. Either way the token must be active and
// unexpired, name this gateway as its audience (RFC 8707), and come from the issuer; its
// subject (UserClaim) becomes TokenInfo.UserID and its groups (GroupsClaim) TokenInfo.Extra
// ["groups"]. The issuer's metadata is read on first use (again after a failure). hc is the
// HTTP client for the issuer (nil: http.DefaultClient).
func (p *Policy) Verifier(hc *http.Client) auth.TokenVerifier {
	if hc == nil {
		hc = http.DefaultClient
	}
	v := &verifier{p: p, hc: hc}
	return v.verify
}

type verifier struct {
	p  *Policy
	hc *http.Client

	mu   sync.Mutex
	meta *oauthex.AuthServerMeta
	keys *oidc.RemoteKeySet
}

// issuerMeta reads the issuer's authorization server metadata, once it succeeds.
func (v *verifier) issuerMeta(cx context.Context) (*oauthex.AuthServerMeta, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.meta != nil {
		return v.meta, nil
	}
	iss := v.p.cfg.Issuer
	var errs []error
	for _, mu := range []string{strings.TrimSuffix(iss, "/") + "/.well-known/oauth-authorization-server", strings.TrimSuffix(iss, "/") + "/.well-known/openid-configuration"} {
		m, err := oauthex.GetAuthServerMeta(cx, mu, iss, v.hc)
		if err == nil && m != nil {
			v.meta = m
			if m.JWKSURI != "" {
				v.keys = oidc.NewRemoteKeySet(context.WithoutCancel(cx), m.JWKSURI)
			}
			return m, nil
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return nil, fmt.Errorf("the identity provider %s has no metadata: %w", iss, errors.Join(errs...))
}

func (v *verifier) verify(cx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	meta, err := v.issuerMeta(cx)
	if err != nil {
		return nil, err
	}
	var claims map[string]any
	if in := v.p.cfg.Introspection; in != nil {
		claims, err = v.introspect(cx, meta, in, token)
	} else {
		claims, err = v.jwt(cx, token)
	}
	if err != nil {
		return nil, err
	}
	return v.tokenInfo(claims)
}

// introspect asks the introspection endpoint about token (RFC 7662).
func (v *verifier) introspect(cx context.Context, meta *oauthex.AuthServerMeta, in *Introspection, token string) (map[string]any, error) {
	endpoint := in.Endpoint
	if endpoint == "" {
		endpoint = meta.IntrospectionEndpoint
	}
	if endpoint == "" {
		return nil, fmt.Errorf("the identity provider %s publishes no introspection endpoint: set introspection.endpoint in the access file", v.p.cfg.Issuer)
	}
	req, err := http.NewRequestWithContext(cx, http.MethodPost, endpoint, strings.NewReader(url.Values{"token": {token}}.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(in.ClientID), url.QueryEscape(in.ClientSecret))
	res, err := v.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("token introspection at %s: %w", endpoint, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("token introspection at %s: %w", endpoint, err)
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("token introspection at %s answered %s", endpoint, res.Status)
	}
	var claims map[string]any
	if err := json.Unmarshal(body, &claims); err != nil {
		return nil, fmt.Errorf("token introspection at %s: %w", endpoint, err)
	}
	if active, _ := claims["active"].(bool); !active {
		return nil, fmt.Errorf("%w: the identity provider says the token is not active", auth.ErrInvalidToken)
	}
	return claims, nil
}

// jwt checks token's signature against the issuer's JWKS and returns its claims.
func (v *verifier) jwt(cx context.Context, token string) (map[string]any, error) {
	v.mu.Lock()
	keys := v.keys
	v.mu.Unlock()
	if keys == nil {
		return nil, fmt.Errorf("the identity provider %s publishes no jwks_uri: configure introspection in the access file", v.p.cfg.Issuer)
	}
	payload, err := keys.VerifySignature(cx, token)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err) //nolint:errorlint // the invalid-token sentinel is what the go-sdk maps to 401
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		return nil, fmt.Errorf("%w: the token's claims are not JSON", auth.ErrInvalidToken)
	}
	if iss, _ := claims["iss"].(string); iss != v.p.cfg.Issuer {
		return nil, fmt.Errorf("%w: the token was issued by %q, not %s", auth.ErrInvalidToken, iss, v.p.cfg.Issuer)
	}
	if nbf, ok := claims["nbf"].(float64); ok && time.Unix(int64(nbf), 0).After(time.Now().Add(time.Minute)) {
		return nil, fmt.Errorf("%w: the token is not valid yet", auth.ErrInvalidToken)
	}
	return claims, nil
}

// tokenInfo checks the claims common to both ways (audience, expiry) and makes the
// go-sdk's TokenInfo.
func (v *verifier) tokenInfo(claims map[string]any) (*auth.TokenInfo, error) {
	if aud := strings_(claims["aud"]); !oauthex.MatchesResource(aud, v.p.cfg.Resource) {
		return nil, fmt.Errorf("%w: the token is for %v, not this gateway (%s)", auth.ErrInvalidToken, aud, v.p.cfg.Resource)
	}
	exp, _ := claims["exp"].(float64)
	if exp == 0 {
		return nil, fmt.Errorf("%w: the token has no expiry", auth.ErrInvalidToken)
	}
	user, _ := claims[v.p.cfg.UserClaim].(string)
	if user == "" {
		return nil, fmt.Errorf("%w: the token names no person (claim %q)", auth.ErrInvalidToken, v.p.cfg.UserClaim)
	}
	var scopes []string
	switch s := claims["scope"].(type) {
	case string:
		scopes = strings.Fields(s)
	default:
		scopes = strings_(claims["scp"])
	}
	return &auth.TokenInfo{UserID: user, Scopes: scopes, Expiration: time.Unix(int64(exp), 0),
		Extra: map[string]any{"groups": strings_(claims[v.p.cfg.GroupsClaim])}}, nil
}

// strings_ reads a claim that is a string or a list of strings.
func strings_(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		out := make([]string, 0, len(t))
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	case []string:
		return slices.Clone(t)
	}
	return nil
}

// Person returns the person a verified token names, with their groups: the token's and the
// access file's.
func (p *Policy) Person(ti *auth.TokenInfo) Person {
	who := Person{ID: ti.UserID}
	if g, ok := ti.Extra["groups"].([]string); ok {
		who.Groups = slices.Clone(g)
	}
	return p.withGroups(who)
}
