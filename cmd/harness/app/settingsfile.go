package app

import (
	"maps"
	"path/filepath"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/host/mcpsettings"
	"github.com/cordisgo/harness/profiles"
)

// addSettingsDefaults gives every manager row that names no settings file the user's file
// and the project file (mcpsettings.Default), and every remote row
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
		dir, derr := a.harnessDir()
		wd, werr := a.workDir()
		files := mcpsettings.Default(dir, wd)
		if !hasUser && derr == nil {
			cfg["settingsFile"] = files.User
		}
		if !hasProject && !hasUser && werr == nil {
			// A profile that points at its own settings file gets no project layer.
			cfg["projectSettingsFile"] = files.Project
		}
		r.Config = cfg
	}
}
