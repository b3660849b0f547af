package mcpmanager

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cordisgo/harness/plugins/mcpclient"
	"go.yaml.in/yaml/v3"
)

// ErrInvalidSettings is matched (errors.Is) by every [*SettingsError].
var ErrInvalidSettings = errors.New("invalid MCP server settings")

// SettingsError is a settings file that was rejected: the file, the line and key path when
// known, and what was wrong. Its text never quotes a value from the file. It matches
// [ErrInvalidSettings]. It is immutable.
type SettingsError struct {
	File string
	Line int
	Key  string
	Msg  string
}

// Error formats `settings file "<file>": line <n>: key "<key>": <msg>`, leaving out what
// is unknown.
func (e *SettingsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "settings file %q", e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ": line %d", e.Line)
	}
	if e.Key != "" {
		fmt.Fprintf(&b, ": key %q", e.Key)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// Is reports whether target is [ErrInvalidSettings].
func (e *SettingsError) Is(target error) bool { return target == ErrInvalidSettings }

// parseSettings parses a settings document: a mapping with one key, servers, a mapping of
// server name to entry, in document order. An empty document is an error, so that a file
// caught half-written (truncated to nothing) never disposes every server; write
// "servers: {}" to configure none.
func parseSettings(file string, data []byte) ([]*entry, error) {
	fail := func(line int, key, format string, args ...any) error {
		return &SettingsError{File: file, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fail(0, "", `the file is empty (write "servers: {}" to configure no servers)`)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		// yaml.v3 syntax errors carry a line and a description, not the text.
		return nil, fail(0, "", "not valid YAML: %s", describeYAMLError(err))
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, fail(0, "", `the file holds no YAML document (write "servers: {}" to configure no servers)`)
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fail(root.Line, "", "expected a mapping with a servers key, got %s", nodeKind(root))
	}
	var servers *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "servers":
			if servers != nil {
				return nil, fail(k.Line, "servers", "appears twice")
			}
			servers = v
		default:
			return nil, fail(k.Line, k.Value, `unknown key (the file has one key, "servers")`)
		}
	}
	if servers == nil || (servers.Kind == yaml.ScalarNode && servers.Tag == "!!null") {
		return nil, nil
	}
	if servers.Kind != yaml.MappingNode {
		return nil, fail(servers.Line, "servers", "expected a mapping of server name to entry, got %s", nodeKind(servers))
	}
	var out []*entry
	seen := make(map[string]int)
	for i := 0; i+1 < len(servers.Content); i += 2 {
		k, v := servers.Content[i], servers.Content[i+1]
		name := k.Value
		key := "servers." + name
		if k.Kind != yaml.ScalarNode || !mcpclient.ValidServerName(name) {
			return nil, fail(k.Line, "servers", "server name %q must match ^[A-Za-z0-9_-]{1,32}$ (rename the key)", clip(name))
		}
		if line, dup := seen[name]; dup {
			return nil, fail(k.Line, key, "server defined twice (first on line %d)", line)
		}
		seen[name] = k.Line
		e, err := parseEntry(name, v)
		if err != nil {
			var se *SettingsError
			if errors.As(err, &se) {
				se.File = file
				return nil, se
			}
			return nil, fail(v.Line, key, "%v", err)
		}
		out = append(out, e)
	}
	return out, nil
}

// parseEntry decodes one server entry: an mcpclient configuration without serverName,
// plus enabled (default true). Decoding is strict.
func parseEntry(name string, n *yaml.Node) (*entry, error) {
	key := "servers." + name
	fail := func(line int, k, format string, args ...any) error {
		return &SettingsError{Line: line, Key: k, Msg: fmt.Sprintf(format, args...)}
	}
	if n.Kind != yaml.MappingNode {
		return nil, fail(n.Line, key, "expected a mapping (transport, command or url, …), got %s", nodeKind(n))
	}
	enabled := true
	var rest []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "serverName":
			return nil, fail(k.Line, key+".serverName", "not allowed here: the key under servers names the server")
		case "enabled":
			if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" {
				return nil, fail(v.Line, key+".enabled", "expected true or false, got %s", nodeKind(v))
			}
			enabled = v.Value == "true"
		default:
			rest = append(rest, k, v)
		}
	}
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: rest}
	var raw any
	if err := m.Decode(&raw); err != nil {
		return nil, fail(n.Line, key, "cannot decode the entry: %s", describeYAMLError(err))
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, fail(n.Line, key, "keys must be strings and values plain YAML")
	}
	var cfg mcpclient.Config
	cfg.Default()
	if err := decodeStrict(b, &cfg); err != nil {
		var ke *keyError
		if errors.As(err, &ke) {
			return nil, fail(lineOf(n, ke.key), key+"."+ke.key, "%s", ke.msg)
		}
		return nil, fail(n.Line, key, "%v", err)
	}
	e, err := newEntry(name, enabled, cfg)
	if err != nil {
		return nil, fail(n.Line, key, "%v", err)
	}
	return e, nil
}

// keyError is a decoding error about one key.
type keyError struct{ key, msg string }

func (e *keyError) Error() string { return fmt.Sprintf("key %q: %s", e.key, e.msg) }

// decodeStrict decodes JSON into v, refusing unknown keys. Errors name the key and the
// expected type, never the value.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		k := te.Field
		if k == "" {
			k = "(entry)"
		}
		got, _, _ := strings.Cut(te.Value, " ") // "number 12" → "number": no values in errors
		return &keyError{key: k, msg: fmt.Sprintf("expected %s, got %s", typeWord(te.Type.String()), got)}
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return &keyError{key: strings.Trim(f, `"`), msg: "unknown key"}
	}
	return errors.New("cannot decode the entry")
}

// typeWord says a Go type the way a settings author reads it.
func typeWord(t string) string {
	switch {
	case t == "string":
		return "a string"
	case t == "bool":
		return "true or false"
	case strings.HasPrefix(t, "int"):
		return "an integer"
	case strings.HasPrefix(t, "[]"), strings.HasPrefix(t, "*[]"):
		return "a list"
	case strings.HasPrefix(t, "map["):
		return "a mapping"
	default:
		return "a mapping"
	}
}

// lineOf returns the line of the key path (dotted, first segment only) inside the entry
// node n, or n's own line.
func lineOf(n *yaml.Node, path string) int {
	first, _, _ := strings.Cut(path, ".")
	first, _, _ = strings.Cut(first, "[")
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == first {
			return n.Content[i].Line
		}
	}
	return n.Line
}

// nodeKind names a YAML node's kind without its value.
func nodeKind(n *yaml.Node) string {
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
		default:
			return "a string"
		}
	}
	return "nothing"
}

// describeYAMLError keeps a yaml.v3 decoding error's position and drops quoted values.
func describeYAMLError(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if i := strings.IndexByte(msg, '`'); i >= 0 {
		msg = msg[:i] + "(value not shown)"
	}
	return msg
}
