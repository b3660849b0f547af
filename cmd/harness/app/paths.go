package app

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// userConfigDir is os.UserConfigDir computed from the invocation's environment (which is
// the process's own in the binary), so that every path the commands default to follows the
// environment they were given.
func (a *invocation) userConfigDir() (string, error) {
	return a.userDir(userDirLayout{windows: "AppData", darwin: "Library/Application Support", plan9: "lib",
		xdg: "XDG_CONFIG_HOME", dot: ".config", what: "configuration", fallback: os.UserConfigDir})
}

// userDirLayout says where a platform keeps one of the user's directories: the variable
// that names it on Windows, its path under $HOME on Darwin, under $home on Plan 9, and
// else the XDG variable and its default under $HOME.
type userDirLayout struct {
	windows, darwin, plan9, xdg, dot string
	what                             string // "configuration", "cache": for the error
	fallback                         func() (string, error)
}

// userDir is the directory of layout d in the invocation's environment; with no
// environment, the process's (d.fallback).
func (a *invocation) userDir(d userDirLayout) (string, error) {
	get := func(k string) string { v, _ := lookupEnv(a.env, k); return v }
	var dir string
	switch runtime.GOOS {
	case "windows":
		dir = get(d.windows)
	case "darwin", "ios":
		if home := get("HOME"); home != "" {
			dir = filepath.Join(home, filepath.FromSlash(d.darwin))
		}
	case "plan9":
		if home := get("home"); home != "" {
			dir = filepath.Join(home, filepath.FromSlash(d.plan9))
		}
	default:
		dir = get(d.xdg)
		if dir == "" || !filepath.IsAbs(dir) {
			dir = ""
			if home := get("HOME"); home != "" {
				dir = filepath.Join(home, d.dot)
			}
		}
	}
	if dir == "" {
		if a.env == nil {
			return d.fallback()
		}
		return "", fmt.Errorf("no user %s directory: neither $%s nor $HOME is set", d.what, d.xdg)
	}
	return dir, nil
}

// harnessDir is the harness's directory in the user's configuration directory.
func (a *invocation) harnessDir() (string, error) {
	dir, err := a.userConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "harness"), nil
}

// endpointFile is the endpoint file the commands look for a running host by: --endpoint,
// else remote.endpoint.json in harnessDir (where a host with the remote plugin's default
// configuration publishes it).
func (a *invocation) endpointFile(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	dir, err := a.harnessDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "remote.endpoint.json"), nil
}

// userCacheDir is os.UserCacheDir computed from the invocation's environment, as
// userConfigDir is.
func (a *invocation) userCacheDir() (string, error) {
	return a.userDir(userDirLayout{windows: "LocalAppData", darwin: "Library/Caches", plan9: "lib/cache",
		xdg: "XDG_CACHE_HOME", dot: ".cache", what: "cache", fallback: os.UserCacheDir})
}

// catalogDir is the MCP catalog cache: mcp-catalog in the harness directory of the user's
// cache directory.
func (a *invocation) catalogDir() (string, error) {
	dir, err := a.userCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "harness", "mcp-catalog"), nil
}
