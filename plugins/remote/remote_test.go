package remote_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/remote"
)

// host is a tree with the remote plugin mounted and a test service exposing methods.
type host struct {
	root   *ctx.Context
	scope  *ctx.Scope // the remote plugin's
	srv    *remote.Server
	client *remote.Client
	svc    *service
	log    *ctxtest.Log
}

// service is the test plugin's state: channels the tests wait on.
type service struct {
	scope     *ctx.Scope
	cancelled chan error           // "svc/hang" reports the cause of its ctx ending
	stashed   chan func(any) error // "svc/stash" hands out its send function
}

type codedError struct {
	code remote.Code
	msg  string
}

func (e codedError) Error() string           { return e.msg }
func (e codedError) RemoteCode() remote.Code { return e.code }

// servicePlugin exposes the methods the tests call.
func servicePlugin(s *service) ctx.PluginDef {
	return ctx.Define(ctx.Meta{Name: "svc"}, func(c *ctx.Context, _ struct{}) error {
		calls := map[string]func(context.Context, json.RawMessage) (any, error){
			"svc/echo": func(_ context.Context, p json.RawMessage) (any, error) { return p, nil },
			"svc/add": func(_ context.Context, p json.RawMessage) (any, error) {
				var in struct{ A, B int }
				if err := json.Unmarshal(p, &in); err != nil {
					return nil, remote.Errorf(remote.CodeBadRequest, "want {A, B}: %v", err)
				}
				return in.A + in.B, nil
			},
			"svc/conflict": func(context.Context, json.RawMessage) (any, error) {
				return nil, remote.Errorf(remote.CodeConflict, "server %q is being replaced", "fs")
			},
			"svc/missing": func(context.Context, json.RawMessage) (any, error) {
				return nil, fmt.Errorf("lookup: %w", codedError{"not_found", "no server called nope"})
			},
			"svc/custom": func(context.Context, json.RawMessage) (any, error) {
				return nil, codedError{"quota_exceeded", "too many probes"}
			},
			"svc/badcode": func(context.Context, json.RawMessage) (any, error) {
				return nil, codedError{"Not A Code!", "odd"}
			},
			"svc/plain": func(context.Context, json.RawMessage) (any, error) { return nil, errors.New("boom") },
			"svc/panic": func(context.Context, json.RawMessage) (any, error) { panic("kaboom") },
			"svc/unencodable": func(context.Context, json.RawMessage) (any, error) {
				return func() {}, nil
			},
		}
		for name, fn := range calls {
			if _, err := c.ExposeRemote(ctx.RemoteMethod{Name: name, Call: fn}); err != nil {
				return err
			}
		}
		streams := map[string]func(context.Context, json.RawMessage, func(any) error) error{
			"svc/count": func(_ context.Context, p json.RawMessage, send func(any) error) error {
				var n int
				if err := json.Unmarshal(p, &n); err != nil {
					return remote.Errorf(remote.CodeBadRequest, "want a count")
				}
				for i := range n {
					if err := send(i); err != nil {
						return err
					}
				}
				return nil
			},
			"svc/parallel": func(_ context.Context, _ json.RawMessage, send func(any) error) error {
				var wg sync.WaitGroup
				errs := make([]error, 16)
				for i := range 16 {
					wg.Go(func() { errs[i] = send(i) })
				}
				wg.Wait()
				return errors.Join(errs...)
			},
			"svc/failing": func(_ context.Context, _ json.RawMessage, send func(any) error) error {
				if err := send("first"); err != nil {
					return err
				}
				return remote.Errorf(remote.CodeUnavailable, "upstream went away")
			},
			"svc/hang": func(ccx context.Context, _ json.RawMessage, send func(any) error) error {
				if err := send("ready"); err != nil {
					s.cancelled <- err
					return err
				}
				<-ccx.Done()
				s.cancelled <- context.Cause(ccx)
				return ccx.Err()
			},
			"svc/stash": func(_ context.Context, _ json.RawMessage, send func(any) error) error {
				s.stashed <- send
				return nil
			},
		}
		for name, fn := range streams {
			if _, err := c.ExposeRemote(ctx.RemoteMethod{Name: name, Stream: fn}); err != nil {
				return err
			}
		}
		return nil
	})
}

// newHost mounts the remote plugin (token file under a fresh directory) and then the test
// service.
func newHost(t *testing.T, cfg map[string]any) *host {
	t.Helper()
	dir := t.TempDir()
	root, log := ctxtest.NewLogged(t)
	if cfg == nil {
		cfg = map[string]any{}
	}
	if _, ok := cfg["tokenFile"]; !ok {
		cfg["tokenFile"] = filepath.Join(dir, "state", "remote.token")
	}
	h := &host{root: root, log: log, svc: &service{cancelled: make(chan error, 1), stashed: make(chan func(any) error, 1)}}
	h.scope = ctxtest.MountActive(t, root, remote.Plugin, cfg)
	h.svc.scope = ctxtest.MountActive(t, root, servicePlugin(h.svc), nil)
	srv, ok := remote.Key.Get(h.scope.Context())
	if !ok {
		t.Fatal("remote service not provided")
	}
	h.srv = srv
	h.client = remote.NewClient(srv.URL(), srv.Token())
	return h
}

// raw sends one request without keeping the connection.
func raw(t *testing.T, method, u string, body string, header http.Header) (*http.Response, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctxtest.Wait(t), method, u, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if h := header.Get("Host"); h != "" {
		req.Host = h
	}
	req.Close = true
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func (h *host) auth() http.Header {
	return http.Header{"Authorization": {"Bearer " + h.srv.Token()}}
}

// noSecretInLog fails the test if the token appears in the tree's log.
func (h *host) noSecretInLog(t *testing.T) {
	t.Helper()
	if strings.Contains(h.log.String(), h.srv.Token()) {
		t.Fatal("the token appears in the log")
	}
}

// wantError checks a JSON error answer.
func wantError(t *testing.T, resp *http.Response, body string, status int, code string) {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d; body %s", resp.StatusCode, status, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("content type %q", ct)
	}
	var e struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("error body %q: %v", body, err)
	}
	if e.Error.Code != code || e.Error.Message == "" {
		t.Fatalf("error %+v, want code %q", e.Error, code)
	}
}

// wantRemoteError checks an error returned by the client.
func wantRemoteError(t *testing.T, err error, status int, code remote.Code) *remote.Error {
	t.Helper()
	e, ok := errors.AsType[*remote.Error](err)
	if !ok {
		t.Fatalf("error %v (%T), want *remote.Error", err, err)
	}
	if e.Status != status || e.Code != code {
		t.Fatalf("error %+v, want status %d code %q", e, status, code)
	}
	return e
}

func collect(t *testing.T, c *remote.Client, method string, params any) ([]string, error) {
	t.Helper()
	var got []string
	err := c.Stream(ctxtest.Wait(t), method, params, func(v json.RawMessage) error {
		got = append(got, string(v))
		return nil
	})
	return got, err
}

func TestCall(t *testing.T) {
	h := newHost(t, nil)
	cx := ctxtest.Wait(t)

	var sum int
	if err := h.client.Call(cx, "svc/add", map[string]int{"A": 2, "B": 40}, &sum); err != nil || sum != 42 {
		t.Fatalf("add: %d, %v", sum, err)
	}
	var echoed json.RawMessage
	if err := h.client.Call(cx, "svc/echo", json.RawMessage(`{"x":[1,"two"]}`), &echoed); err != nil || string(echoed) != `{"x":[1,"two"]}` {
		t.Fatalf("echo: %s, %v", echoed, err)
	}
	// No params: an empty body reaches the method as null.
	if err := h.client.Call(cx, "svc/echo", nil, &echoed); err != nil || string(echoed) != "null" {
		t.Fatalf("echo without params: %s, %v", echoed, err)
	}
	if err := h.client.Call(cx, "svc/echo", 1, nil); err != nil {
		t.Fatalf("call without result: %v", err)
	}

	resp, body := raw(t, http.MethodPost, h.srv.URL()+"/v1/call/svc/add", ` {"A":1,"B":2} `, h.auth())
	if resp.StatusCode != http.StatusOK || body != `{"result":3}`+"\n" || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("raw call: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
}

func TestMethods(t *testing.T) {
	h := newHost(t, nil)
	ms, err := h.client.Methods(ctxtest.Wait(t))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	var names []string
	for _, m := range ms {
		kinds[m.Name] = m.Kind
		names = append(names, m.Name)
	}
	if !slices.IsSorted(names) {
		t.Fatalf("methods not sorted: %v", names)
	}
	if kinds["svc/add"] != remote.KindCall || kinds["svc/count"] != remote.KindStream || len(ms) != 14 {
		t.Fatalf("methods: %v", ms)
	}
}

func TestStream(t *testing.T) {
	h := newHost(t, nil)

	got, err := collect(t, h.client, "svc/count", 5)
	if err != nil || strings.Join(got, ",") != "0,1,2,3,4" {
		t.Fatalf("count: %v, %v", got, err)
	}
	if got, err := collect(t, h.client, "svc/count", 0); err != nil || len(got) != 0 {
		t.Fatalf("empty stream: %v, %v", got, err)
	}

	// Values sent from many goroutines all arrive, whole.
	got, err = collect(t, h.client, "svc/parallel", nil)
	var want []string
	for i := range 16 {
		want = append(want, strconv.Itoa(i))
	}
	slices.Sort(got)
	slices.Sort(want)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("parallel: %v, %v", got, err)
	}

	// The wire format, through GET with ?params=.
	u := h.srv.URL() + "/v1/stream/svc/count?params=" + url.QueryEscape("3")
	resp, body := raw(t, http.MethodGet, u, "", h.auth())
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if want := "data: 0\n\ndata: 1\n\ndata: 2\n\nevent: end\ndata: {}\n\n"; body != want {
		t.Fatalf("stream body %q, want %q", body, want)
	}
}

func TestStreamError(t *testing.T) {
	h := newHost(t, nil)
	got, err := collect(t, h.client, "svc/failing", nil)
	if len(got) != 1 || got[0] != `"first"` {
		t.Fatalf("values before the failure: %v", got)
	}
	if e := wantRemoteError(t, err, 0, remote.CodeUnavailable); e.Message != "upstream went away" {
		t.Fatalf("message %q", e.Message)
	}

	resp, body := raw(t, http.MethodPost, h.srv.URL()+"/v1/stream/svc/failing", "", h.auth())
	want := "data: \"first\"\n\nevent: error\ndata: {\"error\":{\"code\":\"unavailable\",\"message\":\"upstream went away\"}}\n\n"
	if resp.StatusCode != http.StatusOK || body != want {
		t.Fatalf("stream body %q, want %q", body, want)
	}

	// Parameters are checked before the stream starts: a plain JSON error with its status.
	resp, body = raw(t, http.MethodGet, h.srv.URL()+"/v1/stream/svc/count?params=%7B", "", h.auth())
	wantError(t, resp, body, http.StatusBadRequest, remote.CodeBadRequest)

	// A failing fn ends the stream with its error.
	stop := errors.New("enough")
	err = h.client.Stream(ctxtest.Wait(t), "svc/count", 100, func(json.RawMessage) error { return stop })
	if !errors.Is(err, stop) {
		t.Fatalf("stream with failing fn: %v", err)
	}
}

func TestSendAfterReturn(t *testing.T) {
	h := newHost(t, nil)
	if got, err := collect(t, h.client, "svc/stash", nil); err != nil || len(got) != 0 {
		t.Fatalf("stash: %v, %v", got, err)
	}
	send := <-h.svc.stashed
	if err := send("late"); err == nil {
		t.Fatal("send after the method returned succeeded")
	}
}

func TestAuth(t *testing.T) {
	h := newHost(t, nil)
	u := h.srv.URL() + "/v1/call/svc/echo"
	for name, hdr := range map[string]http.Header{
		"missing":    {},
		"wrong":      {"Authorization": {"Bearer " + strings.Repeat("0", 64)}},
		"prefix":     {"Authorization": {"Bearer " + h.srv.Token()[:32]}},
		"basic":      {"Authorization": {"Basic " + h.srv.Token()}},
		"bare token": {"Authorization": {h.srv.Token()}},
	} {
		t.Run(name, func(t *testing.T) {
			resp, body := raw(t, http.MethodPost, u, "1", hdr)
			wantError(t, resp, body, http.StatusUnauthorized, remote.CodeUnauthorized)
			if strings.Contains(body, h.srv.Token()) {
				t.Fatal("the token leaked into an error")
			}
			if resp.Header.Get("WWW-Authenticate") == "" {
				t.Fatal("no WWW-Authenticate header")
			}
		})
	}
	// Every path needs the token, even unknown ones and the method list.
	for _, p := range []string{"/v1/methods", "/nope", "/v1/stream/svc/count"} {
		resp, body := raw(t, http.MethodGet, h.srv.URL()+p, "", nil)
		wantError(t, resp, body, http.StatusUnauthorized, remote.CodeUnauthorized)
	}
	// The scheme is case-insensitive.
	resp, body := raw(t, http.MethodPost, u, "1", http.Header{"Authorization": {"bearer " + h.srv.Token()}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("lower-case scheme: %d %s", resp.StatusCode, body)
	}

	bad := remote.NewClient(h.srv.URL(), "nope")
	_ = wantRemoteError(t, bad.Call(ctxtest.Wait(t), "svc/echo", 1, nil), http.StatusUnauthorized, remote.CodeUnauthorized)
	_, err := collect(t, bad, "svc/count", 1)
	_ = wantRemoteError(t, err, http.StatusUnauthorized, remote.CodeUnauthorized)
	_, err = bad.Methods(ctxtest.Wait(t))
	_ = wantRemoteError(t, err, http.StatusUnauthorized, remote.CodeUnauthorized)
	h.noSecretInLog(t)
}

func TestOrigin(t *testing.T) {
	h := newHost(t, nil)
	u := h.srv.URL() + "/v1/call/svc/echo"
	for _, origin := range []string{"http://evil.example", "https://evil.example:443", "null", "http://127.0.0.1.evil.example", "file://", "http://localhost:3000/path", "http://192.168.1.5:8080"} {
		hdr := h.auth()
		hdr.Set("Origin", origin)
		resp, body := raw(t, http.MethodPost, u, "1", hdr)
		wantError(t, resp, body, http.StatusForbidden, remote.CodeForbiddenOrigin)
	}
	for _, origin := range []string{"http://localhost:5173", "http://127.0.0.1:8080", "http://[::1]:3000", "http://localhost", "https://localhost:8443"} {
		hdr := h.auth()
		hdr.Set("Origin", origin)
		resp, body := raw(t, http.MethodPost, u, "1", hdr)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != origin {
			t.Fatalf("origin %s: %d %q %s", origin, resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"), body)
		}
	}
	// A loopback page's preflight needs no token; a foreign one is refused.
	resp, _ := raw(t, http.MethodOptions, u, "", http.Header{"Origin": {"http://localhost:5173"}, "Access-Control-Request-Method": {"POST"}})
	if resp.StatusCode != http.StatusNoContent || !strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Fatalf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	resp, body := raw(t, http.MethodOptions, u, "", http.Header{"Origin": {"http://evil.example"}})
	wantError(t, resp, body, http.StatusForbidden, remote.CodeForbiddenOrigin)
}

func TestHost(t *testing.T) {
	h := newHost(t, nil)
	_, port, _ := net.SplitHostPort(h.srv.Addr())
	u := h.srv.URL() + "/v1/call/svc/echo"
	for _, host := range []string{"evil.example", "evil.example:" + port, "127.0.0.1.nip.io:" + port, "10.0.0.1:" + port} {
		hdr := h.auth()
		hdr.Set("Host", host)
		resp, body := raw(t, http.MethodPost, u, "1", hdr)
		wantError(t, resp, body, http.StatusForbidden, remote.CodeForbiddenHost)
	}
	for _, host := range []string{"localhost:" + port, "LOCALHOST", "127.0.0.1", "[::1]:" + port} {
		hdr := h.auth()
		hdr.Set("Host", host)
		if resp, body := raw(t, http.MethodPost, u, "1", hdr); resp.StatusCode != http.StatusOK {
			t.Fatalf("host %s: %d %s", host, resp.StatusCode, body)
		}
	}
}

func TestErrors(t *testing.T) {
	h := newHost(t, map[string]any{"maxBodyBytes": 64})
	base := h.srv.URL()
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"unknown method", "POST", "/v1/call/svc/nope", "", 404, remote.CodeNotFound},
		{"unknown service", "POST", "/v1/call/other/echo", "", 404, remote.CodeNotFound},
		{"too many segments", "POST", "/v1/call/svc/echo/x", "", 404, remote.CodeNotFound},
		{"stream via call", "POST", "/v1/call/svc/count", "1", 404, remote.CodeNotFound},
		{"call via stream", "POST", "/v1/stream/svc/echo", "1", 404, remote.CodeNotFound},
		{"unknown path", "GET", "/v2/methods", "", 404, remote.CodeNotFound},
		{"unknown kind", "GET", "/v1/other/svc/echo", "", 404, remote.CodeNotFound},
		{"GET call", "GET", "/v1/call/svc/echo", "", 405, remote.CodeMethodNotAllowed},
		{"POST methods", "POST", "/v1/methods", "", 405, remote.CodeMethodNotAllowed},
		{"invalid JSON", "POST", "/v1/call/svc/echo", `{"a":`, 400, remote.CodeBadRequest},
		{"two values", "POST", "/v1/call/svc/echo", `1 2`, 400, remote.CodeBadRequest},
		{"too large", "POST", "/v1/call/svc/echo", `"` + strings.Repeat("x", 100) + `"`, 413, remote.CodeTooLarge},
		{"method refuses params", "POST", "/v1/call/svc/add", `"x"`, 400, remote.CodeBadRequest},
		{"coded error", "POST", "/v1/call/svc/conflict", "", 409, remote.CodeConflict},
		{"wrapped coded error", "POST", "/v1/call/svc/missing", "", 404, remote.CodeNotFound},
		{"unknown code", "POST", "/v1/call/svc/custom", "", 500, "quota_exceeded"},
		{"malformed code", "POST", "/v1/call/svc/badcode", "", 500, remote.CodeMethodError},
		{"plain error", "POST", "/v1/call/svc/plain", "", 500, remote.CodeMethodError},
		{"panic", "POST", "/v1/call/svc/panic", "", 500, remote.CodeInternal},
		{"unencodable result", "POST", "/v1/call/svc/unencodable", "", 500, remote.CodeInternal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := raw(t, tc.method, base+tc.path, tc.body, h.auth())
			wantError(t, resp, body, tc.status, tc.code)
		})
	}

	cx := ctxtest.Wait(t)
	e := wantRemoteError(t, h.client.Call(cx, "svc/conflict", nil, nil), http.StatusConflict, remote.CodeConflict)
	if e.Message != `server "fs" is being replaced` {
		t.Fatalf("message %q", e.Message)
	}
	if e := wantRemoteError(t, h.client.Call(cx, "svc/plain", nil, nil), 500, remote.CodeMethodError); e.Message != "boom" {
		t.Fatalf("message %q", e.Message)
	}
	_ = wantRemoteError(t, h.client.Call(cx, "svc/nope", nil, nil), 404, remote.CodeNotFound)
	if err := h.client.Call(cx, "noslash", nil, nil); err == nil {
		t.Fatal("a method name without a slash was sent")
	}
	h.noSecretInLog(t)
}

func TestClientDisconnectCancelsStream(t *testing.T) {
	h := newHost(t, nil)
	methodCancelled := func(when string) {
		t.Helper()
		select {
		case cause := <-h.svc.cancelled:
			if !errors.Is(cause, context.Canceled) {
				t.Fatalf("method's ctx ended with %v", cause)
			}
		case <-ctxtest.Wait(t).Done():
			t.Fatal("the method's context was not cancelled when " + when)
		}
	}
	stop := errors.New("seen enough")
	err := h.client.Stream(ctxtest.Wait(t), "svc/hang", nil, func(v json.RawMessage) error {
		if string(v) != `"ready"` {
			t.Errorf("first value %s", v)
		}
		return stop
	})
	if !errors.Is(err, stop) {
		t.Fatalf("stream: %v", err)
	}
	methodCancelled("the client left")

	// Cancelling the client's context has the same effect.
	cx, cancel := context.WithCancel(ctxtest.Wait(t))
	err = h.client.Stream(cx, "svc/hang", nil, func(json.RawMessage) error { cancel(); return nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("stream after cancel: %v", err)
	}
	methodCancelled("the client's context was")
}

func TestUnload(t *testing.T) {
	h := newHost(t, nil)
	addr, tokenFile, endpointFile := h.srv.Addr(), h.srv.TokenFile(), h.srv.EndpointFile()

	// A stream in flight when the plugin unloads is cancelled and its handler joined.
	ready := make(chan struct{})
	streamErr := make(chan error, 1)
	go func() {
		streamErr <- h.client.Stream(ctxtest.Wait(t), "svc/hang", nil, func(json.RawMessage) error {
			close(ready)
			return nil
		})
	}()
	<-ready

	if err := h.scope.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatalf("dispose: %v", err)
	}
	select {
	case cause := <-h.svc.cancelled:
		if cause == nil {
			t.Fatal("no cancellation cause")
		}
	default:
		t.Fatal("dispose returned before the in-flight method saw its context end")
	}
	if err := <-streamErr; err == nil {
		t.Fatal("the stream ended normally although the host went away")
	}

	if conn, err := net.Dial("tcp", addr); err == nil {
		_ = conn.Close()
		t.Fatal("the listener is still open after dispose")
	}
	for _, f := range []string{tokenFile, endpointFile} {
		if _, err := os.Stat(f); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s after dispose: %v", f, err)
		}
	}
	if _, ok := remote.Key.Get(h.root); ok {
		t.Fatal("service still provided")
	}
	if _, err := remote.Discover(endpointFile); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("discover after dispose: %v", err)
	}
}

func TestFiles(t *testing.T) {
	h := newHost(t, nil)
	tokenFile := h.srv.TokenFile()
	b, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != h.srv.Token()+"\n" || len(h.srv.Token()) != 64 {
		t.Fatalf("token file holds %d bytes, not the token", len(b))
	}
	if h.srv.EndpointFile() != filepath.Join(filepath.Dir(tokenFile), "remote.endpoint.json") {
		t.Fatalf("endpoint file %s", h.srv.EndpointFile())
	}
	if runtime.GOOS != "windows" {
		for _, f := range []string{tokenFile, h.srv.EndpointFile()} {
			st, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != 0o600 {
				t.Fatalf("%s has mode %v, want 0600", f, st.Mode().Perm())
			}
		}
		st, err := os.Stat(filepath.Dir(tokenFile))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o700 {
			t.Fatalf("token directory has mode %v, want 0700", st.Mode().Perm())
		}
	}
	ents, _ := os.ReadDir(filepath.Dir(tokenFile))
	if len(ents) != 2 {
		t.Fatalf("stray files next to the token: %v", ents)
	}

	var ep remote.Endpoint
	eb, err := os.ReadFile(h.srv.EndpointFile())
	if err != nil || json.Unmarshal(eb, &ep) != nil {
		t.Fatalf("endpoint file: %s %v", eb, err)
	}
	if ep.URL != h.srv.URL() || ep.PID != os.Getpid() || ep.TokenFile != tokenFile || strings.Contains(string(eb), h.srv.Token()) {
		t.Fatalf("endpoint %+v", ep)
	}
	u, tok, err := remote.ReadEndpoint(h.srv.EndpointFile())
	if err != nil || u != h.srv.URL() || tok != h.srv.Token() {
		t.Fatalf("ReadEndpoint: %s, %v", u, err)
	}
	c, err := remote.Discover(h.srv.EndpointFile())
	if err != nil {
		t.Fatal(err)
	}
	var sum int
	if err := c.Call(ctxtest.Wait(t), "svc/add", map[string]int{"A": 1, "B": 1}, &sum); err != nil || sum != 2 {
		t.Fatalf("discovered client: %d %v", sum, err)
	}
}

func TestReadEndpointRefusesForeignURL(t *testing.T) {
	dir := t.TempDir()
	tok := filepath.Join(dir, "t.token")
	if err := os.WriteFile(tok, []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"http://evil.example:80", "https://127.0.0.1:1", "http://127.0.0.1", "ftp://127.0.0.1:21"} {
		ep := filepath.Join(dir, "e.json")
		b, _ := json.Marshal(remote.Endpoint{URL: u, TokenFile: tok})
		if err := os.WriteFile(ep, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, _, err := remote.ReadEndpoint(ep); err == nil {
			t.Fatalf("endpoint %s accepted", u)
		}
	}
}

func TestNewTokenEachLoad(t *testing.T) {
	h := newHost(t, nil)
	old := h.srv
	if err := h.scope.Restart(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	ctxtest.Settle(t, h.root)
	ctxtest.RequireState(t, h.scope, ctx.Active)
	srv, ok := remote.Key.Get(h.scope.Context())
	if !ok || srv == old {
		t.Fatal("no new server after restart")
	}
	if srv.Token() == old.Token() {
		t.Fatal("the token was reused across loads")
	}
	b, err := os.ReadFile(srv.TokenFile())
	if err != nil || string(b) != srv.Token()+"\n" {
		t.Fatalf("token file after restart: %v", err)
	}
	// The old token no longer opens the new server.
	stale := remote.NewClient(srv.URL(), old.Token())
	_ = wantRemoteError(t, stale.Call(ctxtest.Wait(t), "svc/echo", 1, nil), http.StatusUnauthorized, remote.CodeUnauthorized)
	if err := remote.NewClient(srv.URL(), srv.Token()).Call(ctxtest.Wait(t), "svc/echo", 1, nil); err != nil {
		t.Fatal(err)
	}
}

// TestSecondHostRefused: a second host configured with the files of a running one refuses
// to load, naming the first one's pid, and leaves its files alone; the first keeps
// serving.
func TestSecondHostRefused(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "remote.token")
	a := newHost(t, map[string]any{"tokenFile": tokenFile})
	before, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	root := ctxtest.New(t)
	s := ctxtest.Mount(t, root, remote.Plugin, map[string]any{"tokenFile": tokenFile})
	err = s.Wait(ctxtest.Wait(t))
	inUse, ok := errors.AsType[*remote.EndpointInUseError](err)
	if !ok || inUse.PID != os.Getpid() || inUse.URL != a.srv.URL() || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second host on the same files: %v", err)
	}
	after, err := os.ReadFile(tokenFile)
	if err != nil || string(after) != string(before) {
		t.Fatalf("the second host replaced the first one's token file: %v", err)
	}
	u, tok, err := remote.ReadEndpoint(remote.EndpointFileFor(tokenFile))
	if err != nil || u != a.srv.URL() || tok != a.srv.Token() {
		t.Fatalf("the first host's endpoint: %s %v", u, err)
	}
}

// deadPID returns the id of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestStaleEndpoint: an endpoint file whose process is gone is reported as stale (and as
// no running host), and a new host replaces it.
func TestStaleEndpoint(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "remote.token")
	if err := os.WriteFile(tokenFile, []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pid := deadPID(t)
	b, _ := json.Marshal(remote.Endpoint{URL: "http://127.0.0.1:9", PID: pid, TokenFile: tokenFile})
	endpoint := remote.EndpointFileFor(tokenFile)
	if err := os.WriteFile(endpoint, b, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := remote.Discover(endpoint)
	if !errors.Is(err, remote.ErrStaleEndpoint) || !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), strconv.Itoa(pid)) {
		t.Fatalf("Discover of a stale file: %v", err)
	}
	h := newHost(t, map[string]any{"tokenFile": tokenFile})
	u, _, err := remote.ReadEndpoint(endpoint)
	if err != nil || u != h.srv.URL() {
		t.Fatalf("the stale file was not replaced: %s %v", u, err)
	}
	if !strings.Contains(h.log.String(), "replacing a stale endpoint file") {
		t.Errorf("no note of the replacement:\n%s", h.log.String())
	}
}

func TestLateExposure(t *testing.T) {
	dir := t.TempDir()
	root := ctxtest.New(t)
	rs := ctxtest.MountActive(t, root, remote.Plugin, map[string]any{"tokenFile": filepath.Join(dir, "remote.token")})
	srv, _ := remote.Key.Get(rs.Context())
	c := remote.NewClient(srv.URL(), srv.Token())

	_ = wantRemoteError(t, c.Call(ctxtest.Wait(t), "svc/echo", 1, nil), 404, remote.CodeNotFound)
	svc := &service{cancelled: make(chan error, 1), stashed: make(chan func(any) error, 1)}
	s := ctxtest.MountActive(t, root, servicePlugin(svc), nil)
	var v int
	if err := c.Call(ctxtest.Wait(t), "svc/echo", 7, &v); err != nil || v != 7 {
		t.Fatalf("method exposed after start: %d %v", v, err)
	}
	if got, err := collect(t, c, "svc/count", 2); err != nil || len(got) != 2 {
		t.Fatalf("stream exposed after start: %v %v", got, err)
	}
	if err := s.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	_ = wantRemoteError(t, c.Call(ctxtest.Wait(t), "svc/echo", 1, nil), 404, remote.CodeNotFound)
	if ms, err := c.Methods(ctxtest.Wait(t)); err != nil || len(ms) != 0 || ms == nil {
		t.Fatalf("methods after withdrawal: %#v %v", ms, err)
	}
}
