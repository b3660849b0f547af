package sysprompt

import "github.com/cordisgo/harness/ctx"

// Interface guards: the plugin's configuration has defaults and validates itself.
var (
	_ ctx.Defaulter = (*Config)(nil)
	_ ctx.Validator = Config{}
)

// Config configures [Plugin].
//
// Config is a plain value; the plugin copies it.
type Config struct {
	// Preamble is an optional base section, registered as [PreambleSection] at
	// [OrderPreamble] in the layer the plugin is mounted in. Empty means no preamble.
	Preamble string `json:"preamble"`
	// Interpolate substitutes {{name}} variables in the preamble. Off by default: the preamble
	// is emitted verbatim.
	Interpolate bool `json:"interpolate"`
	// Separator joins sections. Default: a blank line ("\n\n"). It may not be empty.
	Separator string `json:"separator"`
}

// Default sets the default separator.
func (o *Config) Default() { o.Separator = "\n\n" }

// Validate checks the separator and, when Interpolate is set, the preamble's references.
func (o Config) Validate() error {
	var p ctx.Problems
	if o.Separator == "" {
		p.Add("separator", "must not be empty (the default is a blank line)")
	}
	if o.Interpolate {
		if _, err := parseTemplate(o.Preamble); err != nil {
			p.Add("preamble", "%v", err)
		}
	}
	return p.Err()
}
