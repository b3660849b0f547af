// Package config holds the configuration examples of docs/plugins.md: a Validate method
// and a plugin that takes configuration updates in place.
package config

// Config is the configuration of the example plugin.
type Config struct {
	// Layout is a time layout.
	Layout string `json:"layout"`
}

// Default sets no default: an empty layout is what Validate reports.
func (c *Config) Default() {}
