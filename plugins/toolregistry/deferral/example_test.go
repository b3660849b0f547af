package deferral_test

import (
	"encoding/json"
	"fmt"

	"github.com/cordisgo/harness/plugins/toolregistry/deferral"
	"github.com/cordisgo/harness/toolsearch"
)

// A call through call_tool names the tool and its arguments; arguments written as a JSON
// string, as models sometimes write them, are taken as the object.
func ExampleParseCall() {
	name, args, err := deferral.ParseCall(json.RawMessage(`{"name": "mcp__github__create_issue", "arguments": "{\"title\": \"Crash on start\"}"}`))
	fmt.Println(name, string(args), err)
	// Output: mcp__github__create_issue {"title": "Crash on start"} <nil>
}

// What tool_search shows the model, and the names a resumed session reads back from it.
func ExampleFormatHits() {
	hits := []toolsearch.Hit{
		{Server: "github", Name: "create_issue", PublicName: "mcp__github__create_issue", Purpose: "Create an issue in a repository."},
		{Server: "jira", Name: "create_ticket", PublicName: "mcp__jira__create_ticket", Purpose: "Open a ticket."},
	}
	text := deferral.FormatHits("report a bug", hits)
	fmt.Println(text)
	fmt.Println(deferral.FoundNames(text))
	// Output:
	// 2 tool(s) found and loaded; call them directly by name:
	// 1. mcp__github__create_issue (server github, tool create_issue): Create an issue in a repository.
	// 2. mcp__jira__create_ticket (server jira, tool create_ticket): Open a ticket.
	// [mcp__github__create_issue mcp__jira__create_ticket]
}
