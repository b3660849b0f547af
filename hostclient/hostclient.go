// Package hostclient is the caller of a host: a running host found through its endpoint
// file ([Dial]), or the tree of a host in this process ([Local]), called through the same
// typed methods (package host's harness/*, the services' own) over one remote.Caller. [Find]
// picks the running host a command answers for, and [Run] calls whichever there is: the
// running host, else one started in process. The CLI's commands call a host only through
// it; an embedder may too.
//
// # Concurrency
//
// A [Host] and a [Caller] are safe for concurrent use once made; they are not changed
// after.
package hostclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/plugins/mcpmanager"
	"github.com/cordisgo/harness/plugins/remote"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// AnswerTimeout bounds the check that the host named by an endpoint file is running.
const AnswerTimeout = 3 * time.Second

// ErrNoAnswer is the error of an endpoint file whose host does not answer.
var ErrNoAnswer = errors.New("no running host answers")

// InfoError is the error of a host that answered, but not its harness/host.
type InfoError struct {
	Host *Host
	Err  error
}

func (e *InfoError) Error() string { return fmt.Sprintf("%s: %s: %v", e.Host, host.MethodInfo, e.Err) }
func (e *InfoError) Unwrap() error { return e.Err }

// Host is a running host found through its endpoint file, that answers.
type Host struct {
	// Client calls the host's remote API.
	Client *remote.Client
	// Info is the host's process and profile; zero when it does not serve harness/host.
	Info    host.Info
	methods map[string]bool
}

// Dial returns the host that wrote the endpoint file, once it has answered (within
// AnswerTimeout) with the methods it serves. When there is no endpoint file the error
// wraps os.ErrNotExist, and remote.ErrStaleEndpoint when its host is gone; a host that
// does not answer is ErrNoAnswer, one that fails harness/host an *InfoError.
func Dial(pcx context.Context, endpointFile string) (*Host, error) {
	cl, err := remote.Discover(endpointFile)
	if err != nil {
		return nil, err
	}
	cx, cancel := context.WithTimeout(pcx, AnswerTimeout)
	defer cancel()
	ms, err := cl.Methods(cx)
	if err != nil {
		return nil, fmt.Errorf("%w at %s (%w)", ErrNoAnswer, cl.BaseURL, err)
	}
	h := &Host{Client: cl, methods: map[string]bool{}}
	for _, m := range ms {
		h.methods[m.Name] = true
	}
	if h.Serves(host.MethodInfo.Name()) {
		if h.Info, err = host.MethodInfo.Call(cx, cl, struct{}{}); err != nil {
			return nil, &InfoError{Host: h, Err: err}
		}
	}
	return h, nil
}

// String describes the host for messages: "the host at URL (pid N, profile P)".
func (h *Host) String() string {
	switch {
	case h.Info.PID == 0:
		return "the host at " + h.Client.BaseURL
	case h.Info.Profile == "":
		return fmt.Sprintf("the host at %s (pid %d)", h.Client.BaseURL, h.Info.PID)
	}
	return fmt.Sprintf("the host at %s (pid %d, profile %s)", h.Client.BaseURL, h.Info.PID, h.Info.Profile)
}

// Serves reports whether the host serves the method called name.
func (h *Host) Serves(name string) bool { return h.methods[name] }

// Lacks is the error of a host that serves none of the methods named.
func (h *Host) Lacks(what string, names ...string) error {
	return fmt.Errorf("%s cannot %s: it serves neither %s (it has no MCP server manager); use --local to work in process",
		h, what, strings.Join(names, " nor "))
}

// List returns the host's server list (harness/mcpList, or the manager's own list from a
// host that does not serve it).
func (h *Host) List(cx context.Context) (host.ServerList, error) {
	var l host.ServerList
	var err error
	switch {
	case h.Serves(host.MethodList.Name()):
		l, err = host.MethodList.Call(cx, h.Client, struct{}{})
	case h.Serves(mcpmanager.MethodList.Name()):
		var r mcpmanager.ListResult
		r, err = mcpmanager.MethodList.Call(cx, h.Client, struct{}{})
		l = host.ServerList{Snapshot: r.Snapshot}
	default:
		return l, h.Lacks("list its MCP servers", host.MethodList.Name(), mcpmanager.MethodList.Name())
	}
	if err != nil {
		return host.ServerList{}, h.Explain(cx, "", err)
	}
	return l, nil
}

// Explain words the host's refusal for people: an unknown server name (not_found, when
// name is set) lists the names the host has; anything else names the host.
func (h *Host) Explain(cx context.Context, name string, err error) error {
	re, ok := errors.AsType[*remote.Error](err)
	if ok && re.Code == remote.CodeNotFound && name != "" {
		var known []string
		if l, lerr := h.List(cx); lerr == nil {
			known = l.Names()
		}
		return &host.UnknownServerError{Name: name, Where: "on " + h.String(), Known: known}
	}
	if ok {
		return fmt.Errorf("%s: %s", h, re.Message)
	}
	return fmt.Errorf("%s: %w", h, err)
}

// Caller is what a command that answers for a host calls: a running host's client (Host
// set), or a tree in this process (remote.Local), through the same typed methods.
type Caller struct {
	remote.Caller
	// Host is the running host, nil in process.
	Host  *Host
	local *host.Host // the host in process, nil for a running host
	src   string     // the profile's source, for messages
}

// Remote returns the caller of the running host h.
func Remote(h *Host) *Caller { return &Caller{Caller: h.Client, Host: h, src: h.Info.Profile} }

// Local returns the caller of the started host h in this process; h's methods must be
// exposed (host.Host.ExposeAPI).
func Local(h *host.Host) *Caller {
	return &Caller{Caller: remote.NewLocal(h.Root()), local: h, src: h.Profile().Source}
}

// Has reports whether the host serves the method called name.
func (c *Caller) Has(name string) bool {
	if c.Host != nil {
		return c.Host.Serves(name)
	}
	_, ok := c.local.Root().RemoteMethod(name)
	return ok
}

// MountsNo is the error of a host whose profile mounts no service what (a row with use:
// use would).
func (c *Caller) MountsNo(what, use string) error {
	err := fmt.Errorf("profile %q mounts no %s (a row with use: %s)", c.src, what, use)
	if c.Host != nil {
		return fmt.Errorf("%s: %w", c.Host, err)
	}
	return err
}

// Explain words a method's error for people: on a running host as [Host.Explain] does (an
// unknown server name lists the host's names), in process the method's own message.
func (c *Caller) Explain(cx context.Context, server string, err error) error {
	if c.Host != nil {
		return c.Host.Explain(cx, server, err)
	}
	if re, ok := errors.AsType[*remote.Error](err); ok {
		return errors.New(re.Message)
	}
	return err
}

// Probe probes the server called name afresh, without touching the live client
// (harness/mcpProbe, or the manager's mcpManager/probe on a host that serves only that).
// A refusal is worded by Explain.
func (c *Caller) Probe(cx context.Context, name string) (mcpmanager.ProbeResult, error) {
	var out mcpmanager.ProbeResult
	var err error
	switch {
	case c.Has(host.MethodProbe.Name()):
		out, err = host.MethodProbe.Call(cx, c, mcpmanager.NameParams{Name: name})
	case c.Host != nil && c.Has(mcpmanager.MethodProbe.Name()):
		out, err = mcpmanager.MethodProbe.Call(cx, c, mcpmanager.ProbeParams{Name: name})
	case c.Host != nil:
		return out, c.Host.Lacks("probe its MCP servers", host.MethodProbe.Name(), mcpmanager.MethodProbe.Name())
	default:
		return out, fmt.Errorf("%s is not exposed (host.Host.ExposeAPI)", host.MethodProbe)
	}
	if err != nil {
		return out, c.Explain(cx, name, err)
	}
	return out, nil
}

// RestartTimeoutError is a restart whose server neither connected nor failed in time; Last
// is where it stood.
type RestartTimeoutError struct {
	Message string
	Last    mcpmanager.View
}

func (e *RestartTimeoutError) Error() string { return e.Message }

// Restart restarts the server called name and waits, at most timeout, until it has
// connected or failed (harness/mcpRestart), calling progress with every status it passes
// through; from a host that serves only the manager's mcpManager/restart, it returns the
// server's view once the new instance is mounted. A server that did neither in time is a
// *RestartTimeoutError; a refusal is worded by Explain.
func (c *Caller) Restart(pcx context.Context, name string, timeout time.Duration, progress func(mcpmanager.View)) (mcpmanager.View, error) {
	if !c.Has(host.MethodRestart.Name()) {
		switch {
		case c.Host == nil:
			return mcpmanager.View{}, fmt.Errorf("%s is not exposed (host.Host.ExposeAPI)", host.MethodRestart)
		case !c.Has(mcpmanager.MethodRestart.Name()):
			return mcpmanager.View{}, c.Host.Lacks("restart its MCP servers", host.MethodRestart.Name(), mcpmanager.MethodRestart.Name())
		}
		res, err := mcpmanager.MethodRestart.Call(pcx, c, mcpmanager.NameParams{Name: name})
		if err != nil {
			return mcpmanager.View{}, c.Explain(pcx, name, err)
		}
		return res.Server, nil
	}
	// The host bounds its wait by the timeout; this side allows it a little longer to say so.
	cx, cancel := context.WithTimeout(pcx, timeout+AnswerTimeout)
	defer cancel()
	var last host.RestartEvent
	err := host.MethodRestart.Call(cx, c, host.RestartParams{Name: name, TimeoutMs: timeout.Milliseconds()}, func(ev host.RestartEvent) error {
		last = ev
		if !last.Done {
			progress(last.Server)
		}
		return nil
	})
	if re, ok := errors.AsType[*remote.Error](err); ok && re.Code == remote.CodeTimeout {
		return last.Server, &RestartTimeoutError{Message: re.Message, Last: last.Server}
	}
	if err != nil {
		return last.Server, c.Explain(pcx, name, err)
	}
	return last.Server, nil
}

// ErrNoTool is the error of a host whose root has not the tool a call names.
var ErrNoTool = errors.New("no such tool at the root")

// CallTool calls a tool at the host's root (harness/callTool): the registry's result and
// its error (the tool's own failure, a refusal of the registry), or err when the host
// refused the call or has no such tool (wrapping ErrNoTool). A refusal is not worded yet:
// see Explain.
func (c *Caller) CallTool(cx context.Context, tool string, args json.RawMessage) (*toolregistry.Result, error, error) {
	out, err := host.MethodCallTool.Call(cx, c, host.CallParams{Tool: tool, Args: args})
	switch {
	case err != nil:
		return nil, nil, err
	case out.Error != nil && out.Error.Code == toolregistry.CodeUnknownTool && out.Error.Tool == tool:
		return nil, nil, fmt.Errorf("%w: %s", ErrNoTool, tool)
	}
	return out.Result, out.Err(), nil
}

// ServerListing is one server's answer to a listing tool in [Caller.ListEveryServer]: its
// protocol result, or the tool's error.
type ServerListing struct {
	Server string
	Raw    json.RawMessage
	Err    string
}

// ListEveryServer runs the listing tool (list_mcp_resources, list_mcp_resource_templates)
// for every server with resources visible at the root, first pages only; a server that
// fails is in the listing with its error. A root without the tool is ErrNoTool.
func (c *Caller) ListEveryServer(cx context.Context, tool string) ([]ServerListing, error) {
	tools, err := host.MethodTools.Call(cx, c, struct{}{})
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(tools, func(t toolregistry.Info) bool { return t.Name == tool }) {
		return nil, fmt.Errorf("%w: %s", ErrNoTool, tool)
	}
	servers, err := host.MethodResourceServers.Call(cx, c, struct{}{})
	if err != nil {
		return nil, err
	}
	var out []ServerListing
	for _, server := range servers {
		args, _ := json.Marshal(map[string]string{"server": server})
		res, terr, err := c.CallTool(cx, tool, args)
		switch {
		case err != nil:
			return nil, err
		case terr != nil:
			out = append(out, ServerListing{Server: server, Err: terr.Error()})
		default:
			out = append(out, ServerListing{Server: server, Raw: res.Raw})
		}
	}
	return out, nil
}

// List returns the host's server list (harness/mcpList; see [Host.List] for a running host).
func (c *Caller) List(cx context.Context) (host.ServerList, error) {
	if c.Host != nil {
		return c.Host.List(cx)
	}
	return host.MethodList.Call(cx, c, struct{}{})
}
