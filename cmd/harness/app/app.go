package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/hostview"
	"github.com/cordisgo/harness/internal/gcpolicy"
	"github.com/cordisgo/harness/internal/procpolicy"
	"github.com/cordisgo/harness/internal/syncio"
	"github.com/cordisgo/harness/internal/words"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpclient/transport"
	"github.com/cordisgo/harness/profiles"
	"github.com/cordisgo/harness/termform"
	"github.com/cordisgo/harness/termui"
	"github.com/cordisgo/harness/workspace/sandbox"
)

// Options configure a harness binary. The zero value is the stock harness.
type Options struct {
	// Plugins are added to the built-in catalog (host.Catalog) under the
	// names profile rows give in their use key; an entry with a built-in
	// name replaces that plugin.
	Plugins map[string]ctx.PluginDef
	// Name is the program name in usage and messages; "" means "harness".
	Name string
	// Version is what the version command reports; "" means the main
	// module's version from the build information.
	Version string
	// Self is the path of the running binary, substituted for
	// ${HARNESS_SELF} in profiles (the default profile re-executes the
	// binary as its demo server); "" means os.Executable().
	Self string
	// SelfEnv are environment entries added to the configuration of every
	// row that runs the binary itself (a config whose command is Self), in
	// its env map; the profile's own entries win. Tests use it to make a
	// re-executed test binary act as the harness.
	SelfEnv map[string]string

	// collector is the binary's garbage collector policy, set by Main (nil: none).
	collector *gcpolicy.Policy
	// workDir is where the project settings file is looked for from (nil: the current
	// directory; the tests give a directory of their own).
	workDir func() (string, error)
}

// Default bounds of the application shell (overridden by flags).
const (
	// defaultStartupTimeout bounds the wait for the tree to settle. It is
	// above the MCP client's own default startupTimeoutMs (60 s), so that a
	// cold server start is reported by the client, not cut short here.
	defaultStartupTimeout = 75 * time.Second
	// defaultShutdownTimeout bounds disposal of the tree: enough for stdio
	// servers to be asked to exit, then killed, and the kill confirmed.
	defaultShutdownTimeout = 15 * time.Second
)

// Main runs the harness with the process's arguments, standard streams and
// environment, and returns the exit status for os.Exit. SIGINT and SIGTERM
// cancel the command, which then shuts down cleanly; a second signal kills
// every MCP server's process group and exits at once (status 1). Unless GOGC is set, the process runs with the harness's
// garbage collector policy (package internal/gcpolicy: a 32 MiB heap goal
// while the live heap is small, Go's default above); unless GOMAXPROCS is
// set, with half of Go's default processors (package internal/procpolicy),
// except a stdio demo server. The agent commands (chat, ask) return to Go's
// default collector: a session waits on its model and allocates little, and
// the policy's heap goal would be most of its resident memory.
func Main(opts Options) int {
	sandbox.Main() // a workspace's shell command, run through this binary: the helper runs it and exits
	opts.collector = gcpolicy.Start()
	defer opts.collector.Stop()
	defer procpolicy.Apply()()
	cx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := opts.newInvocation(os.Stdin, os.Stdout, os.Stderr, os.Environ())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		for {
			sig, ok := <-sigs
			if !ok {
				return
			}
			if sig == os.Interrupt && a.interrupt.take() {
				continue // harness chat cancelled its turn in flight
			}
			break
		}
		cancel() // the first signal not taken: a clean shutdown
		if _, ok := <-sigs; !ok {
			return
		}
		// The second ends a shutdown that takes too long at once, but never leaves a
		// server behind: every server's process group is killed first.
		n := transport.KillProcessGroups()
		termform.Restore() // a terminal form's mode (no echo) must not outlive the process
		fmt.Fprintf(os.Stderr, "%s: second signal: killed %d MCP server process group%s; exiting without a clean shutdown\n",
			opts.prog(), n, words.Plural(n))
		os.Exit(ExitFailure)
	}()
	return a.run(cx, os.Args[1:])
}

// Run runs one harness command line (args excludes the program name) and
// returns its exit status: ExitOK, ExitFailure or ExitUsage. Command output
// goes to stdout, logs and error messages to stderr. env is the
// environment profiles take HARNESS_* overlays from. Cancelling c stops the
// command and shuts the application down cleanly.
func (o Options) Run(cx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, env []string) int {
	return o.newInvocation(stdin, stdout, stderr, env).run(cx, args)
}

// run runs the command line args of the invocation and returns its exit status.
func (a *invocation) run(cx context.Context, args []string) int {
	stdout, stderr := a.stdout, a.stderr
	root := a.commands()
	if args == nil {
		args = []string{} // cobra reads os.Args for a nil slice
	}
	a.args = args
	root.SetArgs(args)
	root.SetIn(a.stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(cx)
	code := exitCode(err)
	if err != nil && err.Error() != "" { // an empty error was reported already (silentFailure)
		a.out().Note("%v", err) // the message may quote a server (its error, its stderr): shown safe
		if code == ExitUsage && wantsHint(err) {
			a.out().Note("run '%s --help' for usage", cmd.CommandPath())
		}
	}
	return code
}

// invocation is the state of one Run: options, streams and parsed flags.
type invocation struct {
	prog    string
	version string
	catalog map[string]ctx.PluginDef
	self    string
	selfEnv map[string]string
	gc      *gcpolicy.Policy // the collector policy (see Main), nil when there is none
	workDir func() (string, error)

	stdin          io.Reader
	stdout, stderr io.Writer
	env            []string
	// term is the live-line block of stderr (the progress bar, the start-up spinner), nil
	// when stderr is not a terminal; on a terminal the logger writes through it.
	term *termui.Lines
	// agentHost is the host of the agent commands (ask, chat), once withAgent started it.
	agentHost *host.Host
	// interrupt takes SIGINT before the command's context does (Main): harness chat cancels
	// its turn in flight with it.
	interrupt interrupter
	// keys is the terminal's one reader (keyboard), made once.
	keys     *termform.Keyboard
	keysOnce sync.Once

	flags           profileFlags
	logFormat       string
	logLevel        string
	startupTimeout  time.Duration
	shutdownTimeout time.Duration

	logger *slog.Logger // set before any command runs

	// elicitation is the --elicitation flag (see elicitationPolicy); stdinIsProtocol is set
	// by serve --stdio, whose stdin is the MCP stream, never a terminal form's.
	elicitation     string
	stdinIsProtocol bool

	// liveStatus, if set, receives every MCP client status report as it
	// happens (run's startup display); quietStartup leaves out the report
	// of servers that are not connected once the tree has started (for
	// commands that show statuses themselves).
	liveStatus   func(mcpclient.Status)
	quietStartup bool
	// hosting is set by the long-running commands (run): only they mount the profile's
	// remote rows, which publish the endpoint file that other commands find the host by,
	// and expose the host's own methods (exposeHostAPI). A one-shot command never takes
	// a running host's endpoint over, nor removes it.
	hosting bool
	// gateway is set by serve: the fleet's clients declare what the gateway's downstream
	// sessions answer from their first connection (gateway.Offer, in prepareRoot).
	gateway bool
	// adjustRows, if set, changes the profile's rows before they are mounted: ask adds an
	// agent row when the profile has none.
	adjustRows func([]profiles.Row) []profiles.Row
	// preflight, if set, runs on the rows to mount (adjusted) before anything mounts: ask
	// checks there that its model can answer, before the fleet starts.
	preflight func([]profiles.Row) error

	// args is the command line; cmdPath the command that runs ("tools list"); fwd holds the
	// --local, --host and --endpoint flags of the commands that answer for a running host.
	args    []string
	cmdPath string
	fwd     mcpFlags
}

func (o Options) newInvocation(stdin io.Reader, stdout, stderr io.Writer, env []string) *invocation {
	a := &invocation{
		prog:    o.Name,
		version: o.Version,
		catalog: host.Catalog(),
		self:    o.Self,
		selfEnv: o.SelfEnv,
		gc:      o.collector,
		workDir: o.workDir,
		stdin:   stdin,
		stdout:  stdout,
		stderr:  stderr,
		env:     env,
	}
	if a.prog == "" {
		a.prog = "harness"
	}
	if _, ok := stderr.(*os.File); !ok {
		// The logger, the progress lines and the messages write to stderr from several
		// goroutines; a file takes each write whole, another writer (a buffer) needs a lock.
		a.stderr = &syncio.Writer{W: stderr}
	}
	if a.workDir == nil {
		a.workDir = os.Getwd
	}
	if termui.IsTerminal(stderr) {
		a.term = termui.NewLines(stderr)
	}
	maps.Copy(a.catalog, o.Plugins)
	if a.self == "" {
		if exe, err := os.Executable(); err == nil {
			a.self = exe
		}
	} else if abs, err := filepath.Abs(a.self); err == nil {
		a.self = abs
	}
	return a
}

// interrupter passes an interrupt (SIGINT) to the handler a command installed: when it
// takes it (harness chat cancelled its turn), the command goes on; a signal it does not
// take shuts the command down as usual, and a second one after that kills the servers and
// exits. It is safe for concurrent use.
type interrupter struct{ handler atomic.Pointer[func() bool] }

// set installs handler until the returned function is called.
func (i *interrupter) set(handler func() bool) (remove func()) {
	i.handler.Store(&handler)
	return func() { i.handler.CompareAndSwap(&handler, nil) }
}

// take gives an interrupt to the handler, and reports whether it took it.
func (i *interrupter) take() bool {
	if h := i.handler.Load(); h != nil {
		return (*h)()
	}
	return false
}

// action adapts a command function for cobra: errors it returns that carry
// no exit status are run-time failures, so that every error without one
// comes from cobra's argument parsing (see exitCode).
func action(fn func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		err := fn(cmd, args)
		switch {
		case err == nil || errors.Is(err, silentFailure):
			return err
		case errors.Is(err, hostview.ErrShown):
			return silentFailure
		}
		if _, ok := errors.AsType[*exitError](err); ok {
			return err
		}
		return failure(err)
	}
}

// prog is the program name in messages.
func (o Options) prog() string {
	if o.Name == "" {
		return "harness"
	}
	return o.Name
}
