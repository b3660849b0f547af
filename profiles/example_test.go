package profiles_test

import (
	"fmt"
	"os"

	"github.com/cordisgo/harness/profiles"
)

func ExampleLoad() {
	profile := `
extends: cli
plugins:
  github:
    use: mcpclient
    config:
      serverName: github
      transport: stdio
      command: github-mcp-server
      args: [stdio]
  reviewer:
    plugins:
      fs:
        use: mcpclient
        config: {serverName: fs, transport: stdio, command: mcp-fs}
`
	p, err := profiles.Load(profiles.LoadOptions{
		Name:    "agent.yaml",
		Data:    []byte(profile),
		Sets:    []string{"plugins.github.config.toolCallTimeoutMs=5000"},
		Environ: []string{"HARNESS_PLUGINS__REVIEWER__ENABLED=false"},
		Catalog: func(use string) bool { return use != "nope" },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	var show func(rows []profiles.Row, indent string)
	show = func(rows []profiles.Row, indent string) {
		for _, r := range rows {
			fmt.Printf("%s%s use=%q enabled=%v config=%d keys\n", indent, r.Path, r.Use, r.Enabled, len(r.Config))
			show(r.Rows, indent+"  ")
		}
	}
	show(p.Rows, "")

	// A bad value names the file, the layer, the key and what was expected.
	_, err = profiles.Load(profiles.LoadOptions{
		Name: "agent.yaml",
		Data: []byte(profile),
		Sets: []string{"plugins.github.enabled=yes"},
	})
	fmt.Println(err)
	// Output:
	// plugins.tools use="toolregistry" enabled=true config=0 keys
	// plugins.prompt use="sysprompt" enabled=true config=0 keys
	// plugins.resources use="mcpresources" enabled=true config=0 keys
	// plugins.prompts use="mcpprompts" enabled=true config=0 keys
	// plugins.model use="model" enabled=true config=0 keys
	// plugins.manager use="mcpmanager" enabled=true config=0 keys
	// plugins.remote use="remote" enabled=true config=1 keys
	// plugins.console use="console" enabled=true config=0 keys
	// plugins.agent use="agent" enabled=true config=0 keys
	// plugins.github use="mcpclient" enabled=true config=5 keys
	// plugins.reviewer use="" enabled=false config=0 keys
	//   plugins.reviewer.plugins.fs use="mcpclient" enabled=true config=3 keys
	// profile "agent.yaml": --set plugins.github.enabled: key "plugins.github.enabled": expected a boolean, got string "yes"
}

func ExampleProfile_YAML() {
	p, err := profiles.Load(profiles.LoadOptions{
		Data: []byte("plugins:\n  api:\n    use: mcpclient\n    config:\n      url: https://mcp.example.com\n      headers: {Authorization: Bearer abc}\n"),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, _ := p.YAML(profiles.Redact)
	_, _ = os.Stdout.Write(out)
	// Output:
	// # Profile "<input>", merged.
	// # Layers: <input>.
	// plugins:
	//   api:
	//     use: mcpclient
	//     config:
	//       url: https://mcp.example.com
	//       headers:
	//         Authorization: '[redacted]'
}
