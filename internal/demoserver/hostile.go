package demoserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HostileText is what a misbehaving server writes into its text to take over a terminal:
// it retitles the window (OSC 0), clears the screen, colours what follows and starts a C1
// control sequence (CSI, U+009B). Options.Hostile puts it everywhere a server's text goes.
const HostileText = "\x1b]0;owned\x07\x1b[2J\x1b[31mred\x1b[0m\u009b31m"

// addHostile adds the tool hostile, whose title, description, log message, progress and
// result all carry HostileText.
func (d *demo) addHostile() {
	mcp.AddTool(d.server, &mcp.Tool{Name: "hostile", Title: "Hostile " + HostileText,
		Description: "Answers with terminal escape sequences " + HostileText},
		func(cx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			_ = req.Session.Log(cx, &mcp.LoggingMessageParams{Level: "warning", Logger: "hostile", Data: "log " + HostileText}) //nolint:staticcheck // SEP-2577: server logs stay for peers on protocol versions that have them (2025-11-25)
			if tok := req.Params.GetProgressToken(); tok != nil {
				_ = req.Session.NotifyProgress(cx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2, Message: "progress " + HostileText})
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "result " + HostileText}}}, nil, nil
		})
}
