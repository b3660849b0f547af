package mcpauth

import (
	"context"
	"errors"
	"fmt"
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
func Discover(ctx context.Context, hc *http.Client, serverURL string, challenges []oauthex.Challenge) (*Metadata, error) {
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
	for _, c := range cands {
		// RFC 9728 §3.3: the document's resource must be the one its URL was derived from
		// (the origin for the root document).
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, c.url, c.resource, hc)
		if err != nil {
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
	asm, err := auth.GetAuthServerMetadata(ctx, asURL, hc)
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
