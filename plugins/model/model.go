// Package model is the model service of the harness: named language models behind one
// interface, so that the agent loop, samplers and subagents ask "the model called X" without
// knowing its provider. This package is the interface and the service only; the provider,
// OpenAI-compatible Chat Completions with DeepSeek V4 as the default, and the plugin that
// configures models are in the subpackage openaicompat. Callers (the agent) import this
// package alone.
//
// # Messages
//
// A conversation is a slice of [Message]s in the provider-neutral shape below; a provider
// translates it to its wire format. Assistant messages keep what the model sent exactly as it
// was sent — the reasoning text (present or absent), the tool calls' ids, names and argument
// strings — because providers with a prefix cache (DeepSeek) only hit when earlier messages
// are re-sent byte for byte, and DeepSeek's thinking mode refuses a tool-call turn whose
// reasoning was not passed back.
//
// # Tools
//
// A [ToolDef]'s Parameters are the schema's bytes as the tool's owner gave them (an MCP
// server's inputSchema as it arrived); providers send them without decoding and re-encoding,
// so key order and numbers survive and the request prefix stays byte-stable.
//
// # Concurrency
//
// A [Model] is safe for concurrent use: each [Model.Generate] is an independent request. The
// callback a Generate call is given runs on that call's goroutine, in stream order.
package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrContextTooLong matches (errors.Is) a provider's refusal of a request whose prompt
// and requested output do not fit the model's context window: a caller can shorten the
// conversation and send again.
var ErrContextTooLong = errors.New("the request does not fit the model's context window")

// ErrStreamCut is the error (matched with errors.Is) of an answer whose stream ended before
// its finish reason after part of the answer (its text or a tool call) was passed to the
// callback: the answer is incomplete and is not returned. A cut before any of the answer is
// retried inside Generate like a 503, and is this error only once the retries run out.
var ErrStreamCut = errors.New("the answer's stream was cut before its end")

// Role is a message's author.
type Role string

// The roles of a Chat Completions conversation.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one message of a conversation. It is a plain value; a Message handed to
// [Model.Generate] must not be modified while the call runs.
type Message struct {
	Role Role `json:"role"`
	// Content is the message's text. For a user message with Images it is the text part.
	Content string `json:"content,omitempty"`
	// Images are image inputs of a user or tool message; sent only to models whose
	// [Info.ImageInput] is true (the agent turns them into text for other models).
	Images []Image `json:"images,omitempty"`
	// Reasoning is an assistant message's reasoning text as the model sent it: nil when the
	// answer carried none, a pointer to "" when it carried an empty one. Providers send it
	// back exactly so (DeepSeek's thinking mode requires it on tool-call turns).
	Reasoning *string `json:"reasoning,omitempty"`
	// ToolCalls are an assistant message's function calls, in the model's order.
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// ToolCallID is the call a tool message answers.
	ToolCallID string `json:"toolCallId,omitempty"`
}

// Image is an image input: its MIME type and bytes.
type Image struct {
	MIMEType string `json:"mimeType"`
	Data     []byte `json:"data"`
}

// ToolCall is one function call of an assistant message. Arguments is the JSON text exactly
// as the model produced it (it may not even be valid JSON; the caller decides).
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolDef is a function the model may call. Parameters are the JSON schema's bytes, sent
// as they are (nil means an object with no properties).
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// ToolChoice says whether the model must, may or must not call tools. The zero value is
// the provider's default ("auto").
type ToolChoice string

// The tool choices every provider understands. DeepSeek's thinking mode accepts only
// [ToolChoiceAuto] and [ToolChoiceNone].
const (
	ToolChoiceAuto     ToolChoice = "auto"
	ToolChoiceNone     ToolChoice = "none"
	ToolChoiceRequired ToolChoice = "required"
)

// Request is one completion request. It is a plain value, read by Generate.
type Request struct {
	// System is the system prompt; empty means none. It is sent as the first message.
	System   string
	Messages []Message
	Tools    []ToolDef
	// ToolChoice is sent only when set.
	ToolChoice ToolChoice
	// MaxTokens bounds the answer (0: the model's configured maximum).
	MaxTokens int
	// Thinking overrides the model's configured thinking mode for this request (nil: as
	// configured).
	Thinking *bool
	// ReasoningEffort overrides the configured effort ("" as configured).
	ReasoningEffort string
}

// DeltaKind says what a [Delta] carries.
type DeltaKind uint8

// The kinds of streamed pieces.
const (
	// DeltaReasoning is a piece of reasoning text.
	DeltaReasoning DeltaKind = iota + 1
	// DeltaContent is a piece of the answer's text.
	DeltaContent
	// DeltaToolCall is a piece of a tool call: the first piece of a call carries its Index,
	// ID and Name, later ones more of its Arguments.
	DeltaToolCall
	// DeltaRetry reports that the request failed with a retryable error and will be sent
	// again after Wait (Err is the failure). Pieces streamed before it are void.
	DeltaRetry
)

// Delta is one streamed piece of an answer, handed to Generate's callback as it arrives.
type Delta struct {
	Kind DeltaKind
	// Text is the reasoning or content piece, or the tool call's arguments piece.
	Text string
	// Index, ID and Name identify the tool call of a DeltaToolCall.
	Index int
	ID    string
	Name  string
	// Err and Wait describe a DeltaRetry.
	Err  error
	Wait int64 // nanoseconds; a time.Duration kept as an integer to keep this type plain
}

// FinishReason is why the model stopped.
type FinishReason string

// The finish reasons of Chat Completions.
const (
	FinishStop      FinishReason = "stop"
	FinishToolCalls FinishReason = "tool_calls"
	// FinishLength means the answer hit max_tokens: it is cut, and the caller should say so.
	FinishLength        FinishReason = "length"
	FinishContentFilter FinishReason = "content_filter"
)

// Usage is a request's token accounting. CacheHitTokens + CacheMissTokens = PromptTokens on
// providers that report a prefix cache (DeepSeek); others leave both zero or report
// CacheHitTokens only.
type Usage struct {
	PromptTokens     int `json:"promptTokens"`
	CompletionTokens int `json:"completionTokens"`
	CacheHitTokens   int `json:"cacheHitTokens,omitempty"`
	CacheMissTokens  int `json:"cacheMissTokens,omitempty"`
	ReasoningTokens  int `json:"reasoningTokens,omitempty"`
	// Cost is what the tokens cost in US dollars at the model's [Price] (0 when no price
	// is known). Providers leave it 0; the agent sets it from [Info].Price.
	Cost float64 `json:"cost,omitempty"`
}

// Price is what a model's tokens cost, in US dollars per million tokens: prompt tokens the
// provider's prefix cache hit, prompt tokens it missed, and completion tokens (reasoning
// included). It is a plain value.
type Price struct {
	InputCacheHit  float64 `json:"inputCacheHit"`
	InputCacheMiss float64 `json:"inputCacheMiss"`
	Output         float64 `json:"output"`
}

// Cost returns what u costs at p, in US dollars. Prompt tokens not reported as cache hits
// are billed as misses.
func (p Price) Cost(u Usage) float64 {
	hit := min(u.CacheHitTokens, u.PromptTokens)
	miss := u.PromptTokens - hit
	return (float64(hit)*p.InputCacheHit + float64(miss)*p.InputCacheMiss + float64(u.CompletionTokens)*p.Output) / 1e6
}

// FormatCost writes an amount in US dollars for people: "$0.0123" (four decimals below a
// dollar, two above), "<$0.0001" for a positive amount below that, "$0" for none.
func FormatCost(usd float64) string {
	switch {
	case usd <= 0:
		return "$0"
	case usd < 0.0001:
		return "<$0.0001"
	case usd < 1:
		return fmt.Sprintf("$%.4f", usd)
	}
	return fmt.Sprintf("$%.2f", usd)
}

// Response is a finished answer: the assistant message assembled from the stream, why it
// ended and what it cost.
type Response struct {
	Message      Message      `json:"message"`
	FinishReason FinishReason `json:"finishReason"`
	Usage        Usage        `json:"usage"`
	// Model is the model id the provider reported.
	Model string `json:"model,omitempty"`
}

// Info describes a configured model.
type Info struct {
	// Name is the model's name in the profile ("default" for the unnamed one).
	Name string `json:"name"`
	// Provider names the provider ("deepseek", "openai-compatible").
	Provider string `json:"provider"`
	// ID is the provider's model id ("deepseek-v4-flash").
	ID string `json:"id"`
	// ContextWindow and MaxOutputTokens are in tokens (0: unknown).
	ContextWindow   int `json:"contextWindow,omitempty"`
	MaxOutputTokens int `json:"maxOutputTokens,omitempty"`
	// ImageInput says whether the model accepts images in messages.
	ImageInput bool `json:"imageInput,omitempty"`
	// Thinking says whether requests run in thinking (reasoning) mode by default.
	Thinking bool `json:"thinking,omitempty"`
	// MaxTools is the most tools one request may carry (0: no limit known).
	MaxTools int `json:"maxTools,omitempty"`
	// Price is what the model's tokens cost (nil: not known; no cost is shown).
	Price *Price `json:"price,omitempty"`
}

// Model is one configured model. Implementations are safe for concurrent use.
type Model interface {
	// Info describes the model.
	Info() Info
	// Generate sends req and streams the answer: on, when not nil, gets each piece as it
	// arrives, on the calling goroutine. It returns the assembled answer, or an error: a
	// request the provider refused (an *APIError), a stream cut before its end
	// ([ErrStreamCut]: never a silently shortened answer), or cx's error once cx is done.
	// Retryable failures (429, 500, 503, a failure before the first byte, a stream cut
	// before any of the answer's text or tool calls) are retried with backoff inside
	// Generate, each reported to on as a DeltaRetry. Its errors other than cx's name the model (its
	// configured name), so callers show them as they are.
	Generate(cx context.Context, req *Request, on func(Delta)) (*Response, error)
}

// Checker is implemented by a [Model] that can tell, without a request, that it cannot
// answer (a [Chat] without an API key), so that a chat says so when it opens rather than
// after the first message. Check is safe for concurrent use.
type Checker interface {
	// Check returns why the model cannot answer now (an error naming the model), or nil. It
	// sends nothing.
	Check() error
}
