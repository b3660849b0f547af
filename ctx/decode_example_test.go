package ctx_test

import (
	"fmt"
	"reflect"

	"github.com/cordisgo/harness/ctx"
)

// ServerConfig is a plugin configuration with defaults and a check of its own.
type ServerConfig struct {
	Addr    string `json:"addr"`
	Retries int    `json:"retries"`
}

// Interface guards: the compiler checks that the capabilities are implemented.
var (
	_ ctx.Defaulter = (*ServerConfig)(nil)
	_ ctx.Validator = ServerConfig{}
)

func (c *ServerConfig) Default() { c.Addr, c.Retries = "127.0.0.1:0", 3 }

func (c ServerConfig) Validate() error {
	var p ctx.Problems
	if c.Retries < 0 {
		p.Add("retries", "must not be negative, got %d", c.Retries)
	}
	return p.Err()
}

// Decode applies the defaults, decodes the keys strictly and validates; every problem names
// its key path, and all of them are reported at once.
func ExampleDecode() {
	cfg, err := ctx.Decode[ServerConfig](map[string]any{"retries": 5})
	fmt.Println(cfg.Addr, cfg.Retries, err)

	_, err = ctx.Decode[ServerConfig](map[string]any{"Addr": "x", "retries": "many"})
	fmt.Println(err)

	_, err = ctx.Decode[ServerConfig](map[string]any{"retries": -1})
	fmt.Println(err)
	// Output:
	// 127.0.0.1:0 5 <nil>
	// key "Addr": unknown key (did you mean "addr"?)
	// key "retries": expected an integer, got string
	// key "retries": must not be negative, got -1
}

// Require checks the required strings of a remote method's parameters: each one missing is
// a problem at its key.
func ExampleProblems_Require() {
	validate := func(server, uri string) error {
		var p ctx.Problems
		p.Require("server", server, "the MCP server's name")
		p.Require("uri", uri, "the resource's URI")
		return p.Err()
	}
	fmt.Println(validate("docs", "docs://guide"))
	fmt.Println(validate("docs", ""))
	fmt.Println(validate("", ""))
	// Output:
	// <nil>
	// key "uri": required: the resource's URI
	// key "server": required: the MCP server's name
	// key "uri": required: the resource's URI
}

// PlaceConfigErrors moves the problems of a decoded value into the document they came
// from: its name, the key path of the value in it, and the lines.
func ExamplePlaceConfigErrors() {
	_, err := ctx.Decode[ServerConfig](map[string]any{"retries": -1})
	err = ctx.PlaceConfigErrors(err, `profile "my.yaml"`, "my.yaml", "", "plugins.api.config", func(key string) int {
		return map[string]int{"plugins.api.config.retries": 12}[key]
	})
	fmt.Println(err)
	// Output:
	// profile "my.yaml": line 12: key "plugins.api.config.retries": must not be negative, got -1
}

// KindName names a configuration value's type as the documents and messages do.
func ExampleKindName() {
	for _, v := range []any{"", 3, 1.5, true, []string{}, map[string][]int{}, &ServerConfig{}} {
		fmt.Println(ctx.KindName(reflect.TypeOf(v)))
	}
	// Output:
	// string
	// integer
	// number
	// boolean
	// list of string
	// map of list of integer
	// object
}
