package app

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpresources"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// watchBuffer is how many updates wait to be printed; beyond it, updates are counted as
// dropped rather than holding the SDK's notification goroutine.
const watchBuffer = 256

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

// watchedUpdate is one update as --json prints it.
type watchedUpdate struct {
	Time     time.Time       `json:"time"`
	Server   string          `json:"server"`
	URI      string          `json:"uri"`
	Contents json.RawMessage `json:"contents,omitempty"`
	Error    string          `json:"error,omitempty"`
}

func (a *invocation) watchResources(cx context.Context, server string, uris []string, read, asJSON bool) error {
	uris = slices.Compact(slices.Sorted(slices.Values(uris)))
	return a.withHost(cx, func(cx context.Context, h *host.Host) error {
		resources, ok := mcpresources.Key.Get(h.Root())
		if !ok {
			return failure(fmt.Errorf("no mcpResources service at the root: the profile needs a %s row", resourcesPluginRowUse))
		}
		var scope *ctx.Scope // the client the root sees under server's name
		if u, ok := mcpclient.LookupUpstream(h.Root(), server); ok {
			scope = u.Scope()
		}
		updates := make(chan mcpclient.ResourceChange, watchBuffer)
		var dropped atomic.Int64
		stop, err := mcpclient.ResourceUpdatedEvent.On(h.Root(), func(u mcpclient.ResourceChange) error {
			if u.Server != server || (scope != nil && u.Scope != scope) || !slices.Contains(uris, u.URI) {
				return nil
			}
			select {
			case updates <- u:
			default:
				if n := dropped.Add(1); n == 1 || n%100 == 0 {
					errorf(a.stderr, a.prog, "%d updates dropped: printing does not keep up", n)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		defer func() { _ = stop(context.WithoutCancel(cx)) }()

		var subs []mcpresources.Subscription
		defer func() {
			for i, s := range subs {
				if err := s.Close(); err != nil {
					errorf(a.stderr, a.prog, "unsubscribing %s: %v", uris[i], err)
				}
			}
		}()
		for _, uri := range uris {
			sub, err := resources.Subscribe(cx, h.Root(), server, uri)
			if err != nil {
				if cx.Err() != nil {
					return nil // interrupted while subscribing
				}
				return failure(err)
			}
			subs = append(subs, sub)
		}
		errorf(a.stderr, a.prog, "watching %d resource(s) of %s; Ctrl-C to stop", len(uris), server)
		for {
			select {
			case <-cx.Done():
				return nil
			case u := <-updates:
				if err := a.printUpdate(cx, h, u, read, asJSON); err != nil {
					return err
				}
			}
		}
	})
}

// printUpdate prints one update, and with read the resource's new contents, read through
// the registry's read tool like `resources read`.
func (a *invocation) printUpdate(cx context.Context, h *host.Host, u mcpclient.ResourceChange, read, asJSON bool) error {
	w := watchedUpdate{Time: time.Now(), Server: u.Server, URI: u.URI}
	var raw json.RawMessage
	if read {
		res, err := a.readForWatch(cx, h, u)
		switch {
		case err != nil:
			w.Error = err.Error()
		default:
			raw = res
			var body struct {
				Contents json.RawMessage `json:"contents"`
			}
			if err := json.Unmarshal(res, &body); err == nil {
				w.Contents = body.Contents
			}
		}
	}
	if asJSON {
		b, err := marshalJSON(w, "")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(a.stdout, "%s\n", b)
		return err
	}
	fmt.Fprintf(a.stdout, "%s  %s  %s\n", w.Time.Format(time.RFC3339), w.Server, w.URI)
	if w.Error != "" {
		errorf(a.stderr, a.prog, "reading %s: %s", u.URI, w.Error)
		return nil
	}
	if raw != nil {
		if err := a.printResources(toolReadResource, raw, ""); err != nil {
			return err
		}
		fmt.Fprintln(a.stdout)
	}
	return nil
}

// readForWatch reads the updated resource with the read tool, as an agent at the root
// would; a failure is the tool's words.
func (a *invocation) readForWatch(cx context.Context, h *host.Host, u mcpclient.ResourceChange) (json.RawMessage, error) {
	reg, err := toolRegistry(h)
	if err != nil {
		return nil, err
	}
	args, err := json.Marshal(map[string]string{"server": u.Server, "uri": u.URI})
	if err != nil {
		return nil, err
	}
	res, err := reg.Execute(cx, h.Root(), toolReadResource, args, toolregistry.ExecOptions{})
	if err != nil {
		return nil, err
	}
	if res == nil || len(res.Raw) == 0 {
		return nil, fmt.Errorf("%s returned no result", toolReadResource)
	}
	return res.Raw, nil
}
