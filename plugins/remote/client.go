package remote

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/cordisgo/harness/internal/loopback"
)

// CodeBadResponse is the code of the *Error a [Client] returns when the host's answer
// cannot be understood (a non-JSON error body, a stream cut before its end). Hosts never
// send it.
const CodeBadResponse = "bad_response"

// Client calls the remote API of a running host. Make one with [NewClient] or [Discover].
//
// A Client is safe for concurrent use once its fields are set; do not change them while
// calls are running.
type Client struct {
	// BaseURL is the API's base URL, such as "http://127.0.0.1:43117".
	BaseURL string
	// Token is the bearer token.
	Token string
	// HTTP sends the requests. Nil means a shared client that never uses a proxy. Do not set
	// a Timeout on it if you use streams: cancel through the context instead.
	HTTP *http.Client
}

// defaultHTTP is the shared client used when Client.HTTP is nil. It never goes through a
// proxy: the API is on loopback, and the token must not travel anywhere else.
var defaultHTTP = &http.Client{Transport: &http.Transport{
	Proxy:               nil,
	DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
	MaxIdleConnsPerHost: 8,
	IdleConnTimeout:     90 * time.Second,
}}

// NewClient returns a client for the API at baseURL using token.
func NewClient(baseURL, token string) *Client {
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), Token: token}
}

// Discover returns a client for the host that wrote endpointFile; "" means
// [DefaultEndpointFile]. When no host is running, the error wraps [os.ErrNotExist].
func Discover(endpointFile string) (*Client, error) {
	if endpointFile == "" {
		f, err := DefaultEndpointFile()
		if err != nil {
			return nil, err
		}
		endpointFile = f
	}
	u, tok, err := ReadEndpoint(endpointFile)
	if err != nil {
		return nil, err
	}
	return NewClient(u, tok), nil
}

// ReadEndpoint reads an endpoint file written by the plugin and the token file it names,
// and returns the API's base URL and token. It refuses an endpoint whose URL is not an
// http URL on the loopback, so the token is never sent elsewhere. When the host is not
// running (or was stopped), the error wraps [os.ErrNotExist]; a host that was killed
// leaves a stale endpoint behind, which is reported as [ErrStaleEndpoint] when its process
// is gone (a live process that no longer serves makes calls fail with a connection error).
func ReadEndpoint(path string) (baseURL, token string, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", "", fmt.Errorf("remote endpoint: %w", err)
	}
	var ep Endpoint
	if err := json.Unmarshal(b, &ep); err != nil {
		return "", "", fmt.Errorf("remote endpoint %s: %w", path, err)
	}
	if ep.PID > 0 && !loopback.ProcessAlive(ep.PID) {
		return "", "", &staleError{file: path, pid: ep.PID}
	}
	u, err := url.Parse(ep.URL)
	if err != nil || u.Scheme != "http" || !loopback.LoopbackHost(u.Hostname()) || u.Port() == "" {
		return "", "", fmt.Errorf("remote endpoint %s: url %q is not an http URL on the loopback", path, ep.URL)
	}
	if ep.TokenFile == "" {
		return "", "", fmt.Errorf("remote endpoint %s: no tokenFile", path)
	}
	tb, err := os.ReadFile(ep.TokenFile)
	if err != nil {
		return "", "", fmt.Errorf("remote endpoint %s: token: %w", path, err)
	}
	token = strings.TrimSpace(string(tb))
	if raw, err := hex.DecodeString(token); err != nil || len(raw) != 32 {
		return "", "", fmt.Errorf("remote endpoint %s: token file %s does not hold a token", path, ep.TokenFile)
	}
	return strings.TrimRight(ep.URL, "/"), token, nil
}

// post sends params to the method through the endpoint kind ("call" or "stream") and
// returns the host's answer when it is a 200; any other is read as its *[Error].
func (c *Client) post(cx context.Context, kind, method string, params any) (*http.Response, error) {
	resp, err := c.do(cx, http.MethodPost, kind, method, params)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return nil, readError(resp)
	}
	return resp, nil
}

// Call calls the request/response method (such as "mcpManager/list") with params encoded
// as JSON (nil sends no body, which the host reads as null; use [json.RawMessage] for
// encoded JSON) and decodes the result into result, unless result is nil. An error
// answered by the host is an *[Error].
func (c *Client) Call(cx context.Context, method string, params, result any) error {
	resp, err := c.post(cx, "call", method, params)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var body struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return &Error{Code: CodeBadResponse, Message: fmt.Sprintf("answer to %s: %v", method, err), Status: resp.StatusCode}
	}
	if result == nil {
		return nil
	}
	if len(body.Result) == 0 {
		body.Result = json.RawMessage("null")
	}
	if err := json.Unmarshal(body.Result, result); err != nil {
		return fmt.Errorf("remote: result of %s: %w", method, err)
	}
	return nil
}

// Stream calls the stream method (such as "mcpManager/watch") and passes each value the
// method sends to fn, in order. It returns nil when the method ends normally, the method's
// failure as an *[Error], fn's error if fn fails (which ends the stream), or ctx's error
// when ctx ends; leaving cancels the method on the host.
func (c *Client) Stream(cx context.Context, method string, params any, fn func(json.RawMessage) error) error {
	cx, cancel := context.WithCancel(cx)
	defer cancel()
	resp, err := c.post(cx, "stream", method, params)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	var event string
	var data bytes.Buffer
	hasData := false
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			if cx.Err() != nil {
				return cx.Err()
			}
			if errors.Is(err, io.EOF) {
				return &Error{Code: CodeBadResponse, Message: fmt.Sprintf("stream %s ended without an end event", method), Status: resp.StatusCode}
			}
			return fmt.Errorf("remote: stream %s: %w", method, err)
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 { // dispatch
			ev, payload, had := event, bytes.Clone(data.Bytes()), hasData
			event, hasData = "", false
			data.Reset()
			switch ev {
			case "", "message":
				if !had {
					continue // an event without data is not dispatched
				}
				if err := fn(json.RawMessage(payload)); err != nil {
					return err
				}
			case "end":
				return nil
			case "error":
				var body errorBody
				if err := json.Unmarshal(payload, &body); err != nil || body.Error == nil {
					return &Error{Code: CodeBadResponse, Message: fmt.Sprintf("stream %s failed with an unreadable error event", method)}
				}
				return body.Error
			}
			continue
		}
		if line[0] == ':' { // comment
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			event = string(value)
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.Write(value)
			hasData = true
		}
	}
}

// Methods lists the methods the host exposes.
func (c *Client) Methods(cx context.Context) ([]MethodInfo, error) {
	req, err := c.request(cx, http.MethodGet, c.BaseURL+"/v1/methods", nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return nil, fmt.Errorf("remote: methods: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, readError(resp)
	}
	var body struct {
		Methods []MethodInfo `json:"methods"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, &Error{Code: CodeBadResponse, Message: fmt.Sprintf("methods: %v", err), Status: resp.StatusCode}
	}
	return body.Methods, nil
}

// do sends params to /v1/<kind>/<method>.
func (c *Client) do(cx context.Context, httpMethod, kind, method string, params any) (*http.Response, error) {
	svc, name, ok := strings.Cut(method, "/")
	if !ok || svc == "" || name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("remote: method %q: must look like service/method", method)
	}
	var body io.Reader
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return nil, fmt.Errorf("remote: params of %s: %w", method, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := c.request(cx, httpMethod, c.BaseURL+"/v1/"+kind+"/"+url.PathEscape(svc)+"/"+url.PathEscape(name), body)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if kind == "stream" {
		req.Header.Set("Accept", "text/event-stream")
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return nil, fmt.Errorf("remote: %s: %w", method, err)
	}
	return resp, nil
}

func (c *Client) request(cx context.Context, method, u string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(cx, method, u, body)
	if err != nil {
		return nil, fmt.Errorf("remote: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	return req, nil
}

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return defaultHTTP
}

// readError decodes the error body of a refused request.
func readError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var body errorBody
	if err := json.Unmarshal(b, &body); err != nil || body.Error == nil {
		return &Error{Code: CodeBadResponse, Message: fmt.Sprintf("HTTP %s without an error body", resp.Status), Status: resp.StatusCode}
	}
	body.Error.Status = resp.StatusCode
	return body.Error
}
