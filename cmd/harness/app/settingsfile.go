package app

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/profiles"
)

// The MCP server manager's settings files, as the CLI lays them out: the user's file in the
// harness directory of the user's configuration directory, and a project file, found in the
// current directory or its nearest ancestor that has one, layered on top (an entry there
// replaces the user's entry of the same name).
const (
	settingsFileName   = "mcp-servers.yaml"
	projectSettingsDir = ".harness"
)

// userSettingsFile is the user's settings file.
func (a *invocation) userSettingsFile() (string, error) {
	dir, err := a.harnessDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, settingsFileName), nil
}

// projectSettingsFile is .harness/mcp-servers.yaml in the current directory or its
// nearest ancestor that has one; else in the nearest that has a .harness directory; else
// in the current directory (where mcp add --scope project creates it).
func (a *invocation) projectSettingsFile() (string, error) {
	wd, err := a.workDir()
	if err != nil {
		return "", fmt.Errorf("the current directory: %w", err)
	}
	withDir := ""
	for dir := wd; ; {
		p := filepath.Join(dir, projectSettingsDir, settingsFileName)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		if fi, err := os.Stat(filepath.Dir(p)); withDir == "" && err == nil && fi.IsDir() {
			withDir = p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	if withDir != "" {
		return withDir, nil
	}
	return filepath.Join(wd, projectSettingsDir, settingsFileName), nil
}

// addSettingsDefaults gives every manager row that names no settings file the user's file
// and the project file (see userSettingsFile and projectSettingsFile), and every remote row
// that names no token file the one in harnessDir, all from the invocation's environment.
func (a *invocation) addSettingsDefaults(rows []profiles.Row) {
	for i := range rows {
		r := &rows[i]
		a.addSettingsDefaults(r.Rows)
		if r.Use == host.UseRemote && r.Enabled {
			// The remote API's files go where this command's environment says, where the
			// other commands look for them (see endpointFile).
			if _, ok := r.Config["tokenFile"]; !ok {
				if dir, err := a.harnessDir(); err == nil {
					cfg := maps.Clone(r.Config)
					if cfg == nil {
						cfg = map[string]any{}
					}
					cfg["tokenFile"] = filepath.Join(dir, "remote.token")
					r.Config = cfg
				}
			}
			continue
		}
		if r.Use != host.UseManager || !r.Enabled {
			continue
		}
		_, hasUser := r.Config["settingsFile"]
		_, hasProject := r.Config["projectSettingsFile"]
		if hasUser && hasProject {
			continue
		}
		cfg := make(map[string]any, len(r.Config)+2)
		for k, v := range r.Config {
			cfg[k] = v
		}
		if !hasUser {
			if p, err := a.userSettingsFile(); err == nil {
				cfg["settingsFile"] = p
			}
		}
		if !hasProject && !hasUser {
			// A profile that points at its own settings file gets no project layer.
			if p, err := a.projectSettingsFile(); err == nil {
				cfg["projectSettingsFile"] = p
			}
		}
		r.Config = cfg
	}
}
