package app

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
)

// userConfigDir is os.UserConfigDir computed from the invocation's environment (which is
// the process's own in the binary), so that every path the commands default to follows the
// environment they were given.
func (a *invocation) userConfigDir() (string, error) {
	get := func(k string) string { v, _ := lookupEnv(a.env, k); return v }
	var dir string
	switch runtime.GOOS {
	case "windows":
		dir = get("AppData")
	case "darwin", "ios":
		if home := get("HOME"); home != "" {
			dir = filepath.Join(home, "Library", "Application Support")
		}
	case "plan9":
		if home := get("home"); home != "" {
			dir = filepath.Join(home, "lib")
		}
	default:
		dir = get("XDG_CONFIG_HOME")
		if dir == "" || !filepath.IsAbs(dir) {
			dir = ""
			if home := get("HOME"); home != "" {
				dir = filepath.Join(home, ".config")
			}
		}
	}
	if dir == "" {
		if a.env == nil {
			return os.UserConfigDir()
		}
		return "", errors.New("no user configuration directory: neither $XDG_CONFIG_HOME nor $HOME is set")
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
	get := func(k string) string { v, _ := lookupEnv(a.env, k); return v }
	var dir string
	switch runtime.GOOS {
	case "windows":
		dir = get("LocalAppData")
	case "darwin", "ios":
		if home := get("HOME"); home != "" {
			dir = filepath.Join(home, "Library", "Caches")
		}
	case "plan9":
		if home := get("home"); home != "" {
			dir = filepath.Join(home, "lib", "cache")
		}
	default:
		dir = get("XDG_CACHE_HOME")
		if dir == "" || !filepath.IsAbs(dir) {
			dir = ""
			if home := get("HOME"); home != "" {
				dir = filepath.Join(home, ".cache")
			}
		}
	}
	if dir == "" {
		if a.env == nil {
			return os.UserCacheDir()
		}
		return "", errors.New("no user cache directory: neither $XDG_CACHE_HOME nor $HOME is set")
	}
	return dir, nil
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
