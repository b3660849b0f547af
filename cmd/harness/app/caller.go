package app

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/hostclient"
	"github.com/cordisgo/harness/plugins/remote"
)

// add gives cmd the flags that choose between a running host and this process,
// set in f (a.fwd for the commands that answer for either).
func (f *mcpFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.endpoint, "endpoint", "", "the running host's endpoint `FILE` (default: the remote plugin's default endpoint file); implies --host")
	fl.BoolVar(&f.local, "local", false, "do not look for a running host: mount the profile in this process")
	fl.BoolVar(&f.host, "host", false, "answer for the running host even when -p, --stdio, --http or --set are given (which otherwise mean this process)")
	cmd.MarkFlagsMutuallyExclusive("local", "host")
}

// withCaller runs fn with the running host's caller when there is one (hostclient.Run)
// that serves the host's methods, else with this process's tree, started for the command.
func (a *invocation) withCaller(cx context.Context, fn func(context.Context, *hostclient.Caller) error) error {
	return hostclient.Run(cx, hostclient.RunOptions{FindOptions: a.findOptions(a.fwd), Start: a.withHost,
		Method: host.MethodTools.Name(), What: a.cmdPath}, fn)
}

// refused words a method's error for people (hostclient.Caller.Explain); what the method
// refused as a wrong name or argument (not_found, bad_request) is a usage error.
func refused(cx context.Context, c *hostclient.Caller, server string, err error) error {
	if code := remote.CodeOf(err); code == remote.CodeNotFound || code == remote.CodeBadRequest {
		if _, ok := errors.AsType[*remote.Error](err); ok {
			return &exitError{code: ExitUsage, err: c.Explain(cx, server, err)}
		}
	}
	return c.Explain(cx, server, err)
}
