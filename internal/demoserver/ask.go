package demoserver

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The modes of the ask tool.
const (
	askForm = "form"
	askURL  = "url"
)

type askInput struct {
	Mode string `json:"mode,omitempty" jsonschema:"form (the default): ask for a form; url: ask the user to visit a page"`
}

var askSchema = objectSchema[askInput](func(s *jsonschema.Schema) {
	m := s.Properties["mode"]
	m.Enum = []any{askForm, askURL}
	m.Default = json.RawMessage(`"` + askForm + `"`)
})

// askFormSchema is the form the ask tool requests: one field of each kind a client renders
// differently, with defaults (SEP-1034), limits, titled choices and a secret.
var askFormSchema = &jsonschema.Schema{
	Type:     "object",
	Required: []string{"name", "age"},
	Properties: map[string]*jsonschema.Schema{
		"name": {Type: "string", Title: "Name", Description: "What to call you", MinLength: new(1),
			MaxLength: new(40), Default: json.RawMessage(`"Ada"`)},
		"age": {Type: "integer", Title: "Age", Description: "In whole years", Minimum: new(1.0),
			Maximum: new(150.0), Default: json.RawMessage(`36`)},
		"color": {Type: "string", Title: "Favourite colour", Default: json.RawMessage(`"green"`),
			OneOf: []*jsonschema.Schema{
				{Const: new(any("red")), Title: "Red"},
				{Const: new(any("green")), Title: "Green"},
				{Const: new(any("blue")), Title: "Blue"},
			}},
		"subscribe": {Type: "boolean", Title: "Subscribe", Description: "Send me the newsletter",
			Default: json.RawMessage(`false`)},
		"token": {Type: "string", Title: "API token", Description: "Never shown; the tool reports its length only",
			WriteOnly: true},
	},
}

// askURLBase is the page the ask tool's url mode asks the user to visit (nothing is served
// there: the demo confirms as soon as the user agrees).
const askURLBase = "https://example.com/harness-demo/confirm?id="

// askPingTimeout bounds the ping that follows a url-mode completion.
const askPingTimeout = 5 * time.Second

// askIDs numbers the url-mode elicitations of the process.
var askIDs atomic.Int64

// askKey names the ask tool's one input request.
const askKey = "ask"

// ask asks the client's user through elicitation and returns what came back: "accept:
// name=Ada, age=36, ..." (a secret by its length), "decline" or "cancel". It asks the SDK's
// way (SEP-2322): the first round returns the elicitation as an input request, which the
// SDK sends to a client of an older protocol as elicitation/create itself, and the retry
// carries the answer. In url mode the elicitation's ID travels as the request state, and
// once the user accepts the tool reports it complete (notifications/elicitation/complete),
// pings the client (so that the completion is handled before the result) and returns
// "accept: confirmed ID".
func (d *demo) ask(cx context.Context, req *mcp.CallToolRequest, in askInput) (*mcp.CallToolResult, any, error) {
	res, answered := req.Params.InputResponses[askKey].(*mcp.ElicitResult)
	if !answered {
		params := &mcp.ElicitParams{Mode: askForm, Message: "The demo server would like to know you better.", RequestedSchema: askFormSchema}
		state := ""
		if in.Mode == askURL {
			state = fmt.Sprintf("demo-%d", askIDs.Add(1))
			params = &mcp.ElicitParams{Mode: askURL, Message: "Confirm on the demo page.", URL: askURLBase + state, ElicitationID: state}
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{askKey: params}, RequestState: state}, nil, nil
	}
	if res.Action != "accept" {
		return textResult(res.Action), nil, nil
	}
	if in.Mode == askURL {
		id := req.Params.RequestState
		if err := req.Session.NotifyElicitationComplete(cx, &mcp.ElicitationCompleteParams{ElicitationID: id}); err != nil {
			return nil, nil, fmt.Errorf("ask: reporting %s complete: %w", id, err)
		}
		// A client handles notifications in order, and a request after them: a ping answered
		// means the completion was handled before the result arrives (the SDK delivers a
		// result at once, so it could otherwise overtake the notification). Best effort.
		pcx, cancel := context.WithTimeout(cx, askPingTimeout)
		_ = req.Session.Ping(pcx, nil)
		cancel()
		return textResult("accept: confirmed " + id), nil, nil
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(res.Content)) {
		v := res.Content[k]
		if k == "token" {
			v = fmt.Sprintf("%d characters", len(fmt.Sprint(v)))
		}
		parts = append(parts, fmt.Sprintf("%s=%v", k, v))
	}
	return textResult("accept: " + strings.Join(parts, ", ")), nil, nil
}
