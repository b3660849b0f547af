package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/hostclient"
	"github.com/cordisgo/harness/hostview"
	"github.com/cordisgo/harness/plugins/mcpmanager"
	"github.com/cordisgo/harness/termui"
)

// mcpFlags are the flags of mcp list, probe and restart.
type mcpFlags struct {
	endpoint string        // --endpoint: the running host's endpoint file
	local    bool          // --local: never use a running host
	host     bool          // --host: use the running host even with -p, --stdio, --http or --set
	asJSON   bool          // --json
	timeout  time.Duration // --timeout (restart): how long to wait for the outcome
}

func (a *invocation) mcpManageCommands() []*cobra.Command {
	var f mcpFlags
	list := &cobra.Command{
		Use:   "list",
		Short: "List the MCP servers and their status (a running host's, or the profile's in process)",
		Args:  noArgs,
		RunE: action(func(cmd *cobra.Command, _ []string) error {
			return a.mcpList(cmd.Context(), f)
		}),
	}
	probe := serverCommand("probe", "Connect to one MCP server afresh, list its tools and disconnect, without touching the live client",
		func(cx context.Context, name string) error { return a.mcpProbe(cx, f, name) })
	restart := serverCommand("restart", "Restart one MCP server: a new connection (and process) with a fresh reconnect budget",
		func(cx context.Context, name string) error { return a.mcpRestart(cx, f, name) })
	restart.Flags().DurationVar(&f.timeout, "timeout", host.DefaultRestartTimeout, "how long to wait for the server to connect or fail")
	cmds := []*cobra.Command{list, probe, restart}
	for _, c := range cmds {
		f.add(c)
		c.Flags().BoolVar(&f.asJSON, "json", false, "print the answer as JSON")
	}
	return cmds
}

// serverCommand is a command on the one MCP server its argument names (probe, restart,
// login, remove, …): run gets the command's context and the name; a missing name or more
// than one is a usage error that says so and shows the usage line.
func serverCommand(use, short string, run func(cx context.Context, name string) error) *cobra.Command {
	return &cobra.Command{
		Use:   use + " NAME",
		Short: short,
		Args: args(func(_ *cobra.Command, argv []string) error {
			switch len(argv) {
			case 1:
				return nil
			case 0:
				return errors.New("name the MCP server")
			}
			return fmt.Errorf("one MCP server at a time, got %d names", len(argv))
		}),
		RunE: action(func(cmd *cobra.Command, argv []string) error {
			return run(cmd.Context(), argv[0])
		}),
	}
}

// explicitProfile reports whether the command line chose the profile itself (-p, --set,
// --stdio, --http): then the commands answer for it, in process, unless --host is given.
func (f profileFlags) explicitProfile() bool {
	return f.name != "" || len(f.sets)+len(f.stdio)+len(f.http) > 0
}

// findOptions say which running host the command answers for (hostclient.Find): none with
// --local, or when the command line chose its own profile (without --host or --endpoint);
// with --host or --endpoint, no host is an error.
func (a *invocation) findOptions(f mcpFlags) hostclient.FindOptions {
	file, err := a.endpointFile(f.endpoint)
	wanted := f.host || f.endpoint != ""
	return hostclient.FindOptions{EndpointFile: file, FileErr: err, InProcess: f.local || (!wanted && a.flags.explicitProfile()),
		Required: wanted, Note: a.out().Note}
}

// withMCPCaller runs fn with the caller of the running host, else of the profile mounted in
// this process (hostclient.Run), whose statuses the command shows itself.
func (a *invocation) withMCPCaller(cx context.Context, f mcpFlags, fn func(context.Context, *hostclient.Caller) error) error {
	a.quietStartup = true
	return hostclient.Run(cx, hostclient.RunOptions{FindOptions: a.findOptions(f), Start: a.withHost}, fn)
}

func (a *invocation) mcpList(cx context.Context, f mcpFlags) error {
	return a.withMCPCaller(cx, f, func(cx context.Context, c *hostclient.Caller) error {
		l, err := c.List(cx)
		if err != nil {
			return err
		}
		return a.printList(l, f.asJSON)
	})
}

// printList prints a server list (hostview.Output.ServerList); a settings file the
// manager rejected is a failure of the list: its servers are not what the file says.
func (a *invocation) printList(l host.ServerList, asJSON bool) error {
	defaults := func() (mcpmanager.SettingsStatus, bool) {
		files, err := a.settingsFiles()
		return mcpmanager.SettingsStatus{File: files.User, ProjectFile: files.Project}, err == nil
	}
	if err := a.out().ServerList(l, asJSON, defaults); err != nil {
		return err
	}
	if l.Settings.Error != "" {
		return failure(fmt.Errorf("the settings file was rejected (the last good configuration keeps running): %s", l.Settings.Error))
	}
	return nil
}

func (a *invocation) mcpProbe(cx context.Context, f mcpFlags, name string) error {
	probe := func(cx context.Context, c *hostclient.Caller) error {
		out, err := c.Probe(cx, name)
		if err != nil {
			return err
		}
		return a.out().ProbeOutcome(out, f.asJSON)
	}
	rh, err := hostclient.Find(cx, a.findOptions(f))
	if err != nil {
		return err
	} else if rh != nil {
		return probe(cx, hostclient.Remote(rh))
	}
	p, err := a.loadProfile()
	if err != nil {
		return err
	}
	if host.UsesPlugin(p.Rows, host.UseManager) {
		// The manager resolves its entries (templates, credentials): mount the profile and
		// ask it (or, for the profile's own rows, probe theirs).
		a.quietStartup = true
		return a.withHost(cx, func(cx context.Context, h *host.Host) error { return probe(cx, hostclient.Local(h)) })
	}
	// No manager: probe the configuration of the profile's row, without mounting anything.
	cfg, err := host.ClientConfig(p, a.catalog, name)
	if err != nil {
		return err
	}
	return a.out().ProbeOutcome(host.ProbeConfig(cx, name, cfg, a.logger), f.asJSON)
}

func (a *invocation) mcpRestart(cx context.Context, f mcpFlags, name string) error {
	if f.timeout <= 0 {
		return usageErrorf("mcp restart: --timeout %v: must be positive", f.timeout)
	}
	tty := termui.IsTerminal(a.stderr)
	progress := func(v mcpmanager.View) {
		if tty && !f.asJSON {
			fmt.Fprintf(a.stderr, "%s\n", host.StatusLine(hostview.ViewStatus(v)))
		}
	}
	return a.withMCPCaller(cx, f, func(cx context.Context, c *hostclient.Caller) error {
		v, err := c.Restart(cx, name, f.timeout, progress)
		if te, ok := errors.AsType[*hostclient.RestartTimeoutError](err); ok {
			return a.out().Restarted(name, te.Last, te, f.asJSON)
		}
		return a.out().Restarted(name, v, err, f.asJSON)
	})
}
