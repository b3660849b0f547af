package openaicompat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/cordisgo/harness/internal/words"
	"github.com/cordisgo/harness/plugins/model"
)

// DeepSeek's endpoint and model ids.
const (
	DeepSeekBaseURL = "https://api.deepseek.com"
	DeepSeekFlash   = "deepseek-v4-flash"
	DeepSeekPro     = "deepseek-v4-pro"
	// DeepSeekContextWindow and DeepSeekMaxOutput are V4's limits in tokens.
	DeepSeekContextWindow = 1_000_000
	DeepSeekMaxOutput     = 393_216
	// DeepSeekMaxTools is the most tools DeepSeek accepts in one request.
	DeepSeekMaxTools = 128
)

// DeepSeekPrices are DeepSeek V4's prices in US dollars per million tokens, as DeepSeek's
// Models & Pricing page was quoted in mid-2026 (docs/agent.md, "Cost", has the sources and
// the date): a model of these ids on DeepSeek's API gets its price from here unless its
// configuration sets one.
var DeepSeekPrices = map[string]model.Price{
	DeepSeekFlash: {InputCacheHit: 0.0028, InputCacheMiss: 0.14, Output: 0.28},
	DeepSeekPro:   {InputCacheHit: 0.0145, InputCacheMiss: 1.74, Output: 3.48},
}

// The providers a [ChatConfig] names.
const (
	ProviderDeepSeek = "deepseek"
	ProviderOpenAI   = "openai-compatible"
)

// The errors of the Chat Completions provider, matched with errors.Is.
var (
	// ErrNoAPIKey is the error of a model used without a key.
	ErrNoAPIKey = errors.New("no API key")
	// ErrInvalidRequest is a request refused before it is sent (a rule of the API that the
	// provider checks itself, so that the mistake is named precisely).
	ErrInvalidRequest = errors.New("invalid request")
	// ErrRetiredModel is a configuration naming a retired model id.
	ErrRetiredModel = errors.New("retired model id")
	// ErrStreamCut is an answer whose stream ended before its finish reason: the answer is
	// incomplete and is not returned. It is [model.ErrStreamCut].
	ErrStreamCut = model.ErrStreamCut
)

// APIError is a request the API refused (an HTTP status other than 200).
type APIError struct {
	// Model is the model's name in the profile.
	Model string
	// Status is the HTTP status; Type, Code and Message are from the error body (Message
	// with control characters removed and the API key masked).
	Status  int
	Type    string
	Code    string
	Message string
	// RetryAfter is the server's Retry-After (0 when absent).
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	return fmt.Sprintf("model %s: API error %d: %s", e.Model, e.Status, msg)
}

// Is makes a 400 that says the prompt is over the context window match
// [model.ErrContextTooLong] (OpenAI's and DeepSeek's "maximum context length", the code
// context_length_exceeded, vLLM's and llama.cpp's wordings).
func (e *APIError) Is(target error) bool {
	if target != model.ErrContextTooLong || e.Status != http.StatusBadRequest && e.Status != http.StatusRequestEntityTooLarge {
		return false
	}
	if e.Code == "context_length_exceeded" {
		return true
	}
	m := strings.ToLower(e.Message)
	return strings.Contains(m, "maximum context length") || strings.Contains(m, "context window") ||
		strings.Contains(m, "context length") || strings.Contains(m, "prompt is too long") ||
		strings.Contains(m, "exceeds the available context size")
}

// Retryable reports whether the request may succeed when sent again (429, 500, 502, 503,
// 504).
func (e *APIError) Retryable() bool {
	switch e.Status {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// ChatConfig configures one OpenAI-compatible Chat Completions model. The zero value (with
// a key) is DeepSeek V4 Flash in thinking mode.
type ChatConfig struct {
	// Name is the model's name in the profile (for errors and logs).
	Name string
	// Provider is ProviderDeepSeek or ProviderOpenAI; "" means DeepSeek when BaseURL is
	// empty or DeepSeek's, else openai-compatible.
	Provider string
	// BaseURL is the API's base URL ("": DeepSeekBaseURL).
	BaseURL string
	// Model is the model id ("": DeepSeekFlash for DeepSeek; required otherwise).
	Model string
	// APIKey is the key sent as a bearer token. When empty, KeyError (or ErrNoAPIKey) is
	// the error of every Generate.
	APIKey   string
	KeyError error
	// ContextWindow and MaxOutputTokens describe the model (0: DeepSeek's for DeepSeek,
	// unknown otherwise). MaxOutputTokens, when set, is sent as max_tokens when a request
	// does not set its own.
	ContextWindow   int
	MaxOutputTokens int
	// ImageInput says whether the model accepts images (DeepSeek's models do not).
	ImageInput bool
	// Thinking turns thinking mode on or off (nil: on for DeepSeek, where the thinking
	// field is always sent; off and not sent for other endpoints).
	Thinking *bool
	// ReasoningEffort is sent as reasoning_effort in thinking mode ("": the server's
	// default).
	ReasoningEffort string
	// MaxTools is the most tools per request (0: 128).
	MaxTools int
	// Price is what the model's tokens cost (nil: DeepSeekPrices for DeepSeek's models on
	// DeepSeek, else unknown).
	Price *model.Price
	// MaxRetries is how many times a retryable failure is retried (0: 5; negative: none).
	MaxRetries int
	// RetryBase is the first backoff (0: 500ms), doubled at each retry up to MaxRetryWait
	// (0: 30s); a Retry-After longer than MaxRetryWait ends the retries.
	RetryBase    time.Duration
	MaxRetryWait time.Duration
	// HTTPClient sends the requests (nil: a client of its own).
	HTTPClient *http.Client
	// Logger gets a record per retry (nil: none). Keys never appear in it.
	Logger *slog.Logger
}

// Chat is a [Model] speaking OpenAI-compatible Chat Completions (DeepSeek V4 by default)
// over net/http and openai-go's SSE decoder. Requests always stream; the answer is assembled
// from the stream, reasoning_content included.
//
// A Chat is safe for concurrent use; it holds no per-request state.
type Chat struct {
	cfg   ChatConfig
	info  model.Info
	url   string // the chat completions endpoint
	w     wire   // the request settings that do not depend on the request
	sleep func(context.Context, time.Duration) error
	bufs  sync.Pool
}

var retired = map[string]bool{"deepseek-chat": true, "deepseek-reasoner": true}

// NewChat checks cfg and returns the model. A missing key is not an error here: Generate
// reports it, so that a profile naming a model mounts without one.
func NewChat(cfg ChatConfig) (*Chat, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DeepSeekBaseURL
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("model %s: baseURL %q: expected an http or https URL", cfg.Name, redactURL(cfg.BaseURL))
	}
	if cfg.Provider == "" {
		cfg.Provider = ProviderOpenAI
		if strings.EqualFold(u.Hostname(), "api.deepseek.com") {
			cfg.Provider = ProviderDeepSeek
		}
	}
	deepseek := cfg.Provider == ProviderDeepSeek
	switch cfg.Provider {
	case ProviderDeepSeek, ProviderOpenAI:
	default:
		return nil, fmt.Errorf("model %s: provider %q: expected %q or %q", cfg.Name, cfg.Provider, ProviderDeepSeek, ProviderOpenAI)
	}
	if cfg.Model == "" {
		if !deepseek {
			return nil, fmt.Errorf("model %s: model: the model id is required for an openai-compatible endpoint", cfg.Name)
		}
		cfg.Model = DeepSeekFlash
	}
	if deepseek && retired[cfg.Model] {
		return nil, fmt.Errorf("model %s: %w: DeepSeek retired %q on 2026-07-24; use %q or %q", cfg.Name, ErrRetiredModel, cfg.Model, DeepSeekFlash, DeepSeekPro)
	}
	if cfg.MaxOutputTokens < 0 || cfg.ContextWindow < 0 || cfg.MaxTools < 0 {
		return nil, fmt.Errorf("model %s: contextWindow, maxOutputTokens and maxTools cannot be negative", cfg.Name)
	}
	if p := cfg.Price; p != nil && (p.InputCacheHit < 0 || p.InputCacheMiss < 0 || p.Output < 0) {
		return nil, fmt.Errorf("model %s: price: inputCacheHit, inputCacheMiss and output cannot be negative", cfg.Name)
	}
	if p, ok := DeepSeekPrices[cfg.Model]; ok && cfg.Price == nil && deepseek {
		cfg.Price = &p
	}
	if deepseek && cfg.MaxOutputTokens > DeepSeekMaxOutput {
		return nil, fmt.Errorf("model %s: maxOutputTokens %d: DeepSeek accepts at most %d", cfg.Name, cfg.MaxOutputTokens, DeepSeekMaxOutput)
	}
	switch cfg.ReasoningEffort {
	case "", "low", "medium", "high", "xhigh", "max", "minimal":
	default:
		if deepseek {
			return nil, fmt.Errorf("model %s: reasoningEffort %q: expected low, medium, high, xhigh, max or minimal", cfg.Name, cfg.ReasoningEffort)
		}
	}
	if cfg.MaxTools == 0 {
		cfg.MaxTools = DeepSeekMaxTools
	}
	switch {
	case cfg.MaxRetries == 0:
		cfg.MaxRetries = 5
	case cfg.MaxRetries < 0:
		cfg.MaxRetries = 0
	}
	if cfg.RetryBase <= 0 {
		cfg.RetryBase = 500 * time.Millisecond
	}
	if cfg.MaxRetryWait <= 0 {
		cfg.MaxRetryWait = 30 * time.Second
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	thinking := deepseek
	if cfg.Thinking != nil {
		thinking = *cfg.Thinking
	}
	info := model.Info{
		Name: cfg.Name, Provider: cfg.Provider, ID: cfg.Model,
		ContextWindow: cfg.ContextWindow, MaxOutputTokens: cfg.MaxOutputTokens,
		ImageInput: cfg.ImageInput, Thinking: thinking, MaxTools: cfg.MaxTools, Price: cfg.Price,
	}
	if deepseek {
		if info.ContextWindow == 0 {
			info.ContextWindow = DeepSeekContextWindow
		}
		if info.MaxOutputTokens == 0 {
			info.MaxOutputTokens = DeepSeekMaxOutput
		}
	}
	c := &Chat{
		cfg:  cfg,
		info: info,
		w: wire{
			model: cfg.Model, thinking: thinking, sendThink: deepseek || cfg.Thinking != nil,
			effort: cfg.ReasoningEffort, maxTokens: cfg.MaxOutputTokens, imageInput: cfg.ImageInput,
		},
		sleep: sleepCtx,
	}
	c.url = strings.TrimSuffix(cfg.BaseURL, "/") + "/chat/completions"
	return c, nil
}

// Info describes the model.
func (c *Chat) Info() model.Info { return c.info }

var functionName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// check refuses what the API would refuse, with the precise reason, before sending.
func (c *Chat) check(req *model.Request, w *wire) error {
	if len(req.Tools) > c.cfg.MaxTools {
		return fmt.Errorf("model %s: %w: %d tools, at most %d per request", c.cfg.Name, ErrInvalidRequest, len(req.Tools), c.cfg.MaxTools)
	}
	for i := range req.Tools {
		t := &req.Tools[i]
		if !functionName.MatchString(t.Name) {
			return fmt.Errorf("model %s: %w: tool %q: a function name is 1 to 64 of [a-zA-Z0-9_-]", c.cfg.Name, ErrInvalidRequest, clip(t.Name))
		}
		if len(t.Parameters) > 0 && !validParameters(t.Parameters) {
			return fmt.Errorf("model %s: %w: tool %q: parameters must be one JSON object", c.cfg.Name, ErrInvalidRequest, t.Name)
		}
	}
	switch req.ToolChoice {
	case "", model.ToolChoiceAuto, model.ToolChoiceNone:
	case model.ToolChoiceRequired:
		if w.thinking && c.cfg.Provider == ProviderDeepSeek {
			return fmt.Errorf("model %s: %w: tool_choice %q is not supported in thinking mode (only auto and none are); set thinking off for this request", c.cfg.Name, ErrInvalidRequest, req.ToolChoice)
		}
		if len(req.Tools) == 0 {
			return fmt.Errorf("model %s: %w: tool_choice %q without tools", c.cfg.Name, ErrInvalidRequest, req.ToolChoice)
		}
	default:
		return fmt.Errorf("model %s: %w: tool_choice %q: expected auto, none or required", c.cfg.Name, ErrInvalidRequest, clip(string(req.ToolChoice)))
	}
	if req.MaxTokens < 0 {
		return fmt.Errorf("model %s: %w: max tokens %d is negative", c.cfg.Name, ErrInvalidRequest, req.MaxTokens)
	}
	if c.cfg.Provider == ProviderDeepSeek && req.MaxTokens > DeepSeekMaxOutput {
		return fmt.Errorf("model %s: %w: max tokens %d: DeepSeek accepts at most %d", c.cfg.Name, ErrInvalidRequest, req.MaxTokens, DeepSeekMaxOutput)
	}
	return nil
}

// Encode returns the request body Generate would send for req: the bytes whose stability
// the prefix cache depends on (for tests and measurements).
func (c *Chat) Encode(req *model.Request) ([]byte, error) {
	w := c.wireFor(req)
	if err := c.check(req, &w); err != nil {
		return nil, err
	}
	return encodeRequest(nil, req, w)
}

func (c *Chat) wireFor(req *model.Request) wire {
	w := c.w
	if req.Thinking != nil {
		w.thinking, w.sendThink = *req.Thinking, true
	}
	if req.ReasoningEffort != "" {
		w.effort = req.ReasoningEffort
	}
	if req.MaxTokens > 0 {
		w.maxTokens = req.MaxTokens
	}
	return w
}

// Interface guards: a Chat is a Model that can check its key without a request.
var (
	_ model.Model   = (*Chat)(nil)
	_ model.Checker = (*Chat)(nil)
)

// Check reports a missing API key: the error every Generate would return. See [Checker].
func (c *Chat) Check() error {
	if c.cfg.APIKey != "" {
		return nil
	}
	if c.cfg.KeyError != nil {
		return c.cfg.KeyError
	}
	return fmt.Errorf("%w for model %s: set apiKey in its configuration", ErrNoAPIKey, c.cfg.Name)
}

// Generate sends req, streams the answer to on and returns it assembled. See [Model].
func (c *Chat) Generate(cx context.Context, req *model.Request, on func(model.Delta)) (*model.Response, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	w := c.wireFor(req)
	if err := c.check(req, &w); err != nil {
		return nil, err
	}
	bp, _ := c.bufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	body, err := encodeRequest((*bp)[:0], req, w)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", c.cfg.Name, err)
	}
	defer func() { *bp = body[:0]; c.bufs.Put(bp) }()

	for attempt := 0; ; attempt++ {
		resp, err := c.attempt(cx, body, on)
		if err == nil {
			return resp, nil
		}
		if cx.Err() != nil {
			return nil, cx.Err()
		}
		wait, retry := c.retryable(err, attempt)
		if !retry {
			return nil, err
		}
		if c.cfg.Logger != nil {
			c.cfg.Logger.Warn("model request failed; retrying", "model", c.cfg.Name, "attempt", attempt+1, "wait", wait, "err", err)
		}
		if on != nil {
			on(model.Delta{Kind: model.DeltaRetry, Err: err, Wait: int64(wait)})
		}
		if err := c.sleep(cx, wait); err != nil {
			return nil, err
		}
	}
}

// retryable says whether err is worth another attempt and after how long.
func (c *Chat) retryable(err error, attempt int) (time.Duration, bool) {
	if attempt >= c.cfg.MaxRetries {
		return 0, false
	}
	backoff := min(c.cfg.RetryBase<<attempt, c.cfg.MaxRetryWait)
	backoff = backoff/2 + rand.N(backoff/2+1) // jitter: [backoff/2, backoff]
	var ae *APIError
	if errors.As(err, &ae) {
		if !ae.Retryable() {
			return 0, false
		}
		if ae.RetryAfter > 0 {
			if ae.RetryAfter > c.cfg.MaxRetryWait {
				return 0, false
			}
			return ae.RetryAfter, true
		}
		return backoff, true
	}
	var be *beforeAnswer
	if errors.As(err, &be) {
		return backoff, true
	}
	return 0, false
}

// beforeAnswer wraps a failure before any of the answer (its text or a tool call) was
// passed on: a transport failure before the first byte, a stream cut during the reasoning.
// Sending the request again loses nothing anyone saw (the pieces before a DeltaRetry are
// void), so it is retried like a 503.
type beforeAnswer struct{ err error }

func (e *beforeAnswer) Error() string { return e.err.Error() }
func (e *beforeAnswer) Unwrap() error { return e.err }

func sleepCtx(cx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-cx.Done():
		return cx.Err()
	}
}

// toolBuild assembles one streamed tool call.
type toolBuild struct {
	index int
	call  model.ToolCall
	args  strings.Builder
}

// chunk is one event of a streamed answer: the fields the provider reads, DeepSeek's
// reasoning_content and cache counts among them.
type chunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content          string  `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
			ToolCalls        []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens            int  `json:"prompt_tokens"`
		CompletionTokens        int  `json:"completion_tokens"`
		PromptCacheHitTokens    *int `json:"prompt_cache_hit_tokens"`
		PromptCacheMissTokens   *int `json:"prompt_cache_miss_tokens"`
		CompletionTokensDetails struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		} `json:"completion_tokens_details"`
		PromptTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
}

// userAgent names the harness to the API.
const userAgent = "cordisgo-harness"

// attempt sends the body once and assembles the streamed answer.
func (c *Chat) attempt(cx context.Context, body []byte, on func(model.Delta)) (*model.Response, error) {
	hreq, err := http.NewRequestWithContext(cx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("model %s: %s", c.cfg.Name, c.scrub(err.Error()))
	}
	hreq.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	hreq.Header.Set("User-Agent", userAgent)
	res, err := c.cfg.HTTPClient.Do(hreq)
	if err != nil {
		if cx.Err() != nil {
			return nil, cx.Err()
		}
		return nil, &beforeAnswer{fmt.Errorf("model %s: %s", c.cfg.Name, c.scrub(err.Error()))}
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		defer func() { _ = res.Body.Close() }()
		return nil, c.apiError(res)
	}
	stream := ssestream.NewStream[chunk](ssestream.NewDecoder(res), nil)
	defer func() { _ = stream.Close() }()

	out := &model.Response{Message: model.Message{Role: model.RoleAssistant}}
	var (
		content, reasoning strings.Builder
		hasReasoning       bool
		tools              []*toolBuild
		byIndex            = map[int]*toolBuild{}
		finished, received bool
		answered           bool // a piece of the answer (text, tool call) was passed on
	)
	for stream.Next() {
		received = true
		ch := stream.Current()
		if ch.Model != "" {
			out.Model = ch.Model
		}
		if u := ch.Usage; u != nil {
			out.Usage = model.Usage{
				PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens,
				ReasoningTokens: u.CompletionTokensDetails.ReasoningTokens,
				CacheHitTokens:  u.PromptTokensDetails.CachedTokens,
			}
			if u.PromptCacheHitTokens != nil {
				out.Usage.CacheHitTokens = *u.PromptCacheHitTokens
			}
			if u.PromptCacheMissTokens != nil {
				out.Usage.CacheMissTokens = *u.PromptCacheMissTokens
			}
		}
		for i := range ch.Choices {
			choice := &ch.Choices[i]
			if choice.Index != 0 {
				continue
			}
			d := &choice.Delta
			if d.ReasoningContent != nil {
				hasReasoning = true
				if piece := *d.ReasoningContent; piece != "" {
					reasoning.WriteString(piece)
					if on != nil {
						on(model.Delta{Kind: model.DeltaReasoning, Text: piece})
					}
				}
			}
			if d.Content != "" {
				answered = true
				content.WriteString(d.Content)
				if on != nil {
					on(model.Delta{Kind: model.DeltaContent, Text: d.Content})
				}
			}
			for j := range d.ToolCalls {
				tc := &d.ToolCalls[j]
				tb := byIndex[tc.Index]
				if tb == nil {
					tb = &toolBuild{index: tc.Index}
					byIndex[tc.Index] = tb
					tools = append(tools, tb)
				}
				first := tb.call.ID == "" && tb.call.Name == ""
				if tc.ID != "" {
					tb.call.ID = tc.ID
				}
				if tc.Function.Name != "" {
					tb.call.Name += tc.Function.Name
				}
				tb.args.WriteString(tc.Function.Arguments)
				answered = true
				if on != nil && (first || tc.Function.Arguments != "") {
					on(model.Delta{Kind: model.DeltaToolCall, Index: tb.index, ID: tc.ID, Name: tc.Function.Name, Text: tc.Function.Arguments})
				}
			}
			if choice.FinishReason != "" {
				out.FinishReason = model.FinishReason(choice.FinishReason)
				finished = true
			}
		}
	}
	if err := stream.Err(); err != nil {
		if cx.Err() != nil {
			return nil, cx.Err()
		}
		if !received {
			return nil, &beforeAnswer{fmt.Errorf("model %s: %s", c.cfg.Name, c.scrub(err.Error()))}
		}
		return nil, cutError(answered, fmt.Errorf("model %s: %w: %s", c.cfg.Name, ErrStreamCut, c.scrub(err.Error())))
	}
	if !finished {
		if cx.Err() != nil {
			return nil, cx.Err()
		}
		return nil, cutError(answered, fmt.Errorf("model %s: %w (no finish reason)", c.cfg.Name, ErrStreamCut))
	}
	out.Message.Content = content.String()
	if hasReasoning {
		r := reasoning.String()
		out.Message.Reasoning = &r
	}
	sort.SliceStable(tools, func(i, j int) bool { return tools[i].index < tools[j].index })
	for _, tb := range tools {
		tb.call.Arguments = tb.args.String()
		out.Message.ToolCalls = append(out.Message.ToolCalls, tb.call)
	}
	return out, nil
}

// cutError is the error of a stream cut: retryable while none of the answer was passed on.
func cutError(answered bool, err error) error {
	if !answered {
		return &beforeAnswer{err}
	}
	return err
}

// apiError reads a refused request's error body ({"error": {"message", "type", "code"}}, or
// any text) into an *APIError, keeping the key out of it.
func (c *Chat) apiError(res *http.Response) *APIError {
	e := &APIError{Model: c.cfg.Name, Status: res.StatusCode, RetryAfter: retryAfter(res.Header)}
	raw, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	var body struct {
		Error *struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &body) == nil && body.Error != nil {
		e.Type, e.Message = body.Error.Type, c.scrub(body.Error.Message)
		var code string
		if json.Unmarshal(body.Error.Code, &code) != nil && len(body.Error.Code) > 0 && string(body.Error.Code) != "null" {
			code = string(body.Error.Code) // a number
		}
		e.Code = code
		return e
	}
	e.Message = c.scrub(strings.TrimSpace(string(raw)))
	return e
}

// retryAfter reads Retry-After (seconds or an HTTP date) and OpenAI's retry-after-ms.
func retryAfter(h http.Header) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// scrub removes control characters (text from a server) and the API key from s.
func (c *Chat) scrub(s string) string {
	if c.cfg.APIKey != "" {
		s = strings.ReplaceAll(s, c.cfg.APIKey, "[redacted]")
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
}

// clip shortens a name quoted in an error.
func clip(s string) string { return words.Clip(s, 81) }

// redactURL drops a URL's user information and query (they may hold credentials).
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User, u.RawQuery = nil, ""
	return u.String()
}
