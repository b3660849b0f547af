// Package yamlnode words YAML nodes, decoded values and parser errors for messages about
// configuration documents: the one describer of what kind of value was found. [Kind],
// [ValueKind] and [ErrorText] never quote a value, for files whose values may be secrets
// (the MCP manager's settings file, the credentials file); [Describe] and [Value] show a
// short scalar, for profiles and imported documents. Its functions are pure and safe for
// concurrent use.
package yamlnode

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// Kind names a node's kind without its value: "a mapping", "a list", "an alias", "null",
// "a boolean", "a number", "a string" or "nothing".
func Kind(n *yaml.Node) string { return word(n, false) }

// Describe renders a node for "got ..." in messages about a document whose values may be
// shown (a profile): its kind ("a map", "a list", …), with the value of a scalar as
// [Value] shows it. Use [Kind] for documents whose values must never be quoted.
func Describe(n *yaml.Node) string { return word(n, true) }

// word is Kind, or with values Describe.
func word(n *yaml.Node, values bool) string {
	switch n.Kind {
	case yaml.MappingNode:
		if values {
			return "a map"
		}
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		tag := n.ShortTag()
		if !values {
			tag = n.Tag
		}
		switch tag {
		case "!!null":
			return "null"
		case "!!bool":
			if values {
				return "boolean " + n.Value
			}
			return "a boolean"
		case "!!int", "!!float":
			if values {
				return map[string]string{"!!int": "integer ", "!!float": "number "}[tag] + n.Value
			}
			return "a number"
		case "!!str":
			if values {
				return Value(n.Value)
			}
		default:
			if values {
				return "a " + strings.TrimPrefix(tag, "!!")
			}
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
