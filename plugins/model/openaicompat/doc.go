// Package openaicompat is the model service's provider for OpenAI-compatible Chat
// Completions, DeepSeek V4 by default, and the model plugin ([Plugin], "use: model") that
// configures named models from a profile and provides them under model.Key.
//
// [Chat] sends each request itself (net/http, a request body written field by field so
// that the prefix DeepSeek caches stays byte-stable) and reads the streamed answer with
// openai-go's SSE decoder; it retries 429, 500, 502, 503, 504 and failures before the first
// byte with backoff. Callers use it through the model.Model interface.
//
// # Concurrency
//
// A [Chat] is safe for concurrent use; the plugin's service is model.Service.
package openaicompat
