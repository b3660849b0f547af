package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	"github.com/cordisgo/harness/ctx"
)

// Caller calls remote methods: a [*Client] calls a running host over HTTP, a [*Local] the
// methods of a tree in this process, through the same JSON encoding. [Call] and [Stream]
// take either, so a command answers the same way with or without a host.
type Caller interface {
	// Call calls a request/response method, as [Client.Call].
	Call(cx context.Context, method string, params, result any) error
	// Stream calls a stream method, as [Client.Stream].
	Stream(cx context.Context, method string, params any, fn func(json.RawMessage) error) error
}

var (
	_ Caller = (*Client)(nil)
	_ Caller = (*Local)(nil)
)

// Call calls the request/response method exposed with [ctx.ExposeRemote][P, R] and decodes
// its answer into R: the same Go types on both sides are the method's whole contract. The
// host decodes P strictly (an unknown key is a bad_request *[Error] naming it); the answer
// is decoded leniently, so a newer host may add fields. An error answered by the host is
// an *[Error].
func Call[P, R any](cx context.Context, cl Caller, method string, params P) (R, error) {
	var r R
	err := cl.Call(cx, method, params, &r)
	return r, err
}

// Stream calls the stream method exposed with [ctx.ExposeRemoteStream][P, V] and passes
// each value, decoded into V, to fn, in order. It returns as [Client.Stream] does; a value
// that does not decode as V ends the stream with that error.
func Stream[P, V any](cx context.Context, cl Caller, method string, params P, fn func(V) error) error {
	return cl.Stream(cx, method, params, func(raw json.RawMessage) error {
		var v V
		if err := json.Unmarshal(raw, &v); err != nil {
			return fmt.Errorf("remote: a value of %s: %w", method, err)
		}
		return fn(v)
	})
}

// Local calls the methods exposed in a tree from the same process, exactly as a host's
// remote API serves them to a [Client]: the parameters and the result go through JSON, a
// method's error becomes the *[Error] (code and status) the host would answer, a panic is
// recovered as the host does. Use it where a command works in process and on a host alike.
//
// A Local is safe for concurrent use.
type Local struct {
	c   *ctx.Context
	log *slog.Logger
}

// NewLocal returns a caller of the methods exposed in c's tree.
func NewLocal(c *ctx.Context) *Local { return &Local{c: c, log: c.Logger()} }

// prepare finds the method of the given kind and encodes its parameters.
func (l *Local) prepare(method, kind string, params any) (ctx.RemoteMethod, json.RawMessage, error) {
	m, e := find(l.c, method, kind)
	if e != nil {
		return m, nil, e
	}
	raw, err := encodeParams(method, params)
	return m, raw, err
}

// Call calls method in process; see [Client.Call].
func (l *Local) Call(cx context.Context, method string, params, result any) error {
	m, raw, err := l.prepare(method, KindCall, params)
	if err != nil {
		return err
	}
	res, err := safeCall(func() (any, error) { return m.Call(cx, raw) })
	if err != nil {
		e, status := failure(l.log, cx, method, err)
		e.Status = status
		return e
	}
	b, err := json.Marshal(res)
	if err != nil {
		return &Error{Code: CodeInternal, Message: fmt.Sprintf("the result of %q could not be encoded as JSON", method), Status: http.StatusInternalServerError}
	}
	if result == nil {
		return nil
	}
	if err := json.Unmarshal(b, result); err != nil {
		return fmt.Errorf("remote: result of %s: %w", method, err)
	}
	return nil
}

// Stream calls the stream method in process; see [Client.Stream]. The values reach fn in
// order, one at a time.
func (l *Local) Stream(cx context.Context, method string, params any, fn func(json.RawMessage) error) error {
	m, raw, err := l.prepare(method, KindStream, params)
	if err != nil {
		return err
	}
	outer := cx
	cx, cancel := context.WithCancel(cx)
	defer cancel()
	var mu sync.Mutex
	done := false
	var fnErr error
	send := func(v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("remote stream: value is not JSON: %w", err)
		}
		mu.Lock()
		defer mu.Unlock()
		switch {
		case done:
			return errStreamClosed
		case fnErr != nil:
			return fnErr
		}
		if err := fn(b); err != nil {
			fnErr = err
			cancel()
			return err
		}
		return nil
	}
	_, err = safeCall(func() (any, error) { return nil, m.Stream(cx, raw, send) })
	mu.Lock()
	done = true
	mu.Unlock()
	switch {
	case fnErr != nil:
		return fnErr
	case err == nil:
		return nil
	case outer.Err() != nil:
		return outer.Err()
	}
	e, _ := failure(l.log, cx, method, err)
	return e
}

// encodeParams encodes params as a client sends them: nil is null.
func encodeParams(method string, params any) (json.RawMessage, error) {
	if params == nil {
		return json.RawMessage("null"), nil
	}
	b, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("remote: params of %s: %w", method, err)
	}
	return b, nil
}
