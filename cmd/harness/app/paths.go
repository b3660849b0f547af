package app

import (
	"fmt"
	"path/filepath"

	"github.com/cordisgo/harness/internal/userdirs"
)

// userDir is elem joined to one of the user's directories (dir, e.g. userdirs.Env.Config)
// found in the invocation's environment (the process's when it has none), so that every
// path the commands default to follows the environment they were given. what names the
// directory in the error.
func (a *invocation) userDir(dir func(userdirs.Env) (string, error), what string, elem ...string) (string, error) {
	d, err := dir(userdirs.Env{Getenv: a.getenv})
	if err != nil {
		return "", fmt.Errorf("no user %s directory: %w", what, err)
	}
	return filepath.Join(append([]string{d}, elem...)...), nil
}

// getenv is os.Getenv in the invocation's environment (the process's when it has none).
func (a *invocation) getenv(k string) string {
	v, _ := a.lookupEnv(k)
	return v
}

// harnessDir is the harness's directory in the user's configuration directory.
func (a *invocation) harnessDir() (string, error) {
	return a.userDir(userdirs.Env.Config, "configuration", "harness")
}

// endpointFile is the endpoint file the commands look for a running host by: --endpoint,
// else remote.endpoint.json in harnessDir (where a host with the remote plugin's default
// configuration publishes it).
func (a *invocation) endpointFile(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	return a.userDir(userdirs.Env.Config, "configuration", "harness", "remote.endpoint.json")
}

// catalogDir is the MCP catalog cache: mcp-catalog in the harness directory of the user's
// cache directory.
func (a *invocation) catalogDir() (string, error) {
	return a.userDir(userdirs.Env.Cache, "cache", "harness", "mcp-catalog")
}
