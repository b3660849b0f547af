package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/hostclient"
	"github.com/cordisgo/harness/hostgateway"
	"github.com/cordisgo/harness/mcpauth"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpmanager"
	"github.com/cordisgo/harness/plugins/remote"
	"github.com/cordisgo/harness/secrets"
)

// loginFlags are the flags of mcp login and logout.
type loginFlags struct {
	mcpFlags
	noBrowser bool
	gateway   string
}

// mcpAuthCommands are mcp login and mcp logout (docs/authorization.md).
func (a *invocation) mcpAuthCommands() []*cobra.Command {
	var f loginFlags
	login := serverCommand("login", "Log in to an MCP server that asks for OAuth; the token is stored and refreshed (through the running host when there is one)",
		func(cx context.Context, name string) error { return a.mcpLogin(cx, f, name) })
	login.Flags().BoolVar(&f.noBrowser, "no-browser", false, "print the authorization URL instead of opening a browser ($BROWSER, else the platform's opener)")
	login.Flags().StringVar(&f.gateway, "gateway", "", "log in to the personal server NAME of the team's gateway at `URL` (https://host/mcp): your login is handed to the gateway, which uses it for your calls only (docs/gateway.md)")
	logout := serverCommand("logout", "Forget an MCP server's stored OAuth token (the next connection needs a new login)",
		func(cx context.Context, name string) error { return a.mcpLogout(cx, f, name) })
	for _, c := range []*cobra.Command{login, logout} {
		fl := c.Flags()
		fl.StringVar(&f.endpoint, "endpoint", "", "the running host's endpoint `FILE` (default: the remote plugin's default endpoint file)")
		fl.BoolVar(&f.local, "local", false, "do not look for a running host: log in from this process")
	}
	return []*cobra.Command{login, logout}
}

func (a *invocation) mcpLogin(cx context.Context, f loginFlags, name string) error {
	if f.gateway != "" {
		return a.mcpLoginThrough(cx, f, name)
	}
	method := mcpmanager.MethodLogin
	return a.withLogin(cx, f, name, method.Name(), func(cx context.Context, c *hostclient.Caller) error {
		// The host runs the flow, so its live client picks the token up at once.
		return method.Call(cx, c, mcpmanager.LoginParams{Name: name, NoBrowser: f.noBrowser}, func(ev mcpmanager.LoginEvent) error {
			a.out().Login(ev, !f.noBrowser)
			return nil
		})
	}, func(cx context.Context, cfg mcpclient.Config) error {
		ev, err := mcpmanager.LoginConfig(cx, cfg, mcpmanager.LoginOptions{NoBrowser: f.noBrowser}, func(u string) {
			a.out().LoginURL(name, u, !f.noBrowser)
		}, a.logger)
		if err == nil {
			a.out().Login(ev, !f.noBrowser)
		}
		return err
	})
}

func (a *invocation) mcpLogout(cx context.Context, f loginFlags, name string) error {
	method := mcpmanager.MethodLogout
	err := a.withLogin(cx, f, name, method.Name(), func(cx context.Context, c *hostclient.Caller) error {
		_, err := method.Call(cx, c, mcpmanager.NameParams{Name: name})
		return err
	}, func(cx context.Context, cfg mcpclient.Config) error {
		return mcpmanager.LogoutConfig(cx, cfg, a.logger)
	})
	if err == nil {
		fmt.Fprintf(a.stdout, "%s: logged out\n", name)
	}
	return err
}

// withLogin runs a login or logout of the server called name where its client lives: on
// the running host, or in process for a server of the profile's MCP server manager, through
// the manager's method (viaManager, with its refusal worded for people); for the profile's own
// client row, with that row's configuration, its references resolved from the environment
// (own).
func (a *invocation) withLogin(cx context.Context, f loginFlags, name, method string,
	viaManager func(context.Context, *hostclient.Caller) error, own func(context.Context, mcpclient.Config) error) error {
	rh, err := hostclient.Find(cx, a.findOptions(f.mcpFlags))
	if err != nil {
		return err
	}
	if rh != nil {
		if !rh.Serves(method) {
			return failure(rh.Lacks("do "+method, method))
		}
		if err := viaManager(cx, hostclient.Remote(rh)); err != nil {
			return rh.Explain(cx, name, err)
		}
		return nil
	}
	p, err := a.loadProfile()
	if err != nil {
		return err
	}
	cfg, err := host.ClientConfig(p, a.catalog, name)
	if err != nil && host.UsesPlugin(p.Rows, host.UseManager) {
		// Not a row of the profile's own: the manager's to log in or out.
		a.quietStartup = true
		return a.withHost(cx, func(cx context.Context, h *host.Host) error {
			err := viaManager(cx, hostclient.Local(h))
			if remote.CodeOf(err) == remote.CodeNotFound {
				return h.UnknownServer(name)
			}
			return hostclient.Local(h).Explain(cx, name, err)
		})
	}
	if err != nil {
		return err
	}
	if cfg, err = cfg.Expand(&secrets.Resolver{LookupEnv: func(k string) (string, bool) { return lookupEnv(a.env, k) }}); err != nil {
		return fmt.Errorf("mcp server %q: %w", name, err)
	}
	err = own(cx, cfg)
	if e, ok := errors.AsType[*mcpmanager.Error](err); ok {
		return fmt.Errorf("mcp server %q: %s", name, e.Msg)
	}
	return err
}

// mcpLoginThrough signs in to a team gateway's personal server (hostgateway.LoginThrough):
// the person's gateway login is kept in their credentials file, the server's goes to the
// gateway.
func (a *invocation) mcpLoginThrough(cx context.Context, f loginFlags, name string) error {
	path, err := mcpauth.DefaultStorePath()
	if err != nil {
		return failure(err)
	}
	open := func(cx context.Context, u string) error {
		a.out().LoginURL(name, u, !f.noBrowser)
		if f.noBrowser {
			return nil
		}
		if err := mcpauth.OpenBrowser(cx, u); err != nil {
			a.out().Note("%v", err)
		}
		return nil
	}
	if err := hostgateway.LoginThrough(cx, f.gateway, name, hostgateway.LoginOptions{Store: mcpauth.NewFileStore(path), OpenURL: open}); err != nil {
		return failure(err)
	}
	fmt.Fprintf(a.stdout, "%s: logged in through the gateway %s (your calls of its tools use your login)\n", name, f.gateway)
	return nil
}
