package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/cordisgo/harness/cmd/harness/app"
	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/examples/clock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The binary's options mount the plugin from a profile row (use: clock), next to the
// built-in plugins: here the cli profile and one row added with --set.
func Example() {
	opts := app.Options{Plugins: map[string]ctx.PluginDef{"clock": clock.Plugin}}
	var stdout, stderr strings.Builder
	code := opts.Run(context.Background(), []string{"-p", "cli", "--set", "plugins.clock.use=clock", "tools", "list"},
		strings.NewReader(""), &stdout, &stderr, nil)
	fmt.Printf("exit %d, stderr %q\n", code, stderr.String())
	for _, line := range strings.Split(stdout.String(), "\n") {
		if strings.HasPrefix(line, "now ") {
			fmt.Println(strings.Join(strings.Fields(line), " "))
		}
	}
	// Output:
	// exit 0, stderr ""
	// now - Returns the current time.
}
