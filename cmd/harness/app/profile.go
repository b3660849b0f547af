package app

import (
	"errors"
	"os"

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
	dir, err := a.harnessDir()
	if err != nil {
		dir = ""
	}
	wd, err := a.workDir()
	if err != nil {
		wd = ""
	}
	p, err := adhoc.Load(adhoc.LoadOptions{Name: a.flags.name, Flags: adhoc.Flags{Stdio: a.flags.stdio, HTTP: a.flags.http, Env: env, Sets: a.flags.sets},
		Environ: a.env, LookupEnv: a.lookupEnv, Catalog: a.catalog, Self: a.self, SelfEnv: a.selfEnv, Prog: a.prog,
		ConfigDir: dir, WorkDir: wd, Strict: strict, Note: a.out().Note})
	if fe, ok := errors.AsType[*adhoc.FlagError](err); ok {
		return nil, usageErrorf("%v", fe.Err)
	} else if err != nil {
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
