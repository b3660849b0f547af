package serverdoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
	yamlv3 "go.yaml.in/yaml/v3"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/yamlnode"
	"github.com/cordisgo/harness/plugins/mcpclient"
)

// Dialects of the server documents other hosts write ([Document.Dialect]).
const (
	// DialectMCPServers is {"mcpServers": {NAME: {…}}}: Claude Desktop, Claude Code, Cursor,
	// gemini-cli, Cline and Roo Code.
	DialectMCPServers = "mcpServers"
	// DialectVSCode is VS Code's mcp.json, {"servers": {NAME: {…}}, "inputs": […]} (also
	// nested under "mcp" in settings.json).
	DialectVSCode = "vscode"
	// DialectCodex is Codex's config.toml, [mcp_servers.NAME] tables.
	DialectCodex = "codex"
)

// hostDialects maps the hosts accepted by ReadOptions.From to their dialect.
var hostDialects = map[string]string{
	"claude": DialectMCPServers, "claude-code": DialectMCPServers, "cursor": DialectMCPServers,
	"gemini": DialectMCPServers, "cline": DialectMCPServers, "roo": DialectMCPServers,
	"vscode": DialectVSCode, "codex": DialectCodex,
}

// Hosts returns the host names ReadOptions.From accepts, sorted.
func Hosts() []string { return slices.Sorted(maps.Keys(hostDialects)) }

// A Document is a list of MCP servers read from another host's document and converted to
// the harness's own server description, typed [mcpclient.Config] values with ${…}
// references in the harness's syntax. It is a plain value, safe for concurrent reads.
type Document struct {
	// Dialect is one of the Dialect constants.
	Dialect string
	// Servers are the servers, in the document's order.
	Servers []Server
	// Warnings name the keys that were dropped or converted, one sentence each, in order.
	Warnings []string
}

// A Server is one server of a [Document].
type Server struct {
	// Name is the server name (the key in the document).
	Name string
	// Enabled is false for a server the document disables.
	Enabled bool
	// Path is the server's key path in the document, e.g. "mcpServers.github".
	Path string
	// Config is the server's configuration: the defaults, with ServerName set to Name and
	// the keys the document gives (transport, command, args, env, cwd, url, headers and
	// the like) converted. It is not validated ([mcpclient.Config.Validate]).
	Config mcpclient.Config

	node *yamlv3.Node // the keys the document gives, in rendering order
}

// ReadOptions say how to read a server document.
type ReadOptions struct {
	// Source names the document in errors and warnings (a file path or "<stdin>").
	Source string
	// From is the host the document is written for (see [Hosts]); "" detects the dialect
	// from Source's extension (.toml is Codex) and the top-level keys.
	From string
	// Op names the operation in errors: "mcp import" (default) or "profile".
	Op string
	// NoValues makes errors say what kind of value was found, never the value itself (for
	// files whose errors are logged, such as the MCP manager's settings file).
	NoValues bool
}

// IsForeign reports whether data, read from the file name, is another host's server
// document rather than a profile or a settings file: a .toml file, or a JSON or YAML
// object with a top-level mcpServers or mcp_servers key, or VS Code's servers (with inputs,
// or typed entries without a transport). A document with a profile's own keys (plugins or
// extends) is a profile whatever else it holds, so that a stray mcpServers key in it is
// refused by name instead of dropping its plugins rows.
func IsForeign(name string, data []byte) bool {
	if strings.EqualFold(filepath.Ext(name), ".toml") {
		return true
	}
	doc, err := parseAny(data, false)
	if err != nil {
		return false
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return false
	}
	for _, k := range []string{"plugins", "extends"} {
		if _, ok := m[k]; ok {
			return false
		}
	}
	if _, ok := m["mcpServers"]; ok {
		return true
	}
	if _, ok := m["mcp_servers"]; ok {
		return true
	}
	if mcp, ok := m["mcp"].(map[string]any); ok {
		if _, ok := mcp["servers"]; ok {
			return true
		}
	}
	return looksVSCode(m)
}

// looksVSCode reports whether a document with a servers key is VS Code's: it has inputs,
// or its entries use type and none uses transport (the harness's settings file).
func looksVSCode(m map[string]any) bool {
	servers, ok := m["servers"].(map[string]any)
	if !ok {
		return false
	}
	if _, ok := m["inputs"]; ok {
		return true
	}
	typed := false
	for _, e := range servers {
		entry, ok := e.(map[string]any)
		if !ok {
			continue
		}
		if _, ok := entry["transport"]; ok {
			return false
		}
		if _, ok := entry["type"]; ok {
			typed = true
		}
	}
	return typed
}

// Read reads a server document written for another host (see the Dialect constants) and
// converts every server. Every error is a [*ctx.ConfigError] naming the source, the key
// path in the document and what was expected, whose Err is one of this package's sentinel
// errors; keys that have no counterpart are dropped with a warning, never silently.
func Read(data []byte, opts ReadOptions) (*Document, error) {
	rd := &reader{im: importer{source: opts.Source, op: opts.Op, noValues: opts.NoValues}}
	dialect := ""
	if opts.From != "" {
		d, ok := hostDialects[opts.From]
		if !ok {
			return nil, rd.im.fail(nil, ErrInvalid, fmt.Sprintf("unknown host %q: expected one of %s", opts.From, strings.Join(Hosts(), ", ")))
		}
		dialect = d
	}
	rd.host = opts.From
	toml := dialect == DialectCodex || (dialect == "" && strings.EqualFold(filepath.Ext(opts.Source), ".toml"))
	var doc any
	if toml {
		var err error
		if doc, err = parseTOML(data); err != nil {
			return nil, rd.im.tomlError(err)
		}
	} else {
		var err error
		if doc, err = parseAny(data, true); err != nil {
			// Codex's config.toml under another name: a TOML table header comes first.
			if t := bytes.TrimSpace(data); len(t) > 1 && t[0] == '[' && (t[1] == '_' || 'a' <= t[1] && t[1] <= 'z' || 'A' <= t[1] && t[1] <= 'Z') {
				var terr error
				if doc, terr = parseTOML(data); terr != nil {
					return nil, rd.im.tomlError(terr)
				}
			} else {
				return nil, rd.im.jsonError(data, err)
			}
		}
	}
	if doc == nil {
		doc = map[string]any{}
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, rd.im.fail(nil, ctx.ErrWrongType, `expected a JSON object with "mcpServers", got a JSON `+jsonKindOf(doc))
	}
	if dialect == "" {
		switch _, hasMCP := m["mcpServers"]; {
		case m["mcp_servers"] != nil:
			dialect = DialectCodex
		case hasMCP:
			dialect = DialectMCPServers
		case m["servers"] != nil:
			dialect = DialectVSCode
		case m["mcp"] != nil:
			dialect = DialectVSCode
		default:
			return nil, rd.im.fail(nil, ErrInvalid, `missing key "mcpServers": expected {"mcpServers": {NAME: {…}}}, VS Code's {"servers": {…}} or Codex's [mcp_servers.NAME]`)
		}
	}
	rd.dialect = dialect
	top := map[string]string{DialectMCPServers: "mcpServers", DialectVSCode: "servers", DialectCodex: "mcp_servers"}[dialect]
	var prefix []string
	if dialect == DialectVSCode {
		if _, has := m["servers"]; !has {
			if mcp, ok := m["mcp"].(map[string]any); ok {
				m, prefix = mcp, []string{"mcp"}
			}
		}
		if err := rd.inputs(m["inputs"], append(slices.Clip(prefix), "inputs")); err != nil {
			return nil, err
		}
	}
	if dialect == DialectMCPServers {
		if _, hasAlt := m["servers"]; hasAlt {
			return nil, rd.im.fail(nil, ctx.ErrDuplicateKey, `both "mcpServers" and "servers": expected one`)
		}
	}
	servers, ok := m[top]
	if !ok {
		return nil, rd.im.fail(prefix, ErrInvalid, fmt.Sprintf("missing key %q: expected the servers of a %s document", top, dialect))
	}
	sm, ok := servers.(map[string]any)
	if !ok {
		return nil, rd.im.fail(append(slices.Clip(prefix), top), ctx.ErrWrongType, "expected a map of servers keyed by name, got "+rd.im.describe(servers))
	}
	out := &Document{Dialect: dialect}
	used := map[string]string{}
	for _, name := range documentOrder(data, toml, append(slices.Clip(prefix), top), slices.Collect(maps.Keys(sm))) {
		p := append(slices.Clip(prefix), top, name)
		if !mcpclient.ValidServerName(name) {
			return nil, rd.im.fail(p, ErrInvalid, fmt.Sprintf(
				"invalid server name %q: expected 1 to 32 letters, digits, '-' or '_' (rename it in the document)", name))
		}
		if other, dup := used[strings.ToLower(name)]; dup {
			return nil, rd.im.fail(p, ctx.ErrDuplicateKey, fmt.Sprintf(
				"server names %q and %q differ only in case: expected distinct names", other, name))
		}
		used[strings.ToLower(name)] = name
		s, err := rd.server(p, name, sm[name])
		if err != nil {
			return nil, err
		}
		out.Servers = append(out.Servers, *s)
	}
	out.Warnings = rd.warnings
	return out, nil
}

// reader carries one ReadServers call.
type reader struct {
	im       importer
	dialect  string
	host     string
	inputIDs map[string]bool
	warnings []string
}

func (rd *reader) warn(path []string, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if len(path) > 0 {
		msg = fmt.Sprintf("key %q: %s", joinPath(path), msg)
	}
	rd.warnings = append(rd.warnings, msg)
}

// inputs reads VS Code's inputs: each becomes the secret of the same id.
func (rd *reader) inputs(v any, path []string) error {
	if v == nil {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		return rd.im.fail(path, ctx.ErrWrongType, "expected a list of inputs, got "+rd.im.describe(v))
	}
	rd.inputIDs = map[string]bool{}
	for i, e := range list {
		in, ok := e.(map[string]any)
		p := append(slices.Clip(path), strconv.Itoa(i))
		if !ok {
			return rd.im.fail(p, ctx.ErrWrongType, "expected an input object, got "+rd.im.describe(e))
		}
		id, _ := in["id"].(string)
		if id == "" { // the name's syntax is checked with the ${secret:…} reference it becomes
			return rd.im.fail(append(p, "id"), ErrInvalid, "expected the input's id, got "+rd.im.describe(in["id"]))
		}
		rd.inputIDs[id] = true
	}
	return nil
}

// Keys of each dialect's server entries. ignored keys have no counterpart and are dropped
// with a warning naming the reason.
var (
	mcpServersKeys = []string{"command", "args", "env", "cwd", "url", "headers", "type", "disabled",
		"httpUrl", "transportType", "timeout", "includeTools", "excludeTools"}
	vscodeKeys = []string{"command", "args", "env", "cwd", "url", "headers", "type", "disabled"}
	codexKeys  = []string{"command", "args", "env", "env_vars", "cwd", "url", "bearer_token_env_var",
		"http_headers", "env_http_headers", "startup_timeout_sec", "startup_timeout_ms", "tool_timeout_sec",
		"enabled", "enabled_tools", "disabled_tools"}
	ignoredKeys = map[string]map[string]string{
		DialectMCPServers: {
			"autoApprove":   "per-tool auto-approval has no counterpart (tool permissions belong to the tool registry's policy)",
			"alwaysAllow":   "per-tool auto-approval has no counterpart (tool permissions belong to the tool registry's policy)",
			"trust":         "confirmation bypass has no counterpart (tool permissions belong to the tool registry's policy)",
			"description":   "descriptions are not kept",
			"disabledTools": "use deniedTools in the harness configuration",
			"oauth":         "configure the oauth block of the mcpclient configuration",
		},
		DialectVSCode: {
			"envFile": "env files are not read: list the variables under env",
			"dev":     "development mode has no counterpart",
			"gallery": "gallery metadata is not kept",
		},
		DialectCodex: {
			"required": "every server is optional here; use failOnStartupError for a required one",
		},
	}
)

// server converts one entry.
func (rd *reader) server(p []string, name string, v any) (*Server, error) {
	entry, ok := v.(map[string]any)
	if !ok {
		return nil, rd.im.fail(p, ctx.ErrWrongType, "expected a server object, got "+rd.im.describe(v))
	}
	at := func(k string) []string { return append(slices.Clip(p), k) }
	known := map[string][]string{DialectMCPServers: mcpServersKeys, DialectVSCode: vscodeKeys, DialectCodex: codexKeys}[rd.dialect]
	for _, k := range slices.Sorted(maps.Keys(entry)) {
		if slices.Contains(known, k) {
			continue
		}
		if why, ok := ignoredKeys[rd.dialect][k]; ok {
			rd.warn(at(k), "ignored: %s", why)
			delete(entry, k)
			continue
		}
		return nil, rd.im.fail(at(k), ctx.ErrUnknownKey, "unknown key: expected "+strings.Join(known, ", "))
	}
	if rd.dialect == DialectCodex {
		return rd.codexServer(p, name, entry)
	}
	return rd.jsonServer(p, name, entry)
}

// cfg accumulates a server's configuration in rendering order.
type cfg struct {
	node *yamlv3.Node
}

func (c *cfg) add(k string, n *yamlv3.Node) {
	c.node.Content = append(c.node.Content, yamlnode.Str(k), n)
}

func intNode(n int) *yamlv3.Node {
	return &yamlv3.Node{Kind: yamlv3.ScalarNode, Tag: "!!int", Value: strconv.Itoa(n)}
}

func (rd *reader) jsonServer(p []string, name string, entry map[string]any) (*Server, error) {
	at := func(k string) []string { return append(slices.Clip(p), k) }
	if u, ok := entry["httpUrl"]; ok { // gemini-cli: Streamable HTTP
		if _, both := entry["url"]; both {
			return nil, rd.im.fail(at("httpUrl"), ErrInvalid, `both "httpUrl" and "url": expected one`)
		}
		entry["url"] = u
		delete(entry, "httpUrl")
	}
	typeKey := "type"
	if t, ok := entry["transportType"]; ok { // Cline
		if _, both := entry["type"]; both {
			return nil, rd.im.fail(at("transportType"), ErrInvalid, `both "type" and "transportType": expected one`)
		}
		entry["type"], typeKey = t, "transportType"
	}
	transport := ""
	if t, ok := entry["type"]; ok {
		s, _ := t.(string)
		switch s {
		case "stdio":
			transport = "stdio"
		case "http", "streamable-http", "streamableHttp", "sse":
			transport = "streamable-http"
		default:
			return nil, rd.im.fail(at(typeKey), ErrInvalid,
				"expected stdio, http, streamable-http, streamableHttp or sse, got "+rd.im.describe(t))
		}
	}
	_, hasCommand := entry["command"]
	_, hasURL := entry["url"]
	switch {
	case hasCommand && hasURL:
		return nil, rd.im.fail(p, ErrInvalid, `both "command" and "url": expected command (stdio) or url (HTTP)`)
	case !hasCommand && !hasURL:
		return nil, rd.im.fail(p, ErrInvalid, `missing key "command" or "url": expected command (stdio) or url (HTTP)`)
	case transport == "":
		transport = "stdio"
		if hasURL {
			transport = "streamable-http"
		}
	case transport == "stdio" && hasURL:
		return nil, rd.im.fail(at("url"), ErrInvalid, `type stdio takes "command", not "url"`)
	case transport != "stdio" && hasCommand:
		return nil, rd.im.fail(at("command"), ErrInvalid, fmt.Sprintf(`type %v takes "url", not "command"`, entry["type"]))
	}
	if err := rd.transportKeys(p, entry, transport); err != nil {
		return nil, err
	}
	c, err := rd.start(p, entry, transport, "command", "args", "env", "cwd", "url", "headers")
	if err != nil {
		return nil, err
	}
	if t, ok := entry["timeout"]; ok {
		ms, isNum := t.(float64)
		switch {
		case !isNum || ms <= 0 || ms != math.Trunc(ms):
			return nil, rd.im.fail(at("timeout"), ctx.ErrWrongType, "expected a positive whole number, got "+rd.im.describe(t))
		case rd.host == "gemini":
			c.add("toolCallTimeoutMs", intNode(int(ms)))
		case rd.host == "cline" || rd.host == "roo":
			c.add("toolCallTimeoutMs", intNode(int(ms)*1000))
		default:
			rd.warn(at("timeout"), "ignored: seconds for Cline, milliseconds for gemini-cli; import with --from cline or --from gemini, or set toolCallTimeoutMs")
		}
	}
	for k, to := range map[string]string{"includeTools": "allowedTools", "excludeTools": "deniedTools"} {
		if v, ok := entry[k]; ok {
			n, err := rd.strList(at(k), v)
			if err != nil {
				return nil, err
			}
			if to == "allowedTools" && len(n.Content) == 0 {
				rd.warn(at(k), "ignored: an empty list (every tool is admitted)")
				continue
			}
			c.add(to, n)
		}
	}
	disabled, err := rd.flag(p, entry, "disabled", false)
	if err != nil {
		return nil, err
	}
	return rd.finish(p, name, !disabled, c)
}

// start begins a server's configuration: its transport and the values of keys, converted
// by value.
func (rd *reader) start(p []string, entry map[string]any, transport string, keys ...string) (*cfg, error) {
	c := &cfg{node: &yamlv3.Node{Kind: yamlv3.MappingNode}}
	c.add("transport", yamlnode.Str(transport))
	for _, k := range keys {
		v, ok := entry[k]
		if !ok {
			continue
		}
		n, err := rd.value(append(slices.Clip(p), k), k, v)
		if err != nil {
			return nil, err
		}
		c.add(k, n)
	}
	return c, nil
}

// transportKeys refuses keys of the other transport.
func (rd *reader) transportKeys(p []string, entry map[string]any, transport string) error {
	at := func(k string) []string { return append(slices.Clip(p), k) }
	if transport == "stdio" {
		for _, k := range []string{"headers", "http_headers", "env_http_headers", "bearer_token_env_var"} {
			if _, ok := entry[k]; ok {
				return rd.im.fail(at(k), ErrInvalid, fmt.Sprintf(`%q apply to HTTP servers: expected "url"`, k))
			}
		}
		return nil
	}
	for _, k := range []string{"args", "env", "cwd", "env_vars"} {
		if _, ok := entry[k]; ok {
			return rd.im.fail(at(k), ErrInvalid, fmt.Sprintf(`%q applies to stdio servers: expected "command"`, k))
		}
	}
	return nil
}

func (rd *reader) codexServer(p []string, name string, entry map[string]any) (*Server, error) {
	at := func(k string) []string { return append(slices.Clip(p), k) }
	_, hasCommand := entry["command"]
	_, hasURL := entry["url"]
	switch {
	case hasCommand && hasURL:
		return nil, rd.im.fail(p, ErrInvalid, `both "command" and "url": expected command (stdio) or url (Streamable HTTP)`)
	case !hasCommand && !hasURL:
		return nil, rd.im.fail(p, ErrInvalid, `missing key "command" or "url": expected command (stdio) or url (Streamable HTTP)`)
	}
	transport := "stdio"
	if hasURL {
		transport = "streamable-http"
	}
	if err := rd.transportKeys(p, entry, transport); err != nil {
		return nil, err
	}
	c, err := rd.start(p, entry, transport, "command", "args", "env", "cwd", "url")
	if err != nil {
		return nil, err
	}
	if v, ok := entry["env_vars"]; ok { // passed through from the harness's environment
		n, err := rd.strList(at("env_vars"), v)
		if err != nil {
			return nil, err
		}
		c.add("inheritEnv", &yamlv3.Node{Kind: yamlv3.MappingNode, Content: []*yamlv3.Node{yamlnode.Str("extra"), n}})
	}
	headers := &yamlv3.Node{Kind: yamlv3.MappingNode}
	if v, ok := entry["http_headers"]; ok {
		n, err := rd.value(at("http_headers"), "headers", v)
		if err != nil {
			return nil, err
		}
		headers.Content = append(headers.Content, n.Content...)
	}
	if v, ok := entry["env_http_headers"]; ok { // header → the variable holding its value
		m, ok := v.(map[string]any)
		if !ok {
			return nil, rd.im.fail(at("env_http_headers"), ctx.ErrWrongType, "expected a map of header names to variable names, got "+rd.im.describe(v))
		}
		for _, h := range slices.Sorted(maps.Keys(m)) {
			name, ok := m[h].(string)
			if !ok || !envVarName.MatchString(name) {
				return nil, rd.im.fail(append(at("env_http_headers"), h), ctx.ErrWrongType, "expected an environment variable name, got "+rd.im.describe(m[h]))
			}
			headers.Content = append(headers.Content, yamlnode.Str(h), yamlnode.Str("${"+name+"}"))
		}
	}
	if v, ok := entry["bearer_token_env_var"]; ok {
		name, ok := v.(string)
		if !ok || !envVarName.MatchString(name) {
			return nil, rd.im.fail(at("bearer_token_env_var"), ctx.ErrWrongType, "expected an environment variable name, got "+rd.im.describe(v))
		}
		headers.Content = append(headers.Content, yamlnode.Str("Authorization"), yamlnode.Str("Bearer ${"+name+"}"))
	}
	if len(headers.Content) > 0 {
		c.add("headers", headers)
	}
	for _, t := range []struct {
		key, to string
		scale   float64
	}{{"startup_timeout_sec", "startupTimeoutMs", 1000}, {"startup_timeout_ms", "startupTimeoutMs", 1}, {"tool_timeout_sec", "toolCallTimeoutMs", 1000}} {
		v, ok := entry[t.key]
		if !ok {
			continue
		}
		n, ok := number(v)
		if !ok || n <= 0 || n*t.scale > math.MaxInt32 {
			return nil, rd.im.fail(at(t.key), ctx.ErrWrongType, "expected a positive number, got "+rd.im.describe(v))
		}
		c.add(t.to, intNode(int(math.Round(n*t.scale))))
	}
	for k, to := range map[string]string{"enabled_tools": "allowedTools", "disabled_tools": "deniedTools"} {
		if v, ok := entry[k]; ok {
			n, err := rd.strList(at(k), v)
			if err != nil {
				return nil, err
			}
			c.add(to, n)
		}
	}
	enabled, err := rd.flag(p, entry, "enabled", true)
	if err != nil {
		return nil, err
	}
	return rd.finish(p, name, enabled, c)
}

// flag reads the boolean key of the entry at p, absent when it is not there; another value
// fails, naming the key.
func (rd *reader) flag(p []string, entry map[string]any, key string, absent bool) (bool, error) {
	v, ok := entry[key]
	if !ok {
		return absent, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, rd.im.fail(append(slices.Clip(p), key), ctx.ErrWrongType, "expected a boolean, got "+rd.im.describe(v))
	}
	return b, nil
}

// number reads a TOML or JSON number.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int64:
		return float64(n), true
	}
	return 0, false
}

// finish decodes the converted keys into the server's typed configuration.
func (rd *reader) finish(p []string, name string, enabled bool, c *cfg) (*Server, error) {
	var m map[string]any
	if err := c.node.Decode(&m); err != nil {
		return nil, rd.im.fail(p, ErrInvalid, "cannot convert the server: "+err.Error())
	}
	var config mcpclient.Config
	config.Default()
	if err := ctx.DecodeInto(m, &config); err != nil {
		return nil, rd.im.fail(p, ErrInvalid, "cannot convert the server: "+err.Error())
	}
	config.ServerName = name
	return &Server{Name: name, Enabled: enabled, Path: joinPath(p), Config: config, node: c.node}, nil
}

// value converts a command, args, env, cwd, url or headers value, with its references.
func (rd *reader) value(p []string, k string, v any) (*yamlv3.Node, error) {
	switch k {
	case "command", "url":
		s, ok := v.(string)
		if !ok || strings.TrimSpace(s) == "" {
			return nil, rd.im.fail(p, ctx.ErrWrongType, "expected a non-empty string, got "+rd.im.describe(v))
		}
		s, err := rd.refs(p, s)
		if err != nil {
			return nil, err
		}
		if k == "url" && !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") && !strings.HasPrefix(s, "${") {
			return nil, rd.im.fail(p, ErrInvalid, "expected an http:// or https:// URL, got "+rd.im.describe(s))
		}
		return yamlnode.Str(s), nil
	case "cwd":
		s, ok := v.(string)
		if !ok {
			return nil, rd.im.fail(p, ctx.ErrWrongType, "expected a string, got "+rd.im.describe(v))
		}
		s, err := rd.refs(p, s)
		if err != nil {
			return nil, err
		}
		return yamlnode.Str(s), nil
	case "args":
		n, err := rd.strList(p, v)
		if err != nil {
			return nil, err
		}
		for i, e := range n.Content {
			s, err := rd.refs(append(slices.Clip(p), strconv.Itoa(i)), e.Value)
			if err != nil {
				return nil, err
			}
			e.Value = s
		}
		return n, nil
	default: // env, headers
		mv, ok := v.(map[string]any)
		if !ok {
			return nil, rd.im.fail(p, ctx.ErrWrongType, "expected a map of strings, got "+rd.im.describe(v))
		}
		mn := &yamlv3.Node{Kind: yamlv3.MappingNode}
		for _, ek := range slices.Sorted(maps.Keys(mv)) {
			s, ok := mv[ek].(string)
			if !ok {
				return nil, rd.im.fail(append(slices.Clip(p), ek), ctx.ErrWrongType, "expected a string, got "+rd.im.describe(mv[ek]))
			}
			s, err := rd.refs(append(slices.Clip(p), ek), s)
			if err != nil {
				return nil, err
			}
			mn.Content = append(mn.Content, yamlnode.Str(ek), yamlnode.Str(s))
		}
		if len(mn.Content) == 0 {
			mn.Style = yamlv3.FlowStyle
		}
		return mn, nil
	}
}

// strList converts a list of strings.
func (rd *reader) strList(p []string, v any) (*yamlv3.Node, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, rd.im.fail(p, ctx.ErrWrongType, "expected a list of strings, got "+rd.im.describe(v))
	}
	seq := &yamlv3.Node{Kind: yamlv3.SequenceNode, Style: yamlv3.FlowStyle}
	for i, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, rd.im.fail(append(slices.Clip(p), strconv.Itoa(i)), ctx.ErrWrongType, "expected a string, got "+rd.im.describe(e))
		}
		seq.Content = append(seq.Content, yamlnode.Str(s))
	}
	return seq, nil
}

var (
	envVarName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	refPattern = regexp.MustCompile(`\$\{([^}]*)\}`)
	bareVar    = regexp.MustCompile(`\$([A-Za-z_][A-Za-z0-9_]*)`)
)

// refs rewrites the references of a string into the harness's syntax. Codex expands
// nothing, so its "${" is escaped; VS Code's and Cursor's ${env:NAME} become ${NAME}, VS
// Code's ${input:ID} the secret ID, ${userHome} ${HOME}, ${workspaceFolder} ${PWD};
// gemini-cli's $NAME becomes ${NAME}. Any other variable is an error naming the key.
func (rd *reader) refs(p []string, s string) (string, error) {
	if rd.dialect == DialectCodex {
		return strings.ReplaceAll(s, "${", "$${"), nil
	}
	if rd.host == "gemini" {
		s = bareVar.ReplaceAllStringFunc(s, func(m string) string {
			return "${" + m[1:] + "}"
		})
	}
	var bad error
	out := refPattern.ReplaceAllStringFunc(s, func(m string) string {
		body := m[2 : len(m)-1]
		kind, name, hasColon := strings.Cut(body, ":")
		vscodeVars := rd.dialect == DialectVSCode || rd.host == "cursor"
		switch {
		case vscodeVars && body == "userHome":
			return "${HOME}"
		case vscodeVars && body == "workspaceFolder":
			rd.warn(p, "${workspaceFolder} becomes ${PWD}, the directory the harness runs in")
			return "${PWD}"
		case !hasColon && envVarName.MatchString(body), strings.HasPrefix(body, "secret:"):
			return m
		case hasColon && envVarName.MatchString(kind) && strings.HasPrefix(name, "-"):
			return m // ${VAR:-default}
		case kind == "env" && envVarName.MatchString(name):
			return "${" + name + "}"
		case kind == "input" && rd.dialect == DialectVSCode:
			if rd.inputIDs != nil && !rd.inputIDs[name] {
				bad = rd.im.fail(p, ErrInvalid, fmt.Sprintf("${input:%s} names no entry of inputs", name))
				return m
			}
			rd.warn(p, "${input:%s} becomes ${secret:%s}: put the value under %q in the credentials file (credentials.yaml, mode 0600)", name, name, name)
			return "${secret:" + name + "}"
		}
		bad = rd.im.fail(p, ErrInvalid, fmt.Sprintf("%s: expected ${VAR}, ${VAR:-default}, ${env:VAR} or ${secret:NAME}", m))
		return m
	})
	return out, bad
}

// parseTOML decodes a TOML document into maps, lists and scalars.
func parseTOML(data []byte) (any, error) {
	var doc map[string]any
	err := yamlnode.Safely(func() error { return toml.Unmarshal(data, &doc) })
	return doc, err
}

// tomlError reports a TOML document that does not parse, with its line.
func (im importer) tomlError(err error) *ctx.ConfigError {
	e := im.fail(nil, ctx.ErrSyntax, "invalid TOML: "+err.Error())
	e.Err = fmt.Errorf("%w: %w", ctx.ErrSyntax, err)
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, _ := de.Position()
		e.Line = row
		e.Msg = "invalid TOML: " + de.Error()
	}
	return e
}

// parseAny decodes JSON (comments and trailing commas allowed, as VS Code and Cursor
// write them) into maps, lists and scalars; with yaml, a document that is not JSON is
// tried as YAML.
func parseAny(data []byte, yaml bool) (any, error) {
	clean := stripJSONC(data)
	var doc any
	jerr := json.Unmarshal(clean, &doc)
	if jerr == nil {
		return doc, nil
	}
	if t := bytes.TrimSpace(data); yaml && len(t) > 0 && t[0] != '{' && t[0] != '[' {
		var v any
		if err := yamlnode.Safely(func() error { return yamlv3.Unmarshal(data, &v) }); err == nil {
			return yamlnode.Normalize(v), nil
		}
	}
	if !yaml {
		var v any
		if err := yamlnode.Safely(func() error { return yamlv3.Unmarshal(data, &v) }); err == nil {
			return yamlnode.Normalize(v), nil
		}
	}
	return nil, jerr
}

// stripJSONC blanks out // and /* */ comments and trailing commas outside strings,
// keeping every newline (and so the lines of errors).
func stripJSONC(data []byte) []byte {
	if !bytes.Contains(data, []byte("//")) && !bytes.Contains(data, []byte("/*")) && !bytes.Contains(data, []byte(",")) {
		return data
	}
	out := bytes.Clone(data)
	blank := func(from, to int) {
		for j := from; j < to; j++ {
			if out[j] != '\n' {
				out[j] = ' '
			}
		}
	}
	lastComma := -1 // a comma after a value, not yet followed by anything significant
	var prev byte   // the last significant character
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case c == '"':
			for i++; i < len(out) && out[i] != '"'; i++ {
				if out[i] == '\\' {
					i++
				}
			}
			prev, lastComma = '"', -1
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			end := bytes.IndexByte(out[i:], '\n')
			if end < 0 {
				end = len(out) - i
			}
			blank(i, i+end)
			i += end - 1
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			end := bytes.Index(out[i+2:], []byte("*/"))
			stop := len(out)
			if end >= 0 {
				stop = i + 2 + end + 2
			}
			blank(i, stop)
			i = stop - 1
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		case c == ',':
			lastComma = -1
			if prev != '{' && prev != '[' && prev != ',' && prev != ':' && prev != 0 {
				lastComma = i
			}
			prev = c
		case c == '}' || c == ']':
			if lastComma >= 0 {
				out[lastComma] = ' '
			}
			prev, lastComma = c, -1
		default:
			prev, lastComma = c, -1
		}
	}
	return out
}

// jsonKindOf names the JSON kind of a decoded value.
func jsonKindOf(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return "value"
}
