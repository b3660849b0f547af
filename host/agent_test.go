package host

import (
	"testing"

	"github.com/cordisgo/harness/profiles"
)

// --mode ptc mounts the PTC service when the profile has none, under a free row name.
func TestWithPTCRow(t *testing.T) {
	rows := WithPTCRow([]profiles.Row{{ID: "PTC", Use: "mcpclient", Enabled: true}})
	if len(rows) != 2 || rows[1].ID != "ptc_" || rows[1].Use != UsePTC || !rows[1].Enabled {
		t.Fatalf("rows %+v", rows)
	}
	if again := WithPTCRow(rows); len(again) != 2 {
		t.Fatalf("a second ptc row: %+v", again)
	}
}
