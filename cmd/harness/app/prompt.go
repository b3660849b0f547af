package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/internal/termsafe"
	"github.com/cordisgo/harness/plugins/sysprompt"
)

// promptSection is one section of `prompt --json`.
type promptSection struct {
	Name  string `json:"name"`
	Owner string `json:"owner"`
	Order int    `json:"order"`
	Text  string `json:"text"`
}

func (a *invocation) promptCommand() *cobra.Command {
	var asJSON bool
	var vars []string
	cmd := &cobra.Command{
		Use:   "prompt",
		Short: "Print the system prompt assembled at the root (--json: its sections with their owners)",
		Args:  noArgs,
		RunE: action(func(cmd *cobra.Command, _ []string) error {
			vm := make(map[string]string, len(vars))
			for _, v := range vars {
				k, val, ok := strings.Cut(v, "=")
				if !ok || k == "" {
					return usageErrorf("--var %q: expected NAME=VALUE", v)
				}
				vm[k] = val
			}
			return a.withHost(cmd.Context(), func(_ context.Context, h *host.Host) error {
				svc, err := rootService(h, sysprompt.Key, "system prompt", "sysprompt")
				if err != nil {
					return err
				}
				p, err := svc.Assemble(h.Root(), vm)
				if err != nil {
					return err
				}
				if !asJSON {
					if p.Text != "" {
						fmt.Fprintln(a.stdout, termsafe.String(p.Text))
					}
					return nil
				}
				out := struct {
					Text     string          `json:"text"`
					Sections []promptSection `json:"sections"`
				}{Text: p.Text, Sections: []promptSection{}}
				for _, s := range p.Sections {
					out.Sections = append(out.Sections, promptSection{Name: s.Name, Owner: s.Owner, Order: s.Order, Text: s.Text})
				}
				return writeJSON(a, out)
			})
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the prompt and its sections, with owners, as JSON")
	cmd.Flags().StringArrayVar(&vars, "var", nil, "set a variable for interpolated sections, `NAME=VALUE`; repeatable")
	return cmd
}
