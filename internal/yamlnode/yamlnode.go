// Package yamlnode words YAML nodes and parser errors for messages about configuration
// files that must never quote a value (the MCP manager's settings file, the credentials
// file): the kind of a node, and a parser error with its position but without the text it
// quotes. Its functions are pure and safe for concurrent use.
package yamlnode

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// Kind names a node's kind without its value: "a mapping", "a list", "an alias", "null",
// "a boolean", "a number", "a string" or "nothing".
func Kind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "null"
		case "!!bool":
			return "a boolean"
		case "!!int", "!!float":
			return "a number"
		}
		return "a string"
	}
	return "nothing"
}

// ErrorText keeps a YAML decoding error's position and description and drops the text it
// quotes (yaml.v3 quotes values between backquotes).
func ErrorText(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if i := strings.IndexByte(msg, '`'); i >= 0 {
		msg = msg[:i] + "(value not shown)"
	}
	return msg
}
