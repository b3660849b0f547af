package gateway

import (
	"context"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrNoSession is matched by the error of [Store.Session] for an ID the store does not hold.
var ErrNoSession = errors.New("gateway: no such session in the store")

// Store is the state the replicas of one gateway share (gateway/redisstore keeps it in
// Redis). With a store, a downstream session of the stateful protocol revisions can move:
// the replica that receives a request for a session it does not hold (its own replica
// died, or is draining for a restart) takes it over from the store's record, with the
// session's ID, negotiated protocol version, client capabilities, log level and resource
// subscriptions. Without one ([Options.Store] nil) a gateway is one process, as before.
//
// Implementations must be safe for concurrent use. Every method is given the context of
// the request it serves, and should return once it is done.
type Store interface {
	// PutSession records s under its ID, replacing an earlier record; the record expires
	// ttl after its last PutSession or TouchSession (0: never).
	PutSession(cx context.Context, s SessionRecord, ttl time.Duration) error
	// TouchSession pushes the expiry of id's record to ttl from now.
	TouchSession(cx context.Context, id string, ttl time.Duration) error
	// Session returns the record of id, or an error matching [ErrNoSession].
	Session(cx context.Context, id string) (SessionRecord, error)
	// DeleteSession forgets id's record (none is not an error).
	DeleteSession(cx context.Context, id string) error
}

// SessionRecord is what a store keeps of a downstream session: enough for another replica
// to serve it. It is a plain value.
type SessionRecord struct {
	// ID is the session's Mcp-Session-Id.
	ID string `json:"id"`
	// Route is the path of its route (PathAggregated, PathServers+name, …).
	Route string `json:"route"`
	// Replica names the replica that holds it now ([Options.Replica]).
	Replica string `json:"replica"`
	// User is the subject of the token the session began with ("" without sign-in): a
	// request with another subject's token is refused, as on the replica that made it.
	User string `json:"user,omitempty"`
	// State is the go-sdk's state of the session: its initialize parameters, the
	// negotiated protocol version and its log level.
	State mcp.ServerSessionState `json:"state"`
	// Subscriptions are the resource URIs the session subscribed to.
	Subscriptions []string `json:"subscriptions,omitempty"`
	// Started is when the session began.
	Started time.Time `json:"started"`
}
