package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cordisgo/harness/gateway"
	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/hostgateway"
	"github.com/cordisgo/harness/internal/loopback"
)

// defaultServeAddr is where serve listens without --addr: loopback, a fixed port so that
// client configurations can name it.
const defaultServeAddr = "127.0.0.1:8931"

// gatewayFlags are the flags of the HTTP gateway (serve, and run --gateway).
type gatewayFlags struct {
	addr, endpointFile, tokenFile, printClient string
	noAuth, rotate                             bool
	hosts, origins                             []string
	idle                                       time.Duration
	store, storePrefix, replica                string
	drain                                      time.Duration
	access, auditFile                          string
	stateless                                  bool

	flags *pflag.FlagSet // where they were registered, for Changed
}

// gatewayFlagNames are the names register gives the flags, for changed.
var gatewayFlagNames = []string{"addr", "no-auth", "endpoint-file", "token-file", "rotate-token", "print-client-config", "allow-host", "allow-origin", "session-idle-timeout", "store", "store-prefix", "replica", "drain-timeout", "access", "audit-file", "stateless"}

func (gf *gatewayFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	gf.flags = f
	f.StringVar(&gf.addr, "addr", defaultServeAddr, "the gateway listens on `HOST:PORT` (port 0: a free port; the default is loopback only)")
	f.BoolVar(&gf.noAuth, "no-auth", false, "serve the gateway without a bearer token (refused unless the address is loopback)")
	f.StringVar(&gf.endpointFile, "endpoint-file", "", "write the gateway's URL and token to `PATH` (mode 0600; default: gateway.json next to the remote API's endpoint file)")
	f.StringVar(&gf.tokenFile, "token-file", "", "read the gateway's bearer token from `PATH` instead of the kept one")
	f.BoolVar(&gf.rotate, "rotate-token", false, "replace the kept gateway token by a new one (configured clients need the new one)")
	f.StringVar(&gf.printClient, "print-client-config", "", "print the configuration of client `NAME` (claude, codex, gemini, qwen, cursor, vscode or all) for the running gateway (else the one serve would start) and exit")
	f.StringArrayVar(&gf.hosts, "allow-host", nil, "the gateway also accepts this Host header `NAME` (repeatable; loopback names and the --addr host are always accepted)")
	f.StringArrayVar(&gf.origins, "allow-origin", nil, "the gateway also accepts this browser `ORIGIN` (scheme://host[:port]; repeatable)")
	f.DurationVar(&gf.idle, "session-idle-timeout", gateway.DefaultSessionIdleTimeout, "close a downstream session with no request or stream open for `DURATION` (an abandoned client; 0: never)")
	f.StringVar(&gf.store, "store", "", "share sessions with the other replicas of a team's gateway in the Redis server at `URL` (redis://host:6379/0, rediss://…, unix:///path; docs/gateway.md)")
	f.StringVar(&gf.storePrefix, "store-prefix", "", "start the store's keys with `PREFIX` (default harness:gateway:; gateways with different prefixes share nothing)")
	f.StringVar(&gf.replica, "replica", "", "name this replica `NAME` in the store and in the X-Harness-Replica header (default: host name and pid)")
	f.DurationVar(&gf.drain, "drain-timeout", 30*time.Second, "with --store, how long a stopping replica serves its requests in flight, its health check failing, before leaving its sessions to the others (`DURATION`)")
	f.StringVar(&gf.access, "access", "", "people sign in with the team's identity provider, and the rules of the access `FILE` (YAML) say what each may see and call; replaces the shared token (docs/gateway.md)")
	f.BoolVar(&gf.stateless, "stateless", false, "serve the stateless protocol revision (2026-07-28) to the clients that ask for it: any replica serves any of their requests, no affinity needed")
	f.StringVar(&gf.auditFile, "audit-file", "", "append every tool call to the audit trail in `PATH` (JSON Lines; default with --access: gateway-audit.jsonl in the state directory; with --store the trail is in Redis)")
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
		t := &mcp.IOTransport{Reader: io.NopCloser(a.stdin), Writer: nopWriteCloser{a.stdout}}
		srv := gw.Aggregated()
		if search {
			srv = gw.Search()
		}
		err = srv.Run(cx, t)
		if err == nil || errors.Is(err, io.EOF) || cx.Err() != nil {
			return nil
		}
		return failure(fmt.Errorf("serve --stdio: %w", err))
	})
}

// serveGateway hosts the profile (hostAndWait) with the HTTP gateway on: the address is
// taken before anything mounts, so that a busy port refuses at once.
func (a *invocation) serveGateway(cx context.Context, gf *gatewayFlags, openPage bool) error {
	opts := gateway.HTTPOptions{Addr: gf.addr, NoAuth: gf.noAuth, AllowedHosts: gf.hosts, AllowedOrigins: gf.origins, SessionIdleTimeout: gf.idle, Stateless: gf.stateless}
	if gf.idle == 0 {
		opts.SessionIdleTimeout = -1 // 0 on the command line: never
	}
	tok, err := a.gatewayToken(gf.tokenFile, gf.rotate)
	if err != nil {
		return usageErrorf("serve: %v", err)
	}
	endpointFile := gf.endpointFile
	if endpointFile == "" {
		if endpointFile, err = a.gatewayEndpointFile(); err != nil {
			return usageErrorf("serve: %v", err)
		}
	}
	if gf.printClient != "" {
		if gf.noAuth {
			tok = ""
		}
		return a.printGatewayClient(gf, endpointFile, tok)
	}
	if !gf.noAuth && gf.access == "" {
		opts.Token = tok
	}
	if gf.access != "" && gf.noAuth {
		return usageErrorf("serve: --no-auth with --access: people sign in with the identity provider")
	}
	if err := opts.Check(); err != nil && gf.access == "" {
		return usageErrorf("serve: %v", err)
	}
	ln, err := loopback.Listen(opts.Addr)
	if err != nil {
		return failure(fmt.Errorf("serve: listening on %s: %w%s", opts.Addr, err, hostgateway.Holder(endpointFile, opts.Addr)))
	}
	defer func() { _ = ln.Close() }()
	a.gateway = true
	return a.hostAndWait(cx, openPage, func(cx context.Context, h *host.Host) (func(), error) {
		stop, err := hostgateway.Serve(cx, h, ln, hostgateway.Options{HTTP: opts, EndpointFile: endpointFile, ShutdownTimeout: a.shutdownTimeout,
			Store: gf.store, StorePrefix: gf.storePrefix, Replica: gf.replica, DrainTimeout: gf.drain,
			Access: gf.access, AuditFile: gf.auditFile})
		if oe, ok := errors.AsType[*hostgateway.OptionsError](err); ok {
			return nil, usageErrorf("serve: %v", oe)
		} else if err != nil {
			return nil, failure(err)
		}
		return stop, nil
	})
}

// gatewayEndpointFile is gateway.json next to the remote API's endpoint file of the
// invocation's environment.
func (a *invocation) gatewayEndpointFile() (string, error) {
	f, err := a.endpointFile("")
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(f), "gateway.json"), nil
}
