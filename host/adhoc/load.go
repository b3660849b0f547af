package adhoc

import (
	"fmt"
	"strings"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/host/mcpsettings"
	"github.com/cordisgo/harness/profiles"
)

// FlagError is an error of the command line's flags (a usage error), not of the profile.
type FlagError struct{ Err error }

func (e *FlagError) Error() string { return e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

// LoadOptions say which profile [Load] loads and what the command line adds to it. It is a
// plain value.
type LoadOptions struct {
	// Name is the profile's name or file (-p); "" the default.
	Name string
	// Flags are the command line's --stdio, --http, --env and --set.
	Flags Flags
	// Environ is the environment of HARNESS_* overlays and ${VAR} references; LookupEnv
	// reads it for the check.
	Environ   []string
	LookupEnv func(string) (string, bool)
	// Catalog is the binary's plugins by use key.
	Catalog map[string]ctx.PluginDef
	// Self is the running binary (${HARNESS_SELF}); SelfEnv the environment given to every
	// row that runs it (adhoc.AddSelfEnv). Prog names the binary in login commands.
	Self    string
	SelfEnv map[string]string
	Prog    string
	// ConfigDir is the harness's configuration directory and WorkDir the working directory
	// (the settings files' and the remote token's defaults); "" for none.
	ConfigDir, WorkDir string
	// Strict checks what would only fail at mount too (host.CheckOptions.Strict).
	Strict bool
	// Note tells the person the profile's and the check's warnings.
	Note func(format string, args ...any)
}

// Load loads the profile o names, adds the command line's server rows, gives the rows their
// defaults (settings files, the remote token file, the binary's own environment) and
// decodes every enabled row's configuration with its plugin (host.Check), so that a bad
// setting is reported before anything is mounted, every problem at once. An error of the
// flags is a *FlagError; any other is the profile's.
func Load(o LoadOptions) (*profiles.Profile, error) {
	note := func(format string, args ...any) {
		if o.Note != nil {
			o.Note(format, args...)
		}
	}
	sets, adhocSets := o.Flags.SplitSets()
	p, err := profiles.Load(profiles.LoadOptions{
		Name:    o.Name,
		Sets:    sets,
		Environ: o.Environ,
		Catalog: func(use string) bool { _, ok := o.Catalog[use]; return ok },
		Self:    o.Self,
		Servers: host.ServerDocuments{},
	})
	if err != nil {
		return nil, err
	}
	for _, w := range p.Warnings {
		note("profile %q: warning: %s", p.Source, w)
	}
	if _, ok := o.Catalog[host.UseClient]; !ok && len(o.Flags.Stdio)+len(o.Flags.HTTP) > 0 {
		flag, arg, _ := strings.Cut(o.Flags.Label(0), " ")
		return nil, &FlagError{Err: fmt.Errorf("%s %q: this binary has no %s plugin", flag, arg, host.UseClient)}
	}
	rows, err := o.Flags.Rows(p)
	if err == nil {
		err = ApplySets(rows, adhocSets)
	}
	if err != nil {
		return nil, &FlagError{Err: err}
	}
	o.Flags.AddLoginCommands(o.Prog, rows, adhocSets)
	p.Rows = append(p.Rows, rows...)
	AddSelfEnv(p.Rows, o.Self, o.SelfEnv)
	mcpsettings.AddDefaults(p.Rows, o.ConfigDir, o.WorkDir)
	host.AddTokenFile(p.Rows, o.ConfigDir)
	labels := map[string]string{}
	for i, r := range rows {
		labels[r.Path] = o.Flags.Label(i)
	}
	warnings, err := host.Check(p, host.CheckOptions{Catalog: o.Catalog, Labels: labels, Strict: o.Strict, LookupEnv: o.LookupEnv})
	for _, w := range warnings {
		note("%s", w)
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}
