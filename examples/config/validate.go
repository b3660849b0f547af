package config

import "github.com/cordisgo/harness/ctx"

var (
	_ ctx.Defaulter = (*Config)(nil)
	_ ctx.Validator = Config{}
)

// Validate reports what the types cannot express.
func (c Config) Validate() error {
	var p ctx.Problems
	if c.Layout == "" {
		p.Add("layout", "must not be empty")
	}
	return p.Err() // nil, one *ctx.ConfigError, or several joined in order
}
