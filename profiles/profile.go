package profiles

import (
	"embed"
	"slices"
	"strings"
)

// A Profile is a tree of plugin rows, merged from every layer and validated.
type Profile struct {
	// Name is the built-in profile name ("default") or the file path as
	// given to Load.
	Name string
	// Source labels the profile in error messages: the same as Name for
	// files and built-ins.
	Source string
	// Description is the profile's optional one-line description.
	Description string
	// Elicitation is the profile's elicitation policy (one of ElicitationPolicies: who
	// answers MCP servers' questions), "" when the profile leaves it to the binary.
	Elicitation string
	// Fleet holds the defaults of the profile's MCP servers (startup, idle timeout).
	Fleet Fleet
	// Files are the absolute paths of the profile files read, the profile's own first, then
	// those of its extends chain; nil for a built-in profile or a document given as data.
	Files []string
	// Rows are the top-level plugin rows in document order.
	Rows []Row
	// Warnings are the keys of another host's server document that were dropped or
	// converted when the profile is such a document (see [ServerReader]), one sentence
	// each; nil otherwise.
	Warnings []string

	layers []string       // the layers merged, base first, for the dump header
	order  map[string]int // first-seen position of every key path (see pathKey)
}

// ElicitationPolicies are the values of a profile's elicitation key, the policies of the
// elicitation service (elicitation.Policy): decline (nobody answers; servers are not
// offered elicitation), defaults (forms answered with their defaults), ask (a person answers,
// on the binary's terminal when it has one).
var ElicitationPolicies = []string{"decline", "defaults", "ask"}

// A Row is one plugin mount: a plugin from the catalog with its raw
// configuration, and optionally nested rows mounted in a child scope.
type Row struct {
	// ID is the row's key in its plugins map; unique among its siblings,
	// compared case-insensitively.
	ID string
	// Use names the plugin in the catalog. Empty for a plain scope row,
	// which only groups its nested rows in a child scope.
	Use string
	// Enabled is false when the row, and everything nested in it, is
	// switched off. It defaults to true.
	Enabled bool
	// Config is the plugin's raw configuration (never nil), with
	// ${HARNESS_SELF} expanded. The plugin decodes it strictly with its
	// own config type.
	Config map[string]any
	// Rows are nested rows, mounted in a child (agent) scope of this row.
	Rows []Row
	// Scope is set when the row has a plugins key, even an empty one
	// (plugins: {}): it is an agent scope. See [Row.AgentScope].
	Scope bool
	// Path is the row's key path, e.g. "plugins.agent.plugins.gh".
	Path string
}

// AgentScope reports whether the row is an agent scope, mounted in a child
// scope that is a layer of its own: it has nested rows, or a plugins key.
func (r Row) AgentScope() bool { return r.Scope || len(r.Rows) > 0 }

//go:embed *.yaml
var builtins embed.FS

// Builtin returns the YAML text of the built-in profile called name, and
// whether it exists.
func Builtin(name string) ([]byte, bool) {
	if name == "" || strings.ContainsAny(name, `/\.`) {
		return nil, false
	}
	b, err := builtins.ReadFile(name + ".yaml")
	if err != nil {
		return nil, false
	}
	return b, true
}

// BuiltinNames returns the names of the built-in profiles, sorted.
func BuiltinNames() []string {
	entries, err := builtins.ReadDir(".")
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}
