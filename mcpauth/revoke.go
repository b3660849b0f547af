package mcpauth

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// revoke asks the authorization server to revoke token (RFC 7009), authenticating as rec's
// client the way its token requests do. x/oauth2 has no revocation call; the request is
// one form POST.
func (a *Authorizer) revoke(cx context.Context, rec *Record, token, hint string) error {
	form := url.Values{"token": {token}, "token_type_hint": {hint}}
	c := rec.Client
	var basic bool
	if c != nil {
		switch c.AuthMethod {
		case AuthClientSecretBasic:
			basic = true
		case AuthClientSecretPost:
			form.Set("client_id", c.ID)
			form.Set("client_secret", c.Secret)
		case AuthPrivateKeyJWT:
			aud := rec.Issuer
			if aud == "" {
				aud = rec.RevocationEndpoint
			}
			assertion, err := a.assertion(aud)
			if err != nil {
				return err
			}
			form.Set("client_id", c.ID)
			form.Set("client_assertion_type", clientAssertionType)
			form.Set("client_assertion", assertion)
		default:
			form.Set("client_id", c.ID)
		}
	}
	req, err := http.NewRequestWithContext(cx, http.MethodPost, rec.RevocationEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basic {
		req.SetBasicAuth(url.QueryEscape(c.ID), url.QueryEscape(c.Secret)) // RFC 6749 §2.3.1
	}
	resp, err := a.opts.HTTPClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("revocation endpoint answered %s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	return nil
}
