// Package modeltest is a local OpenAI-compatible Chat Completions server that behaves like
// DeepSeek V4's API, for the tests of the model service, the agent loop and the binary: no
// test reaches the internet.
//
// It enforces the request rules of DeepSeek's API (authentication, model ids, the
// deserialisation of messages and tools, the 128-tool limit, function names, tool_choice in
// thinking mode, the pairing of tool calls with tool messages, the passing back of
// reasoning_content, thinking and reasoning_effort, max_tokens, response_format) and answers
// a broken request with DeepSeek's status and error body
// ({"error":{"message","type","param","code"}}) in DeepSeek's wording. It answers with
// scripted [Reply]s, streamed in DeepSeek's format (a role delta, reasoning deltas, content
// deltas, tool calls by index with their arguments in pieces, the finish reason, the usage
// event, [DONE]) or as one JSON answer, and it computes prompt_cache_hit_tokens from a byte
// prefix comparison with the earlier requests, as DeepSeek's prefix cache does.
//
// It also serves POST /embeddings with a deterministic embedding of its own
// ([EmbeddingModel], [Embed]), for the clients of OpenAI-compatible embeddings endpoints.
//
// Faults are per reply: an HTTP error status with Retry-After (429, 500, 503), a stream cut
// mid-answer or before any of the answer (the connection drops, or the stream ends without
// its finish), and a slow first
// token that the test releases through a channel. Every request is recorded with its raw body,
// its warnings and the rejection it got, for assertions and prefix-stability measurements.
//
// A [Server] made by [New] fails its test when it rejects a request the test did not expect
// it to ([Options.ExpectRejections]), so a test of a well-behaved client needs no assertions
// of its own for the API's rules.
//
// # Concurrency
//
// A Server is safe for concurrent use: requests are served concurrently, scripted replies are
// taken in arrival order, and the accessors may be called while requests run.
package modeltest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The model ids the server accepts by default, as DeepSeek V4 does.
const (
	ModelFlash = "deepseek-v4-flash"
	ModelPro   = "deepseek-v4-pro"
)

// DefaultKey is the API key a server accepts when [Options.Key] is empty.
const DefaultKey = "sk-modeltest-0123456789abcdef"

// MaxTools is the most tools DeepSeek accepts in one request.
const MaxTools = 128

// MaxTokensLimit is the largest max_tokens DeepSeek V4 accepts.
const MaxTokensLimit = 393216

// Options configure a [Server]. The zero value is a DeepSeek V4 with [DefaultKey], answering
// from an empty queue of replies (see [Server.Push]).
type Options struct {
	// Key is the API key the server accepts ("" means DefaultKey).
	Key string
	// Models are the model ids the server accepts (nil means ModelFlash and ModelPro).
	Models []string
	// Reply, when not nil, makes each answer; it is called on the request's goroutine, in
	// parallel for concurrent requests. When nil, answers are taken from Replies and then
	// from what [Server.Push] added, one per request.
	Reply func(*Call) Reply
	// Replies is the initial queue of scripted answers.
	Replies []Reply
	// ExpectRejections lets a test provoke 400 and 401 answers; otherwise a rejected request
	// fails the test given to [New] with the server's error message.
	ExpectRejections bool
	// CacheUnit is the prefix cache's granularity in tokens (0 means 64, DeepSeek's unit).
	CacheUnit int
	// ContextWindow, when not 0, is the model's context length in tokens: a request whose
	// estimated prompt tokens (4 bytes a token, as the usage reports them) plus its
	// max_tokens exceed it is refused with 400 and the OpenAI-compatible wording (rule O2:
	// "This model's maximum context length is N tokens. However, you requested …"). 0 means
	// no limit is enforced (DeepSeek V4's million tokens are never reached by a test).
	ContextWindow int
}

// Reply is one scripted answer. A Reply with Status set answers with that error and nothing
// else; otherwise the answer is Reasoning (in thinking mode only), Content and ToolCalls.
type Reply struct {
	// Reasoning is the reasoning text, streamed before the content. In thinking mode the
	// answer always carries reasoning_content ("" when Reasoning is empty); with thinking
	// disabled it carries none.
	Reasoning string
	Content   string
	ToolCalls []ToolCall
	// FinishReason overrides the finish reason ("" means "tool_calls" when there are tool
	// calls, else "stop"); "length" simulates an answer cut by max_tokens.
	FinishReason string

	// Status, when not 0, answers with this HTTP status and DeepSeek's error body (Message,
	// or the status's usual wording).
	Status  int
	Message string
	// RetryAfter is sent as the Retry-After header of an error answer.
	RetryAfter string

	// Cut makes a stream stop mid-answer: after half of its pieces the connection drops
	// (CutDrop) or the stream ends without a finish reason and [DONE] (CutEnd). A
	// non-streaming answer with CutDrop drops the connection before its body.
	Cut Cut
	// CutBeforeAnswer moves a stream's cut to the end of the reasoning: nothing of the
	// answer (no content, no tool call) is sent before it.
	CutBeforeAnswer bool
	// Hold, when not nil, delays the first reasoning or content token (the headers and the
	// role delta are sent) until it is closed or receives.
	Hold <-chan struct{}
}

// Cut is how a scripted stream ends early.
type Cut uint8

// The ways a stream can end early.
const (
	// CutNone streams the whole answer.
	CutNone Cut = iota
	// CutDrop drops the connection mid-answer (the client reads an unexpected EOF).
	CutDrop
	// CutEnd ends the HTTP response cleanly mid-answer: no finish reason, no [DONE].
	CutEnd
)

// ToolCall is a scripted function call. An empty ID becomes "call_<request>_<index>".
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// Call is a request that passed every rule, as the Reply function sees it.
type Call struct {
	// Index is the request's position among all requests the server received (from 0).
	Index    int
	Model    string
	Thinking bool
	// ReasoningEffort is the effort as sent ("" when absent).
	ReasoningEffort string
	Stream          bool
	Messages        []Message
	// Tools are the function names, in request order.
	Tools      []string
	ToolChoice string
	MaxTokens  int
	// Body is the raw request body.
	Body []byte
}

// Message is a request message as the server understood it.
type Message struct {
	Role string
	// Content is the text (the text parts joined for an array of parts).
	Content string
	// Reasoning is the reasoning_content sent back (nil when absent or null).
	Reasoning  *string
	ToolCalls  []ToolCall
	ToolCallID string
}

// LastUser returns the content of the last user message ("" when there is none).
func (c *Call) LastUser() string {
	for i := len(c.Messages) - 1; i >= 0; i-- {
		if c.Messages[i].Role == "user" {
			return c.Messages[i].Content
		}
	}
	return ""
}

// Request is the record of one HTTP request to the chat completions endpoint.
type Request struct {
	Index int
	// Header is the request's header (the Authorization header included: the key is the
	// test's).
	Header http.Header
	// Body is the raw request body.
	Body []byte
	// Status is the HTTP status of the answer (200, or the rejection's, or a scripted fault's).
	Status int
	// Error is the error message of a non-200 answer.
	Error string
	// Warnings are what DeepSeek accepts but a careful client should not send: unknown
	// top-level fields, sampling parameters in thinking mode, an empty reasoning_content sent
	// back, tools without a description, duplicate tool names, strict tools, stream_options
	// without stream, n other than 1.
	Warnings []string
	// Prompt is the text the prefix cache compares: the leading system messages, the tools
	// and the other messages, each as its raw JSON bytes.
	Prompt []byte
	// PrefixBytes is the longest common prefix of Prompt with an earlier accepted request's.
	PrefixBytes int
	// PromptTokens and CacheHitTokens are the usage reported (estimated at 4 bytes a token;
	// hits in CacheUnit steps).
	PromptTokens   int
	CacheHitTokens int
	Model          string
	Stream         bool
}

// Server is a running test API. Its URL is the base URL a client is given (the endpoint is
// URL+"/chat/completions"; "/v1/chat/completions" works as well).
type Server struct {
	// URL is the base URL, "http://127.0.0.1:PORT".
	URL string
	// Key is the accepted API key.
	Key string

	opts   Options
	srv    *httptest.Server
	tb     testing.TB
	models map[string]bool

	known memo

	mu       sync.Mutex
	queue    []Reply
	requests []Request
	// embedRequests are the embeddings requests' records
	embedRequests []EmbeddingsRequest
	prompts       [][]byte
}

// New starts a server for the test tb, closed when the test ends. A request the server
// rejects fails tb unless [Options.ExpectRejections]; so does a request that finds no
// scripted reply.
func New(tb testing.TB, o Options) *Server {
	tb.Helper()
	s := start(o)
	s.tb = tb
	tb.Cleanup(s.Close)
	return s
}

// NewServer starts a server outside a test (an Example, a benchmark's setup). Call
// [Server.Close] when done.
func NewServer(o Options) *Server { return start(o) }

func start(o Options) *Server {
	if o.Key == "" {
		o.Key = DefaultKey
	}
	if o.Models == nil {
		o.Models = []string{ModelFlash, ModelPro}
	}
	if o.CacheUnit <= 0 {
		o.CacheUnit = 64
	}
	s := &Server{Key: o.Key, opts: o, models: map[string]bool{}, queue: append([]Reply(nil), o.Replies...)}
	for _, m := range o.Models {
		s.models[m] = true
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /chat/completions", s.handle)
	mux.HandleFunc("POST /v1/chat/completions", s.handle)
	mux.HandleFunc("POST /embeddings", s.embeddings)
	mux.HandleFunc("POST /v1/embeddings", s.embeddings)
	mux.HandleFunc("GET /models", s.listModels)
	mux.HandleFunc("GET /v1/models", s.listModels)
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL
	return s
}

// Close stops the server, waiting for the requests being served. A held reply must have
// been released (or its client gone) for Close to return.
func (s *Server) Close() { s.srv.Close() }

// Push appends scripted replies to the queue.
func (s *Server) Push(r ...Reply) {
	s.mu.Lock()
	s.queue = append(s.queue, r...)
	s.mu.Unlock()
}

// Pending returns how many scripted replies are still queued.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Requests returns the records of every request so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Accepted returns the records of the requests that passed every rule and got a scripted
// answer (status 200), in arrival order.
func (s *Server) Accepted() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Request
	for _, r := range s.requests {
		if r.Status == http.StatusOK {
			out = append(out, r)
		}
	}
	return out
}

// Rejections returns the error messages of the requests the server refused (400 and 401),
// in arrival order.
func (s *Server) Rejections() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, r := range s.requests {
		if r.Status == http.StatusBadRequest || r.Status == http.StatusUnauthorized {
			out = append(out, r.Error)
		}
	}
	return out
}

// CommonPrefix returns the length of the longest common byte prefix of a and b.
func CommonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	// Whole blocks first (bytes.Equal compares them many bytes at a time), then the bytes of
	// the first block that differs.
	const block = 256
	i := 0
	for i+block <= n && bytes.Equal(a[i:i+block], b[i:i+block]) {
		i += block
	}
	for ; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// PrefixRatios returns, for each accepted request after the first, the share of its prompt
// that is a byte-identical prefix of the previous accepted request's prompt (1 = all of it).
func (s *Server) PrefixRatios() []float64 {
	acc := s.Accepted()
	var out []float64
	for i := 1; i < len(acc); i++ {
		p := acc[i].Prompt
		if len(p) == 0 {
			out = append(out, 1)
			continue
		}
		out = append(out, float64(CommonPrefix(acc[i-1].Prompt, p))/float64(len(p)))
	}
	return out
}

func (s *Server) listModels(w http.ResponseWriter, r *http.Request) {
	if msg, ok := s.authorize(r); !ok {
		writeError(w, http.StatusUnauthorized, msg, "authentication_error", "")
		return
	}
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		OwnedBy string `json:"owned_by"`
	}
	out := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list"}
	for _, m := range s.opts.Models {
		out.Data = append(out.Data, model{ID: m, Object: "model", OwnedBy: "modeltest"})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

func (s *Server) authorize(r *http.Request) (string, bool) {
	auth := r.Header.Get("Authorization")
	key, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok || key == "" {
		return "Authentication Fails (auth header format should be Bearer sk-...)", false
	}
	if key != s.Key {
		tail := key
		if len(tail) > 4 {
			tail = tail[len(tail)-4:]
		}
		return "Authentication Fails, Your api key: ****" + tail + " is invalid", false
	}
	return "", true
}

// record appends a request record and returns its index.
func (s *Server) record(r Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.Index = len(s.requests)
	s.requests = append(s.requests, r)
	return r.Index
}

func (s *Server) update(i int, f func(*Request)) {
	s.mu.Lock()
	f(&s.requests[i])
	s.mu.Unlock()
}

func (s *Server) reject(w http.ResponseWriter, idx, status int, msg, typ string) {
	s.update(idx, func(r *Request) { r.Status, r.Error = status, msg })
	if s.tb != nil && !s.opts.ExpectRejections {
		s.tb.Errorf("modeltest: request %d rejected with %d: %s", idx, status, msg)
	}
	writeError(w, status, msg, typ, "")
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	body, err := readAll(r)
	if err != nil {
		return
	}
	idx := s.record(Request{Header: r.Header.Clone(), Body: body})
	if msg, ok := s.authorize(r); !ok {
		s.reject(w, idx, http.StatusUnauthorized, msg, "authentication_error")
		return
	}
	req, rerr := parse(body, s.models, &s.known)
	if req != nil {
		s.update(idx, func(rec *Request) {
			rec.Warnings, rec.Model, rec.Stream = req.warnings, req.call.Model, req.call.Stream
		})
	}
	if rerr != "" {
		s.reject(w, idx, http.StatusBadRequest, rerr, "invalid_request_error")
		return
	}
	call := &req.call
	call.Index, call.Body = idx, body
	if msg := s.overflow(req); msg != "" {
		s.reject(w, idx, http.StatusBadRequest, msg, "invalid_request_error")
		return
	}

	reply, ok := s.next(call)
	if !ok {
		msg := fmt.Sprintf("modeltest: no scripted reply for request %d", idx)
		s.update(idx, func(rec *Request) { rec.Status, rec.Error = http.StatusInternalServerError, msg })
		if s.tb != nil {
			s.tb.Errorf("%s", msg)
		}
		writeError(w, http.StatusInternalServerError, msg, "api_error", "")
		return
	}
	if reply.Status != 0 {
		msg := reply.Message
		if msg == "" {
			msg = statusWording(reply.Status)
		}
		s.update(idx, func(rec *Request) { rec.Status, rec.Error = reply.Status, msg })
		if reply.RetryAfter != "" {
			w.Header().Set("Retry-After", reply.RetryAfter)
		}
		writeError(w, reply.Status, msg, statusType(reply.Status), "")
		return
	}

	u := s.usage(idx, req, call, &reply)
	s.update(idx, func(rec *Request) { rec.Status = http.StatusOK })
	if call.Stream {
		s.stream(w, r, call, req.includeUsage, &reply, u)
		return
	}
	s.answer(w, r, call, &reply, u)
}

// overflow applies rule O2: the estimated prompt plus max_tokens within the context window.
// It returns the refusal's message, or "".
func (s *Server) overflow(p *parsed) string {
	window := s.opts.ContextWindow
	if window <= 0 {
		return ""
	}
	prompt := tokens(len(p.prompt))
	if prompt+p.call.MaxTokens <= window {
		return ""
	}
	return fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
		window, prompt+p.call.MaxTokens, prompt, p.call.MaxTokens)
}

func (s *Server) next(call *Call) (Reply, bool) {
	if s.opts.Reply != nil {
		return s.opts.Reply(call), true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return Reply{}, false
	}
	r := s.queue[0]
	s.queue = s.queue[1:]
	return r, true
}

func readAll(r *http.Request) ([]byte, error) {
	var b bytes.Buffer
	if r.ContentLength > 0 {
		b.Grow(int(r.ContentLength) + bytes.MinRead)
	}
	_, err := b.ReadFrom(r.Body)
	return b.Bytes(), err
}

// errorBody is DeepSeek's error object.
type errorBody struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    string  `json:"code"`
	} `json:"error"`
}

func writeError(w http.ResponseWriter, status int, msg, typ, code string) {
	var e errorBody
	e.Error.Message, e.Error.Type, e.Error.Code = msg, typ, code
	if code == "" {
		e.Error.Code = typ
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(e)
}

func statusWording(status int) string {
	switch status {
	case http.StatusTooManyRequests:
		return "Rate Limit Reached"
	case http.StatusInternalServerError:
		return "Server Error"
	case http.StatusServiceUnavailable:
		return "Server Overloaded"
	case http.StatusPaymentRequired:
		return "Insufficient Balance"
	case http.StatusUnprocessableEntity:
		return "Invalid Parameters"
	}
	return http.StatusText(status)
}

func statusType(status int) string {
	switch status {
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusPaymentRequired:
		return "insufficient_balance_error"
	}
	return "api_error"
}

var nameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func itoa(i int) string { return strconv.Itoa(i) }
