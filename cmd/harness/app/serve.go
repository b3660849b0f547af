package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cordisgo/harness/gateway"
	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/hostgateway"
	"github.com/cordisgo/harness/internal/mcpserve"
)

// defaultServeAddr is where serve listens without --addr: loopback, a fixed port so that
// client configurations can name it.
const defaultServeAddr = "127.0.0.1:8931"

// gatewayFlags are the flags of the HTTP gateway (serve, and run --gateway): the gateway's
// configuration as values (hostgateway.Config), and --print-client-config.
type gatewayFlags struct {
	hostgateway.Config
	printClient string

	flags *pflag.FlagSet // where they were registered, for Changed
}

// gatewayFlagNames are the names register gives the flags, for changed.
var gatewayFlagNames = []string{"addr", "no-auth", "endpoint-file", "token-file", "rotate-token", "print-client-config", "allow-host", "allow-origin", "session-idle-timeout", "store", "store-prefix", "replica", "drain-timeout", "access", "audit-file", "stateless"}

func (gf *gatewayFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	gf.flags = f
	f.StringVar(&gf.Addr, "addr", defaultServeAddr, "the gateway listens on `HOST:PORT` (port 0: a free port; the default is loopback only)")
	f.BoolVar(&gf.NoAuth, "no-auth", false, "serve the gateway without a bearer token (refused unless the address is loopback)")
	f.StringVar(&gf.EndpointFile, "endpoint-file", "", "write the gateway's URL and token to `PATH` (mode 0600; default: gateway.json next to the remote API's endpoint file)")
	f.StringVar(&gf.Token.File, "token-file", "", "read the gateway's bearer token from `PATH` instead of the kept one")
	f.BoolVar(&gf.Token.Rotate, "rotate-token", false, "replace the kept gateway token by a new one (configured clients need the new one)")
	f.StringVar(&gf.printClient, "print-client-config", "", "print the configuration of client `NAME` (claude, codex, gemini, qwen, cursor, vscode or all) for the running gateway (else the one serve would start) and exit")
	f.StringArrayVar(&gf.AllowedHosts, "allow-host", nil, "the gateway also accepts this Host header `NAME` (repeatable; loopback names and the --addr host are always accepted)")
	f.StringArrayVar(&gf.AllowedOrigins, "allow-origin", nil, "the gateway also accepts this browser `ORIGIN` (scheme://host[:port]; repeatable)")
	f.DurationVar(&gf.SessionIdleTimeout, "session-idle-timeout", gateway.DefaultSessionIdleTimeout, "close a downstream session with no request or stream open for `DURATION` (an abandoned client; 0: never)")
	f.StringVar(&gf.Store, "store", "", "share sessions with the other replicas of a team's gateway in the Redis server at `URL` (redis://host:6379/0, rediss://…, unix:///path; docs/gateway.md)")
	f.StringVar(&gf.StorePrefix, "store-prefix", "", "start the store's keys with `PREFIX` (default harness:gateway:; gateways with different prefixes share nothing)")
	f.StringVar(&gf.Replica, "replica", "", "name this replica `NAME` in the store and in the X-Harness-Replica header (default: host name and pid)")
	f.DurationVar(&gf.DrainTimeout, "drain-timeout", 30*time.Second, "with --store, how long a stopping replica serves its requests in flight, its health check failing, before leaving its sessions to the others (`DURATION`)")
	f.StringVar(&gf.Access, "access", "", "people sign in with the team's identity provider, and the rules of the access `FILE` (YAML) say what each may see and call; replaces the shared token (docs/gateway.md)")
	f.BoolVar(&gf.Stateless, "stateless", false, "serve the stateless protocol revision (2026-07-28) to the clients that ask for it: any replica serves any of their requests, no affinity needed")
	f.StringVar(&gf.AuditFile, "audit-file", "", "append every tool call to the audit trail in `PATH` (JSON Lines; default with --access: gateway-audit.jsonl in the state directory; with --store the trail is in Redis)")
}

// changed returns the name of the first gateway flag given on cmd's command line, or "".
func (gf *gatewayFlags) changed(cmd *cobra.Command) string {
	for _, n := range gatewayFlagNames {
		if cmd.Flags().Changed(n) {
			return n
		}
	}
	return ""
}

func (a *invocation) serveCommand() *cobra.Command {
	var stdio, search bool
	var gf gatewayFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Host the profile (as run does) with its MCP servers served as one MCP gateway (Streamable HTTP or --stdio)",
		Long: `Host the profile as run does (the remote API and the management page included)
and serve what it holds over MCP: one upstream connection per configured server, shared
by every downstream session. serve is run --gateway.

Routes (Streamable HTTP):
  /mcp                   the tools (mcp__<server>__<tool>), resources and prompts visible at the root
  /mcp/search            the same tools behind a search: tool_search, call_tool, and the tools found
  /mcp/agents/<layer>    what one agent scope of the profile sees (layer: its row ids, dot-joined)
  /mcp/servers/<name>    one upstream server passed through with its original names
                         (also /mcp/servers/<name>/mcp, for clients that guess by the URL)

Security: every request needs "Authorization: Bearer <token>". The token is generated once
and kept in gateway.token in the harness's configuration directory (mode 0600), reused at
every start until --rotate-token makes a new one, unless --token-file or
HARNESS_GATEWAY_TOKEN gives one; it is written, with the URL, to the endpoint file (mode
0600). --print-client-config NAME prints what to paste into a client (claude, codex,
gemini, qwen, cursor, vscode, or all) for the running gateway (else the one serve would
start) and exits. --no-auth is refused on an address that is not
loopback. Host and Origin headers are checked on every route (DNS rebinding). Without
--addr the gateway listens on loopback only; an address in use is refused before anything
starts.

--stdio serves the aggregated route on stdin/stdout instead (for clients that only launch
commands: one fleet per client, which does not publish itself as the host), --stdio
--search the search route; in serve, --stdio takes no value, and upstream servers come
from the profile.`,
		Example: `  harness serve                                # http://127.0.0.1:8931/mcp, the kept token
  harness serve --print-client-config claude   # the line that adds the gateway to Claude Code
  harness serve --print-client-config all      # every known client's entry
  harness serve --rotate-token                 # a new token (clients need the new one)
  harness serve --stdio                        # for clients that launch a command`,
		Args: noArgs,
		RunE: action(func(cmd *cobra.Command, _ []string) error {
			if search && !stdio {
				return usageErrorf("serve: --search is for --stdio (over HTTP the search route is %s)", gateway.PathSearch)
			}
			if stdio {
				if n := gf.changed(cmd); n != "" && n != "allow-host" && n != "allow-origin" {
					return usageErrorf("serve: --%s is for HTTP: --stdio has no address and no token", n)
				}
				return a.serveStdio(cmd.Context(), search)
			}
			return a.serveGateway(cmd.Context(), &gf, false)
		}),
	}
	cmd.Flags().BoolVar(&stdio, "stdio", false, "serve the aggregated route over stdin/stdout instead of HTTP")
	cmd.Flags().BoolVar(&search, "search", false, "with --stdio: serve the search route (tool_search and call_tool) instead of the aggregated one")
	gf.register(cmd)
	return cmd
}

// serveStdio hosts the profile for one client on stdin/stdout: the aggregated route, or
// with search the search route.
func (a *invocation) serveStdio(cx context.Context, search bool) error {
	a.quietStartup = true // stdout is the protocol: nothing else goes there
	a.stdinIsProtocol = true
	a.gateway = true
	return a.withHost(cx, func(cx context.Context, h *host.Host) error {
		gw, err := gateway.New(h.Root(), gateway.Options{Logger: h.Logger(), Agents: h.Agents, ShortNames: true})
		if err != nil {
			return failure(err)
		}
		defer func() { _ = gw.Close() }()
		srv := gw.Aggregated()
		if search {
			srv = gw.Search()
		}
		if err := mcpserve.IO(cx, srv, a.stdin, a.stdout); err == nil {
			return nil
		}
		return failure(fmt.Errorf("serve --stdio: %w", err))
	})
}

// serveGateway hosts the profile (hostAndWait) with the HTTP gateway on: the address is
// taken before anything mounts, so that a busy port refuses at once.
func (a *invocation) serveGateway(cx context.Context, gf *gatewayFlags, openPage bool) error {
	c := gf.Config
	c.ShutdownTimeout = a.shutdownTimeout
	c.Token.Env, _ = lookupEnv(a.env, "HARNESS_GATEWAY_TOKEN")
	c.Token.Dir, c.Token.DirErr = a.harnessDir()
	if gf.printClient != "" {
		running, err := c.PrintClient(a.stdout, gf.printClient, gf.flags.Changed("addr"))
		if file, _ := c.EndpointPath(); running.PID != 0 {
			a.out().Note("the gateway of the host running as pid %d (%s)", running.PID, file)
		}
		return gatewayError(err, gf.printClient)
	}
	opts, err := c.Options()
	if err != nil {
		return gatewayError(err, "")
	}
	ln, err := hostgateway.Listen(opts)
	if err != nil {
		return failure(fmt.Errorf("serve: %w", err))
	}
	defer func() { _ = ln.Close() }()
	a.gateway = true
	return a.hostAndWait(cx, openPage, func(cx context.Context, h *host.Host) (func(), error) {
		stop, err := hostgateway.Serve(cx, h, ln, opts)
		if err == nil {
			fmt.Fprintf(a.stderr, "gateway: %s (harness serve --print-client-config CLIENT: a client's settings)\n", hostgateway.URL(opts.HTTP.Addr, ln))
		}
		return stop, gatewayError(err, "")
	})
}

// gatewayError is the command's error for the gateway's: what it refused of the command line
// (an option, an unknown client, with a did-you-mean) is a usage error.
func gatewayError(err error, client string) error {
	if oe, ok := errors.AsType[*hostgateway.OptionsError](err); ok {
		return usageErrorf("serve: %v", oe)
	}
	if ue, ok := errors.AsType[*hostgateway.UnknownClientError](err); ok {
		return usageErrorf("serve: %v%s", ue, nearest(client, hostgateway.ClientNames()))
	}
	if err != nil {
		return failure(err)
	}
	return nil
}
