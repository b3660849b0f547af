package toolsearch

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Embedder turns texts into vectors of one length, near for texts of near meaning (an
// embeddings model).
//
// Implementations must be safe for concurrent use.
type Embedder interface {
	// Embed returns one vector per text, in order.
	Embed(cx context.Context, texts []string) ([][]float32, error)
}

// EmbeddingsClient is an [Embedder] over an OpenAI-compatible embeddings endpoint: POST
// {BaseURL}/embeddings with {"model", "input": [texts]}, Batch texts a request.
//
// An EmbeddingsClient is safe for concurrent use; do not change its fields while it is used.
type EmbeddingsClient struct {
	// BaseURL is the API's base, as for chat completions ("https://api.example.com/v1").
	BaseURL string
	// Model is the embedding model.
	Model string
	// APIKey is sent as a bearer token when set.
	APIKey string
	// HTTPClient sends the requests (nil: a client with a 30 s timeout).
	HTTPClient *http.Client
	// Batch is the most texts one request carries (0: 128).
	Batch int
}

// ErrEmbeddings is wrapped by the errors of [EmbeddingsClient.Embed].
var ErrEmbeddings = errors.New("embeddings")

var defaultEmbeddingsHTTP = &http.Client{Timeout: 30 * time.Second}

// Embed implements [Embedder]. Errors name the endpoint and the status and message of its
// answer, never the key.
func (c *EmbeddingsClient) Embed(cx context.Context, texts []string) ([][]float32, error) {
	batch := c.Batch
	if batch <= 0 {
		batch = 128
	}
	hc := c.HTTPClient
	if hc == nil {
		hc = defaultEmbeddingsHTTP
	}
	url := strings.TrimRight(c.BaseURL, "/") + "/embeddings"
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += batch {
		part := texts[start:min(start+batch, len(texts))]
		body, err := json.Marshal(map[string]any{"model": c.Model, "input": part, "encoding_format": "float"})
		if err != nil {
			return nil, err
		}
		req, err := http.NewRequestWithContext(cx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrEmbeddings, err)
		}
		req.Header.Set("Content-Type", "application/json")
		if c.APIKey != "" {
			req.Header.Set("Authorization", "Bearer "+c.APIKey)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return nil, fmt.Errorf("%w: POST %s: %w", ErrEmbeddings, url, err)
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
		_ = resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("%w: POST %s: %w", ErrEmbeddings, url, err)
		}
		var res struct {
			Data []struct {
				Index     int       `json:"index"`
				Embedding []float32 `json:"embedding"`
			} `json:"data"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(data, &res); err != nil || resp.StatusCode != http.StatusOK {
			msg := strings.TrimSpace(string(data[:min(len(data), 300)]))
			if res.Error != nil {
				msg = res.Error.Message
			}
			return nil, fmt.Errorf("%w: POST %s (model %q): %s: %s", ErrEmbeddings, url, c.Model, resp.Status, msg)
		}
		if len(res.Data) != len(part) {
			return nil, fmt.Errorf("%w: POST %s: %d embeddings for %d inputs", ErrEmbeddings, url, len(res.Data), len(part))
		}
		vecs := make([][]float32, len(part))
		for _, d := range res.Data {
			if d.Index < 0 || d.Index >= len(part) || vecs[d.Index] != nil || len(d.Embedding) == 0 {
				return nil, fmt.Errorf("%w: POST %s: a bad or repeated index %d", ErrEmbeddings, url, d.Index)
			}
			vecs[d.Index] = d.Embedding
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// EmbeddingCache keeps the embeddings of tool texts from one [Semantic] to the next, so that
// a fleet that changed is embedded again only where it changed.
//
// An EmbeddingCache is safe for concurrent use. The zero value is ready to use.
type EmbeddingCache struct {
	mu sync.Mutex
	m  map[string][]float32
}

func (c *EmbeddingCache) get(text string) ([]float32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[text]
	return v, ok
}

func (c *EmbeddingCache) put(text string, v []float32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string][]float32{}
	}
	c.m[text] = v
}

// SemanticOptions tune a [Semantic]. The zero value takes the defaults.
type SemanticOptions struct {
	// Weight is the embeddings' ranking's weight in the fusion, the lexical ranking's being
	// 1 (0: [DefaultSemanticWeight]).
	Weight float64
	// Cache, when set, keeps the tools' embeddings for the next Semantic.
	Cache *EmbeddingCache
}

// DefaultSemanticWeight is the embeddings' weight in the fusion when
// [SemanticOptions.Weight] is 0.
const DefaultSemanticWeight = 0.5

// rrfK is reciprocal-rank fusion's constant: a tool ranked r scores 1/(rrfK+r).
const rrfK = 60

// semanticDepth is how many of the embeddings' best tools take part in the fusion.
const semanticDepth = 50

// EmbeddingsOptions configure the embeddings stage of tool_search: an OpenAI-compatible
// embeddings endpoint. It is a plain value.
type EmbeddingsOptions struct {
	// BaseURL is the API's base ("https://api.example.com/v1"); POST BaseURL/embeddings.
	BaseURL string `json:"baseURL"`
	// Model is the embedding model.
	Model string `json:"model"`
	// APIKeyEnv names the environment variable that holds the API key (none: no key sent).
	APIKeyEnv string `json:"apiKeyEnv,omitempty"`
	// Weight is the embeddings' weight in the fusion (0: [DefaultSemanticWeight]).
	Weight float64 `json:"weight,omitempty"`
}

// Validate reports a missing base URL or model, naming the key.
func (o *EmbeddingsOptions) Validate() error {
	switch {
	case o == nil:
		return nil
	case o.BaseURL == "":
		return fmt.Errorf("baseURL: required (the OpenAI-compatible API's base, POST {baseURL}/embeddings)")
	case o.Model == "":
		return fmt.Errorf("model: required (the embedding model)")
	case o.Weight < 0:
		return fmt.Errorf("weight: must be 0 (the default) or more, got %v", o.Weight)
	}
	return nil
}

// Semantic is an [Index] with an embeddings stage: every tool's text (server, name, title,
// description) is embedded once, the query at each search, and the tools nearest the query
// are fused with the lexical ranking by reciprocal rank (a tool ranked r in a ranking
// scores weight/(60+r) there), so that a tool the words miss but the meaning finds can
// still come up, and a tool both find comes first.
//
// A Semantic is immutable once built and safe for concurrent use.
type Semantic struct {
	ix   *Index
	emb  Embedder
	vecs [][]float32 // per tool, length 1
	w    float64
}

// NewSemantic embeds the tools of ix with emb (those in o.Cache are not sent again).
func NewSemantic(cx context.Context, ix *Index, emb Embedder, o SemanticOptions) (*Semantic, error) {
	s := &Semantic{ix: ix, emb: emb, vecs: make([][]float32, len(ix.docs)), w: o.Weight}
	if s.w == 0 {
		s.w = DefaultSemanticWeight
	}
	var texts []string
	var which []int
	for d := range ix.docs {
		text := embeddingText(&ix.docs[d])
		if o.Cache != nil {
			if v, ok := o.Cache.get(text); ok {
				s.vecs[d] = v
				continue
			}
		}
		texts = append(texts, text)
		which = append(which, d)
	}
	if len(texts) > 0 {
		vecs, err := emb.Embed(cx, texts)
		if err != nil {
			return nil, err
		}
		if len(vecs) != len(texts) {
			return nil, fmt.Errorf("%w: %d embeddings for %d tools", ErrEmbeddings, len(vecs), len(texts))
		}
		for i, d := range which {
			v := unit(vecs[i])
			s.vecs[d] = v
			if o.Cache != nil {
				o.Cache.put(texts[i], v)
			}
		}
	}
	return s, nil
}

// Index returns the lexical index.
func (s *Semantic) Index() *Index { return s.ix }

// embeddingText is what is embedded of a tool: its server, name, title and description
// (the first 1,000 bytes).
func embeddingText(d *doc) string {
	var b strings.Builder
	b.WriteString(d.server)
	b.WriteString(": ")
	b.WriteString(d.tool.Name)
	if d.tool.Title != "" {
		b.WriteString(" (" + d.tool.Title + ")")
	}
	desc := d.tool.Description
	if len(desc) > 1000 {
		desc = desc[:1000]
	}
	if desc != "" {
		b.WriteString(": " + desc)
	}
	return b.String()
}

// unit returns v scaled to length 1 (v itself when it has no length).
func unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return v
	}
	n = math.Sqrt(n)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / n)
	}
	return out
}

// Search ranks the tools for query as [Index.Search] does, fused with the embeddings'
// ranking; it embeds the query (one request). When the embedding fails it returns the
// lexical hits with the error.
func (s *Semantic) Search(cx context.Context, query string, o SearchOptions) ([]Hit, error) {
	if strings.TrimSpace(query) == "" {
		return nil, nil
	}
	lex := s.ix.ranked(query, o)
	qv, err := s.emb.Embed(cx, []string{query})
	if err != nil || len(qv) != 1 {
		if err == nil {
			err = fmt.Errorf("%w: %d embeddings for one query", ErrEmbeddings, len(qv))
		}
		return s.ix.hits(lex, o), err
	}
	q := unit(qv[0])
	sem := make([]scored, 0, len(s.vecs))
	for d, v := range s.vecs {
		if len(v) != len(q) {
			continue
		}
		dc := &s.ix.docs[d]
		if o.Server != "" && dc.server != o.Server || o.Include != nil && !o.Include(dc.server, dc.tool.Name) {
			continue
		}
		var dot float64
		for i, x := range v {
			dot += float64(x) * float64(q[i])
		}
		sem = append(sem, scored{int32(d), dot})
	}
	slices.SortFunc(sem, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.doc, b.doc)
	})
	fused := map[int32]float64{}
	for r, c := range lex {
		fused[c.doc] += 1 / float64(rrfK+r+1)
	}
	for r, c := range sem[:min(semanticDepth, len(sem))] {
		fused[c.doc] += s.w / float64(rrfK+r+1)
	}
	out := make([]scored, 0, len(fused))
	for d, sc := range fused {
		out = append(out, scored{d, sc * 1000})
	}
	slices.SortFunc(out, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.doc, b.doc)
	})
	return s.ix.hits(out, o), nil
}
