package main

import (
	"os"

	"github.com/cordisgo/harness/examples/clock"

	"github.com/cordisgo/harness/cmd/harness/app"
	"github.com/cordisgo/harness/ctx"
)

func main() {
	os.Exit(app.Main(app.Options{Plugins: map[string]ctx.PluginDef{"clock": clock.Plugin}}))
}
