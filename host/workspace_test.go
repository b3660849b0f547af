package host

import (
	"testing"

	"github.com/cordisgo/harness/profiles"
)

func TestWithWorkspaceRow(t *testing.T) {
	agent := profiles.Row{ID: "agent", Use: UseAgent, Enabled: true}
	off := profiles.Row{ID: "agent", Use: UseAgent, Enabled: false}
	tools := profiles.Row{ID: "tools", Use: "toolregistry", Enabled: true}
	mine := profiles.Row{ID: "Workspace", Use: UseClient, Enabled: false}
	other := profiles.Row{ID: "files", Use: UseClient, Enabled: true, Config: map[string]any{"serverName": "workspace"}}
	for _, c := range []struct {
		name  string
		rows  []profiles.Row
		self  string
		added bool
	}{
		{"an agent", []profiles.Row{tools, agent}, "/bin/harness", true},
		{"no agent", []profiles.Row{tools}, "/bin/harness", false},
		{"an agent switched off", []profiles.Row{off}, "/bin/harness", false},
		{"no binary to serve it", []profiles.Row{agent}, "", false},
		{"the profile's own row, switched off", []profiles.Row{agent, mine}, "/bin/harness", false},
		{"a client already named workspace", []profiles.Row{agent, other}, "/bin/harness", false},
	} {
		got := WithWorkspaceRow(c.rows, c.self, map[string]string{"X": "1"})
		if added := len(got) == len(c.rows)+1; added != c.added {
			t.Errorf("%s: added %v, want %v", c.name, added, c.added)
			continue
		}
		if c.added {
			r := got[len(got)-1]
			if r.ID != "workspace" || r.Use != UseClient || r.Config["command"] != c.self || r.Config["serverName"] != "workspace" ||
				r.Config["env"].(map[string]any)["X"] != "1" {
				t.Errorf("%s: row %+v", c.name, r)
			}
			if len(c.rows) > 0 && &got[0] == &c.rows[0] {
				t.Errorf("%s: the caller's rows were changed", c.name)
			}
		}
	}
}
