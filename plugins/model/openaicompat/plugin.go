package openaicompat

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/suggest"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/secrets"
)

// Plugin provides the model service ([Key]): the named models of its configuration
// ([Config]). Mounting never needs a key: a model without one fails when it is used, with
// an error saying where the key is read from. An agent scope picks a model by name with
// [Service.Get].
var Plugin = ctx.Define(ctx.Meta{Name: "model"}, apply)

// The environment variables DeepSeek models read (as DeepSeek's own clients do).
const (
	EnvDeepSeekKey     = "DEEPSEEK_API_KEY"
	EnvDeepSeekBaseURL = "DEEPSEEK_BASE_URL"
	// SecretDeepSeek is the secret a DeepSeek model reads when DEEPSEEK_API_KEY is unset.
	SecretDeepSeek = "deepseek"
)

// Config configures the model plugin: named models and the default one.
//
// Config is a plain value.
type Config struct {
	// Default names the model used when none is asked for ("": the model named "default",
	// or the only one, or "flash" for the built-in models).
	Default string `json:"default"`
	// Models are the configured models by name. Empty means two DeepSeek models: "flash"
	// (deepseek-v4-flash, the default) and "pro" (deepseek-v4-pro).
	Models map[string]ModelConfig `json:"models"`
}

// ModelConfig is one model. Every key is optional for DeepSeek; another endpoint needs
// baseURL and model.
//
// ModelConfig is a plain value.
type ModelConfig struct {
	// Provider is "deepseek" or "openai-compatible" ("": deepseek when baseURL is empty or
	// DeepSeek's).
	Provider string `json:"provider"`
	// BaseURL is the API's base URL ("": DEEPSEEK_BASE_URL, else https://api.deepseek.com).
	BaseURL string `json:"baseURL"`
	// Model is the model id ("": deepseek-v4-flash for DeepSeek).
	Model string `json:"model"`
	// APIKey is the key, normally a reference: ${secret:NAME} or ${VAR} ("": for DeepSeek,
	// DEEPSEEK_API_KEY, else the secret "deepseek"; none for other endpoints).
	APIKey string `json:"apiKey"`
	// ContextWindow is the model's context in tokens (0: 1,000,000 for DeepSeek V4,
	// unknown otherwise).
	ContextWindow int `json:"contextWindow"`
	// MaxOutputTokens bounds an answer, sent as max_tokens when set (0: not sent; DeepSeek
	// V4 allows 393,216).
	MaxOutputTokens int `json:"maxOutputTokens"`
	// ImageInput says whether the model accepts images (default false).
	ImageInput bool `json:"imageInput"`
	// Thinking turns thinking mode on or off (default on for DeepSeek; not sent to other
	// endpoints unless set).
	Thinking *bool `json:"thinking"`
	// ReasoningEffort is sent as reasoning_effort in thinking mode: low, medium, high,
	// xhigh, max or minimal ("": the server's default).
	ReasoningEffort string `json:"reasoningEffort"`
	// MaxTools is the most tools per request (default 128).
	MaxTools int `json:"maxTools"`
	// MaxRetries is how many times a 429, 500, 503 or a failure before the answer is
	// retried (default 5; -1: never).
	MaxRetries int `json:"maxRetries"`
	// Price is what the model's tokens cost in US dollars per million tokens
	// (inputCacheHit, inputCacheMiss, output); unset, DeepSeek's models on DeepSeek have
	// DeepSeekPrices and others none (no cost is shown).
	Price *model.Price `json:"price"`
}

var modelName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// builtinModels are the models of an empty configuration.
func builtinModels() map[string]ModelConfig {
	return map[string]ModelConfig{"flash": {}, "pro": {Model: DeepSeekPro}}
}

// Validate checks the configuration; a problem is a [*ctx.ConfigError] naming its key.
func (c Config) Validate() error {
	var p ctx.Problems
	models := c.Models
	if len(models) == 0 {
		models = builtinModels()
	}
	names := make([]string, 0, len(models))
	for name := range models {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		m := models[name]
		key := "models." + name
		if !modelName.MatchString(name) {
			p.Add(key, "a model name is 1 to 64 of [A-Za-z0-9_.-]")
		}
		if m.Provider != "" && m.Provider != ProviderDeepSeek && m.Provider != ProviderOpenAI {
			p.Add(key+".provider", "expected %q or %q, got %q", ProviderDeepSeek, ProviderOpenAI, m.Provider)
		}
		if m.MaxRetries < -1 {
			p.Add(key+".maxRetries", "must be -1 (never) or more, got %d", m.MaxRetries)
		}
		if secrets.HasReferences(m.BaseURL) {
			p.Add(key+".baseURL", "references are not expanded here; write the URL")
		}
		// The rest is NewChat's: a retired id, a bad URL, an unknown effort.
		if _, err := NewChat(m.chatConfig(name, m.BaseURL)); err != nil {
			p.Add(key, "%s", strings.TrimPrefix(err.Error(), "model "+name+": "))
		}
	}
	if c.Default != "" && !slices.Contains(names, c.Default) {
		if hint := suggest.Phrase(suggest.Closest(c.Default, names, suggest.Options{})); hint != "" {
			p.Add("default", "no model %q (%s); configured: %s", c.Default, hint, strings.Join(names, ", "))
		} else {
			p.Add("default", "no model %q; configured: %s", c.Default, strings.Join(names, ", "))
		}
	}
	return p.Err()
}

var _ ctx.Validator = Config{}

func (m ModelConfig) chatConfig(name, baseURL string) ChatConfig {
	return ChatConfig{
		Name: name, Provider: m.Provider, BaseURL: baseURL, Model: m.Model,
		ContextWindow: m.ContextWindow, MaxOutputTokens: m.MaxOutputTokens, ImageInput: m.ImageInput,
		Thinking: m.Thinking, ReasoningEffort: m.ReasoningEffort, MaxTools: m.MaxTools, MaxRetries: m.MaxRetries,
		Price: m.Price,
	}
}

// isDeepSeek says whether m talks to DeepSeek (the provider NewChat would pick).
func (m ModelConfig) isDeepSeek(baseURL string) bool {
	if m.Provider != "" {
		return m.Provider == ProviderDeepSeek
	}
	return baseURL == "" || strings.Contains(strings.ToLower(baseURL), "://api.deepseek.com")
}

func apply(c *ctx.Context, cfg Config) error {
	models := cfg.Models
	def := cfg.Default
	if len(models) == 0 {
		models = builtinModels()
		if def == "" {
			def = "flash"
		}
	}
	out := make(map[string]model.Model, len(models))
	for name, m := range models {
		chat, err := newConfigured(c, name, m, os.LookupEnv)
		if err != nil {
			return err
		}
		out[name] = chat
	}
	_, err := model.Key.Provide(c, model.NewService(out, def))
	return err
}

// newConfigured builds a configured model, resolving its base URL and key. A key that
// cannot be resolved becomes the model's KeyError, reported when it is used.
func newConfigured(c *ctx.Context, name string, m ModelConfig, lookupEnv func(string) (string, bool)) (*Chat, error) {
	baseURL := m.BaseURL
	deepseek := m.isDeepSeek(baseURL)
	if baseURL == "" && deepseek {
		if v, ok := lookupEnv(EnvDeepSeekBaseURL); ok && v != "" {
			baseURL = v
		}
	}
	cc := m.chatConfig(name, baseURL)
	cc.Logger = c.Logger()
	if deepseek && cc.Provider == "" {
		cc.Provider = ProviderDeepSeek
	}
	cc.APIKey, cc.KeyError = resolveKey(c, name, m.APIKey, deepseek, lookupEnv)
	secrets.ScrubberOf(c).AddSecret(cc.APIKey) // a key written as it is, or read from DEEPSEEK_API_KEY
	chat, err := NewChat(cc)
	if err != nil {
		return nil, fmt.Errorf("model plugin: models.%s: %w", name, err)
	}
	return chat, nil
}

// resolveKey expands the configured key with the ${secret:NAME}/${VAR} machinery of the MCP
// clients; a DeepSeek model without one reads DEEPSEEK_API_KEY, then the secret "deepseek".
// Errors name references, never values.
func resolveKey(c *ctx.Context, name, configured string, deepseek bool, lookupEnv func(string) (string, bool)) (string, error) {
	resolver := func() *secrets.Resolver {
		return &secrets.Resolver{LookupEnv: lookupEnv, Secrets: func() (secrets.Credentials, error) { return secrets.CredentialsFor(c) }, Scrubber: secrets.ScrubberOf(c)}
	}
	if configured != "" {
		key, err := resolver().Expand(configured)
		if err != nil {
			return "", fmt.Errorf("%w for model %s: apiKey: %w", ErrNoAPIKey, name, err)
		}
		if key == "" {
			return "", fmt.Errorf("%w for model %s: apiKey %q is empty", ErrNoAPIKey, name, configured)
		}
		return key, nil
	}
	if !deepseek {
		return "", fmt.Errorf("%w for model %s: set apiKey in its configuration (a ${secret:NAME} or ${VAR} reference)", ErrNoAPIKey, name)
	}
	if v, ok := lookupEnv(EnvDeepSeekKey); ok && v != "" {
		return v, nil
	}
	key, err := resolver().Expand("${secret:" + SecretDeepSeek + "}")
	if err == nil && key != "" {
		return key, nil
	}
	why := ""
	if err != nil && !errors.Is(err, secrets.ErrNoCredentials) && !errors.Is(err, secrets.ErrSecretNotFound) {
		why = " (" + err.Error() + ")"
	}
	return "", fmt.Errorf("%w for model %s: set %s, or the secret %q in the credentials file, or apiKey in its configuration%s", ErrNoAPIKey, name, EnvDeepSeekKey, SecretDeepSeek, why)
}
