package app

import (
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cordisgo/harness/elicitation"
	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/internal/demoserver"
	"github.com/cordisgo/harness/internal/version"
	"github.com/cordisgo/harness/internal/words"
	"github.com/cordisgo/harness/plugins/mcpclient/serverdoc"
	"github.com/cordisgo/harness/profiles"
)

// commands builds the command tree of one invocation.
func (a *invocation) commands() *cobra.Command {
	root := &cobra.Command{
		Use:   a.prog + " [flags] <command>",
		Short: "Host agent-harness plugins and MCP servers, composed by a profile",
		Long: a.prog + ` mounts the plugins a profile lists in a tree of scopes and connects them to
MCP servers. Profiles: the built-ins (` + strings.Join(profiles.BuiltinNames(), ", ") + `) or a YAML file.

Exit status: 0 success; 1 failure at run time (a tool error, an unreachable
server, an interruption); 2 usage or profile error (nothing was run); 3 an agent's
turn stopped before the model finished (ask, sessions resume).`,
		SilenceErrors:     true,
		SilenceUsage:      true,
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			def := slog.LevelWarn
			if cmd.Name() == "run" || cmd.Name() == "serve" {
				def = slog.LevelInfo
			}
			w := a.stderr
			if a.term != nil {
				w = a.term // log lines above the live lines
			}
			l, err := newLogger(w, a.logFormat, a.logLevel, def, a.getenv)
			if err != nil {
				return err
			}
			a.logger = l
			a.cmdPath = commandPath(cmd)
			_, err = a.elicitationPolicy(nil) // a usage error, before anything runs
			return err
		},
		Args: subcommandArgs,
		RunE: expectSubcommand,
	}
	pf := root.PersistentFlags()
	pf.StringVarP(&a.flags.name, "profile", "p", "", "built-in profile `NAME` or profile file PATH (default \"default\")")
	pf.StringArrayVar(&a.flags.sets, "set", nil, "overlay one profile setting, `KEY=VALUE` (VALUE is YAML); repeatable")
	pf.StringArrayVar(&a.flags.stdio, "stdio", nil, "add an MCP server over stdio, `NAME=CMDLINE` (split into words, no shell); repeatable")
	pf.StringArrayVar(&a.flags.env, "env", nil, "set an environment variable of every --stdio server, `KEY=VALUE`; repeatable")
	pf.StringArrayVar(&a.flags.http, "http", nil, "add an MCP server over Streamable HTTP, `NAME=URL`; repeatable")
	pf.StringVar(&a.logFormat, "log-format", logFormatText, "log format on stderr: text or json")
	pf.StringVar(&a.logLevel, "log-level", "", "log level: debug, info, warn or error (default warn; info for run)")
	pf.StringVar(&a.elicitation, "elicitation", "", "who answers MCP servers' questions: `POLICY` ask (a form on the terminal; decline without one), defaults (forms accepted with their defaults) or decline (servers are not offered elicitation); default $"+elicitation.PolicyEnv+", else the profile's elicitation key, else ask")
	pf.DurationVar(&a.startupTimeout, "startup-timeout", defaultStartupTimeout, "how long to wait for plugins and servers to start")
	pf.DurationVar(&a.shutdownTimeout, "shutdown-timeout", defaultShutdownTimeout, "how long to wait for a clean shutdown")
	root.SetFlagErrorFunc(flagError)

	root.AddCommand(
		a.runCommand(),
		a.serveCommand(),
		a.auditCommand(),
		a.openCommand(),
		a.toolsCommand(),
		a.resourcesCommand(),
		a.promptsCommand(),
		a.promptCommand(),
		a.askCommand(),
		a.chatCommand(),
		a.sessionsCommand(),
		a.mcpCommand(),
		a.profileCommand(),
		a.demoServerCommand(),
		a.workspaceServerCommand(),
		a.versionCommand(),
	)
	a.addHostFlags(root)
	setHelp(root)
	return root
}

// hostCommands are the commands that answer for a running host (withCaller), by their path
// under the program name.
var hostCommands = []string{
	"tools list", "tools search", "tools call",
	"resources list", "resources templates", "resources read", "resources watch",
	"prompts list", "prompts get", "prompt",
}

// addHostFlags gives every command of hostCommands under cmd the flags that choose between
// a running host and this process.
func (a *invocation) addHostFlags(cmd *cobra.Command) {
	for _, sub := range cmd.Commands() {
		if slices.Contains(hostCommands, commandPath(sub)) {
			a.fwd.add(sub)
		}
		a.addHostFlags(sub)
	}
}

// commandPath is cmd's path without the program name ("tools list").
func commandPath(cmd *cobra.Command) string {
	_, path, _ := strings.Cut(cmd.CommandPath(), " ")
	return path
}

// args wraps a cobra argument check so that its complaint is a usage error that names
// the command.
func args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageErrorf("%s%v (usage: %s)", pathPrefix(cmd), err, strings.TrimSuffix(cmd.UseLine(), " [flags]"))
		}
		return nil
	}
}

// flagError is the error of a command line whose flags do not parse; an unknown flag
// gets the nearest flag of the command as a suggestion.
func flagError(cmd *cobra.Command, err error) error {
	if name, ok := strings.CutPrefix(err.Error(), "unknown flag: --"); ok {
		var names []string
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden {
				names = append(names, "--"+f.Name)
			}
		})
		hint := nearest("--"+name, names)
		if syn, ok := flagSynonyms[strings.SplitN(name, "=", 2)[0]]; ok && hint == "" && cmd.Flags().Lookup(syn) != nil {
			hint = fmt.Sprintf(" (did you mean %q? it takes HOST:PORT)", "--"+syn)
		}
		return usageErrorf("%v%s", err, hint)
	}
	return usageErrorf("%v", err)
}

// flagSynonyms are flag names other tools use for one of ours, which no spelling
// suggestion finds.
var flagSynonyms = map[string]string{"port": "addr", "host": "addr", "listen": "addr", "bind": "addr"}

// noArgs is the argument check of a command that takes none.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErrorf("%stakes no arguments, got %q", pathPrefix(cmd), args[0])
	}
	return nil
}

// pathPrefix is "PATH: " for a command below the root ("mcp list: "), "" for the root:
// the program's name already starts every error line.
func pathPrefix(cmd *cobra.Command) string {
	if p := commandPath(cmd); p != "" {
		return p + ": "
	}
	return ""
}

// subcommands lists the names of cmd's subcommands a user can run.
func subcommands(cmd *cobra.Command) []string {
	var names []string
	for _, s := range cmd.Commands() {
		if s.IsAvailableCommand() && s.Name() != "help" {
			names = append(names, s.Name())
		}
	}
	return names
}

// subcommandArgs is the argument check of a command that only holds subcommands (the
// root among them): an argument is a subcommand that does not exist, and the error
// suggests the nearest names.
func subcommandArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	names := subcommands(cmd)
	return usageErrorf("%sunknown command %q%s; expected one of: %s", pathPrefix(cmd), args[0], nearest(args[0], names), strings.Join(names, ", "))
}

// expectSubcommand is the action of a command that only holds subcommands, run without
// one: a usage error naming them.
func expectSubcommand(cmd *cobra.Command, _ []string) error {
	what := "subcommand"
	if !cmd.HasParent() {
		what = "command"
	}
	return usageErrorf("%sexpected a %s: %s", pathPrefix(cmd), what, strings.Join(subcommands(cmd), ", "))
}

// group is a command that only holds subcommands; run bare, it is a usage
// error naming them.
func group(use, short string, subs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  subcommandArgs,
		RunE:  expectSubcommand,
	}
	cmd.AddCommand(subs...)
	return cmd
}

func (a *invocation) profileCommand() *cobra.Command {
	show := &cobra.Command{
		Use:   "show",
		Short: "Print the merged profile as YAML, secrets redacted",
		Args:  noArgs,
		RunE: action(func(*cobra.Command, []string) error {
			p, err := a.loadProfile()
			if err != nil {
				return err
			}
			out, err := p.YAML(profiles.Redact)
			if err != nil {
				return err
			}
			_, err = a.stdout.Write(out)
			return err
		}),
	}
	check := &cobra.Command{
		Use:   "check",
		Short: "Validate the merged profile and every plugin configuration in it",
		Args:  noArgs,
		RunE: action(func(*cobra.Command, []string) error {
			p, err := a.loadProfileChecked(true)
			if err != nil {
				return err
			}
			n := host.CountRows(p.Rows)
			fmt.Fprintf(a.stdout, "profile %q: ok (%d plugin row%s)\n", p.Source, n, words.Plural(n))
			return nil
		}),
	}
	return group("profile", "Show or check the merged profile", show, check)
}

func (a *invocation) mcpCommand() *cobra.Command {
	var from string
	imp := &cobra.Command{
		Use: "import [--from HOST] FILE",
		Short: `Convert another host's MCP server list (mcpServers JSON, VS Code mcp.json, Codex config.toml) ` +
			`into profile YAML on stdout ("-": stdin)`,
		Args: args(cobra.ExactArgs(1)),
		RunE: action(func(_ *cobra.Command, args []string) error {
			name := args[0]
			var data []byte
			var err error
			if name == "-" {
				data, err = readAll(a.stdin)
				name = "<stdin>"
			} else {
				data, err = os.ReadFile(name)
			}
			if err != nil {
				return usageErrorf("mcp import: %v", err)
			}
			im, err := profiles.ImportServers(data, profiles.ImportOptions{Source: name, From: from, Servers: host.ServerDocuments{}})
			if err != nil {
				return profileError(err)
			}
			for _, w := range im.Warnings {
				a.out().Note("mcp import %q: warning: %s", name, w)
			}
			_, err = a.stdout.Write(im.YAML)
			return err
		}),
	}
	imp.Flags().StringVar(&from, "from", "", "the host the file is written for: "+strings.Join(serverdoc.Hosts(), ", ")+
		" (default: detected from the file)")
	return group("mcp", "Inspect, control and import MCP servers", append(append(append(a.mcpManageCommands(), a.mcpEditCommands()...), a.mcpAuthCommands()...), imp)...)
}

func (a *invocation) demoServerCommand() *cobra.Command {
	var addr string
	var startDelay time.Duration
	var hostile bool
	cmd := &cobra.Command{
		Use:   "demo-server",
		Short: "Serve the embedded demo MCP server (stdio, or Streamable HTTP with --http)",
		Args:  noArgs,
		RunE: action(func(cmd *cobra.Command, _ []string) error {
			opts := demoserver.Options{Logger: a.logger, Hostile: hostile, StartDelay: startDelay}
			if hostile {
				fmt.Fprintln(a.stderr, "stderr "+demoserver.HostileText) // for the client's stderr tail
			}
			if cmd.Flags().Changed("http") {
				return demoserver.ServeHTTP(cmd.Context(), addr, opts)
			}
			return demoserver.ServeIO(cmd.Context(), opts, a.stdin, a.stdout)
		}),
	}
	cmd.Flags().DurationVar(&startDelay, "start-delay", 0, "wait this long before serving (for tests)")
	cmd.Flags().BoolVar(&hostile, "hostile", false, "misbehave: terminal escape sequences in the version, instructions, stderr and the tool hostile (for tests)")
	for _, f := range []string{"start-delay", "hostile"} {
		if err := cmd.Flags().MarkHidden(f); err != nil {
			panic(err)
		}
	}
	cmd.Flags().StringVar(&addr, "http", "", "serve Streamable HTTP at /mcp on `ADDR` (host:port; empty host: loopback; \"\": a free loopback port); the URL is printed on stderr")
	return cmd
}

func (a *invocation) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the harness version",
		Args:  noArgs,
		RunE: action(func(*cobra.Command, []string) error {
			fmt.Fprintln(a.stdout, version.Line(a.prog, a.version))
			return nil
		}),
	}
}
