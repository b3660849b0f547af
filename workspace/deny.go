package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cordisgo/harness/internal/userdirs"
)

// homeSecrets are the places under the home directory where tools keep credentials: keys,
// cloud and registry logins, password stores.
var homeSecrets = []string{
	".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".netrc", ".git-credentials",
	".npmrc", ".pypirc", ".password-store", ".cargo/credentials.toml", ".cargo/credentials",
}

// configSecrets are the same under the user's configuration directory.
var configSecrets = []string{"gcloud", "gh", "hub", "harness"}

// DefaultDenyRead returns the paths no workspace tool reads and no sandboxed command can
// read, for the environment getenv reads (nil: the process's): the credentials kept under
// the home directory (~/.ssh, ~/.gnupg, ~/.aws, ~/.kube, ~/.docker, ~/.netrc, …), the
// configuration of gcloud, gh and the harness itself (its credentials, tokens and server
// settings), and the harness's state (sessions, OAuth credentials). A directory the
// environment does not name is left out.
func DefaultDenyRead(getenv func(string) string) []string {
	env := userdirs.Env{Getenv: getenv}
	var out []string
	if home, err := env.Home(); err == nil {
		for _, p := range homeSecrets {
			out = append(out, filepath.Join(home, filepath.FromSlash(p)))
		}
	}
	if cfg, err := env.Config(); err == nil {
		for _, p := range configSecrets {
			out = append(out, filepath.Join(cfg, p))
		}
	}
	if st, err := env.XDGState(); err == nil {
		out = append(out, filepath.Join(st, "harness"))
	}
	if st, err := env.State(); err == nil {
		out = append(out, filepath.Join(st, "harness"))
	}
	return dedupe(out)
}

// denyList is the deny list of opts: the defaults for its environment and its own, each
// made absolute (a relative one is relative to the root, dir).
func denyList(opts Options, dir string) ([]string, error) {
	getenv := os.Getenv
	if opts.Env != nil {
		getenv = lookup(opts.Env)
	}
	out := DefaultDenyRead(getenv)
	for _, p := range opts.DenyRead {
		if strings.HasPrefix(p, "~/") {
			home, err := userdirs.Env{Getenv: getenv}.Home()
			if err != nil {
				return nil, fmt.Errorf("workspace: denyRead %q: %w", p, err)
			}
			p = filepath.Join(home, p[2:])
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		out = append(out, filepath.Clean(p))
	}
	return dedupe(out), nil
}

// lookup returns a getenv over an os.Environ-style list (the last entry of a name wins).
func lookup(env []string) func(string) string {
	return func(name string) string {
		v := ""
		for _, kv := range env {
			if k, val, ok := strings.Cut(kv, "="); ok && k == name {
				v = val
			}
		}
		return v
	}
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	out := in[:0]
	for _, p := range in {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}
