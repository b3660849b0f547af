package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/plugins/remote"
)

// hostCaller is what the commands that answer for a host (tools, resources, prompts,
// prompt) call: the running host's client (rh set), or this process's own tree
// (remote.Local), through the same typed methods (host.MethodTools, …).
type hostCaller struct {
	remote.Caller
	rh   *runningHost // nil in process
	root *ctx.Context // the tree in process, nil on a running host
	src  string       // the profile's source, for messages
}

// has reports whether the host serves the method called name.
func (c *hostCaller) has(name string) bool {
	if c.rh != nil {
		return c.rh.serves(name)
	}
	_, ok := c.root.RemoteMethod(name)
	return ok
}

// mountsNo is the error of a host whose profile mounts no service what (a row with use:
// use would).
func (c *hostCaller) mountsNo(what, use string) error {
	err := fmt.Errorf("profile %q mounts no %s (a row with use: %s)", c.src, what, use)
	if c.rh != nil {
		return fmt.Errorf("%s: %w", c.rh, err)
	}
	return err
}

// hostFlags are the flags of a command that answers for a running host or this process.
func (a *invocation) hostFlags(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&a.fwd.endpoint, "endpoint", "", "the running host's endpoint `FILE` (default: the remote plugin's default endpoint file); implies --host")
	fl.BoolVar(&a.fwd.local, "local", false, "do not use a running host: mount the profile in this process")
	fl.BoolVar(&a.fwd.host, "host", false, "use the running host even when -p, --stdio, --http or --set are given (which otherwise mean this process)")
	cmd.MarkFlagsMutuallyExclusive("local", "host")
}

// withCaller runs fn with the running host's caller when there is one (findHost) that
// serves the host's methods, else with this process's tree, started for the command.
func (a *invocation) withCaller(cx context.Context, fn func(context.Context, *hostCaller) error) error {
	rh, err := a.findHost(cx, a.fwd)
	if err != nil {
		return err
	}
	if rh != nil {
		if rh.serves(host.MethodTools.Name()) {
			return fn(cx, &hostCaller{Caller: rh.cl, rh: rh, src: rh.info.Profile})
		}
		if a.fwd.host || a.fwd.endpoint != "" {
			return failure(fmt.Errorf("%s cannot run %s (it does not serve %s); use --local to work in process", rh, a.cmdPath, host.MethodTools))
		}
		errorf(a.stderr, a.prog, "%s cannot run %s; working in process", rh, a.cmdPath)
	}
	return a.withHost(cx, func(cx context.Context, h *host.Host) error {
		return fn(cx, &hostCaller{Caller: remote.NewLocal(h.Root()), root: h.Root(), src: h.Profile().Source})
	})
}

// refused words a method's error for people: on a running host, as rh.explain does (an
// unknown server name lists the host's names); in process, the method's own message. What
// the method refused as a wrong name or argument (not_found, bad_request) is a usage error.
func (c *hostCaller) refused(cx context.Context, server string, err error) error {
	re, ok := errors.AsType[*remote.Error](err)
	switch {
	case !ok:
		return err
	case c.rh != nil && (re.Code == remote.CodeNotFound || re.Code == remote.CodeBadRequest):
		return &exitError{code: ExitUsage, err: c.rh.explain(cx, server, err)}
	case c.rh != nil:
		return c.rh.explain(cx, server, err)
	case re.Code == remote.CodeNotFound || re.Code == remote.CodeBadRequest:
		return &exitError{code: ExitUsage, err: errors.New(re.Message)}
	}
	return errors.New(re.Message)
}
