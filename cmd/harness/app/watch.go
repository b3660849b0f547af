package app

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/hostclient"
	"github.com/cordisgo/harness/hostview"
	"github.com/cordisgo/harness/plugins/mcpresources"
)

// watchCommand is `resources watch SERVER URI…`.
func (a *invocation) watchCommand() *cobra.Command {
	var asJSON, read bool
	cmd := &cobra.Command{
		Use:   "watch SERVER URI...",
		Short: "Subscribe to resources of a server and print a line per update until interrupted",
		Long: "Subscribe to resources of a server (resources/subscribe) and print one line per\n" +
			"notifications/resources/updated: the time, the server and the URI; with --read the new\n" +
			"contents follow. --json prints one JSON object per line instead. Ctrl-C ends it,\n" +
			"unsubscribing.",
		Args: args(cobra.MinimumNArgs(2)),
		RunE: action(func(cmd *cobra.Command, argv []string) error {
			return a.watchResources(cmd.Context(), argv[0], argv[1:], read, asJSON)
		}),
	}
	cmd.Flags().BoolVar(&read, "read", false, "read each updated resource and print its new contents")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per update and line")
	return cmd
}

func (a *invocation) watchResources(cx context.Context, server string, uris []string, read, asJSON bool) error {
	return a.withCaller(cx, func(cx context.Context, c *hostclient.Caller) error {
		if !c.Has(host.MethodWatchResources.Name()) {
			return failure(c.MountsNo("mcpResources service", host.UseResources))
		}
		var dropped int64
		err := host.MethodWatchResources.Call(cx, c, host.WatchParams{Server: server, URIs: uris}, func(u host.ResourceUpdate) error {
			if u.Subscribed {
				n := len(slices.Compact(slices.Sorted(slices.Values(uris))))
				a.out().Note("watching %d resource(s) of %s; Ctrl-C to stop", n, server)
				return nil
			}
			if u.Dropped > dropped {
				if n := u.Dropped; dropped == 0 || n/100 > dropped/100 {
					a.out().Note("%d updates dropped: printing does not keep up", n)
				}
				dropped = u.Dropped
			}
			return a.printUpdate(cx, c, u, read, asJSON)
		})
		switch {
		case cx.Err() != nil:
			return nil // interrupted: the host unsubscribes
		case err != nil:
			return failure(refused(cx, c, server, err))
		}
		return nil
	})
}

// printUpdate prints one update, and with read the resource's new contents, read through
// the registry's read tool like `resources read`, as an agent at the root would.
func (a *invocation) printUpdate(cx context.Context, c *hostclient.Caller, u host.ResourceUpdate, read, asJSON bool) error {
	w := hostview.Update{Time: time.Now(), Server: u.Server, URI: u.URI}
	var raw json.RawMessage
	if read {
		args, _ := json.Marshal(map[string]string{"server": u.Server, "uri": u.URI})
		res, terr, err := resourceTool(cx, c, mcpresources.ToolRead, args)
		switch {
		case err != nil:
			w.Error = err.Error()
		case terr != nil:
			w.Error = terr.Error()
		case res == nil || len(res.Raw) == 0:
			w.Error = mcpresources.ToolRead + " returned no result"
		default:
			raw = res.Raw
		}
	}
	return a.out().Update(w, raw, asJSON)
}
