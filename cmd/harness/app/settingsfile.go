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
	dir, err := a.harnessDir()
	if err != nil {
		dir = ""
	}
	wd, err := a.workDir()
	if err != nil {
		wd = ""
	}
	mcpsettings.AddDefaults(rows, dir, wd)
	addTokenFile(rows, dir)
}

// addTokenFile gives every enabled remote row of rows that names no token file remote.token
// in dir (none when dir is "").
func addTokenFile(rows []profiles.Row, dir string) {
	for i := range rows {
		r := &rows[i]
		addTokenFile(r.Rows, dir)
		if _, ok := r.Config["tokenFile"]; ok || dir == "" || r.Use != host.UseRemote || !r.Enabled {
			continue
		}
		cfg := maps.Clone(r.Config)
		if cfg == nil {
			cfg = map[string]any{}
		}
		cfg["tokenFile"] = filepath.Join(dir, "remote.token")
		r.Config = cfg
	}
}
