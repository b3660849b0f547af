package toolregistry_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// Unknown tools suggest the visible names that are close, '_' and '-' counting as near
// equal; a restriction's hidden tools are never suggested.
func TestUnknownToolSuggestions(t *testing.T) {
	root, reg := newRegistry(t, nil)
	for _, name := range []string{"mcp__ev__get-sum", "mcp__ev__get-env", "mcp__ev__echo", "mcp__fs__read_file", "other"} {
		if _, err := reg.Register(root, toolregistry.Tool{Name: name, Execute: echoArgs}); err != nil {
			t.Fatal(err)
		}
	}
	agent := ctxtest.MountActive(t, root, noopDef("agent"), nil).Context().Layered()
	if _, err := reg.Restrict(agent, nil, []string{"mcp__fs__*"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ call, want string }{
		{"mcp__ev__get_sum", `unknown tool "mcp__ev__get_sum"; did you mean "mcp__ev__get-sum"?`},
		{"MCP__EV__ECHO", `unknown tool "MCP__EV__ECHO"`}, // every letter differs in case: too far
		{"mcp__ev__get-su", `unknown tool "mcp__ev__get-su"; did you mean "mcp__ev__get-sum" or "mcp__ev__get-env"?`},
		{"get-sum", `unknown tool "get-sum"; did you mean "mcp__ev__get-sum"?`},
		{"mcp__fs__read-file", `unknown tool "mcp__fs__read-file"; did you mean "mcp__fs__read_file"?`},
		{"nothing_like_it", `unknown tool "nothing_like_it"`},
	} {
		_, err := reg.Execute(root, root, tc.call, nil, toolregistry.ExecOptions{})
		var te *toolregistry.ToolError
		if !errors.As(err, &te) || te.Code != toolregistry.CodeUnknownTool || te.Msg != tc.want {
			t.Errorf("%s: %v, want %q", tc.call, err, tc.want)
		}
	}
	// From the agent, the masked server's tools are not visible, so not suggested.
	_, err := reg.Execute(agent, agent, "mcp__fs__read-file", nil, toolregistry.ExecOptions{})
	var te *toolregistry.ToolError
	if !errors.As(err, &te) || te.Msg != `unknown tool "mcp__fs__read-file"` {
		t.Errorf("from the agent: %v", err)
	}
}

// Argument errors name the argument and say what was expected in plain words, for every
// kind of violation, and keep jsonschema-go's error underneath.
func TestArgumentMessages(t *testing.T) {
	root, reg := newRegistry(t, nil)
	params := json.RawMessage(`{"type":"object","properties":{
		"a":{"type":"number"},
		"b":{"type":"integer","minimum":2,"maximum":9},
		"e":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1},
		"m":{"type":"integer","multipleOf":3},
		"s":{"type":"string","minLength":2,"maxLength":3,"pattern":"^[a-z]+$"},
		"k":{"enum":["p","q"]},
		"c":{"const":true},
		"l":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":2},
		"o":{"type":"object","properties":{"x":{"type":"boolean"}},"required":["x"],"additionalProperties":false},
		"n":{"type":["string","null"]},
		"v":{"anyOf":[{"type":"string"},{"type":"integer"}]},
		"r":{"$ref":"#/$defs/pos"},
		"u":{"type":"array","uniqueItems":true}},
		"$defs":{"pos":{"type":"integer","minimum":1}},
		"required":["a"],"additionalProperties":false}`)
	if _, err := reg.Register(root, toolregistry.Tool{Name: "t", Parameters: params, Execute: echoArgs}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ args, arg, want string }{
		{`{}`, "", `missing required argument "a"`},
		{`{"a":"1"}`, "a", `argument "a": expected a number, got a string`},
		{`{"a":1,"b":1}`, "b", `argument "b": must be at least 2, got 1`},
		{`{"a":1,"b":10}`, "b", `argument "b": must be at most 9, got 10`},
		{`{"a":1,"b":2.5}`, "b", `argument "b": expected an integer, got 2.5`},
		{`{"a":1,"e":0}`, "e", `argument "e": must be greater than 0, got 0`},
		{`{"a":1,"e":1}`, "e", `argument "e": must be less than 1, got 1`},
		{`{"a":1,"m":4}`, "m", `argument "m": must be a multiple of 3, got 4`},
		{`{"a":1,"s":"x"}`, "s", `argument "s": must be at least 2 characters long, got 1`},
		{`{"a":1,"s":"wxyz"}`, "s", `argument "s": must be at most 3 characters long, got 4`},
		{`{"a":1,"s":"AB"}`, "s", `argument "s": must match the pattern "^[a-z]+$", got "AB"`},
		{`{"a":1,"k":"r"}`, "k", `argument "k": must be one of "p", "q", got "r"`},
		{`{"a":1,"c":false}`, "c", `argument "c": must be true, got false`},
		{`{"a":1,"l":[]}`, "l", `argument "l": must have at least 1 item, got 0`},
		{`{"a":1,"l":["x","y","z"]}`, "l", `argument "l": must have at most 2 items, got 3`},
		{`{"a":1,"l":["x",2]}`, "l[1]", `argument "l[1]": expected a string, got 2`},
		{`{"a":1,"o":{}}`, "o", `argument "o": missing required property "x"`},
		{`{"a":1,"o":{"x":"yes"}}`, "o.x", `argument "o.x": expected a boolean, got a string`},
		{`{"a":1,"o":{"x":true,"y":1}}`, "o", `argument "o": unexpected property "y" (expected "x")`},
		{`{"a":1,"n":1}`, "n", `argument "n": expected a string or null, got 1`},
		{`{"a":1,"v":1.5}`, "v", `argument "v": expected a string or an integer, got 1.5`},
		{`{"a":1,"z":1}`, "", `unexpected argument "z" (expected "a", "b", "c", "e", "k", "l", "m", "n", "o", "r", "s", "u", "v")`},
		// uniqueItems is not explained: jsonschema-go's own message, at the argument its error names.
		{`{"a":1,"u":[1,1]}`, "u", `argument "u": uniqueItems: array items 1 and 0 are equal`},
		{`{"a":1,"r":0}`, "r", `argument "r": must be at least 1, got 0`},
	} {
		res, err := reg.Execute(root, root, "t", json.RawMessage(tc.args), toolregistry.ExecOptions{})
		var te *toolregistry.ToolError
		var ae *toolregistry.ArgumentError
		if !errors.As(err, &te) || te.Code != toolregistry.CodeInvalidArgs || !errors.As(err, &ae) {
			t.Errorf("%s: %v, want an ArgumentError", tc.args, err)
			continue
		}
		if te.Msg != "invalid arguments: "+tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.args, te.Msg, "invalid arguments: "+tc.want)
		}
		if ae.Argument != tc.arg || ae.Err == nil || errors.Unwrap(ae) != ae.Err { //nolint:errorlint // Unwrap returns the cause itself
			t.Errorf("%s: argument %q (want %q), cause %v", tc.args, ae.Argument, tc.arg, ae.Err)
		}
		if res.Text() != "Error: "+te.Msg {
			t.Errorf("%s: the model sees %q", tc.args, res.Text())
		}
	}
}

// noopDef defines a plugin that does nothing, to serve as an agent scope.
func noopDef(name string) ctx.PluginDef {
	return ctx.Define(ctx.Meta{Name: name}, func(*ctx.Context, struct{}) error { return nil })
}
