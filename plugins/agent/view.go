package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/cordisgo/harness/elicitation"
	"github.com/cordisgo/harness/permission"
	"github.com/cordisgo/harness/plugins/agent/agentapi"
	"github.com/cordisgo/harness/plugins/agent/session"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// MCP Apps (SEP-1865): a tool whose server names a ui:// view in its _meta.ui shows that
// view where its call appears in a session (the page's Chat view). The call's result
// carries the server's own CallToolResult for it (ResultInfo.View); the view calls its
// server's tools through the session ([Session.CallFromView], agent/callTool) under the
// session's permissions and approvals, as the model's calls are; a tool only its view may
// call (visibility ["app"]) is neither offered to the model nor run when the model calls
// it.

// maxViewResult bounds the server's result a call's event keeps for its view: above it,
// the view gets the tool's text from the page.
const maxViewResult = 1 << 20

// modelTools returns the tools of tools a model may call: all but those only their app's
// view may call.
func modelTools(tools []toolregistry.Info) []toolregistry.Info {
	out := tools[:0:0]
	for _, t := range tools {
		if !permission.AppOnly(t.Meta) {
			out = append(out, t)
		}
	}
	return out
}

// appOnlyResult is the result of a model's call of a tool only its view may call.
func appOnlyResult(tc model.ToolCall) (model.Message, session.ResultInfo) {
	text := fmt.Sprintf("Error: %s is called by its interactive view only, not by the model.", tc.Name)
	return model.Message{Role: model.RoleTool, ToolCallID: tc.ID, Content: text},
		session.ResultInfo{Outcome: string(toolregistry.CodeDenied), IsError: true, Bytes: len(text)}
}

// viewResult is what a call's event keeps for the view of t: the server's result as sent,
// when t has a view and the result is not too large.
func viewResult(t toolregistry.Info, res *toolregistry.Result) json.RawMessage {
	if t.Meta[permission.MetaUIResource] == "" || res == nil || len(res.Raw) > maxViewResult {
		return nil
	}
	return res.Raw
}

// ErrNotForViews: a view called a tool whose visibility leaves views out.
var ErrNotForViews = errors.New("agent: the tool is not callable by views")

// viewCalls numbers the calls made by views, for their call IDs.
var viewCalls atomic.Int64

// CallFromView runs a call made by a view shown in the session: the tool of call.Server
// whose name there is call.Tool, when its visibility lets views call it, through the tool
// registry for the session — its agent's permissions decide, and a call they ask about is
// put to the person driving the session as the model's calls are (approval.asked and
// approval.decided in its events, the call ID "view_N"). The call is not part of the
// conversation: the model does not see it. cx bounds the call and its approval.
func (s *Session) CallFromView(cx context.Context, call agentapi.ViewCall) (agentapi.ViewResult, error) {
	d, err := s.def()
	if err != nil {
		return agentapi.ViewResult{}, err
	}
	var tool toolregistry.Info
	found := false
	for _, t := range d.tools.List(d.c) {
		if t.Meta["server"] == call.Server && t.Meta["mcpTool"] == call.Tool {
			tool, found = t, true
			break
		}
	}
	switch {
	case !found:
		return agentapi.ViewResult{}, fmt.Errorf("%w: the MCP server %q has no tool %q visible to the agent", toolregistry.ErrUnknownTool, call.Server, call.Tool)
	case !permission.AppCallable(tool.Meta):
		return agentapi.ViewResult{}, fmt.Errorf("%w: %q of %q (its visibility is %s)", ErrNotForViews, call.Tool, call.Server, tool.Meta[permission.MetaUIVisibility])
	}
	opts := toolregistry.ExecOptions{CallID: fmt.Sprintf("view_%d", viewCalls.Add(1)), Session: s, Approver: s.approver}
	cx = elicitation.WithOrigin(cx, elicitation.Origin{Session: s.root().ID(), Call: opts.CallID})
	res, err := d.tools.Execute(cx, d.c, tool.Name, call.Args, opts)
	out := agentapi.ViewResult{Outcome: string(toolregistry.CodeOK)}
	if te, ok := errors.AsType[*toolregistry.ToolError](err); ok {
		out.Outcome = string(te.Code)
	} else if err != nil {
		out.Outcome = string(toolregistry.CodeToolError)
	}
	if res != nil {
		out.IsError, out.Raw = res.IsError, res.Raw
		if out.Raw == nil {
			for _, b := range res.Content {
				out.Text += b.ModelText()
			}
		}
	}
	return out, nil
}
