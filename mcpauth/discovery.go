package mcpauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Metadata is what discovery found for one MCP server.
type Metadata struct {
	// Resource is the RFC 8707 resource indicator: the protected-resource metadata's
	// resource, else the server URL.
	Resource string
	// PRM is the protected-resource metadata (RFC 9728); nil for a 2025-03-26 era server
	// without it.
	PRM *oauthex.ProtectedResourceMetadata
	// AS is the authorization server's metadata (RFC 8414 or OpenID discovery), or the
	// 2025-03-26 default endpoints when it publishes none (then Defaulted is set).
	AS        *oauthex.AuthServerMeta
	Defaulted bool
	// PRMURL is where the protected-resource metadata was found.
	PRMURL string
}

// Discover finds the authorization server of the MCP server at serverURL, following the
// MCP authorization specification: the protected-resource metadata named by the
// challenge's resource_metadata parameter, else at the path-based well-known URL, else at
// the root one; then the authorization server's metadata, with the issuer's path inserted
// as RFC 8414 and OpenID Connect discovery say (the SDK's URL order). A server of the
// 2025-03-26 era without protected-resource metadata is its own authorization server at
// its origin, and when that publishes no metadata either the default /authorize, /token
// and /register endpoints are used.
func Discover(cx context.Context, hc *http.Client, serverURL string, challenges []oauthex.Challenge) (*Metadata, error) {
	u, err := url.Parse(serverURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("server URL %q: not an absolute URL", serverURL)
	}
	origin := (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
	type candidate struct{ url, resource string }
	var cands []candidate
	for _, c := range challenges {
		if m := c.Params["resource_metadata"]; m != "" {
			cands = append(cands, candidate{m, serverURL})
			break
		}
	}
	if p := strings.Trim(u.Path, "/"); p != "" {
		cands = append(cands, candidate{origin + "/.well-known/oauth-protected-resource/" + p, serverURL})
	}
	cands = append(cands, candidate{origin + "/.well-known/oauth-protected-resource", origin})
	md := &Metadata{Resource: serverURL}
	var errs []error
	for i, c := range cands {
		// RFC 9728 §3.3: the document's resource must be the one its URL was derived from
		// (the origin for the root document).
		prm, err := oauthex.GetProtectedResourceMetadata(cx, c.url, c.resource, hc)
		if err != nil {
			// A document that names another resource is refused, not skipped: going on to
			// the next location would end in a misleading error (or in another server's
			// authorization). The root document, the last resort, may describe the origin.
			if strings.Contains(err.Error(), "got metadata resource") && i < len(cands)-1 {
				return nil, fmt.Errorf("%w: the protected resource metadata at %s is not for %s (RFC 9728 §3.3): %w",
					ErrResourceMismatch, c.url, c.resource, err)
			}
			errs = append(errs, err)
			continue
		}
		if len(prm.AuthorizationServers) == 0 {
			return nil, fmt.Errorf("protected resource metadata at %s names no authorization server", c.url)
		}
		md.PRM, md.PRMURL, md.Resource = prm, c.url, prm.Resource
		break
	}
	asURL := origin
	if md.PRM != nil {
		asURL = md.PRM.AuthorizationServers[0]
	}
	asm, err := auth.GetAuthServerMetadata(cx, asURL, hc)
	if err != nil && md.PRM == nil {
		// 2025-03-26: without protected-resource metadata the authorization base URL is the
		// server's origin, and that era's servers publish their metadata there with an
		// issuer that has a path (an authorization server mounted under /oauth, say). That
		// revision asks for the metadata at the origin and for nothing about its issuer, so
		// an issuer on the same origin is accepted; current servers (with protected-resource
		// metadata) keep the RFC 8414 §3.3 check.
		if legacy, lerr := legacyAuthServerMeta(cx, hc, u); lerr == nil {
			asm, err = legacy, nil
		} else {
			err = fmt.Errorf("%w (and as a 2025-03-26 server: %w)", err, lerr)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("authorization server %s metadata: %w", asURL, err)
	}
	if asm == nil {
		if md.PRM != nil {
			return nil, fmt.Errorf("authorization server %s publishes no metadata (tried RFC 8414 and OpenID discovery): %w", asURL, errors.Join(errs...))
		}
		base := strings.TrimRight(asURL, "/")
		asm = &oauthex.AuthServerMeta{
			Issuer:                base,
			AuthorizationEndpoint: base + "/authorize",
			TokenEndpoint:         base + "/token",
			RegistrationEndpoint:  base + "/register",
		}
		md.Defaulted = true
	}
	md.AS = asm
	return md, nil
}

// ErrResourceMismatch is matched by a discovery error for protected-resource metadata that
// names another resource than the server's (RFC 9728 §3.3): the client refuses to
// authorize rather than send a token meant for one server to another.
var ErrResourceMismatch = errors.New("protected resource metadata is for another resource")

// legacyAuthServerMeta reads the 2025-03-26 authorization server metadata at the origin of
// server (RFC 8414's well-known URL without a path) and accepts its issuer when it is on
// that same origin; the go-sdk then checks the document as for that issuer (PKCE, the
// endpoints' schemes).
func legacyAuthServerMeta(cx context.Context, hc *http.Client, server *url.URL) (*oauthex.AuthServerMeta, error) {
	metaURL := (&url.URL{Scheme: server.Scheme, Host: server.Host, Path: "/.well-known/oauth-authorization-server"}).String()
	var doc struct {
		Issuer string `json:"issuer"`
	}
	if err := getJSON(cx, hc, metaURL, &doc); err != nil {
		return nil, err
	}
	iss, err := url.Parse(doc.Issuer)
	if err != nil || iss.Scheme != server.Scheme || iss.Host != server.Host {
		return nil, fmt.Errorf("the metadata at %s names issuer %q, which is not on the server's origin", metaURL, doc.Issuer)
	}
	asm, err := oauthex.GetAuthServerMeta(cx, metaURL, doc.Issuer, hc)
	if err != nil {
		return nil, err
	}
	if asm == nil {
		return nil, fmt.Errorf("no metadata at %s", metaURL)
	}
	return asm, nil
}

// getJSON reads a small JSON document (metadata) into v.
func getJSON(cx context.Context, hc *http.Client, u string, v any) error {
	req, err := http.NewRequestWithContext(cx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", u, resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v); err != nil {
		return fmt.Errorf("%s: %w", u, err)
	}
	return nil
}

// challengeOf returns the stored form of the first Bearer challenge in cs (nil: none).
func challengeOf(cs []oauthex.Challenge) *Challenge {
	for _, c := range cs {
		if strings.EqualFold(c.Scheme, "bearer") {
			return &Challenge{ResourceMetadata: c.Params["resource_metadata"], Scope: strings.Fields(c.Params["scope"]), Error: c.Params["error"]}
		}
	}
	return nil
}

// challenges turns a stored challenge back into the parsed form discovery takes.
func (c *Challenge) challenges() []oauthex.Challenge {
	if c == nil {
		return nil
	}
	p := map[string]string{}
	if c.ResourceMetadata != "" {
		p["resource_metadata"] = c.ResourceMetadata
	}
	if len(c.Scope) > 0 {
		p["scope"] = strings.Join(c.Scope, " ")
	}
	if c.Error != "" {
		p["error"] = c.Error
	}
	return []oauthex.Challenge{{Scheme: "Bearer", Params: p}}
}

// challengeScopes returns the scope of the first Bearer challenge.
func challengeScopes(cs []oauthex.Challenge) []string {
	for _, c := range cs {
		if strings.EqualFold(c.Scheme, "bearer") && c.Params["scope"] != "" {
			return strings.Fields(c.Params["scope"])
		}
	}
	return nil
}

// challengeError returns the error parameter of the first Bearer challenge.
func challengeError(cs []oauthex.Challenge) string {
	for _, c := range cs {
		if strings.EqualFold(c.Scheme, "bearer") && c.Params["error"] != "" {
			return c.Params["error"]
		}
	}
	return ""
}

// parseChallenges parses resp's WWW-Authenticate headers; a malformed header yields none.
func parseChallenges(h http.Header) []oauthex.Challenge {
	cs, err := oauthex.ParseWWWAuthenticate(h.Values("WWW-Authenticate"))
	if err != nil {
		return nil
	}
	return cs
}
