package mcpmanager

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/secrets"
)

// Defaults applied by [Config.Default].
const (
	// DefaultDebounceMs is how long the settings file must stay quiet before it is read
	// again: long enough to see an editor's truncate-then-write (or write-then-rename) as
	// one change, short enough to feel immediate.
	DefaultDebounceMs = 150
	// maxDebounceMs bounds debounceMs: a longer pause would look like a lost change.
	maxDebounceMs = 60_000
)

// Config configures the manager plugin.
//
// Config is a plain value.
type Config struct {
	// SettingsFile is the YAML file listing the servers (see the package documentation for
	// its format). A relative path is resolved against the working directory when the
	// plugin loads. Empty means no settings file: only registered servers run. A file that
	// does not exist yet configures no servers; the manager picks it up when it appears.
	SettingsFile string `json:"settingsFile"`
	// ProjectSettingsFile is a second settings file, layered on top of SettingsFile: an
	// entry in it replaces the SettingsFile entry of the same name (in that entry's place),
	// other entries are added after SettingsFile's. It is watched like SettingsFile; a file
	// that does not exist configures nothing. Empty means none. The CLI sets it to the
	// project's .harness/mcp-servers.yaml.
	ProjectSettingsFile string `json:"projectSettingsFile"`
	// CredentialsFile is the file-backed credentials store that ${secret:NAME} references
	// read when no mcpCredentials service is provided. It must have mode 0600. Empty means
	// credentials.yaml in the "harness" directory of the user's configuration directory.
	CredentialsFile string `json:"credentialsFile"`
	// DebounceMs is how long the settings file must stay unchanged before it is read again
	// (default 150).
	DebounceMs int `json:"debounceMs"`

	// Resolved at load: absolute paths.
	settingsPath    string
	projectPath     string
	credentialsPath string
}

// Default sets the defaults.
func (c *Config) Default() {
	c.DebounceMs = DefaultDebounceMs
}

// Interface guards: the plugin's configuration has defaults and validates itself.
var (
	_ ctx.Defaulter = (*Config)(nil)
	_ ctx.Validator = Config{}
)

// Validate checks the configuration; a problem is a [*ctx.ConfigError] naming its key.
func (c Config) Validate() error {
	var p ctx.Problems
	if c.DebounceMs < 1 || c.DebounceMs > maxDebounceMs {
		p.Add("debounceMs", "must be between 1 and %d milliseconds, got %d", maxDebounceMs, c.DebounceMs)
	}
	return p.Err()
}

// debounce returns DebounceMs as a duration.
func (c Config) debounce() time.Duration { return time.Duration(c.DebounceMs) * time.Millisecond }

// resolvePaths makes the paths absolute and fills in the default credentials file.
func (c *Config) resolvePaths() error {
	if c.SettingsFile != "" {
		p, err := filepath.Abs(c.SettingsFile)
		if err != nil {
			return fmt.Errorf("settingsFile %q: %w", c.SettingsFile, err)
		}
		c.settingsPath = p
	}
	if c.ProjectSettingsFile != "" {
		p, err := filepath.Abs(c.ProjectSettingsFile)
		if err != nil {
			return fmt.Errorf("projectSettingsFile %q: %w", c.ProjectSettingsFile, err)
		}
		c.projectPath = p
	}
	switch {
	case c.CredentialsFile != "":
		p, err := filepath.Abs(c.CredentialsFile)
		if err != nil {
			return fmt.Errorf("credentialsFile %q: %w", c.CredentialsFile, err)
		}
		c.credentialsPath = p
	default:
		if p, err := secrets.DefaultCredentialsFile(); err == nil {
			c.credentialsPath = p
		}
	}
	return nil
}
