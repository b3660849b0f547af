package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpresources"
	"github.com/cordisgo/harness/plugins/remote"
	"github.com/cordisgo/harness/plugins/sysprompt"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// The host's methods that answer for its root, as a model or a person at the root sees it:
// the tools, a tool call through the registry's pipeline, the system prompt, the resources'
// servers and their updates. The CLI's tools, resources and prompt commands call them, on a
// running host or in process (remote.Local), the same way. ExposeAPI exposes them.
var (
	// MethodTools answers the tools visible at the root, sorted by name.
	MethodTools = remote.NewMethod[struct{}, []toolregistry.Info]("harness/tools")
	// MethodCallTool calls a tool at the root through the registry's pipeline (validation,
	// policy, timeout, history); the call ends with the request.
	MethodCallTool = remote.NewMethod[CallParams, CallResult]("harness/callTool")
	// MethodPrompt answers the system prompt assembled at the root.
	MethodPrompt = remote.NewMethod[PromptParams, Prompt]("harness/prompt")
	// MethodResourceServers answers the servers with resources visible at the root.
	MethodResourceServers = remote.NewMethod[struct{}, []string]("harness/resourceServers")
	// MethodWatchResources subscribes to resources of a server and streams a value once they
	// are subscribed, then one per update, until the caller leaves (which unsubscribes).
	MethodWatchResources = remote.NewStreamMethod[WatchParams, ResourceUpdate]("harness/watchResources")
)

// CallParams are the parameters of MethodCallTool: the tool's public name and its
// arguments (a JSON object; none is {}).
type CallParams struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args,omitempty"`
}

// Validate requires a tool.
func (p CallParams) Validate() error {
	var probs ctx.Problems
	probs.Require("tool", p.Tool, "the tool's public name")
	return probs.Err()
}

// CallResult is the answer of MethodCallTool: the registry's result (nil when the call was
// refused before it ran) and, for a call that did not succeed, the registry's error.
type CallResult struct {
	Result *toolregistry.Result    `json:"result,omitempty"`
	Error  *toolregistry.ToolError `json:"error,omitempty"`
}

// Err is the call's error as Execute returned it (nil for a success).
func (r CallResult) Err() error {
	if r.Error == nil {
		return nil
	}
	return r.Error
}

// PromptParams are the parameters of MethodPrompt: the variables of interpolated sections.
type PromptParams struct {
	Vars map[string]string `json:"vars,omitempty"`
}

// Prompt is the answer of MethodPrompt: the prompt's text and the sections that produced
// it, in order, each with its owner.
type Prompt struct {
	Text     string          `json:"text"`
	Sections []PromptSection `json:"sections"`
}

// PromptSection is one section of a Prompt.
type PromptSection struct {
	Name  string `json:"name"`
	Owner string `json:"owner"`
	Order int    `json:"order"`
	Text  string `json:"text"`
}

// WatchParams are the parameters of MethodWatchResources: a server and the URIs of its
// resources.
type WatchParams struct {
	Server string   `json:"server"`
	URIs   []string `json:"uris"`
}

// Validate requires a server and a URI.
func (p WatchParams) Validate() error {
	var probs ctx.Problems
	probs.Require("server", p.Server, "the MCP server's name")
	if len(p.URIs) == 0 {
		probs.Add("uris", "required: the resources' URIs")
	}
	return probs.Err()
}

// ResourceUpdate is one value of MethodWatchResources: the first says the resources are
// subscribed (Subscribed), each other one that a resource was updated (Server, URI).
// Dropped counts the updates dropped so far because the caller read too slowly.
type ResourceUpdate struct {
	Subscribed bool   `json:"subscribed,omitempty"`
	Server     string `json:"server,omitempty"`
	URI        string `json:"uri,omitempty"`
	Dropped    int64  `json:"dropped,omitempty"`
}

// watchBuffer is how many updates wait for the caller; beyond it, updates are counted as
// dropped rather than holding the SDK's notification goroutine.
const watchBuffer = 256

// Service returns the service key provides at the root of a started host, or an error
// that names the service (what) and the plugin of the profile row that would mount it
// (use): `profile "P" mounts no tool registry (a row with use: toolregistry)`.
func Service[T any](h *Host, key ctx.Key[T], what, use string) (T, error) {
	svc, ok := key.Get(h.root)
	if !ok {
		return svc, fmt.Errorf("profile %q mounts no %s (a row with use: %s)", h.profile.Source, what, use)
	}
	return svc, nil
}

// registry is the tool registry at the root.
func (h *Host) registry() (*toolregistry.Registry, error) {
	return Service(h, toolregistry.Key, "tool registry", "toolregistry")
}

// rootMethods are the exposers of the methods that answer for the root.
func (h *Host) rootMethods() []func() (ctx.Disposer, error) {
	return []func() (ctx.Disposer, error){
		func() (ctx.Disposer, error) {
			return MethodTools.Expose(h.root, func(context.Context, struct{}) ([]toolregistry.Info, error) {
				reg, err := h.registry()
				if err != nil {
					return nil, err
				}
				tools := reg.List(h.root)
				if tools == nil {
					tools = []toolregistry.Info{}
				}
				return tools, nil
			})
		},
		func() (ctx.Disposer, error) { return MethodCallTool.Expose(h.root, h.callTool) },
		func() (ctx.Disposer, error) { return MethodPrompt.Expose(h.root, h.prompt) },
		func() (ctx.Disposer, error) {
			return MethodResourceServers.Expose(h.root, func(context.Context, struct{}) ([]string, error) {
				svc, err := Service(h, mcpresources.Key, "resources service", "mcpresources")
				if err != nil {
					return nil, err
				}
				return append([]string{}, svc.Servers(h.root)...), nil
			})
		},
		func() (ctx.Disposer, error) { return MethodWatchResources.Expose(h.root, h.watchResources) },
		func() (ctx.Disposer, error) { return MethodSearchTools.Expose(h.root, h.searchTools) },
	}
}

// callTool is MethodCallTool.
func (h *Host) callTool(cx context.Context, p CallParams) (CallResult, error) {
	reg, err := h.registry()
	if err != nil {
		return CallResult{}, err
	}
	args := p.Args
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	h.logger.Debug("calling tool", "tool", p.Tool)
	res, err := reg.Execute(cx, h.root, p.Tool, args, toolregistry.ExecOptions{})
	out := CallResult{Result: res}
	if err != nil {
		te, ok := errors.AsType[*toolregistry.ToolError](err)
		if !ok {
			return CallResult{}, err
		}
		out.Error = te
	}
	return out, nil
}

// prompt is MethodPrompt.
func (h *Host) prompt(_ context.Context, p PromptParams) (Prompt, error) {
	svc, err := Service(h, sysprompt.Key, "system prompt", "sysprompt")
	if err != nil {
		return Prompt{}, err
	}
	pr, err := svc.Assemble(h.root, p.Vars)
	if err != nil {
		return Prompt{}, err
	}
	out := Prompt{Text: pr.Text, Sections: []PromptSection{}}
	for _, s := range pr.Sections {
		out.Sections = append(out.Sections, PromptSection{Name: s.Name, Owner: s.Owner, Order: s.Order, Text: s.Text})
	}
	return out, nil
}

// watchResources is MethodWatchResources: the client the root sees under the server's
// name subscribed to each URI (through the resources service, which shares one
// resources/subscribe among its callers), its updates sent until cx ends.
func (h *Host) watchResources(cx context.Context, p WatchParams, send func(ResourceUpdate) error) error {
	resources, err := Service(h, mcpresources.Key, "mcpResources service", "mcpresources")
	if err != nil {
		return err
	}
	uris := slices.Compact(slices.Sorted(slices.Values(p.URIs)))
	var scope *ctx.Scope // the client the root sees under the server's name
	if u, ok := mcpclient.LookupUpstream(h.root, p.Server); ok {
		scope = u.Scope()
	}
	updates := make(chan mcpclient.ResourceChange, watchBuffer)
	var dropped atomic.Int64
	stop, err := mcpclient.ResourceUpdatedEvent.On(h.root, func(u mcpclient.ResourceChange) error {
		if u.Server != p.Server || (scope != nil && u.Scope != scope) || !slices.Contains(uris, u.URI) {
			return nil
		}
		select {
		case updates <- u:
		default:
			dropped.Add(1)
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer func() { _ = stop(context.WithoutCancel(cx)) }()
	var subs []mcpresources.Subscription
	defer func() {
		for i, s := range subs {
			if err := s.Close(); err != nil {
				h.logger.Warn("unsubscribing", "server", p.Server, "uri", uris[i], "err", err)
			}
		}
	}()
	for _, uri := range uris {
		sub, err := resources.Subscribe(cx, h.root, p.Server, uri)
		if err != nil {
			return err
		}
		subs = append(subs, sub)
	}
	if err := send(ResourceUpdate{Subscribed: true}); err != nil {
		return err
	}
	for {
		select {
		case <-cx.Done():
			return nil
		case u := <-updates:
			if err := send(ResourceUpdate{Server: u.Server, URI: u.URI, Dropped: dropped.Load()}); err != nil {
				return err
			}
		}
	}
}
