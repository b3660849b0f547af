package app

import (
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
	host.AddTokenFile(rows, dir)
}
