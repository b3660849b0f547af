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
	"github.com/cordisgo/harness/profiles"
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
	login := &cobra.Command{
		Use:   "login NAME",
		Short: "Log in to an MCP server that asks for OAuth; the token is stored and refreshed (through the running host when there is one)",
		Args:  args(cobra.ExactArgs(1)),
		RunE: action(func(cmd *cobra.Command, argv []string) error {
			return a.mcpLogin(cmd.Context(), f, argv[0])
		}),
	}
	login.Flags().BoolVar(&f.noBrowser, "no-browser", false, "print the authorization URL instead of opening a browser ($BROWSER, else the platform's opener)")
	login.Flags().StringVar(&f.gateway, "gateway", "", "log in to the personal server NAME of the team's gateway at `URL` (https://host/mcp): your login is handed to the gateway, which uses it for your calls only (docs/gateway.md)")
	logout := &cobra.Command{
		Use:   "logout NAME",
		Short: "Forget an MCP server's stored OAuth token (the next connection needs a new login)",
		Args:  args(cobra.ExactArgs(1)),
		RunE: action(func(cmd *cobra.Command, argv []string) error {
			return a.mcpLogout(cmd.Context(), f, argv[0])
		}),
	}
	for _, c := range []*cobra.Command{login, logout} {
		fl := c.Flags()
		fl.StringVar(&f.endpoint, "endpoint", "", "the running host's endpoint `FILE` (default: the remote plugin's default endpoint file)")
		fl.BoolVar(&f.local, "local", false, "do not look for a running host: log in from this process")
	}
	return []*cobra.Command{login, logout}
}

// showURL tells the user where to log in.
func (a *invocation) showURL(name, u string, opened bool) {
	if opened {
		fmt.Fprintf(a.stderr, "Opening the browser to log in to %s. If it does not open, visit:\n  %s\n", name, u)
		return
	}
	fmt.Fprintf(a.stderr, "To log in to %s, open this URL in a browser on this machine:\n  %s\n", name, u)
}

func (a *invocation) loggedIn(name, scope string) {
	if scope != "" {
		fmt.Fprintf(a.stdout, "%s: logged in (scope %s)\n", name, scope)
		return
	}
	fmt.Fprintf(a.stdout, "%s: logged in\n", name)
}

func (a *invocation) mcpLogin(cx context.Context, f loginFlags, name string) error {
	if f.gateway != "" {
		return a.mcpLoginThrough(cx, f, name)
	}
	rh, err := a.findHost(cx, f.mcpFlags)
	if err != nil {
		return err
	}
	if rh != nil {
		cl := rh.Client
		// The host runs the flow, so its live client picks the token up at once.
		err := mcpmanager.MethodLogin.Call(cx, cl, mcpmanager.LoginParams{Name: name, NoBrowser: f.noBrowser}, func(ev mcpmanager.LoginEvent) error {
			if ev.URL != "" {
				a.showURL(name, ev.URL, !f.noBrowser)
			}
			if ev.Done {
				a.loggedIn(name, ev.Scope)
			}
			return nil
		})
		return hostError(cx, rh, mcpmanager.MethodLogin.Name(), name, err)
	}
	p, err := a.loadProfile()
	if err != nil {
		return err
	}
	onURL := func(u string) { a.showURL(name, u, !f.noBrowser) }
	if a.managerServes(p, name) {
		a.quietStartup = true
		return a.withHost(cx, func(cx context.Context, h *host.Host) error {
			m, ok := mcpmanager.Key.Get(h.Root())
			if !ok || m == nil {
				return fmt.Errorf("the MCP server manager of profile %q is not running", h.Profile().Source)
			}
			ev, err := m.Login(cx, name, mcpmanager.LoginOptions{NoBrowser: f.noBrowser}, onURL)
			if errors.Is(err, mcpmanager.ErrNotFound) {
				return h.UnknownServer(name)
			}
			if err != nil {
				return err
			}
			a.loggedIn(name, ev.Scope)
			return nil
		})
	}
	auth, err := a.profileAuthorizer(p, name, func(cx context.Context, u string) error {
		onURL(u)
		if f.noBrowser {
			return nil
		}
		if err := mcpauth.OpenBrowser(cx, u); err != nil {
			errorf(a.stderr, a.prog, "%v", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	lcx, cancel := context.WithTimeout(cx, mcpmanager.DefaultLoginTimeout)
	defer cancel()
	if err := auth.Login(lcx); err != nil {
		return err
	}
	rec, _ := auth.Record(cx)
	scope := ""
	if rec != nil && rec.Token != nil {
		scope = rec.Token.Scope
	}
	a.loggedIn(name, scope)
	return nil
}

func (a *invocation) mcpLogout(cx context.Context, f loginFlags, name string) error {
	rh, err := a.findHost(cx, f.mcpFlags)
	if err != nil {
		return err
	}
	if rh != nil {
		_, err := mcpmanager.MethodLogout.Call(cx, rh.Client, mcpmanager.NameParams{Name: name})
		if err := hostError(cx, rh, mcpmanager.MethodLogout.Name(), name, err); err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "%s: logged out\n", name)
		return nil
	}
	p, err := a.loadProfile()
	if err != nil {
		return err
	}
	if a.managerServes(p, name) {
		a.quietStartup = true
		return a.withHost(cx, func(cx context.Context, h *host.Host) error {
			m, ok := mcpmanager.Key.Get(h.Root())
			if !ok || m == nil {
				return fmt.Errorf("the MCP server manager of profile %q is not running", h.Profile().Source)
			}
			if err := m.Logout(cx, name); errors.Is(err, mcpmanager.ErrNotFound) {
				return h.UnknownServer(name)
			} else if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "%s: logged out\n", name)
			return nil
		})
	}
	auth, err := a.profileAuthorizer(p, name, nil)
	if err != nil {
		return err
	}
	if err := auth.Logout(cx); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "%s: logged out\n", name)
	return nil
}

// managerServes reports whether the server called name is the manager's to log in or
// out: the profile mounts a manager, and has no client row of its own by that name.
func (a *invocation) managerServes(p *profiles.Profile, name string) bool {
	if !host.UsesPlugin(p.Rows, host.UseManager) {
		return false
	}
	_, err := host.ClientConfig(p, a.catalog, name)
	return err != nil
}

// profileAuthorizer builds the authorizer of the profile's own mcpclient row name, with its
// references resolved from the environment, on the process's credentials store.
func (a *invocation) profileAuthorizer(p *profiles.Profile, name string, open func(context.Context, string) error) (*mcpauth.Authorizer, error) {
	cfg, err := host.ClientConfig(p, a.catalog, name)
	if err != nil {
		return nil, err
	}
	cfg, err = cfg.Expand(&secrets.Resolver{LookupEnv: func(k string) (string, bool) { return lookupEnv(a.env, k) }})
	if err != nil {
		return nil, fmt.Errorf("mcp server %q: %w", name, err)
	}
	if !cfg.UsesOAuth() {
		return nil, fmt.Errorf("mcp server %q does not use OAuth (a stdio server, oauth.disabled, or a static Authorization header)", name)
	}
	store, err := mcpclient.CredentialsStore()
	if err != nil {
		return nil, err
	}
	opts := cfg.AuthOptions(store)
	opts.Interactive = true
	opts.OpenURL = open
	opts.Logger = a.logger
	return mcpauth.New(opts)
}

// hostError words a running host's refusal of method for people: a host that does not
// serve it (no manager), an unknown server name (with the names it has), or the host's
// message.
func hostError(cx context.Context, rh *hostclient.Host, method, name string, err error) error {
	if err == nil {
		return nil
	}
	if !rh.Serves(method) {
		return failure(rh.Lacks("do "+method, method))
	}
	return rh.Explain(cx, name, err)
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
		a.showURL(name, u, !f.noBrowser)
		if f.noBrowser {
			return nil
		}
		if err := mcpauth.OpenBrowser(cx, u); err != nil {
			errorf(a.stderr, a.prog, "%v", err)
		}
		return nil
	}
	if err := hostgateway.LoginThrough(cx, f.gateway, name, hostgateway.LoginOptions{Store: mcpauth.NewFileStore(path), OpenURL: open}); err != nil {
		return failure(err)
	}
	fmt.Fprintf(a.stdout, "%s: logged in through the gateway %s (your calls of its tools use your login)\n", name, f.gateway)
	return nil
}
