package ptc

import (
	"slices"
	"strconv"
	"strings"

	"github.com/cordisgo/harness/internal/words"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// The catalog is what the system prompt declares of the tools: as much as fits in a budget
// of bytes, the rest on demand (describe). Sent with every request, it is PTC's fixed cost;
// the full declarations of every tool (Declarations) grew with the fleet (11.5 KB for the
// 14 tools of one filesystem server), the catalog grows with it only up to the budget.

// DefaultCatalogBytes is the catalog's default budget ([Config].CatalogBytes).
const DefaultCatalogBytes = 6000

// catalogPrelude is the catalog's part that does not depend on the tools: the full
// prelude's types and functions, without its comments.
const catalogPrelude = `type ContentBlock = { type: "text"; text: string } | { type: "image" | "audio"; data: string; mimeType: string } | { type: "resource_link"; uri: string; name: string; title?: string; description?: string; mimeType?: string } | { type: "resource"; resource: { uri: string; mimeType?: string; text?: string; blob?: string } };
interface ToolResult<S = unknown> { content: ContentBlock[]; structuredContent?: S; isError?: boolean }
interface StructuredResult<S> { content: ContentBlock[]; structuredContent: S; isError?: boolean }
/** code: unknown_tool, invalid_arguments, denied, timeout, cancelled, tool_error, invalid_output, panic. */
declare class ToolCallError extends Error { readonly tool: string; readonly code: string }
/** The full declarations of the named tools (a name may end in * for all that begin so): their documentation and result types. */
declare function describe(...names: string[]): string;
/** Base64 from and to a string of one character per byte. */
declare function atob(data: string): string;
declare function btoa(data: string): string;
declare function sleep(ms: number): Promise<void>;
declare const console: { log(...data: unknown[]): void; info(...data: unknown[]): void; debug(...data: unknown[]): void; warn(...data: unknown[]): void; error(...data: unknown[]): void };
`

// Catalog renders the tools for the system prompt in at most budget bytes (when the tools'
// names fit at all), in the first of three forms that fits:
//
//  1. one line a tool: its purpose (the description's first sentence, and whether it is
//     read-only) and its signature, the argument and result types on one line;
//  2. the tools' names by server, and a tools object of untyped functions;
//  3. the servers and how many tools each has.
//
// Each form says that describe(...names) returns the full declarations. Like
// [Declarations], the text depends only on the tools, sorted by name, so the same tools
// give the same bytes; run_code is left out, and no tools give "".
func Catalog(tools []toolregistry.Info, budget int) string {
	tools = visible(tools)
	if len(tools) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(catalogPrelude)
	b.WriteString("\n/** describe(name) returns a tool's full declaration: its parameters' documentation and its result's type. */\ndeclare const tools: {\n")
	for _, in := range tools {
		writeDoc(&b, "  ", []string{purpose(in)})
		b.WriteString("  " + oneLine(signature(in)) + ";\n")
	}
	b.WriteString("};\n")
	if b.Len() <= budget {
		return b.String()
	}

	servers, order := byServer(tools)
	b.Reset()
	b.WriteString(catalogPrelude)
	b.WriteString("\n/**\n * The tools by server (the names here without the server's mcp__<server>__ prefix);\n * describe(name) returns a tool's declaration, describe(\"mcp__<server>__*\") a server's.\n")
	for _, s := range order {
		b.WriteString(" * " + s + ": " + strings.Join(servers[s], ", ") + "\n")
	}
	b.WriteString(" */\ndeclare const tools: Record<string, (args?: object) => Promise<ToolResult>>;\n")
	if b.Len() <= budget {
		return b.String()
	}

	b.Reset()
	b.WriteString(catalogPrelude)
	b.WriteString("\n/**\n * The servers and how many tools each has; describe(\"mcp__<server>__*\") returns a server's\n * declarations.\n")
	for _, s := range order {
		b.WriteString(" * " + s + ": " + strconv.Itoa(len(servers[s])) + " tools\n")
	}
	b.WriteString(" */\ndeclare const tools: Record<string, (args?: object) => Promise<ToolResult>>;\n")
	return b.String()
}

// describe is what describe(...patterns) returns: the full declarations (doc comments,
// signatures) of the tools whose names match a pattern, a name or a prefix ending in *.
func describe(tools []toolregistry.Info, patterns []string) (string, int) {
	var b strings.Builder
	n := 0
	for _, in := range visible(tools) {
		for _, p := range patterns {
			if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(in.Name, prefix) || p == in.Name {
				writeTool(&b, in)
				n++
				break
			}
		}
	}
	return b.String(), n
}

// visible is tools without run_code, sorted by name.
func visible(tools []toolregistry.Info) []toolregistry.Info {
	out := make([]toolregistry.Info, 0, len(tools))
	for _, in := range tools {
		if in.Name != toolregistry.ReservedRunCode {
			out = append(out, in)
		}
	}
	slices.SortFunc(out, func(a, b toolregistry.Info) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// purpose is a tool's one-line summary: the first sentence of its description (at most 160
// characters) and "(read-only)" when its calls may overlap.
func purpose(in toolregistry.Info) string {
	d := strings.TrimSpace(in.Description)
	if i := strings.IndexAny(d, "\n"); i >= 0 {
		d = strings.TrimSpace(d[:i])
	}
	for i := 0; i+1 < len(d); i++ {
		if (d[i] == '.' || d[i] == '!' || d[i] == '?') && d[i+1] == ' ' {
			d = d[:i+1]
			break
		}
	}
	d = words.Clip(d, 160)
	if ReadOnly(in) {
		d = strings.TrimSpace(d + " (read-only)")
	}
	return d
}

// oneLine writes a declaration on one line: doc comments dropped, each line break and its
// indentation one space.
func oneLine(decl string) string {
	var b strings.Builder
	for i := 0; i < len(decl); i++ {
		switch {
		case decl[i] == '"': // a quoted name or literal, as it is
			j := i + 1
			for j < len(decl) && decl[j] != '"' {
				if decl[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j, len(decl)-1)
			b.WriteString(decl[i : j+1])
			i = j
		case strings.HasPrefix(decl[i:], "/**"):
			end := strings.Index(decl[i:], "*/")
			if end < 0 {
				return b.String()
			}
			i += end + 1
		case decl[i] == '\n':
			for i+1 < len(decl) && decl[i+1] == ' ' {
				i++
			}
			if !strings.HasPrefix(decl[i+1:], "/**") && !strings.HasSuffix(b.String(), " ") {
				b.WriteByte(' ')
			}
		default:
			b.WriteByte(decl[i])
		}
	}
	return b.String()
}

// byServer groups the tools' names by their server (Meta["server"]), without the
// mcp__<server>__ prefix; the harness's own tools are under "harness".
func byServer(tools []toolregistry.Info) (map[string][]string, []string) {
	servers := map[string][]string{}
	var order []string
	for _, in := range tools {
		s, name := in.Meta["server"], in.Name
		if s == "" {
			s = "harness"
		} else {
			name = strings.TrimPrefix(name, "mcp__"+s+"__")
		}
		if _, ok := servers[s]; !ok {
			order = append(order, s)
		}
		servers[s] = append(servers[s], name)
	}
	slices.Sort(order)
	return servers, order
}
