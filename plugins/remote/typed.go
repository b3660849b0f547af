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
// methods of a tree in this process, through the same JSON encoding. A [Method] or a
// [StreamMethod] calls through either, so a command answers the same way with or without a
// host. Call and Stream take the method's name untyped: they are the transport under the
// typed declarations, which every caller should use.
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

// Method declares a request/response remote method once: its name, the type of its
// parameters P and of its answer R. The package that serves the method declares it as a
// package-level value,
//
//	var MethodList = remote.NewMethod[struct{}, ListResult]("mcpManager/list")
//
// serves it with [Method.Expose] and callers call it with [Method.Call], so the name and
// both types are written once and a wrong pair does not compile. A Method is a plain value,
// safe to share.
type Method[P, R any] struct{ name string }

// NewMethod declares the method called name ("service/method", checked when it is
// exposed).
func NewMethod[P, R any](name string) Method[P, R] { return Method[P, R]{name: name} }

// Name is the method's name, such as "mcpManager/list".
func (m Method[P, R]) Name() string { return m.name }

// String is the method's name.
func (m Method[P, R]) String() string { return m.name }

// Expose serves fn as the method in c's tree, as an effect of c's scope ([ctx.ExposeRemote]:
// the parameters are decoded into P once, strictly, before fn runs).
func (m Method[P, R]) Expose(c *ctx.Context, fn func(context.Context, P) (R, error)) (ctx.Disposer, error) {
	return ctx.ExposeRemote(c, m.name, fn)
}

// Call calls the method through cl and decodes its answer into R. The host decodes P
// strictly (an unknown key is a bad_request *[Error] naming it); the answer is decoded
// leniently, so a newer host may add fields. An error answered by the host is an *[Error].
func (m Method[P, R]) Call(cx context.Context, cl Caller, params P) (R, error) {
	var r R
	err := cl.Call(cx, m.name, params, &r)
	return r, err
}

// StreamMethod declares a stream remote method once: its name, the type of its parameters
// P and of each value V it sends. It is declared, served ([StreamMethod.Expose]) and called
// ([StreamMethod.Call]) like a [Method]. A StreamMethod is a plain value, safe to share.
type StreamMethod[P, V any] struct{ name string }

// NewStreamMethod declares the stream method called name.
func NewStreamMethod[P, V any](name string) StreamMethod[P, V] { return StreamMethod[P, V]{name: name} }

// Name is the method's name, such as "mcpManager/watch".
func (m StreamMethod[P, V]) Name() string { return m.name }

// String is the method's name.
func (m StreamMethod[P, V]) String() string { return m.name }

// Expose serves fn as the stream method in c's tree, as an effect of c's scope
// ([ctx.ExposeRemoteStream]).
func (m StreamMethod[P, V]) Expose(c *ctx.Context, fn func(context.Context, P, func(V) error) error) (ctx.Disposer, error) {
	return ctx.ExposeRemoteStream(c, m.name, fn)
}

// Call calls the stream method through cl and passes each value, decoded into V, to fn, in
// order. It returns as [Client.Stream] does; a value that does not decode as V ends the
// stream with that error.
func (m StreamMethod[P, V]) Call(cx context.Context, cl Caller, params P, fn func(V) error) error {
	return cl.Stream(cx, m.name, params, func(raw json.RawMessage) error {
		var v V
		if err := json.Unmarshal(raw, &v); err != nil {
			return fmt.Errorf("remote: a value of %s: %w", m.name, err)
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
