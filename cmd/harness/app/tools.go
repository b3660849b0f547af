package app

import (
	"context"
	"encoding/json"

	"github.com/spf13/cobra"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/hostclient"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

func (a *invocation) toolsCommand() *cobra.Command {
	var listJSON, callJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List the tools visible at the root: name, server, description",
		Args:  noArgs,
		RunE: action(func(cmd *cobra.Command, _ []string) error {
			return a.withCaller(cmd.Context(), func(cx context.Context, c *hostclient.Caller) error {
				tools, err := host.MethodTools.Call(cx, c, struct{}{})
				if err != nil {
					return refused(cx, c, "", err)
				}
				if listJSON {
					return a.out().JSON(tools)
				}
				return a.out().Tools(tools)
			})
		}),
	}
	list.Flags().BoolVar(&listJSON, "json", false, "print the tools as JSON, with their schemas")

	call := &cobra.Command{
		Use:   "call NAME [JSON]",
		Short: `Call a tool through the registry with JSON arguments (default {}; "-": read stdin)`,
		Long: `Call a tool through the registry's pipeline (validation, policy, timeout) and
print the model-facing content, or with --json the canonical result. A tool
error exits with status 1. With a host running (harness run), the call runs
there; --local runs it in this process.`,
		Example: `  harness tools call mcp__demo__add '{"a": 2, "b": 40}'
  harness tools call mcp__demo__echo '{"text": "hi"}' --json
  echo '{"text": "from stdin"}' | harness tools call mcp__demo__echo -
  harness --elicitation defaults tools call mcp__demo__ask    # off a terminal: answer with the defaults`,
		Args: args(cobra.RangeArgs(1, 2)),
		RunE: action(func(cmd *cobra.Command, argv []string) error {
			name, raw, err := a.callArgs(argv)
			if err != nil {
				return err
			}
			return a.withCaller(cmd.Context(), func(cx context.Context, c *hostclient.Caller) error {
				out, err := host.MethodCallTool.Call(cx, c, host.CallParams{Tool: name, Args: raw})
				if err != nil {
					return refused(cx, c, "", err)
				}
				return a.out().Call(out, callJSON)
			})
		}),
	}
	call.Flags().BoolVar(&callJSON, "json", false, "print the canonical result as JSON (the server's own result for MCP tools)")
	return group("tools", "List, search and call tools", list, a.toolsSearchCommand(), call)
}

// callArgs checks the arguments of tools call: a name and a JSON object
// (from the command line, or stdin for "-").
func (a *invocation) callArgs(argv []string) (string, json.RawMessage, error) {
	name := argv[0]
	if !toolregistry.ValidName(name) {
		return "", nil, usageErrorf("tools call: %q is not a tool name", name)
	}
	raw := []byte("{}")
	if len(argv) == 2 {
		raw = []byte(argv[1])
		if argv[1] == "-" {
			b, err := readAll(a.stdin)
			if err != nil {
				return "", nil, usageErrorf("tools call: reading arguments from stdin: %v", err)
			}
			raw = b
		}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return "", nil, usageErrorf("tools call %s: arguments must be a JSON object, like '{\"text\": \"hi\"}'", name)
	}
	return name, raw, nil
}
