package ptc

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cordisgo/harness/internal/schemawalk"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// declPrelude is the part of the declarations that does not depend on the tools.
const declPrelude = `/** A block of a tool's result (binary data is base64). */
type ContentBlock =
  | { type: "text"; text: string }
  | { type: "image"; data: string; mimeType: string }
  | { type: "audio"; data: string; mimeType: string }
  | { type: "resource_link"; uri: string; name: string; title?: string; description?: string; mimeType?: string }
  | { type: "resource"; resource: { uri: string; mimeType?: string; text?: string; blob?: string } };

/** What every tool call resolves to. */
interface ToolResult<S = unknown> {
  content: ContentBlock[];
  structuredContent?: S;
  isError?: boolean;
}

/** What a call of a tool with an output schema resolves to. */
interface StructuredResult<S> {
  content: ContentBlock[];
  structuredContent: S;
  isError?: boolean;
}

/** A failed tool call rejects with this error. */
declare class ToolCallError extends Error {
  /** The tool's name. */
  readonly tool: string;
  /** The failure's code: unknown_tool, invalid_arguments, denied, timeout, cancelled, tool_error, invalid_output, panic. */
  readonly code: string;
}

/** Decodes base64 (the data of binary content) to a string of one character per byte. */
declare function atob(data: string): string;
/** Encodes a string of one character per byte as base64. */
declare function btoa(data: string): string;

/** Waits ms milliseconds (bounded). */
declare function sleep(ms: number): Promise<void>;

/** The full declarations of the named tools (a name may end in * for all that begin so). */
declare function describe(...names: string[]): string;

/** Lines written here are returned with the program's result. */
declare const console: {
  log(...data: unknown[]): void;
  info(...data: unknown[]): void;
  debug(...data: unknown[]): void;
  warn(...data: unknown[]): void;
  error(...data: unknown[]): void;
};
`

// Declarations renders the TypeScript declarations of tools (typically [Registry.List]):
// the result and error types, console and sleep, and one global tools object whose quoted
// keys are the tools' names, with the argument types from their input schemas, the
// structuredContent types from their output schemas and the descriptions as doc comments.
// The reserved run_code tool is left out. The text depends only on the tools' names,
// descriptions, schemas and metadata, and the tools are sorted by name, so the same tools
// always give the same bytes. With no tools it returns "".
func Declarations(tools []toolregistry.Info) string {
	tools = visible(tools)
	if len(tools) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(declPrelude)
	b.WriteString("\ndeclare const tools: {\n")
	for _, in := range tools {
		writeTool(&b, in)
	}
	b.WriteString("};\n")
	return b.String()
}

// writeTool writes one member of the tools object.
func writeTool(b *strings.Builder, in toolregistry.Info) {
	var doc []string
	if d := strings.TrimSpace(in.Description); d != "" {
		doc = append(doc, strings.Split(d, "\n")...)
	}
	if s := in.Meta["server"]; s != "" {
		doc = append(doc, "@server "+s+(map[bool]string{true: " (read-only)"}[ReadOnly(in)]))
	}
	writeDoc(b, "  ", doc)
	b.WriteString("  " + signature(in) + ";\n")
}

// signature is a tool's member of the tools object without its doc comment:
// "name"(args: {…}): Promise<…>.
func signature(in toolregistry.Info) string {
	args := newSchemaWriter(in.Parameters)
	argType := args.typeOf(args.root, 1)
	optional := "?"
	if len(args.root.Required) > 0 {
		optional = ""
	}
	result := "ToolResult"
	if len(in.OutputSchema) > 0 {
		out := newSchemaWriter(in.OutputSchema)
		result = "StructuredResult<" + out.typeOf(out.root, 1) + ">"
	}
	return quote(in.Name) + "(args" + optional + ": " + argType + "): Promise<" + result + ">"
}

// writeDoc writes a JSDoc comment of lines at indent.
func writeDoc(b *strings.Builder, indent string, lines []string) {
	for i := range lines {
		lines[i] = strings.ReplaceAll(strings.TrimRight(lines[i], " \t\r"), "*/", "*\\/")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	switch len(lines) {
	case 0:
		return
	case 1:
		b.WriteString(indent + "/** " + lines[0] + " */\n")
		return
	}
	b.WriteString(indent + "/**\n")
	for _, l := range lines {
		if l == "" {
			b.WriteString(indent + " *\n")
		} else {
			b.WriteString(indent + " * " + l + "\n")
		}
	}
	b.WriteString(indent + " */\n")
}

// maxDepth bounds the nesting the declarations spell out; deeper parts are unknown.
const maxDepth = 12

// maxNodes bounds the schema nodes one schema's type spells out; past it, parts are
// unknown. Without it, a small schema whose definitions refer twice to the next one (a
// union of d1 and d1[], d1 the same of d2, …) expands exponentially: 22 such definitions,
// 1.5 KB, rendered 58 MB in 33 s. The largest schema of the evaluation catalog (315 real
// tools) has 73 nodes.
const maxNodes = 1000

// schemaWriter turns one tool's schema into TypeScript types.
type schemaWriter struct {
	root     *jsonschema.Schema
	resolved map[string]bool // $refs being expanded (a cycle becomes unknown)
	left     int             // the nodes the type may still spell out (maxNodes)
}

// newSchemaWriter reads raw; a schema that does not parse declares unknown.
func newSchemaWriter(raw json.RawMessage) *schemaWriter {
	w := &schemaWriter{root: &jsonschema.Schema{}, resolved: map[string]bool{}, left: maxNodes}
	if len(bytes.TrimSpace(raw)) > 0 {
		if s, err := schemawalk.Parse(raw); err == nil {
			w.root = s
		}
	}
	return w
}

// typeOf renders the TypeScript type of s, indented for depth (object members at depth+1).
func (w *schemaWriter) typeOf(s *jsonschema.Schema, depth int) string {
	t := w.bare(s, depth)
	if s != nil && s.Extra["nullable"] == true && t != "unknown" && !strings.HasSuffix(t, "| null") {
		t = union([]string{t, "null"})
	}
	return t
}

func (w *schemaWriter) bare(s *jsonschema.Schema, depth int) string {
	if s == nil || depth > maxDepth || w.left <= 0 {
		return "unknown"
	}
	w.left--
	if schemawalk.IsFalse(s) {
		return "never"
	}
	if s.Ref != "" {
		target := schemawalk.Ref(w.root, s.Ref)
		if target == nil || w.resolved[s.Ref] {
			return "unknown"
		}
		w.resolved[s.Ref] = true
		defer delete(w.resolved, s.Ref)
		return w.typeOf(target, depth)
	}
	if s.Const != nil {
		return literal(*s.Const)
	}
	if len(s.Enum) > 0 {
		lits := make([]string, 0, len(s.Enum))
		for _, v := range s.Enum {
			lits = append(lits, literal(v))
		}
		return union(lits)
	}
	if alts := append(slices.Clone(s.AnyOf), s.OneOf...); len(alts) > 0 {
		var ts []string
		for _, a := range alts {
			ts = append(ts, w.typeOf(a, depth))
		}
		return union(ts)
	}
	if len(s.AllOf) > 0 {
		var ts []string
		for _, a := range s.AllOf {
			if t := w.typeOf(a, depth); t != "unknown" {
				ts = append(ts, paren(t))
			}
		}
		if len(ts) == 0 {
			return "unknown"
		}
		return strings.Join(ts, " & ")
	}
	types := schemawalk.Types(s)
	if len(types) == 0 {
		switch {
		case s.Properties != nil || s.AdditionalProperties != nil:
			types = []string{"object"}
		case s.Items != nil || s.ItemsArray != nil || s.PrefixItems != nil:
			types = []string{"array"}
		default:
			return "unknown"
		}
	}
	var ts []string
	for _, t := range types {
		switch t {
		case "string":
			ts = append(ts, "string")
		case "number", "integer":
			ts = append(ts, "number")
		case "boolean":
			ts = append(ts, "boolean")
		case "null":
			ts = append(ts, "null")
		case "array":
			ts = append(ts, w.array(s, depth))
		case "object":
			ts = append(ts, w.object(s, depth))
		default:
			ts = append(ts, "unknown")
		}
	}
	return union(ts)
}

func (w *schemaWriter) array(s *jsonschema.Schema, depth int) string {
	tuple := s.PrefixItems
	if len(tuple) == 0 {
		tuple = s.ItemsArray // draft-07's items as a list
	}
	if len(tuple) > 0 || s.ItemsArray != nil {
		var ts []string
		for _, p := range tuple {
			ts = append(ts, w.typeOf(p, depth))
		}
		return "[" + strings.Join(ts, ", ") + ", ...unknown[]]"
	}
	if s.Items == nil {
		return "unknown[]"
	}
	return paren(w.typeOf(s.Items, depth)) + "[]"
}

func (w *schemaWriter) object(s *jsonschema.Schema, depth int) string {
	var extra string // the index signature's type, "" for none
	switch ap := s.AdditionalProperties; {
	case ap == nil || reflect.ValueOf(*ap).IsZero(): // absent, true or {}: all the same
		if len(s.Properties) == 0 {
			extra = "unknown"
		}
	case schemawalk.IsFalse(ap):
	default:
		extra = w.typeOf(ap, depth+1)
	}
	if len(s.Properties) == 0 {
		if extra == "" {
			return "{}"
		}
		return "{ [key: string]: " + extra + " }"
	}
	indent := strings.Repeat("  ", depth+1)
	var b strings.Builder
	b.WriteString("{\n")
	var memberTypes []string
	for _, name := range schemawalk.Properties(s) {
		p := s.Properties[name]
		writeDoc(&b, indent, propertyDoc(p))
		opt := "?"
		if slices.Contains(s.Required, name) {
			opt = ""
		}
		t := w.typeOf(p, depth+1)
		memberTypes = append(memberTypes, t)
		b.WriteString(indent + propertyKey(name) + opt + ": " + t + ";\n")
	}
	if extra != "" {
		// An index signature must admit every member's type.
		b.WriteString(indent + "[key: string]: " + union(append(memberTypes, extra, "undefined")) + ";\n")
	}
	b.WriteString(strings.Repeat("  ", depth) + "}")
	return b.String()
}

// propertyDoc is a property's doc comment: its description and the constraints the type
// cannot say.
func propertyDoc(p *jsonschema.Schema) []string {
	var lines []string
	if d := strings.TrimSpace(p.Description); d != "" {
		lines = append(lines, strings.Split(d, "\n")...)
	}
	if p.Ref != "" {
		return lines
	}
	var tags []string
	number := func(tag string, v *float64) {
		if v != nil {
			b, _ := json.Marshal(*v)
			tags = append(tags, "@"+tag+" "+string(b))
		}
	}
	count := func(tag string, v *int) {
		if v != nil {
			tags = append(tags, "@"+tag+" "+strconv.Itoa(*v))
		}
	}
	if p.Format != "" {
		tags = append(tags, "@format "+p.Format)
	}
	number("minimum", p.Minimum)
	number("maximum", p.Maximum)
	number("exclusiveMinimum", p.ExclusiveMinimum)
	number("exclusiveMaximum", p.ExclusiveMaximum)
	count("minLength", p.MinLength)
	count("maxLength", p.MaxLength)
	if p.Pattern != "" {
		tags = append(tags, "@pattern "+p.Pattern)
	}
	count("minItems", p.MinItems)
	count("maxItems", p.MaxItems)
	if len(p.Default) > 0 {
		tags = append(tags, "@default "+string(p.Default))
	}
	return append(lines, tags...)
}

// propertyKey writes a property name as an identifier when it is one, else quoted.
func propertyKey(name string) string {
	if isIdentifier(name) {
		return name
	}
	return quote(name)
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || r == '$' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z':
		case i > 0 && '0' <= r && r <= '9':
		default:
			return false
		}
	}
	return true
}

// literal renders a JSON value (as encoding/json decodes it) as a TypeScript literal type.
func literal(v any) string {
	switch x := v.(type) {
	case string:
		return quote(x)
	case nil:
		return "null"
	case bool, float64:
		b, _ := json.Marshal(x)
		return string(b)
	}
	return "unknown" // objects and arrays: no literal type
}

// union joins types with " | ", dropping duplicates; a union with unknown is unknown.
func union(ts []string) string {
	var out []string
	for _, t := range ts {
		if t == "unknown" {
			return "unknown"
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	if len(out) == 1 {
		return out[0]
	}
	for i := range out {
		out[i] = paren(out[i])
	}
	return strings.Join(out, " | ")
}

// paren wraps a type that holds a union or an intersection, so it can be an array's
// element or an operand.
func paren(t string) string {
	if strings.Contains(t, " | ") || strings.Contains(t, " & ") {
		return "(" + t + ")"
	}
	return t
}

// quote writes s as a JSON string, which TypeScript reads as the same string.
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}
