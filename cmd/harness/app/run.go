package app

import (
	"context"
	"errors"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/cordisgo/harness/internal/demoserver"
	"github.com/cordisgo/harness/plugins/remote"
)

func (a *invocation) runCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "run",
		Short: "Host the profile until interrupted (SIGINT or SIGTERM shut it down cleanly)",
		Args:  args(cobra.NoArgs),
		RunE: action(func(cmd *cobra.Command, _ []string) error {
			return a.withHost(cmd.Context(), func(c context.Context, h *host) error {
				if srv, ok := remote.Key.Get(h.root); ok {
					h.logger.Info("remote API listening", "url", srv.URL(), "endpointFile", srv.EndpointFile())
				}
				h.logger.Info("running; interrupt to stop", "profile", h.profile.Name, "rows", countRows(h.profile.Rows))
				<-c.Done()
				h.logger.Info("shutting down")
				return nil
			})
		}),
	}
}

// serveDemo serves one demo-server session over in and out, for callers of
// Run whose streams are not the process's own (demoserver.ServeStdio
// always uses os.Stdin and os.Stdout).
func serveDemo(c context.Context, opts demoserver.Options, in io.Reader, out io.Writer) error {
	t := &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}}
	err := demoserver.New(opts).Run(c, t)
	if err == nil || errors.Is(err, io.EOF) || c.Err() != nil {
		return nil
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// readAll reads r to the end, up to 16 MiB.
func readAll(r io.Reader) ([]byte, error) {
	const limit = 16 << 20
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err == nil && len(b) > limit {
		return nil, errors.New("input larger than 16 MiB")
	}
	return b, err
}
