package modeltest_test

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"testing"

	"github.com/cordisgo/harness/internal/modeltest"
)

// The embeddings endpoint answers OpenAI's format with Embed's vectors and refuses what an
// OpenAI-compatible server refuses.
func TestEmbeddings(t *testing.T) {
	s := modeltest.New(t, modeltest.Options{ExpectRejections: true})
	post := func(key string, body any) (int, []byte) {
		t.Helper()
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, s.URL+"/v1/embeddings", bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		var out bytes.Buffer
		_, _ = out.ReadFrom(resp.Body)
		return resp.StatusCode, out.Bytes()
	}
	status, body := post(s.Key, map[string]any{"model": modeltest.EmbeddingModel, "input": []string{"read a file", "读取文件"}})
	var res struct {
		Data []struct {
			Index     int
			Embedding []float32
		}
		Usage struct {
			TotalTokens int `json:"total_tokens"`
		}
	}
	if status != http.StatusOK || json.Unmarshal(body, &res) != nil || len(res.Data) != 2 || res.Data[1].Index != 1 ||
		len(res.Data[0].Embedding) != modeltest.EmbeddingDims || res.Usage.TotalTokens != 7 {
		t.Fatalf("%d %s", status, body)
	}
	want := modeltest.Embed("read a file")
	var norm float64
	for i, x := range res.Data[0].Embedding {
		if x != want[i] {
			t.Fatalf("embedding[%d] = %v, want Embed's %v", i, x, want[i])
		}
		norm += float64(x * x)
	}
	if math.Abs(norm-1) > 1e-5 {
		t.Errorf("norm² = %v, want 1", norm)
	}
	cos := func(a, b []float32) float64 {
		var d float64
		for i := range a {
			d += float64(a[i] * b[i])
		}
		return d
	}
	if near, far := cos(want, modeltest.Embed("read the file contents")), cos(want, modeltest.Embed("list kubernetes pods")); near <= far {
		t.Errorf("cos(read a file, read the file contents) %.3f <= cos(…, list kubernetes pods) %.3f", near, far)
	}
	if status, _ := post(s.Key, map[string]any{"model": modeltest.EmbeddingModel, "input": "one text"}); status != http.StatusOK {
		t.Errorf("a single string input: %d", status)
	}
	for _, tc := range []struct {
		key  string
		body any
		want int
	}{
		{"sk-wrong", map[string]any{"model": modeltest.EmbeddingModel, "input": "x"}, http.StatusUnauthorized},
		{s.Key, map[string]any{"model": "text-embedding-3-small", "input": "x"}, http.StatusBadRequest},
		{s.Key, map[string]any{"model": modeltest.EmbeddingModel, "input": []string{}}, http.StatusBadRequest},
		{s.Key, map[string]any{"model": modeltest.EmbeddingModel, "input": []string{""}}, http.StatusBadRequest},
		{s.Key, map[string]any{"model": modeltest.EmbeddingModel, "input": 3}, http.StatusBadRequest},
		{s.Key, map[string]any{"model": modeltest.EmbeddingModel, "input": "x", "encoding_format": "base64"}, http.StatusBadRequest},
	} {
		if status, body := post(tc.key, tc.body); status != tc.want {
			t.Errorf("%v: %d %s, want %d", tc.body, status, body, tc.want)
		}
	}
	reqs := s.EmbeddingsRequests()
	if len(reqs) != 8 || reqs[0].Inputs != 2 || reqs[0].Status != http.StatusOK || reqs[2].Status != http.StatusUnauthorized {
		t.Errorf("records %+v", reqs)
	}
	if len(s.Requests()) != 0 {
		t.Errorf("embeddings requests recorded as chat requests: %d", len(s.Requests()))
	}
}
