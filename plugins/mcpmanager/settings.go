package mcpmanager

import (
	"github.com/cordisgo/harness/internal/words"
	"github.com/cordisgo/harness/plugins/mcpclient/serverdoc"
)

// ErrInvalidSettings is matched (errors.Is) by every problem of a rejected settings file.
// Each problem is a [*ctx.ConfigError] whose Source names the file (File is its path),
// with the line and key path when known; several are joined in document order. Their text
// never quotes a value from the file. It is [serverdoc.ErrInvalidSettings]: the settings
// document is read by [serverdoc.ReadSettings].
var ErrInvalidSettings = serverdoc.ErrInvalidSettings

// parseSettings parses a settings document ([serverdoc.ReadSettings]) into entries.
func parseSettings(file string, data []byte) ([]*entry, error) {
	entries, _, err := readSettings(file, data)
	return entries, err
}

// readSettings is parseSettings returning the warnings too: the keys of another host's
// document ({"mcpServers": …}, VS Code's servers and inputs, Codex's config.toml) that are
// dropped or converted.
func readSettings(file string, data []byte) ([]*entry, []string, error) {
	s, err := serverdoc.ReadSettings(file, data)
	if err != nil {
		return nil, nil, err
	}
	out := make([]*entry, 0, len(s.Entries))
	for _, se := range s.Entries {
		e, err := newEntry(se.Name, se.Enabled, se.Config)
		if err != nil { // ReadSettings checked the references already
			return nil, nil, err
		}
		out = append(out, e)
	}
	return out, s.Warnings, nil
}

// clip shortens text quoted in an error about a malformed name.
func clip(s string) string { return words.Clip(s, 41) }
