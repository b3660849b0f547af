package ptc_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cordisgo/harness/plugins/ptc"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// toolsBody is the text of the tools object in d: its members, without the braces.
func toolsBody(t *testing.T, d string) string {
	t.Helper()
	const open, end = "\ndeclare const tools: {\n", "};\n"
	i := strings.Index(d, open)
	if i < 0 || !strings.HasSuffix(d, end) {
		t.Fatalf("no tools object in:\n%s", d)
	}
	return d[i+len(open) : len(d)-len(end)]
}

// signature renders one tool "t" with the input schema params and returns what stands
// between its name and its result type: "args: <type>" or "args?: <type>".
func signature(t *testing.T, params string) string {
	t.Helper()
	body := toolsBody(t, ptc.Declarations([]toolregistry.Info{{Name: "t", Parameters: json.RawMessage(params)}}))
	const open, end = `  "t"(`, "): Promise<ToolResult>;\n"
	if !strings.HasPrefix(body, open) || !strings.HasSuffix(body, end) {
		t.Fatalf("unexpected member:\n%s", body)
	}
	return body[len(open) : len(body)-len(end)]
}

// Every JSON-schema shape the generator reads, and the TypeScript it writes for it.
func TestDeclarationTypes(t *testing.T) {
	cases := []struct {
		name, params, want string
	}{
		// Missing or unusable schemas: the argument is optional and unknown, never an error.
		{"no schema", ``, `args?: unknown`},
		{"invalid JSON", `{"type":`, `args?: unknown`},
		{"empty schema", `{}`, `args?: unknown`},
		{"schema true", `true`, `args?: unknown`},
		{"schema false", `false`, `args?: never`},
		// A keyword of the wrong type makes the schema invalid as a whole, as jsonschema-go
		// reads it (the registry's Compile refuses such a schema, so no listed tool has one).
		{"array items invalid", `{"type":"array","items":7}`, `args?: unknown`},
		{"draft-07 tuple invalid", `{"type":"array","items":[1,2]}`, `args?: unknown`},
		{"additionalProperties invalid", `{"type":"object","properties":{"m":{"type":"number"}},"additionalProperties":3}`, `args?: unknown`},
		{"additionalProperties {} is true", `{"type":"object","properties":{"m":{"type":"number"}},"additionalProperties":{}}`,
			"args?: {\n    m?: number;\n  }"},

		// Primitive types.
		{"string", `{"type":"string"}`, `args?: string`},
		{"number", `{"type":"number"}`, `args?: number`},
		{"integer is a number", `{"type":"integer"}`, `args?: number`},
		{"boolean", `{"type":"boolean"}`, `args?: boolean`},
		{"null", `{"type":"null"}`, `args?: null`},
		{"unknown type name", `{"type":"date"}`, `args?: unknown`},
		{"type list", `{"type":["string","null"]}`, `args?: string | null`},
		{"type list with duplicates", `{"type":["integer","number","string"]}`, `args?: number | string`},
		{"type list with an unknown name", `{"type":["string","date"]}`, `args?: unknown`},
		{"OpenAPI nullable", `{"type":"string","nullable":true}`, `args?: string | null`},
		{"nullable already null", `{"type":["string","null"],"nullable":true}`, `args?: string | null`},
		{"nullable unknown stays unknown", `{"nullable":true}`, `args?: unknown`},

		// Literal types.
		{"string enum", `{"enum":["a","b"]}`, `args?: "a" | "b"`},
		{"enum with type", `{"type":"string","enum":["x"]}`, `args?: "x"`},
		{"mixed enum", `{"enum":["a",1,2.5,true,null]}`, `args?: "a" | 1 | 2.5 | true | null`},
		{"enum duplicates dropped", `{"enum":["a","a",1,1.0]}`, `args?: "a" | 1`},
		{"enum of an object is unknown", `{"enum":["a",{"k":1}]}`, `args?: unknown`},
		{"enum of an array is unknown", `{"enum":[[1]]}`, `args?: unknown`},
		{"const string", `{"const":"fixed"}`, `args?: "fixed"`},
		{"const number", `{"const":42}`, `args?: 42`},
		{"const wins over enum", `{"const":1,"enum":[1,2]}`, `args?: 1`},
		{"literal escaping", `{"enum":["say \"hi\"","a\\b","<&>","line\nbreak","é"]}`, `args?: "say \"hi\"" | "a\\b" | "<&>" | "line\nbreak" | "é"`},

		// Unions and intersections.
		{"anyOf", `{"anyOf":[{"type":"string"},{"type":"number"}]}`, `args?: string | number`},
		{"oneOf", `{"oneOf":[{"type":"boolean"},{"type":"null"}]}`, `args?: boolean | null`},
		{"anyOf and oneOf together", `{"anyOf":[{"type":"string"}],"oneOf":[{"type":"number"}]}`, `args?: string | number`},
		{"union with unknown is unknown", `{"anyOf":[{"type":"string"},{}]}`, `args?: unknown`},
		{"union duplicates dropped", `{"anyOf":[{"type":"string"},{"type":"string"}]}`, `args?: string`},
		{"nested union flattened by text", `{"anyOf":[{"type":["string","null"]},{"type":"number"}]}`, `args?: (string | null) | number`},
		{"allOf", `{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"type":"object","properties":{"b":{"type":"number"}}}]}`,
			"args?: {\n    a: string;\n  } & {\n    b?: number;\n  }"},
		{"allOf drops unknown parts", `{"allOf":[{},{"type":"string"}]}`, `args?: string`},
		{"allOf of unknowns is unknown", `{"allOf":[{},true]}`, `args?: unknown`},
		{"allOf parenthesises unions", `{"allOf":[{"type":["string","null"]},{"enum":["a"]}]}`, `args?: (string | null) & "a"`},

		// Arrays and tuples.
		{"array of strings", `{"type":"array","items":{"type":"string"}}`, `args?: string[]`},
		{"array without items", `{"type":"array"}`, `args?: unknown[]`},
		{"array of a union", `{"type":"array","items":{"type":["string","number"]}}`, `args?: (string | number)[]`},
		{"array of arrays", `{"type":"array","items":{"type":"array","items":{"type":"boolean"}}}`, `args?: boolean[][]`},
		{"array of anything", `{"type":"array","items":true}`, `args?: unknown[]`},
		{"items imply an array", `{"items":{"type":"number"}}`, `args?: number[]`},
		{"prefixItems tuple", `{"type":"array","prefixItems":[{"type":"string"},{"type":"number"}]}`, `args?: [string, number, ...unknown[]]`},
		{"prefixItems imply an array", `{"prefixItems":[{"type":"boolean"}]}`, `args?: [boolean, ...unknown[]]`},
		{"draft-07 tuple", `{"type":"array","items":[{"type":"string"},{"enum":[1,2]}]}`, `args?: [string, 1 | 2, ...unknown[]]`},

		// Objects.
		{"object without properties", `{"type":"object"}`, `args?: { [key: string]: unknown }`},
		{"closed empty object", `{"type":"object","additionalProperties":false}`, `args?: {}`},
		{"map of numbers", `{"type":"object","additionalProperties":{"type":"number"}}`, `args?: { [key: string]: number }`},
		{"additionalProperties implies an object", `{"additionalProperties":{"type":"string"}}`, `args?: { [key: string]: string }`},
		{"properties imply an object", `{"properties":{"a":{"type":"string"}}}`, "args?: {\n    a?: string;\n  }"},
		{"required argument", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, "args: {\n    a: string;\n  }"},
		{"required first, in the schema's order, then the rest sorted", `{"type":"object","properties":{"d":{"type":"string"},"c":{"type":"string"},"b":{"type":"string"},"a":{"type":"string"}},"required":["c","b","c"]}`,
			"args: {\n    c: string;\n    b: string;\n    a?: string;\n    d?: string;\n  }"},
		{"required but not a property", `{"type":"object","properties":{"a":{"type":"string"}},"required":["zz"]}`, "args: {\n    a?: string;\n  }"},
		{"keys that are not identifiers are quoted", `{"type":"object","properties":{"weird-key":{"type":"string"},"_ok$1":{"type":"string"},"1st":{"type":"string"},"":{"type":"string"},"ünï":{"type":"string"}}}`,
			"args?: {\n    \"\"?: string;\n    \"1st\"?: string;\n    _ok$1?: string;\n    \"weird-key\"?: string;\n    \"ünï\"?: string;\n  }"},
		{"nested object", `{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"string"}},"required":["b"]}},"required":["a"]}`,
			"args: {\n    a: {\n      b: string;\n    };\n  }"},
		{"index signature admits the members", `{"type":"object","properties":{"m":{"type":"number"}},"additionalProperties":{"type":"string"}}`,
			"args?: {\n    m?: number;\n    [key: string]: number | string | undefined;\n  }"},
		{"additionalProperties true with properties adds no index", `{"type":"object","properties":{"m":{"type":"number"}},"additionalProperties":true}`,
			"args?: {\n    m?: number;\n  }"},
		{"nullable object", `{"type":"object","properties":{"a":{"type":"string"}},"nullable":true}`, "args?: {\n    a?: string;\n  } | null"},
		{"object or null", `{"type":["object","null"],"additionalProperties":{"type":"string"}}`, `args?: { [key: string]: string } | null`},

		// References.
		{"$defs", `{"$ref":"#/$defs/s","$defs":{"s":{"type":"string"}}}`, `args?: string`},
		{"definitions", `{"$ref":"#/definitions/n","definitions":{"n":{"type":"number"}}}`, `args?: number`},
		{"escaped pointer", `{"$ref":"#/$defs/a~1b~0c","$defs":{"a/b~c":{"type":"boolean"}}}`, `args?: boolean`},
		{"missing target", `{"$ref":"#/$defs/nope"}`, `args?: unknown`},
		{"remote reference", `{"$ref":"https://example.com/s.json"}`, `args?: unknown`},
		{"ref wins over type", `{"$ref":"#/$defs/s","type":"number","$defs":{"s":{"type":"string"}}}`, `args?: string`},
		{"recursion becomes unknown where it recurses", `{"type":"object","properties":{"node":{"$ref":"#/$defs/node"}},"$defs":{"node":{"type":"object","properties":{"child":{"$ref":"#/$defs/node"},"v":{"type":"integer"}}}}}`,
			"args?: {\n    node?: {\n      child?: unknown;\n      v?: number;\n    };\n  }"},
		{"root reference", `{"type":"object","properties":{"self":{"$ref":"#"}}}`, "args?: {\n    self?: {\n      self?: unknown;\n    };\n  }"},
		{"the same definition twice, side by side", `{"type":"object","properties":{"a":{"$ref":"#/$defs/s"},"b":{"$ref":"#/$defs/s"}},"$defs":{"s":{"type":"string"}}}`,
			"args?: {\n    a?: string;\n    b?: string;\n  }"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := signature(t, c.params); got != c.want {
				t.Errorf("schema %s\ngot:\n%s\nwant:\n%s", c.params, got, c.want)
			}
		})
	}
}

// Objects nested deeper than 12 levels become unknown (each level indents the text);
// arrays nest without a bound of their own (their text grows with the schema's).
func TestDeclarationDepth(t *testing.T) {
	s := `{"type":"string"}`
	for range 20 {
		s = `{"type":"array","items":` + s + `}`
	}
	got := signature(t, s)
	if got != "args?: string"+strings.Repeat("[]", 20) {
		t.Errorf("20 nested arrays: %s", got)
	}
	o := `{"type":"string"}`
	for range 20 {
		o = `{"type":"object","properties":{"p":` + o + `},"required":["p"]}`
	}
	got = signature(t, o)
	if strings.Count(got, "p: ") != 12 || !strings.Contains(got, "p: unknown;") || strings.Contains(got, "string") {
		t.Errorf("20 nested objects:\n%s", got)
	}
}

// Constraints a type cannot say are JSDoc tags on the property, after its description.
func TestDeclarationPropertyDocs(t *testing.T) {
	got := signature(t, `{"type":"object","properties":{
		"x":{"type":"string","description":"line one\nline two  \n\n","format":"uri","minLength":1,"maxLength":9,"pattern":"^a*/$","default":"a"},
		"n":{"type":"integer","minimum":0,"maximum":10,"exclusiveMinimum":-1,"exclusiveMaximum":11.5},
		"l":{"type":"array","minItems":1,"maxItems":3},
		"r":{"$ref":"#/$defs/s","description":"via ref","minimum":3},
		"b":true,
		"d":{"type":"boolean","description":"one line","default":false}},
		"$defs":{"s":{"type":"string"}}}`)
	want := `args?: {
    b?: unknown;
    /**
     * one line
     * @default false
     */
    d?: boolean;
    /**
     * @minItems 1
     * @maxItems 3
     */
    l?: unknown[];
    /**
     * @minimum 0
     * @maximum 10
     * @exclusiveMinimum -1
     * @exclusiveMaximum 11.5
     */
    n?: number;
    /** via ref */
    r?: string;
    /**
     * line one
     * line two
     * @format uri
     * @minLength 1
     * @maxLength 9
     * @pattern ^a*\/$
     * @default "a"
     */
    x?: string;
  }`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// The tools object: names quoted and sorted, doc comments from descriptions (escaped, a
// server line for MCP tools), the result typed from the output schema, run_code left out.
func TestDeclarationMembers(t *testing.T) {
	tools := []toolregistry.Info{
		{Name: "mcp__gh__create_issue", Description: "Creates an issue.\n\nUse */ carefully.  \n\n", Meta: map[string]string{"server": "gh"},
			Parameters:   json.RawMessage(`{"type":"object","properties":{"title":{"type":"string","description":"The title"}},"required":["title"]}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"number":{"type":"integer","description":"the issue's number"}},"required":["number"]}`)},
		{Name: "mcp__gh__list_issues", Description: "Lists issues.", Meta: map[string]string{"server": "gh", "readOnlyHint": "true"}},
		{Name: "mcp__gh__delete", Description: "  ", Meta: map[string]string{"server": "gh", "readOnlyHint": "true", "destructiveHint": "true"}},
		{Name: "local", Description: "A plugin tool."},
		{Name: `odd "name"\`, Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
		{Name: toolregistry.ReservedRunCode, Description: "never declared"},
	}
	d := ptc.Declarations(tools)
	want := `  /** A plugin tool. */
  "local"(args?: unknown): Promise<ToolResult>;
  /**
   * Creates an issue.
   *
   * Use *\/ carefully.
   * @server gh
   */
  "mcp__gh__create_issue"(args: {
    /** The title */
    title: string;
  }): Promise<StructuredResult<{
    /** the issue's number */
    number: number;
  }>>;
  /** @server gh */
  "mcp__gh__delete"(args?: unknown): Promise<ToolResult>;
  /**
   * Lists issues.
   * @server gh (read-only)
   */
  "mcp__gh__list_issues"(args?: unknown): Promise<ToolResult>;
  "odd \"name\"\\"(args?: { [key: string]: unknown }): Promise<ToolResult>;
`
	if got := toolsBody(t, d); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if strings.Contains(d, "run_code") || strings.Contains(d, "never declared") {
		t.Error("run_code is declared")
	}
	// The prelude declares what the members and programs use.
	for _, decl := range []string{"type ContentBlock =", "interface ToolResult", "interface StructuredResult<S>", "class ToolCallError extends Error",
		"declare function atob(", "declare function btoa(", "declare function sleep(ms: number): Promise<void>;", "declare function describe(...names: string[]): string;", "declare const console: {"} {
		if !strings.Contains(d, decl) {
			t.Errorf("the prelude lacks %q", decl)
		}
	}
	// The same tools in another order give the same bytes; no tools (or only run_code) give
	// nothing.
	rev := append([]toolregistry.Info(nil), tools...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	if ptc.Declarations(rev) != d {
		t.Error("the order of the tools changed the text")
	}
	if got := ptc.Declarations(nil); got != "" {
		t.Errorf("no tools: %q", got)
	}
	if got := ptc.Declarations(tools[len(tools)-1:]); got != "" {
		t.Errorf("only run_code: %q", got)
	}
	// The caller's slice is left as it was.
	if tools[0].Name != "mcp__gh__create_issue" || tools[len(tools)-1].Name != toolregistry.ReservedRunCode {
		t.Error("Declarations reordered its argument")
	}
}

// A schema that expands exponentially through its definitions (each refers twice to the
// next) gives a bounded declaration, fast: a server cannot make the prompt huge or hang its
// assembly.
func TestDeclarationExpansionBounded(t *testing.T) {
	const n = 40
	var defs []string
	for i := range n {
		defs = append(defs, fmt.Sprintf(`"d%d":{"anyOf":[{"$ref":"#/$defs/d%d"},{"type":"array","items":{"$ref":"#/$defs/d%d"}}]}`, i, i+1, i+1))
	}
	defs = append(defs, fmt.Sprintf(`"d%d":{"type":"object","properties":{"leaf":{"type":"string"}}}`, n))
	params := `{"type":"object","properties":{"a":{"$ref":"#/$defs/d0"},"b":{"type":"string"}},"required":["b"],"$defs":{` + strings.Join(defs, ",") + `}}`
	d := ptc.Declarations([]toolregistry.Info{{Name: "t", Parameters: json.RawMessage(params)}})
	if len(d) > 200_000 {
		t.Fatalf("the declaration of a %d-byte schema is %d bytes", len(params), len(d))
	}
	// What the budget leaves out is unknown, and the members after it are still there.
	body := toolsBody(t, d)
	if !strings.Contains(body, "a?: unknown;") || !strings.Contains(body, "    b: string;\n") {
		t.Errorf("members:\n%.2000s", body)
	}
}
