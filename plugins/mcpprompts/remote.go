package mcpprompts

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/remote"
)

// ListParams are the parameters of the prompts/list remote method. It is a plain value.
type ListParams struct {
	// Server names one server; "" lists every visible one.
	Server string `json:"server,omitempty"`
}

// Listing is the answer of the prompts/list remote method. It is a plain value.
type Listing struct {
	Prompts []Prompt `json:"prompts"`
	// Errors names the servers that could not be listed (never nil).
	Errors []ServerError `json:"errors"`
}

// ServerError is a server that could not be listed, in a [Listing]. It is a plain value.
type ServerError struct {
	Server string `json:"server"`
	Error  string `json:"error"`
}

// GetParams are the parameters of the prompts/get remote method. It is a plain value.
type GetParams struct {
	Server    string            `json:"server"`
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
}

// Change is one value of the prompts/watch stream: the prompts of Server may have changed
// ("" for every server: the first value, sent at once). It is a plain value.
type Change struct {
	Server string `json:"server"`
}

// Validate requires the server and the prompt.
func (p GetParams) Validate() error {
	var probs ctx.Problems
	probs.Require("server", p.Server, "the MCP server's name")
	probs.Require("name", p.Name, "the prompt's name")
	return probs.Err()
}

// Validate requires the server and the argument.
func (r CompleteRequest) Validate() error {
	var probs ctx.Problems
	probs.Require("server", r.Server, "the MCP server's name")
	probs.Require("argument", r.Argument, "the argument's name")
	return probs.Err()
}

// The service's remote methods, each declared once with its parameters and answer.
var (
	// MethodList answers a [Listing].
	MethodList = remote.NewMethod[ListParams, Listing]("prompts/list")
	// MethodGet answers the prompt.
	MethodGet = remote.NewMethod[GetParams, *mcp.GetPromptResult]("prompts/get")
	// MethodComplete answers a completion.
	MethodComplete = remote.NewMethod[CompleteRequest, mcp.CompletionResultDetails]("prompts/complete")
	// MethodWatch streams [Change]s; no parameters.
	MethodWatch = remote.NewStreamMethod[struct{}, Change]("prompts/watch")
)

// exposeRemote marks the service's remote methods, which see what c's scope sees. Their
// parameters are decoded strictly, once ([ctx.ExposeRemote]).
func (s *Service) exposeRemote(c *ctx.Context) error {
	for _, expose := range []func() (ctx.Disposer, error){
		func() (ctx.Disposer, error) {
			return MethodList.Expose(c, func(rcx context.Context, p ListParams) (Listing, error) {
				return s.remoteList(rcx, c, p)
			})
		},
		func() (ctx.Disposer, error) {
			return MethodGet.Expose(c, func(rcx context.Context, p GetParams) (*mcp.GetPromptResult, error) {
				return s.Get(rcx, c, p.Server, p.Name, p.Arguments)
			})
		},
		func() (ctx.Disposer, error) { return MethodWatch.Expose(c, s.watch(c)) },
		func() (ctx.Disposer, error) {
			return MethodComplete.Expose(c, func(rcx context.Context, p CompleteRequest) (mcp.CompletionResultDetails, error) {
				return s.Complete(rcx, c, p)
			})
		},
	} {
		if _, err := expose(); err != nil {
			return err
		}
	}
	return nil
}

// remoteList is prompts/list: the prompts, and the servers that failed beside them.
func (s *Service) remoteList(rcx context.Context, c *ctx.Context, p ListParams) (Listing, error) {
	ps, err := s.List(rcx, c, p.Server)
	if err != nil && p.Server != "" {
		return Listing{}, err
	}
	return NewListing(ps, err), nil
}

// NewListing makes the Listing of what [Service.List] returned for every server: ps, and
// one [ServerError] per server that err names.
func NewListing(ps []Prompt, err error) Listing {
	out := Listing{Prompts: ps, Errors: []ServerError{}}
	if out.Prompts == nil {
		out.Prompts = []Prompt{}
	}
	for _, e := range Errors(err) {
		se := ServerError{Error: e.Error()}
		if pe, ok := errors.AsType[*Error](e); ok {
			se.Server = pe.Server
		}
		out.Errors = append(out.Errors, se)
	}
	return out
}

// Errors returns the errors err joins (one per server for [Service.List]), err itself, or
// none for nil.
func Errors(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// watch is prompts/watch: a Change at once, then one per server whose listing the service
// dropped (see [Changed]), coalesced while the client reads.
func (s *Service) watch(c *ctx.Context) func(context.Context, struct{}, func(Change) error) error {
	return func(rcx context.Context, _ struct{}, send func(Change) error) error {
		var mu sync.Mutex
		pending := map[string]bool{}
		wake, err := Changed.Wake(c, func(server string) bool {
			mu.Lock()
			pending[server] = true
			mu.Unlock()
			return true
		})
		if err != nil {
			return err
		}
		defer wake.Stop()
		if err := send(Change{}); err != nil {
			return err
		}
		for {
			if err := wake.Wait(rcx, c.Done(), ErrClosed); err != nil {
				return err
			}
			mu.Lock()
			servers := slices.Sorted(maps.Keys(pending))
			clear(pending)
			mu.Unlock()
			for _, server := range servers {
				if err := send(Change{Server: server}); err != nil {
					return err
				}
			}
		}
	}
}
