package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cordisgo/harness/gateway"
	"github.com/cordisgo/harness/internal/loopback"
)

// gatewayTokenFileName is the file in harnessDir that keeps the gateway's bearer token
// across restarts (mode 0600), so that configured clients keep working.
const gatewayTokenFileName = "gateway.token"

// gatewayToken returns the gateway's bearer token: --token-file's, else
// HARNESS_GATEWAY_TOKEN, else the one kept in gateway.token in harnessDir, made (mode
// 0600) when there is none yet or rotate asks for a new one. source names where it came
// from, for messages.
func (a *invocation) gatewayToken(tokenFile string, rotate bool) (tok, source string, err error) {
	if tokenFile != "" {
		if rotate {
			return "", "", errors.New("--rotate-token: the token comes from --token-file; replace that file's content instead")
		}
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			return "", "", fmt.Errorf("--token-file: %w", err)
		}
		tok := strings.TrimSpace(string(b))
		if tok == "" {
			return "", "", fmt.Errorf("--token-file %s: empty", tokenFile)
		}
		return tok, tokenFile, nil
	}
	if v, ok := lookupEnv(a.env, "HARNESS_GATEWAY_TOKEN"); ok && v != "" {
		if rotate {
			return "", "", errors.New("--rotate-token: the token comes from $HARNESS_GATEWAY_TOKEN; change the variable instead")
		}
		return v, "$HARNESS_GATEWAY_TOKEN", nil
	}
	dir, err := a.harnessDir()
	if err != nil {
		return "", "", fmt.Errorf("no place to keep the gateway token: %w (give one with --token-file)", err)
	}
	path := filepath.Join(dir, gatewayTokenFileName)
	tok, err = keptToken(path, rotate)
	return tok, path, err
}

// keptToken reads the token kept in path, or writes a new one there (mode 0600,
// atomically) when the file does not exist or rotate is set. A kept file that others can
// read is refused: the token grants the whole fleet.
func keptToken(path string, rotate bool) (string, error) {
	if !rotate {
		fi, err := os.Stat(path)
		switch {
		case err == nil && fi.Mode().Perm()&0o077 != 0:
			return "", fmt.Errorf("gateway token file %s has mode %04o: expected 0600 (chmod 600 it, or serve --rotate-token for a new one)", path, fi.Mode().Perm())
		case err == nil:
			b, err := os.ReadFile(path)
			if err != nil {
				return "", fmt.Errorf("gateway token file: %w", err)
			}
			if tok := strings.TrimSpace(string(b)); tok != "" {
				return tok, nil
			}
			// An empty file (a write cut short) gets a new token.
		case !errors.Is(err, fs.ErrNotExist):
			return "", fmt.Errorf("gateway token file: %w", err)
		}
	}
	tok := gateway.NewToken()
	if err := loopback.WriteFile(path, []byte(tok+"\n")); err != nil {
		return "", fmt.Errorf("gateway token file %s: %w", path, err)
	}
	return tok, nil
}

// clientConfigs are the clients serve --print-client-config knows, each a function of the
// gateway's URL and token ("": no token) giving where the text goes and the text to paste
// (a command line or a configuration file's entry).
var clientConfigs = map[string]func(url, token string) (where, text string){
	"claude": func(url, token string) (string, string) {
		line := "claude mcp add --transport http harness " + url
		if token != "" {
			line += " --header 'Authorization: Bearer " + token + "'"
		}
		return "Claude Code: run", line
	},
	"codex": func(url, token string) (string, string) {
		text := fmt.Sprintf("[mcp_servers.harness]\nurl = %q", url)
		if token != "" {
			text += fmt.Sprintf("\nhttp_headers = { Authorization = %q }", "Bearer "+token)
		}
		return "Codex: ~/.codex/config.toml", text
	},
	"gemini": func(url, token string) (string, string) {
		return "gemini-cli: ~/.gemini/settings.json", clientJSON("mcpServers", withHeaders(map[string]any{"httpUrl": url}, token))
	},
	"cursor": func(url, token string) (string, string) {
		return "Cursor: ~/.cursor/mcp.json", clientJSON("mcpServers", withHeaders(map[string]any{"url": url}, token))
	},
	"vscode": func(url, token string) (string, string) {
		return "VS Code: .vscode/mcp.json (or the user's mcp.json)", clientJSON("servers", withHeaders(map[string]any{"type": "http", "url": url}, token))
	},
}

// withHeaders adds the bearer token's Authorization header to a JSON client entry.
func withHeaders(entry map[string]any, token string) map[string]any {
	if token != "" {
		entry["headers"] = map[string]string{"Authorization": "Bearer " + token}
	}
	return entry
}

// clientNames are the names --print-client-config takes, sorted.
func clientNames() []string {
	var names []string
	for n := range clientConfigs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// clientJSON is {key: {"harness": entry}} as one line of JSON, <, > and & as they are.
func clientJSON(key string, entry map[string]any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]any{key: map[string]any{"harness": entry}})
	return strings.TrimSuffix(b.String(), "\n")
}

// printClientConfig prints what to paste into client (a name of clientConfigs, or "all")
// to reach the gateway at url with token.
func printClientConfig(w io.Writer, client, url, token string) error {
	names := []string{client}
	if client == "all" {
		names = clientNames()
	} else if _, ok := clientConfigs[client]; !ok {
		return usageErrorf("serve: --print-client-config %q: unknown client; known: %s, all%s", client, strings.Join(clientNames(), ", "), nearest(client, clientNames()))
	}
	for i, n := range names {
		where, text := clientConfigs[n](url, token)
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "# %s\n%s\n", where, text)
	}
	return nil
}

// printGatewayClient prints client's configuration for the gateway that serve --addr addr
// would serve.
func (a *invocation) printGatewayClient(client, addr, token string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "0" {
		return usageErrorf("serve: --print-client-config needs the gateway's fixed address (--addr HOST:PORT, not port 0), got %q", addr)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return printClientConfig(a.stdout, client, "http://"+net.JoinHostPort(host, port)+gateway.PathAggregated, token)
}
