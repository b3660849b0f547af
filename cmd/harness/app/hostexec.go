package app

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/plugins/remote"

	"github.com/spf13/cobra"
)

// methodHostExec is the host's remote method that runs one of the commands that read the
// fleet (forwardable) on the host's own tree, streaming its output (execEvent values, the
// last one with the exit status): a command run while a host is running answers for it,
// exactly as it would in process, without starting the fleet again.
var methodHostExec = remote.NewStreamMethod[execParams, execEvent]("harness/exec")

// forwardable are the commands that answer for a running host through harness/exec, by
// their path under the program name.
var forwardable = []string{
	"tools list", "tools call",
	"resources list", "resources templates", "resources read", "resources watch",
	"prompts list", "prompts get", "prompt",
}

// execParams are the parameters of harness/exec: the command line (without the program
// name) and what the command reads from stdin, when an argument is "-".
type execParams struct {
	Args  []string `json:"args"`
	Stdin string   `json:"stdin,omitempty"`
}

// execEvent is one value of the harness/exec stream: output as it is written, then the
// exit status.
type execEvent struct {
	Stdout string `json:"stdout,omitempty"`
	Stderr string `json:"stderr,omitempty"`
	Exit   *int   `json:"exit,omitempty"`
}

// Validate requires a command line.
func (p execParams) Validate() error {
	if len(p.Args) == 0 {
		return &ctx.ConfigError{Key: "args", Msg: "required: the command line, [COMMAND, ...]"}
	}
	return nil
}

// hostFlags are the flags of a forwardable command that choose between a running host and
// this process.
func (a *invocation) hostFlags(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&a.fwd.endpoint, "endpoint", "", "the running host's endpoint `FILE` (default: the remote plugin's default endpoint file); implies --host")
	fl.BoolVar(&a.fwd.local, "local", false, "do not use a running host: mount the profile in this process")
	fl.BoolVar(&a.fwd.host, "host", false, "use the running host even when -p, --stdio, --http or --set are given (which otherwise mean this process)")
	cmd.MarkFlagsMutuallyExclusive("local", "host")
}

// streamWriter writes to an exec stream, as one field of execEvent.
type streamWriter struct {
	mu     *sync.Mutex
	send   func(execEvent) error
	stderr bool
}

func (w streamWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ev := execEvent{Stdout: string(p)}
	if w.stderr {
		ev = execEvent{Stderr: string(p)}
	}
	if err := w.send(ev); err != nil {
		return 0, err
	}
	return len(p), nil
}

// exposeHostAPI exposes the host's methods on its root (host.Host.ExposeAPI) and
// harness/exec, which runs this binary's commands: for the commands of other processes
// (see runningHost) on a long-running host, and for this process's own commands
// (remote.Local), which call them the same way.
func (a *invocation) exposeHostAPI(h *host.Host) error {
	if err := h.ExposeAPI(); err != nil {
		return err
	}
	_, err := methodHostExec.Expose(h.Root(), func(cx context.Context, p execParams, send func(execEvent) error) error {
		return a.execOnHost(cx, h, p, send)
	})
	return err
}

// execOnHost runs a forwardable command line on the host h: a fresh invocation with the
// host's catalog and environment whose withHost is h itself.
func (a *invocation) execOnHost(cx context.Context, h *host.Host, p execParams, send func(execEvent) error) error {
	var mu sync.Mutex
	sub := &invocation{
		prog: a.prog, version: a.version, catalog: a.catalog, self: a.self, selfEnv: a.selfEnv,
		stdin: strings.NewReader(p.Stdin), stdout: streamWriter{&mu, send, false}, stderr: streamWriter{&mu, send, true},
		env: a.env, attached: h,
	}
	code := sub.run(cx, p.Args)
	mu.Lock()
	defer mu.Unlock()
	return send(execEvent{Exit: &code})
}

// forward runs this command on the running host, if there is one and it serves
// harness/exec: ok reports whether it did, err carries the command's exit status.
func (a *invocation) forward(cx context.Context) (ok bool, err error) {
	if a.attached != nil || !a.forwardOK {
		return false, nil
	}
	rh, err := a.findHost(cx, a.fwd)
	if err != nil || rh == nil {
		return false, err
	}
	if !rh.serves(methodHostExec.Name()) {
		if a.fwd.host || a.fwd.endpoint != "" {
			return false, failure(fmt.Errorf("%s cannot run %s (it does not serve %s); use --local to work in process", rh, a.cmdPath, methodHostExec))
		}
		errorf(a.stderr, a.prog, "%s cannot run %s; working in process", rh, a.cmdPath)
		return false, nil
	}
	p := execParams{Args: a.args}
	if slices.Contains(a.args, "-") {
		b, err := readAll(a.stdin)
		if err != nil {
			return true, usageErrorf("reading stdin: %v", err)
		}
		p.Stdin = string(b)
	}
	code := ExitFailure
	err = methodHostExec.Call(cx, rh.cl, p, func(ev execEvent) error {
		if ev.Stdout != "" {
			if _, err := io.WriteString(a.stdout, ev.Stdout); err != nil {
				return err
			}
		}
		if ev.Stderr != "" {
			_, _ = io.WriteString(a.stderr, ev.Stderr) // a diagnostic for the person at the terminal
		}
		if ev.Exit != nil {
			code = *ev.Exit
		}
		return nil
	})
	if err != nil && cx.Err() == nil {
		return true, rh.explain(cx, "", err)
	}
	if code == ExitOK {
		return true, nil
	}
	return true, &exitError{code: code, err: silentFailure}
}
