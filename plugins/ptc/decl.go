package ptc

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

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
	tools = slices.DeleteFunc(slices.Clone(tools), func(in toolregistry.Info) bool { return in.Name == toolregistry.ReservedRunCode })
	if len(tools) == 0 {
		return ""
	}
	slices.SortFunc(tools, func(a, b toolregistry.Info) int { return strings.Compare(a.Name, b.Name) })
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
	b.WriteString("  " + quote(in.Name) + "(args" + optional + ": " + argType + "): Promise<" + result + ">;\n")
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

// schema is the part of JSON Schema the declarations read.
type schema struct {
	Ref                  string             `json:"$ref"`
	Type                 json.RawMessage    `json:"type"`
	Description          string             `json:"description"`
	Format               string             `json:"format"`
	Enum                 []json.RawMessage  `json:"enum"`
	Const                json.RawMessage    `json:"const"`
	Properties           map[string]*schema `json:"properties"`
	Required             []string           `json:"required"`
	AdditionalProperties json.RawMessage    `json:"additionalProperties"`
	Items                json.RawMessage    `json:"items"`
	PrefixItems          []*schema          `json:"prefixItems"`
	AnyOf                []*schema          `json:"anyOf"`
	OneOf                []*schema          `json:"oneOf"`
	AllOf                []*schema          `json:"allOf"`
	Nullable             bool               `json:"nullable"`
	Default              json.RawMessage    `json:"default"`
	Defs                 map[string]*schema `json:"$defs"`
	Definitions          map[string]*schema `json:"definitions"`

	Minimum          json.RawMessage `json:"minimum"`
	Maximum          json.RawMessage `json:"maximum"`
	ExclusiveMinimum json.RawMessage `json:"exclusiveMinimum"`
	ExclusiveMaximum json.RawMessage `json:"exclusiveMaximum"`
	MinLength        json.RawMessage `json:"minLength"`
	MaxLength        json.RawMessage `json:"maxLength"`
	Pattern          string          `json:"pattern"`
	MinItems         json.RawMessage `json:"minItems"`
	MaxItems         json.RawMessage `json:"maxItems"`

	boolean *bool // the schema was true or false
}

func (s *schema) UnmarshalJSON(b []byte) error {
	switch t := string(bytes.TrimSpace(b)); t {
	case "true", "false":
		v := t == "true"
		*s = schema{boolean: &v}
		return nil
	}
	type plain schema
	return json.Unmarshal(b, (*plain)(s))
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
	root     *schema
	resolved map[string]bool // $refs being expanded (a cycle becomes unknown)
	left     int             // the nodes the type may still spell out (maxNodes)
}

func newSchemaWriter(raw json.RawMessage) *schemaWriter {
	w := &schemaWriter{root: &schema{}, resolved: map[string]bool{}, left: maxNodes}
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, w.root); err != nil {
			w.root = &schema{}
		}
	}
	return w
}

// resolve follows a local $ref ("#/$defs/X", "#/definitions/X", "#").
func (w *schemaWriter) resolve(ref string) *schema {
	switch {
	case ref == "#":
		return w.root
	case strings.HasPrefix(ref, "#/$defs/"):
		return w.root.Defs[unescapePointer(ref[len("#/$defs/"):])]
	case strings.HasPrefix(ref, "#/definitions/"):
		return w.root.Definitions[unescapePointer(ref[len("#/definitions/"):])]
	}
	return nil
}

func unescapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

// types returns the JSON types the schema allows ("" entries dropped).
func (s *schema) types() []string {
	if len(s.Type) == 0 {
		return nil
	}
	var one string
	if json.Unmarshal(s.Type, &one) == nil {
		return []string{one}
	}
	var many []string
	_ = json.Unmarshal(s.Type, &many)
	return many
}

// typeOf renders the TypeScript type of s, indented for depth (object members at depth+1).
func (w *schemaWriter) typeOf(s *schema, depth int) string {
	t := w.bare(s, depth)
	if s != nil && s.Nullable && t != "unknown" && !strings.HasSuffix(t, "| null") {
		t = union([]string{t, "null"})
	}
	return t
}

func (w *schemaWriter) bare(s *schema, depth int) string {
	if s == nil || depth > maxDepth || w.left <= 0 {
		return "unknown"
	}
	w.left--
	if s.boolean != nil {
		if *s.boolean {
			return "unknown"
		}
		return "never"
	}
	if s.Ref != "" {
		target := w.resolve(s.Ref)
		if target == nil || w.resolved[s.Ref] {
			return "unknown"
		}
		w.resolved[s.Ref] = true
		defer delete(w.resolved, s.Ref)
		return w.typeOf(target, depth)
	}
	if len(s.Const) > 0 {
		return literal(s.Const)
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
	types := s.types()
	if len(types) == 0 {
		switch {
		case s.Properties != nil || len(s.AdditionalProperties) > 0:
			types = []string{"object"}
		case len(s.Items) > 0 || s.PrefixItems != nil:
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

func (w *schemaWriter) array(s *schema, depth int) string {
	if len(s.PrefixItems) > 0 {
		var ts []string
		for _, p := range s.PrefixItems {
			ts = append(ts, w.typeOf(p, depth))
		}
		return "[" + strings.Join(ts, ", ") + ", ...unknown[]]"
	}
	if len(s.Items) == 0 {
		return "unknown[]"
	}
	var items []*schema
	if bytes.HasPrefix(bytes.TrimSpace(s.Items), []byte("[")) { // draft-07 tuple
		if json.Unmarshal(s.Items, &items) == nil {
			var ts []string
			for _, p := range items {
				ts = append(ts, w.typeOf(p, depth))
			}
			return "[" + strings.Join(ts, ", ") + ", ...unknown[]]"
		}
		return "unknown[]"
	}
	item := &schema{}
	if json.Unmarshal(s.Items, item) != nil {
		return "unknown[]"
	}
	return paren(w.typeOf(item, depth)) + "[]"
}

func (w *schemaWriter) object(s *schema, depth int) string {
	var extra string // the index signature's type, "" for none
	switch ap := bytes.TrimSpace(s.AdditionalProperties); {
	case len(ap) == 0 || string(ap) == "true":
		if len(s.Properties) == 0 {
			extra = "unknown"
		}
	case string(ap) == "false":
	default:
		sub := &schema{}
		if json.Unmarshal(ap, sub) == nil {
			extra = w.typeOf(sub, depth+1)
		} else {
			extra = "unknown"
		}
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
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range s.Properties {
			if !yield(k) {
				return
			}
		}
	})
	// Required properties first, in the schema's required order, then the others sorted.
	var ordered []string
	for _, r := range s.Required {
		if _, ok := s.Properties[r]; ok && !slices.Contains(ordered, r) {
			ordered = append(ordered, r)
		}
	}
	for _, n := range names {
		if !slices.Contains(ordered, n) {
			ordered = append(ordered, n)
		}
	}
	var memberTypes []string
	for _, name := range ordered {
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
func propertyDoc(p *schema) []string {
	if p == nil {
		return nil
	}
	var lines []string
	if d := strings.TrimSpace(p.Description); d != "" {
		lines = append(lines, strings.Split(d, "\n")...)
	}
	if p.Ref != "" || p.boolean != nil {
		return lines
	}
	var tags []string
	add := func(tag string, v json.RawMessage) {
		if len(v) > 0 {
			tags = append(tags, "@"+tag+" "+string(v))
		}
	}
	if p.Format != "" {
		tags = append(tags, "@format "+p.Format)
	}
	add("minimum", p.Minimum)
	add("maximum", p.Maximum)
	add("exclusiveMinimum", p.ExclusiveMinimum)
	add("exclusiveMaximum", p.ExclusiveMaximum)
	add("minLength", p.MinLength)
	add("maxLength", p.MaxLength)
	if p.Pattern != "" {
		tags = append(tags, "@pattern "+p.Pattern)
	}
	add("minItems", p.MinItems)
	add("maxItems", p.MaxItems)
	add("default", p.Default)
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

// literal renders a JSON value as a TypeScript literal type.
func literal(v json.RawMessage) string {
	var x any
	if json.Unmarshal(v, &x) != nil {
		return "unknown"
	}
	switch x := x.(type) {
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
