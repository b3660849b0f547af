// Package profiles reads harness profiles: YAML documents that say which
// plugins to mount, with which configuration, in which scope. It owns the
// envelope (rows, ids, layering, validation, dumps); every plugin owns and
// strictly decodes its own config. The package imports koanf and nothing
// else from outside the standard library (the YAML library koanf's parser
// is built on aside).
//
// # Shape
//
// A profile is a map with five keys:
//
//	description: Agent with GitHub tools.   # optional, one line
//	extends: cli                            # optional: a built-in name or a file path
//	elicitation: defaults                   # optional: decline, defaults or ask (ElicitationPolicies)
//	fleet: {startup: lazy}                  # optional: defaults of the MCP servers (Fleet)
//	plugins:                                # rows keyed by id, in the order mounted
//	  tools:
//	    use: toolregistry                   # plugin name in the binary's catalog
//	  github:
//	    use: mcpclient
//	    enabled: true                       # optional, default true
//	    config:                             # optional, the plugin's own settings
//	      serverName: github
//	      transport: stdio
//	      command: github-mcp-server
//	      args: [stdio]
//	  reviewer:                             # no use: a plain agent scope
//	    plugins:                            # nested rows, mounted in a child scope
//	      fs:
//	        use: mcpclient
//	        config: {serverName: fs, transport: stdio, command: mcp-fs}
//
// A row has exactly the keys use, enabled, config and plugins. A row with
// plugins gets a child (agent) scope: its own plugin, if it has a use, and
// its nested rows are mounted in that scope, so what they register stays
// inside it while they still see what ancestors provide. A row without use
// must have plugins; it is a plain scope. enabled: false switches a row off
// together with everything nested in it; that, not deletion, is how an
// overlay removes a row. Ids are 1 to 64 letters, digits, '-' and '_',
// starting with a letter or digit, unique among siblings compared
// case-insensitively. Rows keep their document order; a null config or
// plugins means "nothing here" (as when every entry is commented out).
//
// # Layers
//
// Load merges, lowest first:
//
//  1. the profiles named by extends, transitively (a relative path is
//     taken relative to the file that names it; at most 8 deep; cycles are
//     errors);
//  2. the profile itself: a built-in name or a file (LoadOptions.Name);
//  3. each --set KEY=VALUE in order (LoadOptions.Sets);
//  4. the HARNESS_* environment (LoadOptions.Environ).
//
// Maps merge key by key, so an overlay can change one setting of one row;
// every other value, lists included, is replaced whole. Rows and keys a
// layer adds come after the ones already there.
//
// --set KEY=VALUE: KEY is a dotted key path matched exactly
// (plugins.demo.config.toolCallTimeoutMs); VALUE is parsed as YAML (5000
// is a number, true a boolean, [a, b] a list, {k: v} a map that merges
// into the map at KEY; quote it, '"0123"', to force a string). Setting a
// key inside a value that is not a map, or setting extends, is an error.
//
// Environment: a variable HARNESS_A__B__C=VALUE sets the key path a.b.c.
// Only names with the "__" separator after the prefix are overlays; other
// HARNESS_* variables belong to the binary and are ignored. Each segment
// names an existing key when it matches it exactly, or else
// case-insensitively with '-' and '_' taken as equal, so
// HARNESS_PLUGINS__DEMO__CONFIG__TOOLCALLTIMEOUTMS reaches
// toolCallTimeoutMs and HARNESS_PLUGINS__MY_SERVER__ENABLED reaches the
// row my-server. A segment that matches no key creates one, in lower case;
// below a key named env it is kept as written, as environment variable
// names are case-sensitive. VALUE is typed by what it replaces: it is
// parsed as a boolean or a number when it replaces one (or sets a row's
// enabled), as YAML when it replaces a list or a map, and stays a string
// otherwise, so a token such as 0123 arrives intact. Two variables that
// set the same key, or a key and a key inside it, are an error.
//
// ${HARNESS_SELF} in a configuration string is replaced with the path of
// the running binary (LoadOptions.Self); the built-in default profile uses
// it to re-execute the harness as its demo MCP server. The loader expands
// nothing else: an mcpclient row's command, args, env, cwd, url and headers
// may hold ${VAR}, ${VAR:-default} and ${secret:NAME} references, which the
// client resolves when it mounts (the same implementation as the MCP
// manager's settings file; see secrets). They are never written
// back: Profile.Rows, dumps and views show them as written.
//
// # Built-in profiles
//
// Built-in profiles are embedded in the binary (see BuiltinNames):
//
//   - cli: toolregistry, sysprompt, mcpresources and mcpprompts; mcpmanager
//     (the user's servers, from the settings files the harness command
//     names); remote (the management API on loopback) and console (the
//     management page's methods), which only hosting commands mount;
//   - default: cli plus an mcpclient for the demo server embedded in the
//     binary, so that a fresh install does something real;
//   - web: the default profile under its former name.
//
// No built-in profile starts a third-party server of its own. Extend one
// with extends: cli in your own profile; plugins.manager.enabled: false
// leaves the user's servers out.
//
// # Errors
//
// Loading is strict: unknown keys, wrong types, unknown plugins (via
// LoadOptions.Catalog), bad ids, duplicate keys, malformed overlays and
// invalid YAML are errors. Every error is an [*Error] naming the profile,
// the layer that wrote the bad value, the line when known, the key path
// and what was expected:
//
//	profile "my.yaml": line 4: key "plugins.gh.enabled": expected a boolean, got string "yes"
//
// and wraps one of the sentinels (ErrSyntax, ErrUnknownKey, ErrType, …).
//
// # Importing MCP server lists
//
// [ImportServers] turns the server lists other MCP clients keep ({"mcpServers": {…}},
// VS Code's mcp.json, Codex's config.toml) into a profile with one mcpclient row per
// server, and [Load] reads such a file as that profile, through a [ServerReader] the host
// installs (the harness binary's is host.ServerDocuments). This package reads none of
// them itself, so that loading a profile links nothing of the MCP client: it depends on
// ctx and its configuration libraries only.
package profiles
