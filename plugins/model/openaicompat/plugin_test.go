package openaicompat_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/plugins/model/openaicompat"
)

// isolate points the environment at nothing: no DeepSeek variables, an empty configuration
// directory (so no default credentials file).
func isolate(t *testing.T) string {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv("HOME", dir)
	t.Setenv(openaicompat.EnvDeepSeekKey, "")
	t.Setenv(openaicompat.EnvDeepSeekBaseURL, "")
	return dir
}

func service(t *testing.T, cfg any) *model.Service {
	t.Helper()
	root := ctxtest.New(t)
	return ctxtest.MountService(t, root, openaicompat.Plugin, cfg, model.Key)
}

func ask(t *testing.T, s *model.Service, name string) (*model.Response, error) {
	t.Helper()
	m, err := s.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return m.Generate(context.Background(), &model.Request{Messages: []model.Message{user("hi")}}, nil)
}

func TestPluginMountsWithoutKey(t *testing.T) {
	isolate(t)
	s := service(t, nil)
	if s.Default() != "flash" {
		t.Fatalf("default %q", s.Default())
	}
	list := s.List()
	if len(list) != 2 || list[0].ID != openaicompat.DeepSeekFlash || list[1].ID != openaicompat.DeepSeekPro || !list[0].Thinking {
		t.Fatalf("models %+v", list)
	}
	_, err := ask(t, s, "")
	if !errors.Is(err, openaicompat.ErrNoAPIKey) || !strings.Contains(err.Error(), "no API key for model flash: set DEEPSEEK_API_KEY") {
		t.Fatalf("error %v", err)
	}
}

func TestPluginDeepSeekFromEnvironment(t *testing.T) {
	isolate(t)
	srv := modeltest.New(t, modeltest.Options{Replies: []modeltest.Reply{{Content: "from env"}, {Content: "pro"}}})
	t.Setenv(openaicompat.EnvDeepSeekKey, srv.Key)
	t.Setenv(openaicompat.EnvDeepSeekBaseURL, srv.URL)
	s := service(t, nil)
	if resp, err := ask(t, s, ""); err != nil || resp.Message.Content != "from env" {
		t.Fatalf("%v %+v", err, resp)
	}
	if resp, err := ask(t, s, "pro"); err != nil || resp.Model != modeltest.ModelPro {
		t.Fatalf("%v %+v", err, resp)
	}
}

func TestPluginDeepSeekFromSecret(t *testing.T) {
	dir := isolate(t)
	srv := modeltest.New(t, modeltest.Options{Replies: []modeltest.Reply{{Content: "from secret"}}})
	t.Setenv(openaicompat.EnvDeepSeekBaseURL, srv.URL)
	if err := os.MkdirAll(filepath.Join(dir, "harness"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "harness", "credentials.yaml"), []byte("deepseek: "+srv.Key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := service(t, map[string]any{"models": map[string]any{"ds": map[string]any{"reasoningEffort": "high"}}})
	if resp, err := ask(t, s, "ds"); err != nil || resp.Message.Content != "from secret" {
		t.Fatalf("%v %+v", err, resp)
	}
}

func TestPluginOtherEndpoint(t *testing.T) {
	isolate(t)
	srv := modeltest.New(t, modeltest.Options{Models: []string{"qwen3"}, Replies: []modeltest.Reply{{Content: "local"}}})
	t.Setenv("LOCAL_LLM_KEY", srv.Key)
	s := service(t, map[string]any{
		"default": "local",
		"models": map[string]any{
			"local":   map[string]any{"baseURL": srv.URL, "model": "qwen3", "apiKey": "${LOCAL_LLM_KEY}", "contextWindow": 32768, "imageInput": true},
			"nokey":   map[string]any{"baseURL": srv.URL, "model": "qwen3"},
			"missing": map[string]any{"baseURL": srv.URL, "model": "qwen3", "apiKey": "${NOT_SET_ANYWHERE}"},
		},
	})
	if resp, err := ask(t, s, ""); err != nil || resp.Message.Content != "local" {
		t.Fatalf("%v %+v", err, resp)
	}
	m, _ := s.Get("local")
	if i := m.Info(); i.Provider != openaicompat.ProviderOpenAI || i.ContextWindow != 32768 || !i.ImageInput || i.Thinking {
		t.Fatalf("info %+v", i)
	}
	if _, err := ask(t, s, "nokey"); !errors.Is(err, openaicompat.ErrNoAPIKey) || !strings.Contains(err.Error(), "set apiKey") {
		t.Fatalf("no key: %v", err)
	}
	if _, err := ask(t, s, "missing"); !errors.Is(err, openaicompat.ErrNoAPIKey) || !strings.Contains(err.Error(), "${NOT_SET_ANYWHERE}") {
		t.Fatalf("unset variable: %v", err)
	}
	if _, err := s.Get("locl"); err == nil || !strings.Contains(err.Error(), `did you mean "local"`) {
		t.Fatalf("did-you-mean: %v", err)
	}
}

func TestPluginConfigErrors(t *testing.T) {
	cases := []struct {
		cfg  map[string]any
		want []string
	}{
		{map[string]any{"default": "flsh"}, []string{"default", `no model "flsh"`, "flash"}},
		{map[string]any{"models": map[string]any{"old": map[string]any{"model": "deepseek-chat"}}}, []string{"models.old", "deepseek-v4-flash", "deepseek-v4-pro", "retired"}},
		{map[string]any{"models": map[string]any{"x": map[string]any{"provider": "anthropic"}}}, []string{"models.x.provider"}},
		{map[string]any{"models": map[string]any{"x": map[string]any{"reasoningEffort": "huge"}}}, []string{"models.x", "reasoningEffort"}},
		{map[string]any{"models": map[string]any{"x": map[string]any{"baseURL": "http://h", "model": ""}}}, []string{"models.x", "model id is required"}},
		{map[string]any{"models": map[string]any{"x": map[string]any{"temperature": 1}}}, []string{"temperature"}},
	}
	for _, c := range cases {
		_, err := openaicompat.Plugin.DecodeConfig(c.cfg)
		if err == nil {
			t.Fatalf("%v: accepted", c.cfg)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %q lacks %q", c.cfg, err, w)
			}
		}
	}
}

// TestPluginPrices: DeepSeek's models have DeepSeek's prices; a model's price in the
// profile replaces them, and gives another endpoint's model one; a negative one is refused.
func TestPluginPrices(t *testing.T) {
	isolate(t)
	s := service(t, nil)
	for _, m := range s.List() {
		if want := openaicompat.DeepSeekPrices[m.ID]; m.Price == nil || *m.Price != want {
			t.Errorf("model %s: price %+v, want %+v", m.Name, m.Price, want)
		}
	}
	s = service(t, map[string]any{"default": "flash", "models": map[string]any{
		"flash": map[string]any{"price": map[string]any{"inputCacheHit": 0.028, "inputCacheMiss": 0.14, "output": 0.28}},
		"local": map[string]any{"baseURL": "http://127.0.0.1:1", "model": "qwen"},
		"paid":  map[string]any{"baseURL": "http://127.0.0.1:1", "model": "qwen", "price": map[string]any{"inputCacheMiss": 1, "output": 2}},
	}})
	got := map[string]*model.Price{}
	for _, m := range s.List() {
		got[m.Name] = m.Price
	}
	if p := got["flash"]; p == nil || p.InputCacheHit != 0.028 {
		t.Errorf("flash's price from the profile: %+v", p)
	}
	if p := got["local"]; p != nil {
		t.Errorf("another endpoint's model has a price: %+v", p)
	}
	if p := got["paid"]; p == nil || p.Output != 2 {
		t.Errorf("paid's price from the profile: %+v", p)
	}
	err := openaicompat.Config{Models: map[string]openaicompat.ModelConfig{"flash": {Price: &model.Price{Output: -1}}}}.Validate()
	if err == nil || !strings.Contains(err.Error(), "models.flash") || !strings.Contains(err.Error(), "price: inputCacheHit, inputCacheMiss and output cannot be negative") {
		t.Errorf("a negative price: %v", err)
	}
}
