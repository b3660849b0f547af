package hostgateway

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// UnknownClientError is a client name PrintClientConfig does not know.
type UnknownClientError struct{ Name string }

func (e *UnknownClientError) Error() string {
	return fmt.Sprintf("--print-client-config %q: unknown client; known: %s, all", e.Name, strings.Join(ClientNames(), ", "))
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
	"qwen": func(url, token string) (string, string) {
		return "Qwen Code: ~/.qwen/settings.json", clientJSON("mcpServers", withHeaders(map[string]any{"httpUrl": url}, token))
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

// ClientNames are the names --print-client-config takes, sorted.
func ClientNames() []string {
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

// PrintClientConfig prints what to paste into client (a name of clientConfigs, or "all")
// to reach the gateway at url with token.
func PrintClientConfig(w io.Writer, client, url, token string) error {
	names := []string{client}
	if client == "all" {
		names = ClientNames()
	} else if _, ok := clientConfigs[client]; !ok {
		return &UnknownClientError{Name: client}
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
