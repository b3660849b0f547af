package app

import "github.com/spf13/cobra"

// usageTemplate is cobra's usage template with the global flags listed once, in the
// program's own help: a command's help names them in one line instead of repeating the
// table under every command.
const usageTemplate = `Usage:{{if .Runnable}}
  {{.UseLine}}{{end}}{{if .HasAvailableSubCommands}}
  {{.CommandPath}} [command]{{end}}{{if gt (len .Aliases) 0}}

Aliases:
  {{.NameAndAliases}}{{end}}{{if .HasExample}}

Examples:
{{.Example}}{{end}}{{if .HasAvailableSubCommands}}

Available Commands:{{range .Commands}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{if .HasAvailableLocalFlags}}

{{if .HasParent}}Flags{{else}}Global Flags (before or after the command){{end}}:
{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableInheritedFlags}}

Global flags (-p/--profile, --set, --stdio, --http, --env, --elicitation, --log-*, --*-timeout): see "{{.Root.Name}} --help".{{end}}{{if .HasAvailableSubCommands}}

Use "{{.CommandPath}} [command] --help" for more information about a command.{{end}}
`

// setHelp gives root and every command under it the usage template.
func setHelp(root *cobra.Command) { root.SetUsageTemplate(usageTemplate) }
