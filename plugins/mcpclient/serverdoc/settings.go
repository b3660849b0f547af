package serverdoc

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/words"
	"github.com/cordisgo/harness/internal/yamlnode"
	"github.com/cordisgo/harness/plugins/mcpclient"
)

// ErrInvalidSettings is matched (errors.Is) by every problem of a rejected settings file.
// Each problem is a [*ctx.ConfigError] whose Source names the file (File is its path),
// with the line and key path when known; several are joined in document order. Their text
// never quotes a value from the file.
var ErrInvalidSettings = errors.New("invalid MCP server settings")

// A Settings is a settings file read: the MCP manager's own document (a mapping with one
// key, servers, of server name to entry) or another host's server document. It is a plain
// value, safe for concurrent reads.
type Settings struct {
	// Entries are the servers, in the document's order.
	Entries []Entry
	// Warnings name the keys of another host's document that were dropped or converted.
	Warnings []string
}

// An Entry is one server of a settings file.
type Entry struct {
	// Name is the server's name: the key under servers.
	Name string
	// Enabled is false for an entry that says enabled: false.
	Enabled bool
	// Config is the configuration as written: the defaults, ServerName set to Name, the
	// entry's keys decoded strictly, references unresolved (their syntax checked). It is
	// not validated: see [CheckFile].
	Config mcpclient.Config
	// Path is the entry's key path in the file: "servers.gh", "mcpServers.gh".
	Path string

	lines map[string]int // key path (below the file's root) → line
}

// settingsSource labels the settings file in problems.
func settingsSource(file string) string { return fmt.Sprintf("settings file %q", file) }

// settingsProblem is one problem of the settings file.
func settingsProblem(file string, line int, key, format string, args ...any) *ctx.ConfigError {
	return &ctx.ConfigError{Source: settingsSource(file), File: file, Line: line, Key: key,
		Msg: fmt.Sprintf(format, args...), Err: ErrInvalidSettings}
}

// ReadFileProblem is the problem of a settings file that cannot be read (cause is the
// error of reading it).
func ReadFileProblem(file string, cause error) *ctx.ConfigError {
	var pe *fs.PathError
	if errors.As(cause, &pe) {
		cause = pe.Err // the path is said already
	}
	return settingsProblem(file, 0, "", "cannot read: %v", cause)
}

// ReadSettings reads a settings document, file naming it: a mapping with one key,
// servers, a mapping of server name to entry (an mcpclient configuration without
// serverName, plus enabled), in document order; or another host's server document
// ({"mcpServers": …}, VS Code's servers and inputs, Codex's config.toml; see [Read]),
// whose entries are converted and whose dropped or converted keys are returned as
// warnings. An empty document is an error, so that a file caught half-written (truncated
// to nothing) never disposes every server; write "servers: {}" to configure none.
//
// Problems are [*ctx.ConfigError] values matching [ErrInvalidSettings], all of them at
// once, naming the file, the line and the key path, never quoting a value.
func ReadSettings(file string, data []byte) (*Settings, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, settingsProblem(file, 0, "", `the file is empty (write "servers: {}" to configure no servers)`)
	}
	if IsForeign(file, data) {
		return readForeignSettings(file, data)
	}
	entries, err := parseNative(file, data)
	if err != nil {
		return nil, err
	}
	return &Settings{Entries: entries}, nil
}

// readForeignSettings reads another host's server document as the settings.
func readForeignSettings(file string, data []byte) (*Settings, error) {
	doc, err := Read(data, ReadOptions{Source: file, Op: "settings file", NoValues: true})
	if err != nil {
		var problems []*ctx.ConfigError
		for _, pe := range ctx.ConfigErrors(err) {
			p := settingsProblem(file, pe.Line, pe.Key, "%s", pe.Msg)
			if pe.Err != nil {
				p.Err = fmt.Errorf("%w: %w", ErrInvalidSettings, pe.Err)
			}
			problems = append(problems, p)
		}
		return nil, ctx.JoinConfigErrors(problems)
	}
	out := &Settings{Warnings: doc.Warnings}
	var problems []*ctx.ConfigError
	for _, s := range doc.Servers {
		if err := s.Config.CheckReferences(); err != nil {
			problems = append(problems, place(err, file, s.Path, nil)...)
			continue
		}
		out.Entries = append(out.Entries, Entry{Name: s.Name, Enabled: s.Enabled, Config: s.Config, Path: s.Path})
	}
	if len(problems) > 0 {
		return nil, ctx.JoinConfigErrors(problems)
	}
	return out, nil
}

// place moves the problems of an entry's configuration into the file, at the entry's key
// path, each matching ErrInvalidSettings.
func place(err error, file, prefix string, line func(key string) int) []*ctx.ConfigError {
	var out []*ctx.ConfigError
	for _, pe := range ctx.ConfigErrors(ctx.PlaceConfigErrors(err, settingsSource(file), file, "", prefix, line)) {
		c := *pe
		if c.Err == nil {
			c.Err = ErrInvalidSettings
		} else if !errors.Is(c.Err, ErrInvalidSettings) {
			c.Err = fmt.Errorf("%w: %w", ErrInvalidSettings, c.Err)
		}
		out = append(out, &c)
	}
	return out
}

// parseNative parses the harness's own settings document.
func parseNative(file string, data []byte) ([]Entry, error) {
	fail := func(line int, key, format string, args ...any) error {
		return settingsProblem(file, line, key, format, args...)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		// The broken line and a description, not the text.
		line, text := yamlnode.SyntaxError(data, err)
		return nil, fail(line, "", "not valid YAML: %s", text)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, fail(0, "", `the file holds no YAML document (write "servers: {}" to configure no servers)`)
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fail(root.Line, "", "expected a mapping with a servers key, got %s", yamlnode.Kind(root))
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
		return nil, fail(servers.Line, "servers", "expected a mapping of server name to entry, got %s", yamlnode.Kind(servers))
	}
	var out []Entry
	var problems []*ctx.ConfigError
	seen := make(map[string]int)
	for i := 0; i+1 < len(servers.Content); i += 2 {
		k, v := servers.Content[i], servers.Content[i+1]
		name := k.Value
		key := "servers." + name
		if k.Kind != yaml.ScalarNode || !mcpclient.ValidServerName(name) {
			problems = append(problems, settingsProblem(file, k.Line, "servers", "server name %q must match ^[A-Za-z0-9_-]{1,32}$ (rename the key)", clip(name)))
			continue
		}
		if line, dup := seen[name]; dup {
			problems = append(problems, settingsProblem(file, k.Line, key, "server defined twice (first on line %d)", line))
			continue
		}
		seen[name] = k.Line
		lines := keyLines(v, key)
		e, err := parseEntry(name, v)
		if err != nil {
			problems = append(problems, place(err, file, key, func(k string) int { return lineOfKey(lines, k, v.Line) })...)
			continue
		}
		e.Path, e.lines = key, lines
		out = append(out, e)
	}
	if len(problems) > 0 {
		return nil, ctx.JoinConfigErrors(problems)
	}
	return out, nil
}

// parseEntry decodes one server entry: an mcpclient configuration without serverName,
// plus enabled (default true), decoded strictly by [ctx.DecodeInto], its references
// checked. Problems have key paths relative to the entry; all of them are reported.
func parseEntry(name string, n *yaml.Node) (Entry, error) {
	var p ctx.Problems
	if n.Kind != yaml.MappingNode {
		p.Add("", "expected a mapping (transport, command or url, …), got %s", yamlnode.Kind(n))
		return Entry{}, p.Err()
	}
	enabled := true
	var rest []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "serverName":
			p.Add("serverName", "not allowed here: the key under servers names the server")
		case "enabled":
			if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" {
				p.Add("enabled", "expected true or false, got %s", yamlnode.Kind(v))
				continue
			}
			enabled = v.Value == "true"
		default:
			rest = append(rest, k, v)
		}
	}
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: rest}
	var raw any
	if err := m.Decode(&raw); err != nil {
		p.Add("", "cannot decode the entry: %s", yamlnode.ErrorText(err))
		return Entry{}, p.Err()
	}
	var cfg mcpclient.Config
	cfg.Default()
	if err := ctx.DecodeInto(raw, &cfg); err != nil {
		p.AddError("", err)
	}
	if p.Len() > 0 {
		return Entry{}, p.Err()
	}
	cfg.ServerName = name
	if err := cfg.CheckReferences(); err != nil {
		return Entry{}, err
	}
	return Entry{Name: name, Enabled: enabled, Config: cfg}, nil
}

// keyLines maps the key paths under n (prefixed with prefix; list elements as [i]) to
// their lines.
func keyLines(n *yaml.Node, prefix string) map[string]int {
	out := map[string]int{}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				p := ctx.JoinKey(path, n.Content[i].Value)
				out[p] = n.Content[i].Line
				walk(n.Content[i+1], p)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				p := fmt.Sprintf("%s[%d]", path, i)
				out[p] = c.Line
				walk(c, p)
			}
		}
	}
	walk(n, prefix)
	return out
}

// lineOfKey returns the line of key or of its nearest ancestor in lines, else def.
func lineOfKey(lines map[string]int, key string, def int) int {
	for k := key; k != ""; {
		if l, ok := lines[k]; ok {
			return l
		}
		i := strings.LastIndexAny(k, ".[")
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return def
}

// clip shortens text quoted in an error about a malformed name.
func clip(s string) string { return words.Clip(s, 41) }

// CheckFile reports everything statically wrong with the settings file at path, all at
// once: a file that cannot be read or parsed, and every entry that does not validate (the
// checks a mount would make, except what depends on resolving its references). A file
// that does not exist is fine: it configures no servers. Problems are [*ctx.ConfigError]
// values matching [ErrInvalidSettings], naming the file, the line when known and the key
// path; the warnings name the keys of another host's document that are dropped or
// converted.
func CheckFile(path string) (warnings []string, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, ReadFileProblem(path, err)
	}
	s, err := ReadSettings(path, data)
	if err != nil {
		return nil, err
	}
	var problems []*ctx.ConfigError
	for _, e := range s.Entries {
		if verr := e.Config.Validate(); verr != nil {
			for _, p := range place(verr, path, e.Path, func(k string) int { return lineOfKey(e.lines, k, 0) }) {
				p.Err = ErrInvalidSettings
				problems = append(problems, p)
			}
		}
	}
	return s.Warnings, ctx.JoinConfigErrors(problems)
}
