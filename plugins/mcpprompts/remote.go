package mcpprompts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/cordisgo/harness/ctx"
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

// badRequest is an error the remote API answers with code bad_request.
type badRequest struct{ msg string }

func (e badRequest) Error() string      { return e.msg }
func (e badRequest) RemoteCode() string { return "bad_request" }

// exposeRemote marks the service's remote methods, which see what c's scope sees.
func (s *Service) exposeRemote(c *ctx.Context) error {
	for _, m := range []ctx.RemoteMethod{
		{Name: "prompts/list", Call: func(rc context.Context, raw json.RawMessage) (any, error) {
			var p ListParams
			if err := decode(raw, &p); err != nil {
				return nil, err
			}
			return s.remoteList(rc, c, p)
		}},
		{Name: "prompts/get", Call: func(rc context.Context, raw json.RawMessage) (any, error) {
			var p GetParams
			if err := decode(raw, &p); err != nil {
				return nil, err
			}
			if p.Server == "" || p.Name == "" {
				return nil, badRequest{`parameters: "server" and "name" are required`}
			}
			return s.Get(rc, c, p.Server, p.Name, p.Arguments)
		}},
		{Name: "prompts/watch", Stream: s.watch(c)},
		{Name: "prompts/complete", Call: func(rc context.Context, raw json.RawMessage) (any, error) {
			var p CompleteRequest
			if err := decode(raw, &p); err != nil {
				return nil, err
			}
			if p.Server == "" || p.Argument == "" {
				return nil, badRequest{`parameters: "server" and "argument" are required`}
			}
			return s.Complete(rc, c, p)
		}},
	} {
		if _, err := c.ExposeRemote(m); err != nil {
			return err
		}
	}
	return nil
}

func decode(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return nil
	}
	if err := ctx.DecodeInto(raw, v); err != nil {
		return badRequest{fmt.Sprintf("parameters: %v", err)}
	}
	return nil
}

// remoteList is prompts/list: the prompts, and the servers that failed beside them.
func (s *Service) remoteList(rc context.Context, c *ctx.Context, p ListParams) (Listing, error) {
	ps, err := s.List(rc, c, p.Server)
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
func (s *Service) watch(c *ctx.Context) func(context.Context, json.RawMessage, func(any) error) error {
	return func(rc context.Context, _ json.RawMessage, send func(any) error) error {
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
			if err := wake.Wait(rc, c.Done(), ErrClosed); err != nil {
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
