package modeltest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"
)

// created is the fixed "created" time of every answer, so answers are reproducible.
const created = 1767225600

const fingerprint = "fp_modeltest"

type wireUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	PromptCacheHitTokens    int `json:"prompt_cache_hit_tokens"`
	PromptCacheMissTokens   int `json:"prompt_cache_miss_tokens"`
	CompletionTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func tokens(n int) int { return (n + 3) / 4 }

// usage estimates the request's tokens and its prefix-cache hit against every earlier
// accepted request, and records them.
func (s *Server) usage(idx int, p *parsed, c *Call, r *Reply) *wireUsage {
	s.mu.Lock()
	// The newest prompts first: in a conversation the previous request's prompt is usually
	// a whole prefix of this one, and an earlier prompt no longer than the best match so far
	// cannot beat it, so a growing history costs one comparison, not one per request.
	best := 0
	for i := len(s.prompts) - 1; i >= 0; i-- {
		if earlier := s.prompts[i]; min(len(earlier), len(p.prompt)) > best {
			best = max(best, CommonPrefix(earlier, p.prompt))
		}
	}
	s.prompts = append(s.prompts, p.prompt)
	s.mu.Unlock()

	u := &wireUsage{PromptTokens: tokens(len(p.prompt))}
	hit := best / 4 / s.opts.CacheUnit * s.opts.CacheUnit
	u.PromptCacheHitTokens = min(hit, u.PromptTokens)
	u.PromptCacheMissTokens = u.PromptTokens - u.PromptCacheHitTokens
	u.PromptTokensDetails.CachedTokens = u.PromptCacheHitTokens
	reasoning := 0
	if c.Thinking {
		reasoning = tokens(len(r.Reasoning))
	}
	out := len(r.Content)
	for _, tc := range r.ToolCalls {
		out += len(tc.Name) + len(tc.Arguments)
	}
	u.CompletionTokensDetails.ReasoningTokens = reasoning
	u.CompletionTokens = reasoning + tokens(out)
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	s.update(idx, func(rec *Request) {
		rec.Prompt, rec.PrefixBytes = p.prompt, best
		rec.PromptTokens, rec.CacheHitTokens = u.PromptTokens, u.PromptCacheHitTokens
	})
	return u
}

func (r *Reply) finish() string {
	switch {
	case r.FinishReason != "":
		return r.FinishReason
	case len(r.ToolCalls) > 0:
		return "tool_calls"
	}
	return "stop"
}

func callID(c *Call, j int, tc ToolCall) string {
	if tc.ID != "" {
		return tc.ID
	}
	return fmt.Sprintf("call_%d_%d", c.Index, j)
}

// hold waits for the reply's Hold channel or the client's departure; false means gone.
func hold(r *http.Request, reply *Reply) bool {
	if reply.Hold == nil {
		return true
	}
	select {
	case <-reply.Hold:
		return true
	case <-r.Context().Done():
		return false
	}
}

// answer writes a non-streaming answer.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, c *Call, reply *Reply, u *wireUsage) {
	if !hold(r, reply) {
		return
	}
	if reply.Cut == CutDrop {
		panic(http.ErrAbortHandler)
	}
	type fn struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type call struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	type message struct {
		Role             string  `json:"role"`
		Content          string  `json:"content"`
		ReasoningContent *string `json:"reasoning_content,omitempty"`
		ToolCalls        []call  `json:"tool_calls,omitempty"`
	}
	type choice struct {
		Index        int             `json:"index"`
		Message      message         `json:"message"`
		Logprobs     json.RawMessage `json:"logprobs"`
		FinishReason string          `json:"finish_reason"`
	}
	m := message{Role: "assistant", Content: reply.Content}
	if c.Thinking {
		m.ReasoningContent = &reply.Reasoning
	}
	for j, tc := range reply.ToolCalls {
		m.ToolCalls = append(m.ToolCalls, call{ID: callID(c, j, tc), Type: "function", Function: fn{tc.Name, tc.Arguments}})
	}
	out := struct {
		ID                string     `json:"id"`
		Object            string     `json:"object"`
		Created           int64      `json:"created"`
		Model             string     `json:"model"`
		Choices           []choice   `json:"choices"`
		Usage             *wireUsage `json:"usage"`
		SystemFingerprint string     `json:"system_fingerprint"`
	}{
		ID: "chatcmpl-modeltest-" + itoa(c.Index), Object: "chat.completion", Created: created, Model: c.Model,
		Choices: []choice{{Message: m, Logprobs: json.RawMessage("null"), FinishReason: reply.finish()}},
		Usage:   u, SystemFingerprint: fingerprint,
	}
	b, _ := json.Marshal(out)
	w.Header().Set("Content-Type", "application/json")
	if reply.Cut == CutEnd {
		b = b[:len(b)/2]
	}
	_, _ = w.Write(b)
}

type fnDelta struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type toolDelta struct {
	Index    int     `json:"index"`
	ID       string  `json:"id,omitempty"`
	Type     string  `json:"type,omitempty"`
	Function fnDelta `json:"function"`
}

type delta struct {
	Role             string          `json:"role,omitempty"`
	Content          json.RawMessage `json:"content,omitempty"`
	ReasoningContent json.RawMessage `json:"reasoning_content,omitempty"`
	ToolCalls        []toolDelta     `json:"tool_calls,omitempty"`
}

type streamChoice struct {
	Index        int             `json:"index"`
	Delta        delta           `json:"delta"`
	Logprobs     json.RawMessage `json:"logprobs"`
	FinishReason *string         `json:"finish_reason"`
}

type chunk struct {
	ID                string          `json:"id"`
	Object            string          `json:"object"`
	Created           int64           `json:"created"`
	Model             string          `json:"model"`
	SystemFingerprint string          `json:"system_fingerprint"`
	Choices           []streamChoice  `json:"choices"`
	Usage             json.RawMessage `json:"usage,omitempty"`
}

var null = json.RawMessage("null")

func quote(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// stream writes a streaming answer in DeepSeek's event order.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, c *Call, includeUsage bool, reply *Reply, u *wireUsage) {
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	base := chunk{ID: "chatcmpl-modeltest-" + itoa(c.Index), Object: "chat.completion.chunk", Created: created, Model: c.Model, SystemFingerprint: fingerprint}
	if includeUsage {
		base.Usage = null
	}
	send := func(d delta, finish *string) {
		ch := base
		ch.Choices = []streamChoice{{Delta: d, Logprobs: null, FinishReason: finish}}
		b, _ := json.Marshal(ch)
		_, _ = fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}

	// The pieces after the role delta, so that a cut can fall in their middle.
	var pieces []delta
	if c.Thinking {
		for _, p := range split(reply.Reasoning) {
			pieces = append(pieces, delta{Content: null, ReasoningContent: quote(p)})
		}
	}
	reasoning := len(pieces)
	for _, p := range split(reply.Content) {
		d := delta{Content: quote(p)}
		if c.Thinking {
			d.ReasoningContent = null
		}
		pieces = append(pieces, d)
	}
	for j, tc := range reply.ToolCalls {
		pieces = append(pieces, delta{ToolCalls: []toolDelta{{Index: j, ID: callID(c, j, tc), Type: "function", Function: fnDelta{Name: tc.Name}}}})
		for _, a := range chop(tc.Arguments, 8) {
			pieces = append(pieces, delta{ToolCalls: []toolDelta{{Index: j, Function: fnDelta{Arguments: a}}}})
		}
	}

	role := delta{Role: "assistant", Content: quote("")}
	if c.Thinking {
		role = delta{Role: "assistant", Content: null, ReasoningContent: quote("")}
	}
	send(role, nil)
	if !hold(r, reply) {
		return
	}
	cutAt := -1
	switch {
	case reply.Cut != CutNone && reply.CutBeforeAnswer:
		cutAt = reasoning
	case reply.Cut != CutNone:
		cutAt = len(pieces) / 2
	}
	for i, d := range pieces {
		if i == cutAt {
			break
		}
		send(d, nil)
	}
	switch reply.Cut {
	case CutDrop:
		panic(http.ErrAbortHandler)
	case CutEnd:
		return
	}
	finish := reply.finish()
	send(delta{Content: quote("")}, &finish)
	if includeUsage {
		ch := base
		ch.Choices = []streamChoice{}
		ch.Usage, _ = json.Marshal(u)
		b, _ := json.Marshal(ch)
		_, _ = fmt.Fprintf(w, "data: %s\n\n", b)
	}
	_, _ = fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

// split cuts text into word pieces, each word with the spaces before it.
func split(text string) []string {
	var out []string
	for text != "" {
		i := 0
		for i < len(text) && text[i] == ' ' {
			i++
		}
		j := strings.IndexByte(text[i:], ' ')
		if j < 0 {
			out = append(out, text)
			break
		}
		out = append(out, text[:i+j])
		text = text[i+j:]
	}
	return out
}

// chop cuts s into pieces of at most n bytes, at rune boundaries.
func chop(s string, n int) []string {
	var out []string
	for len(s) > n {
		i := n
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		if i == 0 {
			i = n
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}
