package app

import (
	"context"
	"errors"
	"io"

	"github.com/spf13/cobra"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/remote"
	"github.com/cordisgo/harness/termui"
)

func (a *invocation) runCommand() *cobra.Command {
	var openPage, withGateway bool
	var gf gatewayFlags
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Host the profile until interrupted: the fleet, the remote API, the page and, with --gateway, the MCP gateway",
		Long: `Host the profile until interrupted. Every MCP server's connection status is
shown as it changes (on a terminal as plain lines such as "demo: connected
(8 tools)", otherwise as log lines); the remote API's URL is logged when the
profile mounts it, and the management page's URL (which carries the token:
keep it to yourself) is printed; --open opens it. With --gateway the same host
also serves its fleet as one MCP gateway, as serve does (the gateway flags of
serve apply). While it runs, mcp, tools, resources and prompts commands of
other processes answer for it (--local: not). A second host on the same files
refuses to start, naming the first one's pid. SIGINT or SIGTERM shut the tree
down cleanly (stdio servers and their process groups included); a second
signal kills the harness.`,
		Example: `  harness run                      # the default profile: the page's URL is printed
  harness run --gateway --open     # the gateway on 127.0.0.1:8931 as well, the page in the browser
  harness -p my.yaml run           # another profile`,
		Args: noArgs,
		RunE: action(func(cmd *cobra.Command, _ []string) error {
			if !withGateway {
				if changed := gf.changed(cmd); changed != "" {
					return usageErrorf("run: --%s is a gateway flag: add --gateway", changed)
				}
				return a.hostAndWait(cmd.Context(), openPage, nil)
			}
			return a.serveGateway(cmd.Context(), &gf, openPage)
		}),
	}
	cmd.Flags().BoolVar(&openPage, "open", false, "open the management page with $BROWSER, else xdg-open")
	cmd.Flags().BoolVar(&withGateway, "gateway", false, "serve the fleet as an MCP gateway as well (as serve does)")
	gf.register(cmd)
	return cmd
}

// hostAndWait hosts the profile until c is done: every status shown as it changes, the
// remote API and the page published, the host's methods exposed; gw, if set, is called
// once the tree is up and returns what to do at shutdown (the gateway's).
func (a *invocation) hostAndWait(cx context.Context, openPage bool, gw func(context.Context, *host.Host) (func(), error)) error {
	printer := termui.StatusPrinter(a.stderr, a.logger)
	// Every client's reports, except those of the manager's clients: the
	// manager's views describe those (below).
	a.liveStatus = func(st mcpclient.Status) {
		if !host.Managed(st) {
			printer(st)
		}
	}
	a.quietStartup = true // the live display has shown every status
	a.hosting = true      // publishes the endpoint, if the profile has a remote row
	return a.withHost(cx, func(cx context.Context, h *host.Host) error {
		// A host that cannot publish its endpoint (another one runs on the same
		// files) would be unreachable: refuse, naming the other host.
		if err := h.FailedUse(host.UseRemote); err != nil {
			return failure(err)
		}
		// The manager collects its clients' reports: show where its servers stand, then
		// every change.
		if err := host.FollowManager(h, printer); err != nil {
			return err
		}
		defer h.Watch(a.loadProfile)()
		if gw != nil {
			stop, err := gw(cx, h)
			if err != nil {
				return err
			}
			defer stop()
		}
		if srv, ok := remote.Key.Get(h.Root()); ok {
			a.showPage(srv, openPage) // the plugin has logged its URL
		}
		h.Logger().Info("running; interrupt to stop", "profile", h.Profile().Name, "rows", host.CountRows(h.Profile().Rows))
		<-cx.Done()
		h.Logger().Info("shutting down")
		return nil
	})
}

// readAll reads r to the end, up to 16 MiB.
func readAll(r io.Reader) ([]byte, error) {
	const limit = 16 << 20
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err == nil && len(b) > limit {
		return nil, errors.New("input larger than 16 MiB")
	}
	return b, err
}
