package toolsearch

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/toolsearch/searcheval"
)

// TestSemanticRetrieval measures the embeddings stage on both sets against the local
// OpenAI-compatible server's deterministic embedding (internal/modeltest: a hashed bag of
// words and trigrams, no meaning): Recall and MRR beside the lexical ranking's, and the
// cost — requests, the time to embed the fleet, a search's time with its query's request.
// It is a measurement (TOOLSEARCH_SEMANTIC=1), not a gate: the embedding is a stand-in.
func TestSemanticRetrieval(t *testing.T) {
	if os.Getenv("TOOLSEARCH_SEMANTIC") == "" {
		t.Skip("a measurement: TOOLSEARCH_SEMANTIC=1 runs it")
	}
	srv := modeltest.New(t, modeltest.Options{})
	client := &EmbeddingsClient{BaseURL: srv.URL + "/v1", Model: modeltest.EmbeddingModel, APIKey: srv.Key}
	tuning := os.Getenv("TOOLSEARCH_TUNING") != ""
	var b strings.Builder
	for _, set := range []evalSet{firstSet(t), secondSet(t)} {
		ix := New(set.servers)
		before := len(srv.EmbeddingsRequests())
		start := time.Now()
		sem, err := NewSemantic(context.Background(), ix, client, SemanticOptions{})
		if err != nil {
			t.Fatal(err)
		}
		build := time.Since(start)
		fmt.Fprintf(&b, "%s: %d tools embedded in %d requests, %v\n", set.name, ix.Len(), len(srv.EmbeddingsRequests())-before, build.Round(time.Millisecond))
		var times []time.Duration
		for _, w := range []float64{0.25, 0.5, 1} {
			s := *sem
			s.w = w
			search := func(q string) []string {
				start := time.Now()
				hits, err := s.Search(context.Background(), q, SearchOptions{Limit: 10})
				times = append(times, time.Since(start))
				if err != nil {
					t.Fatal(err)
				}
				return hitIDs(hits)
			}
			for _, heldOut := range []bool{false, true} {
				if heldOut && tuning {
					continue
				}
				part := searcheval.Split(set.tasks, heldOut)
				m := searcheval.Evaluate(part, search, nil)
				lex := searcheval.Evaluate(part, func(q string) []string { return hitIDs(ix.Search(q, SearchOptions{Limit: 10})) }, nil)
				name := set.tune
				if heldOut {
					name = set.heldOut
				}
				fmt.Fprintf(&b, "  weight %.2f %-9s %s   (lexical %.3f  %.3f  %.3f)\n", w, name, m, lex.R1, lex.R5, lex.MRR)
			}
		}
		slices.Sort(times)
		fmt.Fprintf(&b, "  a search with its query's embedding request: p50 %v, p99 %v\n", times[len(times)/2].Round(time.Microsecond), times[len(times)*99/100].Round(time.Microsecond))
	}
	t.Log("\n" + b.String())
}

// vectorsOf is an Embedder that maps known texts to fixed vectors (others to the zero
// vector) and counts what it was asked.
type vectorsOf struct {
	m     map[string][]float32
	calls int
	texts int
}

func (e *vectorsOf) Embed(_ context.Context, texts []string) ([][]float32, error) {
	e.calls++
	e.texts += len(texts)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = e.m[t]
		if out[i] == nil {
			out[i] = []float32{0, 0, 0}
		}
	}
	return out, nil
}

// The embeddings stage finds what the words miss, keeps what both find first, embeds each
// tool once across indexes (the cache), and falls back to the words when the endpoint fails.
func TestSemanticFusion(t *testing.T) {
	servers := []Server{{Name: "fs", Tools: []Tool{
		{Name: "read_file", Description: "Read a file."},
		{Name: "write_file", Description: "Write a file."},
	}}, {Name: "web", Tools: []Tool{{Name: "fetch", Description: "Get a URL."}}}}
	ix := New(servers)
	emb := &vectorsOf{m: map[string][]float32{
		"fs: read_file: Read a file.":   {1, 0, 0},
		"fs: write_file: Write a file.": {0, 1, 0},
		"web: fetch: Get a URL.":        {0, 0, 1},
		"download the page":             {0, 0.1, 1},
		"read a file":                   {1, 0, 0},
	}}
	cache := &EmbeddingCache{}
	sem, err := NewSemantic(context.Background(), ix, emb, SemanticOptions{Cache: cache})
	if err != nil || emb.calls != 1 || emb.texts != 3 {
		t.Fatalf("NewSemantic: %v, %d calls for %d texts", err, emb.calls, emb.texts)
	}
	if hits, err := sem.Search(context.Background(), "download the page", SearchOptions{}); err != nil || len(hits) == 0 || hits[0].Name != "fetch" {
		t.Fatalf("a query the words miss: %+v, %v", hits, err)
	}
	if hits, err := sem.Search(context.Background(), "read a file", SearchOptions{Limit: 1}); err != nil || len(hits) != 1 || hits[0].Name != "read_file" {
		t.Fatalf("a query both find: %+v, %v", hits, err)
	}
	if hits, _ := sem.Search(context.Background(), "download the page", SearchOptions{Server: "fs"}); slices.ContainsFunc(hits, func(h Hit) bool { return h.Server != "fs" }) {
		t.Fatalf("the server filter: %+v", hits)
	}
	// a new index of the same tools embeds nothing again
	before := emb.texts
	if _, err := NewSemantic(context.Background(), New(servers), emb, SemanticOptions{Cache: cache}); err != nil || emb.texts != before {
		t.Fatalf("the cache: %v, %d texts embedded", err, emb.texts)
	}
	// a failing endpoint: the lexical hits and the error
	srv := modeltest.New(t, modeltest.Options{ExpectRejections: true})
	bad := &EmbeddingsClient{BaseURL: srv.URL, Model: "no-such-model", APIKey: srv.Key}
	if _, err := NewSemantic(context.Background(), ix, bad, SemanticOptions{}); err == nil || !strings.Contains(err.Error(), "no-such-model") ||
		strings.Contains(err.Error(), srv.Key) {
		t.Fatalf("a refused model: %v", err)
	}
	broken := &Semantic{ix: ix, emb: bad, vecs: sem.vecs, w: 1}
	if hits, err := broken.Search(context.Background(), "read a file", SearchOptions{}); err == nil || len(hits) == 0 || hits[0].Name != "read_file" {
		t.Fatalf("a failing query embedding: %+v, %v", hits, err)
	}
}

// The client speaks the OpenAI embeddings API: batches, order by index, errors that name
// the endpoint and never the key.
func TestEmbeddingsClient(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{ExpectRejections: true})
	c := &EmbeddingsClient{BaseURL: srv.URL + "/v1/", Model: modeltest.EmbeddingModel, APIKey: srv.Key, Batch: 2}
	vecs, err := c.Embed(context.Background(), []string{"a", "b", "c"})
	if err != nil || len(vecs) != 3 || !slices.Equal(vecs[2], modeltest.Embed("c")) {
		t.Fatalf("Embed: %v %v", vecs, err)
	}
	if reqs := srv.EmbeddingsRequests(); len(reqs) != 2 || reqs[0].Inputs != 2 || reqs[1].Inputs != 1 {
		t.Fatalf("requests %+v, want batches of 2 and 1", reqs)
	}
	c.APIKey = "sk-not-the-key-1234"
	if _, err := c.Embed(context.Background(), []string{"a"}); err == nil || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "sk-not-the-key") {
		t.Fatalf("a wrong key: %v", err)
	}
}
