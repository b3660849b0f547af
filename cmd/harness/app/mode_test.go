package app

import (
	"testing"

	"github.com/cordisgo/harness/profiles"
)

// --mode ptc mounts the PTC service when the profile has none, under a free row name.
func TestWithPTCRow(t *testing.T) {
	rows := withPTCRow([]profiles.Row{{ID: "PTC", Use: "mcpclient", Enabled: true}})
	if len(rows) != 2 || rows[1].ID != "ptc_" || rows[1].Use != ptcUse || !rows[1].Enabled {
		t.Fatalf("rows %+v", rows)
	}
	if again := withPTCRow(rows); len(again) != 2 {
		t.Fatalf("a second ptc row: %+v", again)
	}
}
