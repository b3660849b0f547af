package app

import (
	"os"
	"strings"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/host/adhoc"
	"github.com/cordisgo/harness/profiles"
)

// profileFlags are the global flags that select and shape the profile.
type profileFlags struct {
	name  string   // -p/--profile
	sets  []string // --set
	stdio []string // --stdio NAME=CMDLINE
	http  []string // --http NAME=URL
	env   []string // --env KEY=VALUE, for the --stdio servers
}

// loadProfile loads the profile the flags select, adds the ad-hoc server
// rows, and decodes every enabled row's configuration with its plugin so
// that a bad setting is reported before anything is mounted. Errors are
// usage errors naming the profile (or flag) and the key path, every
// problem at once.
func (a *invocation) loadProfile() (*profiles.Profile, error) { return a.loadProfileChecked(false) }

// loadProfileChecked is loadProfile; with strict (profile check) it also
// reports what would only fail at mount: two MCP clients with the same
// serverName in one scope, and the settings file of an MCP manager row that
// does not parse or validate.
func (a *invocation) loadProfileChecked(strict bool) (*profiles.Profile, error) {
	env, err := parseKeyValues("--env", "KEY=VALUE", a.flags.env, false)
	if err != nil {
		return nil, err
	}
	af := adhoc.Flags{Stdio: a.flags.stdio, HTTP: a.flags.http, Env: env, Sets: a.flags.sets}
	sets, adhocSets := af.SplitSets()
	p, err := profiles.Load(profiles.LoadOptions{
		Name:    a.flags.name,
		Sets:    sets,
		Environ: a.env,
		Catalog: func(use string) bool { _, ok := a.catalog[use]; return ok },
		Self:    a.self,
		Servers: host.ServerDocuments{},
	})
	if err != nil {
		return nil, profileError(err)
	}
	for _, w := range p.Warnings {
		a.out().Note("profile %q: warning: %s", p.Source, w)
	}
	if _, ok := a.catalog[host.UseClient]; !ok && len(af.Stdio)+len(af.HTTP) > 0 {
		flag, arg, _ := strings.Cut(af.Label(0), " ")
		return nil, usageErrorf("%s %q: this binary has no %s plugin", flag, arg, host.UseClient)
	}
	rows, err := af.Rows(p)
	if err == nil {
		err = adhoc.ApplySets(rows, adhocSets)
	}
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	af.AddLoginCommands(a.prog, rows, adhocSets)
	p.Rows = append(p.Rows, rows...)
	adhoc.AddSelfEnv(p.Rows, a.self, a.selfEnv)
	a.addSettingsDefaults(p.Rows)
	labels := map[string]string{}
	for i, r := range rows {
		labels[r.Path] = af.Label(i)
	}
	warnings, err := host.Check(p, host.CheckOptions{Catalog: a.catalog, Labels: labels, Strict: strict, LookupEnv: a.lookupEnv})
	for _, w := range warnings {
		a.out().Note("%s", w)
	}
	if err != nil {
		return nil, profileError(err)
	}
	return p, nil
}

// lookupEnv reads a variable of the invocation's environment (the process's when it has
// none).
func (a *invocation) lookupEnv(name string) (string, bool) {
	if a.env == nil {
		return os.LookupEnv(name)
	}
	return lookupEnv(a.env, name)
}
