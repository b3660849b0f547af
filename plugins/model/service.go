package model

import (
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/suggest"
)

// Key is the model service: the named models of a scope.
var Key = ctx.NewKey[*Service]("model")

// Service holds named models and the name of the default one.
//
// Concurrency: every method is safe for concurrent use; Models are replaced as a whole
// (a configuration update swaps the set), and a Model obtained before a swap stays usable.
type Service struct {
	mu     sync.RWMutex
	models map[string]Model
	def    string
}

// NewService returns a service holding models, with def as the default name ("" picks the
// only model, or the one named "default").
func NewService(models map[string]Model, def string) *Service {
	s := &Service{}
	s.Replace(models, def)
	return s
}

// Replace swaps the whole set of models.
func (s *Service) Replace(models map[string]Model, def string) {
	m := make(map[string]Model, len(models))
	for k, v := range models {
		m[k] = v
	}
	if def == "" {
		if _, ok := m["default"]; ok {
			def = "default"
		} else if len(m) == 1 {
			for k := range m {
				def = k
			}
		}
	}
	s.mu.Lock()
	s.models, s.def = m, def
	s.mu.Unlock()
}

// Get returns the model called name; "" means the default model. An unknown name is an
// error that lists the known ones (with a did-you-mean).
func (s *Service) Get(name string) (Model, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if name == "" {
		name = s.def
		if name == "" {
			return nil, fmt.Errorf("model: no default model (configured: %v)", s.namesLocked())
		}
	}
	if m, ok := s.models[name]; ok {
		return m, nil
	}
	names := s.namesLocked()
	if hint := suggest.Phrase(suggest.Closest(name, names, suggest.Options{})); hint != "" {
		return nil, fmt.Errorf("model: unknown model %q (%s); configured: %v", name, hint, names)
	}
	return nil, fmt.Errorf("model: unknown model %q; configured: %v", name, names)
}

// Check returns why the model called name ("" the default) cannot answer now, without a
// request: an unknown name, or the [Checker] error of a model that implements it.
func (s *Service) Check(name string) error {
	m, err := s.Get(name)
	if err != nil {
		return err
	}
	if c, ok := m.(Checker); ok {
		return c.Check()
	}
	return nil
}

// Default returns the default model's name ("" when there is none).
func (s *Service) Default() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.def
}

// List describes every model, by name.
func (s *Service) List() []Info {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Info, 0, len(s.models))
	for _, m := range s.models {
		out = append(out, m.Info())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (s *Service) namesLocked() []string {
	names := make([]string, 0, len(s.models))
	for k := range s.models {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}
