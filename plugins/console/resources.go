package console

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpresources"
	"github.com/cordisgo/harness/plugins/remote"
)

// SubscribeParams are the parameters of console/subscribe.
type SubscribeParams struct {
	Server string `json:"server"`
	URI    string `json:"uri"`
}

// ResourceUpdate is one value of the console/subscribe stream: the first says the
// subscription holds (Subscribed), each later one that the server sent
// notifications/resources/updated for the URI (read it again for its contents). It is a
// plain value.
type ResourceUpdate struct {
	Server     string    `json:"server"`
	URI        string    `json:"uri"`
	Subscribed bool      `json:"subscribed,omitempty"`
	Time       time.Time `json:"time"`
}

// Validate requires the server and the URI.
func (p SubscribeParams) Validate() error {
	var probs ctx.Problems
	probs.Require("server", p.Server, "the MCP server's name")
	probs.Require("uri", p.URI, "the resource's URI")
	return probs.Err()
}

// subscribe is console/subscribe: one reference to the server's subscription of the URI
// (mcpresources.Service.Subscribe: one resources/subscribe on the wire however many
// subscribers) for as long as the stream is open; closing it unsubscribes. Updates to the
// same URI that arrive while the client reads are coalesced into one.
func (s *service) subscribe(rcx context.Context, p SubscribeParams, send func(ResourceUpdate) error) error {
	res, ok := mcpresources.Key.Get(s.c)
	if !ok {
		return remote.Errorf(remote.CodeUnavailable, "resource subscriptions need the mcpResources service (mcpresources) in the profile")
	}
	var scope *ctx.Scope // the client the console sees under the server's name
	if u, ok := mcpclient.LookupUpstream(s.c, p.Server); ok {
		scope = u.Scope()
	}
	wake, err := mcpclient.ResourceUpdatedEvent.Wake(s.c, func(u mcpclient.ResourceChange) bool {
		return u.Server == p.Server && u.URI == p.URI && (scope == nil || u.Scope == scope)
	})
	if err != nil {
		return err
	}
	defer wake.Stop()
	sub, err := res.Subscribe(rcx, s.c, p.Server, p.URI)
	if err != nil {
		if errors.Is(err, mcpresources.ErrUnknownServer) || errors.Is(err, mcpresources.ErrNoSubscribe) {
			return remote.Errorf(remote.CodeBadRequest, "%v", err)
		}
		return fmt.Errorf("subscribing to %s of %s: %w", p.URI, p.Server, err)
	}
	defer func() {
		if err := sub.Close(); err != nil {
			s.c.Logger().Warn("unsubscribing failed", "server", p.Server, "uri", p.URI, "err", err)
		}
	}()
	if err := send(ResourceUpdate{Server: p.Server, URI: p.URI, Subscribed: true, Time: time.Now()}); err != nil {
		return err
	}
	for {
		if err := wake.Wait(rcx, s.c.Done(), remote.Errorf(remote.CodeUnavailable, "the console has unloaded")); err != nil {
			return err
		}
		if err := send(ResourceUpdate{Server: p.Server, URI: p.URI, Time: time.Now()}); err != nil {
			return err
		}
	}
}
