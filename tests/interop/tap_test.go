//go:build unix

package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/mcpclient"
)

// A tap sits between the plugin and the server: over stdio a relay process (this test
// binary, re-executed), over HTTP an in-process reverse proxy. It reports every message the
// client sends once the server has it, and holds the client's notifications/initialized
// until the server has answered the client's first tools/list (see gate).

const methodInitialized = "notifications/initialized"

// The environment of the stdio relay (set through the plugin's explicit env).
const (
	relaySocketEnv = "HARNESS_INTEROP_RELAY_SOCKET" // Unix socket the relay reports to
	relayNodeEnv   = "HARNESS_INTEROP_RELAY_NODE"   // node executable
	relayEntryEnv  = "HARNESS_INTEROP_RELAY_ENTRY"  // the package's bin script
)

// event is one message from the client to the server, as the tap saw it.
type event struct {
	Method string `json:"method"`
	// Tool is the params.name of a tools/call.
	Tool string `json:"tool,omitempty"`
	// Held marks notifications/initialized kept back by the gate; Released marks its
	// delivery to the server, after the first tools/list was answered.
	Held     bool `json:"held,omitempty"`
	Released bool `json:"released,omitempty"`
	// Err reports a failure of the tap itself (delivering the held notification).
	Err string `json:"err,omitempty"`
}

func (e event) String() string {
	s := e.Method
	switch {
	case e.Tool != "":
		s += "(" + e.Tool + ")"
	case e.Held:
		s += " held"
	case e.Released:
		s += " released"
	}
	if e.Err != "" {
		s += " error: " + e.Err
	}
	return s
}

// tap collects events. It is safe for concurrent use.
type tap struct {
	mu     sync.Mutex
	events []event
	signal chan struct{}
}

func newTap() *tap { return &tap{signal: make(chan struct{}, 1)} }

func (p *tap) add(e event) {
	p.mu.Lock()
	p.events = append(p.events, e)
	p.mu.Unlock()
	select {
	case p.signal <- struct{}{}:
	default:
	}
}

func (p *tap) all() []event {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.events)
}

// waitFor waits until pred holds for the events seen so far (bounded by ctxtest.Timeout)
// and returns them.
func (p *tap) waitFor(t *testing.T, what string, pred func([]event) bool) []event {
	t.Helper()
	deadline := time.NewTimer(ctxtest.Timeout)
	defer deadline.Stop()
	for {
		if evs := p.all(); pred(evs) {
			return evs
		}
		select {
		case <-p.signal:
		case <-deadline.C:
			t.Fatalf("the tap never saw %s; it saw %v", what, p.all())
		}
	}
}

// message is what the tap reads of one JSON-RPC message.
type message struct {
	method string // "" for a response
	id     string // the raw JSON id, "" for a notification
	tool   string // params.name of a tools/call
}

func parseMessage(b []byte) message {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(b, &m) != nil {
		return message{} // a batch or garbage: not for the tap
	}
	out := message{method: m.Method, id: string(bytes.TrimSpace(m.ID))}
	if m.Method == "tools/call" {
		var p struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(m.Params, &p)
		out.tool = p.Name
	}
	return out
}

func (m message) event() event { return event{Method: m.method, Tool: m.tool} }

// gate holds the client's notifications/initialized until the server has answered the
// client's first tools/list. The pinned server registers the tools that depend on client
// capabilities when that notification arrives, and announces them with
// notifications/tools/list_changed; normally that happens before the client's first
// tools/list is served. Through the gate the client's first discovery sees the startup tools
// only, and the late ones can reach it only through list_changed. It is safe for concurrent
// use.
type gate struct {
	mu     sync.Mutex
	listID string // id of the client's first tools/list, once sent
	open   bool   // the first tools/list was answered
	held   func() // delivers the held notification
}

// hold keeps deliver for later and reports true, unless the gate is already open.
func (g *gate) hold(deliver func()) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open || g.held != nil {
		return false
	}
	g.held = deliver
	return true
}

// sent notes a request the client sent to the server.
func (g *gate) sent(m message) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if m.method == "tools/list" && g.listID == "" && m.id != "" {
		g.listID = m.id
	}
}

// answered notes that the server's response to request id reached the client. The answer
// to the first tools/list opens the gate and delivers the held notification.
func (g *gate) answered(id string) {
	g.mu.Lock()
	if g.open || g.listID == "" || id != g.listID {
		g.mu.Unlock()
		return
	}
	g.open = true
	deliver := g.held
	g.held = nil
	g.mu.Unlock()
	if deliver != nil {
		deliver()
	}
}

// stdioTap returns a tap and a configuration that runs the relay (this test binary) in front
// of `node <entry> stdio`; the relay reports to the tap over a Unix socket.
func stdioTap(t *testing.T, srv server) (*tap, mcpclient.Config) {
	t.Helper()
	// A short directory of our own: socket paths are limited to about 100 bytes.
	dir, err := os.MkdirTemp("", "interop-")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "tap.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	p := newTap()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() {
				dec := json.NewDecoder(c)
				for {
					var e event
					if dec.Decode(&e) != nil {
						return
					}
					p.add(e)
				}
			})
		}
	})
	// Registered before the caller mounts anything, so this runs after the plugin is gone.
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
		_ = os.RemoveAll(dir)
	})

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := newConfig(mcpclient.TransportStdio)
	cfg.Command = exe
	cfg.Env = map[string]string{relaySocketEnv: sock, relayNodeEnv: srv.node, relayEntryEnv: srv.entry}
	return p, cfg
}

// runRelay is the relay process: it starts `node <entry> stdio`, copies messages both ways
// line by line, reports each client message to the tap after writing it to the server, and
// gates notifications/initialized. It exits when the server's stdout ends.
func runRelay() int {
	report, err := net.Dial("unix", os.Getenv(relaySocketEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		return 2
	}
	defer func() { _ = report.Close() }()
	var reportMu sync.Mutex
	enc := json.NewEncoder(report)
	emit := func(e event) {
		reportMu.Lock()
		defer reportMu.Unlock()
		_ = enc.Encode(e) // a closed tap only loses reports
	}

	cmd := exec.Command(os.Getenv(relayNodeEnv), os.Getenv(relayEntryEnv), "stdio")
	cmd.Stderr = os.Stderr
	toServer, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		return 2
	}
	fromServer, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		return 2
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		return 2
	}

	var (
		inMu   sync.Mutex // serialises writes to the server and closing its stdin
		closed bool
	)
	write := func(line []byte) error {
		inMu.Lock()
		defer inMu.Unlock()
		if closed {
			return io.ErrClosedPipe
		}
		_, err := toServer.Write(line)
		return err
	}
	var g gate
	go func() { // client → server
		defer func() {
			inMu.Lock()
			closed = true
			_ = toServer.Close()
			inMu.Unlock()
		}()
		in := bufio.NewReader(os.Stdin)
		for {
			line, err := in.ReadBytes('\n')
			if len(line) > 0 {
				m := parseMessage(line)
				if m.method == methodInitialized && g.hold(func() {
					e := event{Method: methodInitialized, Released: true}
					if err := write(line); err != nil {
						e = event{Method: methodInitialized, Err: err.Error()}
					}
					emit(e)
				}) {
					emit(event{Method: methodInitialized, Held: true})
					continue
				}
				g.sent(m)
				if write(line) != nil {
					return
				}
				if m.method != "" {
					emit(m.event())
				}
			}
			if err != nil {
				return
			}
		}
	}()

	out := bufio.NewReader(fromServer) // server → client
	for {
		line, err := out.ReadBytes('\n')
		if len(line) > 0 {
			if _, werr := os.Stdout.Write(line); werr != nil {
				break
			}
			if m := parseMessage(line); m.method == "" && m.id != "" {
				g.answered(m.id)
			}
		}
		if err != nil {
			break
		}
	}
	_ = cmd.Wait()
	return 0
}

// messageKey carries the parsed client message of a proxied request to ModifyResponse.
type messageKey struct{}

// httpTap starts a reverse proxy in front of the Streamable HTTP endpoint upstream and
// returns a tap and the proxy's endpoint. A client message is reported when the server's
// response headers arrive (the server has dispatched it by then).
func httpTap(t *testing.T, upstream string) (*tap, string) {
	t.Helper()
	target, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	p := newTap()
	transport := &http.Transport{}
	errs := &tail{max: 16 << 10}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme = target.Scheme
			r.Out.URL.Host = target.Host
			r.Out.Host = target.Host
		},
		Transport:     transport,
		FlushInterval: -1, // SSE: pass every event on at once
		ModifyResponse: func(resp *http.Response) error {
			if m, ok := resp.Request.Context().Value(messageKey{}).(message); ok && m.method != "" {
				p.add(m.event())
			}
			return nil
		},
		ErrorLog: log.New(errs, "proxy: ", 0),
	}
	deliver := func(header http.Header, body []byte) {
		e := event{Method: methodInitialized, Released: true}
		if err := post(transport, upstream, header, body); err != nil {
			e = event{Method: methodInitialized, Err: err.Error()}
		}
		p.add(e)
	}
	var g gate
	handler := func(w http.ResponseWriter, r *http.Request) {
		var m message
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			m = parseMessage(body)
			if m.method == methodInitialized {
				header := r.Header.Clone()
				if g.hold(func() { deliver(header, body) }) {
					p.add(event{Method: methodInitialized, Held: true})
					w.WriteHeader(http.StatusAccepted) // what the server answers a notification
					return
				}
			}
			g.sent(m)
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
			r = r.WithContext(context.WithValue(r.Context(), messageKey{}, m))
		}
		proxy.ServeHTTP(w, r)
		if m.method != "" && m.id != "" {
			// The whole response (JSON or an SSE stream that ends with it) was copied.
			g.answered(m.id)
		}
	}
	ts := httptest.NewServer(http.HandlerFunc(handler))
	// Registered before the caller mounts anything, so this runs after the plugin is gone.
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		transport.CloseIdleConnections()
		if t.Failed() {
			t.Logf("proxy errors:\n%s", errs.String())
		}
	})
	return p, ts.URL + target.Path
}

// post sends one JSON-RPC message to the Streamable HTTP endpoint with the client's headers.
func post(transport http.RoundTripper, endpoint string, header http.Header, body []byte) error {
	cx, cancel := context.WithTimeout(context.Background(), ctxtest.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header = header
	resp, err := transport.RoundTrip(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("POST %s: %s: %s", methodInitialized, resp.Status, strings.TrimSpace(string(b)))
	}
	return nil
}
