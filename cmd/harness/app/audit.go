package app

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/cordisgo/harness/gateway/audit"
	"github.com/cordisgo/harness/hostgateway"
	"github.com/cordisgo/harness/hostview"
	"github.com/cordisgo/harness/internal/termsafe"
)

// auditCommand reads a gateway's audit trail (package gateway/audit): the Redis stream of
// a team's replicas (--store), or the file of one gateway.
func (a *invocation) auditCommand() *cobra.Command {
	var store, prefix, file, since string
	var q audit.Query
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Show the gateway's audit trail: who called which tool, with what outcome",
		Long: `Show the calls a gateway recorded (serve --access, --audit-file or --store): the
person, the server and tool, the outcome (ok, denied, tool_error, timeout, …), the duration
and the arguments with the values of secret-looking keys masked, oldest first.

The trail is in Redis for a team's replicas (--store, the URL serve was given), else in
a JSON Lines file (--file; default: the one serve --access writes).`,
		Example: `  harness audit --store redis://redis.internal:6379/0 --who alice
  harness audit --outcome denied --since 24h
  harness audit --json | jq .`,
		Args: noArgs,
		RunE: action(func(cmd *cobra.Command, _ []string) error {
			if since != "" {
				d, err := time.ParseDuration(since)
				if err != nil {
					return usageErrorf("audit: --since %q: want a duration such as 30m or 24h", since)
				}
				q.Since = time.Now().Add(-d)
			}
			entries, err := hostgateway.ReadAudit(cmd.Context(), hostgateway.AuditSource{Store: store, StorePrefix: prefix, File: file}, q)
			if err != nil {
				return failure(err)
			}
			if asJSON {
				return hostview.JSONLines(a.stdout, entries)
			}
			return audit.Print(termsafe.Writer(a.stdout), entries)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&store, "store", "", "read the trail of a team's replicas from the Redis server at `URL`")
	f.StringVar(&prefix, "store-prefix", "", "the store's key `PREFIX` (as given to serve)")
	f.StringVar(&file, "file", "", "read the trail from the JSON Lines file at `PATH` (default: the one serve --access writes)")
	f.StringVar(&q.Person, "who", "", "only the calls of `PERSON` (their token's subject)")
	f.StringVar(&q.Server, "server", "", "only the calls of tools of `SERVER`")
	f.StringVar(&q.Tool, "tool", "", "only the calls of `TOOL` (its own name on its server)")
	f.StringVar(&q.Outcome, "outcome", "", "only the calls with `OUTCOME` (ok, denied, tool_error, timeout, …)")
	f.StringVar(&since, "since", "", "only the calls of the last `DURATION` (30m, 24h)")
	f.IntVar(&q.Limit, "limit", audit.DefaultLimit, "at most `N` calls, the newest")
	f.BoolVar(&asJSON, "json", false, "print one JSON object per call")
	return cmd
}
