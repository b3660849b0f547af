package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cordisgo/harness/mcpauth"
	"github.com/cordisgo/harness/plugins/remote"
)

// showPage prints the management page's URL on stderr (never through the
// logger: the URL carries the token, in its fragment) and, when open is
// set, opens it in the browser.
func (a *invocation) showPage(srv *remote.Server, open bool) {
	fmt.Fprintf(a.stderr, "management page: %s\n", srv.PageURL())
	if open {
		a.openPage(context.Background(), srv.PageURL())
	}
}

// openPage opens u with $BROWSER (else the platform's opener), reporting a
// failure without the URL.
func (a *invocation) openPage(cx context.Context, u string) {
	if err := mcpauth.OpenBrowser(cx, u); err != nil {
		a.out().Note("could not open the management page: %s", strings.ReplaceAll(err.Error(), u, "<page URL>"))
	}
}

// pageURL returns the management page's URL for the host whose endpoint
// file is endpoint ("" means the default one of the invocation's
// environment).
func (a *invocation) pageURL(endpoint string) (string, error) {
	file, err := a.endpointFile(endpoint)
	if err != nil {
		return "", err
	}
	return remote.EndpointPageURL(file)
}

func (a *invocation) openCommand() *cobra.Command {
	var endpoint string
	var printOnly bool
	cmd := &cobra.Command{
		Use:   "open",
		Short: "Open the management page of the running host (harness run) in the browser",
		Long: `Open the management page of the running host in the browser: $BROWSER
when it is set, else xdg-open (open on macOS). The host is the one whose
endpoint file is --endpoint (default: the remote plugin's default endpoint
file). The page's URL carries the host's token in its fragment; the page
trades it for a session cookie and removes it from the address bar. --print
prints the URL instead (for a browser on another machine, or none at all).`,
		Args: noArgs,
		RunE: action(func(cmd *cobra.Command, _ []string) error {
			u, err := a.pageURL(endpoint)
			if err != nil {
				return fmt.Errorf("no running host with a remote API (start one with harness run): %w", err)
			}
			if printOnly {
				fmt.Fprintln(a.stdout, u)
				return nil
			}
			if err := mcpauth.OpenBrowser(cmd.Context(), u); err != nil {
				return fmt.Errorf("opening the management page: %s (harness open --print prints its URL instead)", strings.ReplaceAll(err.Error(), u, "<page URL>"))
			}
			return nil
		}),
	}
	cmd.Flags().StringVar(&endpoint, "endpoint", "", "the running host's endpoint `FILE` (default: the remote plugin's default endpoint file)")
	cmd.Flags().BoolVar(&printOnly, "print", false, "print the page's URL on stdout instead of opening it")
	return cmd
}
