package hostgateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/cordisgo/harness/gateway"
	"github.com/cordisgo/harness/mcpauth"
)

// LoginOptions configures [LoginThrough].
type LoginOptions struct {
	// Store keeps the person's own credentials for the gateway (their sign-in to the team's
	// identity provider), as for any server: the credentials file.
	Store mcpauth.Store
	// OpenURL shows an authorization URL to the person (nil: mcpauth.OpenBrowser).
	OpenURL func(cx context.Context, url string) error
	// HTTPClient sends the requests (nil: http.DefaultClient).
	HTTPClient *http.Client
	// Logger receives diagnostics (nil: discard).
	Logger *slog.Logger
}

// LoginThrough signs the person in to the personal server name of the team's gateway at
// gatewayURL (its /mcp URL): it signs them in to the gateway itself with its identity
// provider (reusing their stored login), reads the server's URL from the gateway, runs the
// server's login in the person's browser as `harness mcp login` does, and hands the
// credentials to the gateway, which keeps them encrypted and uses them for this person's
// calls only. The credentials are not kept on this machine.
func LoginThrough(cx context.Context, gatewayURL, name string, o LoginOptions) error {
	hc := o.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	base, err := url.Parse(gatewayURL)
	if err != nil || base.Host == "" {
		return fmt.Errorf("--gateway %q: want the gateway's URL (https://host/mcp)", gatewayURL)
	}
	gwAuth, err := mcpauth.New(mcpauth.Options{ServerName: "gateway", ServerURL: gatewayURL, Store: o.Store,
		Interactive: true, OpenURL: o.OpenURL, HTTPClient: hc, Logger: o.Logger})
	if err != nil {
		return err
	}
	if !gwAuth.LoggedIn(cx) {
		if err := gwAuth.Login(cx); err != nil {
			return fmt.Errorf("signing in to the gateway %s: %w", gatewayURL, err)
		}
	}
	api := &url.URL{Scheme: base.Scheme, Host: base.Host, Path: gateway.PathPersonal + url.PathEscape(name)}
	var info gateway.PersonalServerInfo
	if err := gatewayJSON(cx, hc, gwAuth, http.MethodGet, api.String(), nil, &info); err != nil {
		return err
	}
	srvAuth, err := mcpauth.New(mcpauth.Options{ServerName: name, ServerURL: info.URL, ClientID: info.ClientID, Scopes: info.Scopes,
		Store: &mcpauth.MemoryStore{}, Interactive: true, OpenURL: o.OpenURL, HTTPClient: hc, Logger: o.Logger})
	if err != nil {
		return err
	}
	if err := srvAuth.Login(cx); err != nil {
		return fmt.Errorf("signing in to %s (%s): %w", name, info.URL, err)
	}
	rec, err := srvAuth.Record(cx)
	if err != nil {
		return err
	}
	body, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := gatewayJSON(cx, hc, gwAuth, http.MethodPut, api.String(), body, &info); err != nil {
		return err
	}
	if !info.SignedIn {
		return fmt.Errorf("the gateway did not take the credentials of %s", name)
	}
	return nil
}

// gatewayJSON sends a request to the gateway's personal-server API with the person's
// gateway token and decodes the answer into out.
func gatewayJSON(cx context.Context, hc *http.Client, a *mcpauth.Authorizer, method, u string, body []byte, out any) error {
	tok, err := a.AccessToken(cx)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(cx, method, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("the gateway: %w", err)
	}
	defer func() { _ = res.Body.Close() }()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("the gateway answered %s %s: %s", method, res.Status, strings.TrimSpace(string(b)))
	}
	return json.Unmarshal(b, out)
}
