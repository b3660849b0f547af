package modeltest

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"strings"
	"unicode"
)

// EmbeddingModel is the embedding model the server offers at POST /embeddings (and
// /v1/embeddings), as OpenAI-compatible servers do; DeepSeek has none, so it is the
// server's own: [Embed] of each input, [EmbeddingDims] numbers.
const EmbeddingModel = "modeltest-embed"

// EmbeddingDims is the length of an [Embed] vector.
const EmbeddingDims = 256

// MaxEmbeddingInputs is the most inputs one embeddings request may carry.
const MaxEmbeddingInputs = 2048

// Embed is the deterministic embedding the server answers with: a hashed bag of the text's
// words (letters and digits, each CJK character a word of its own) and of their character
// trigrams, signed by a second hash and normalised to length 1. Texts that share words and
// spellings are near; it knows no meaning, so it stands in for a real model only where a
// test needs a stable vector.
func Embed(text string) []float32 {
	v := make([]float64, EmbeddingDims)
	add := func(feature string, w float64) {
		h := fnv.New64a()
		_, _ = h.Write([]byte(feature))
		x := h.Sum64()
		sign := 1.0
		if x>>63 == 1 {
			sign = -1
		}
		v[x%EmbeddingDims] += sign * w
	}
	for _, word := range embedWords(text) {
		add("w:"+word, 1)
		r := []rune("#" + word + "#")
		for i := 0; i+3 <= len(r); i++ {
			add("t:"+string(r[i:i+3]), 0.5)
		}
	}
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	out := make([]float32, EmbeddingDims)
	if norm == 0 {
		return out
	}
	norm = math.Sqrt(norm)
	for i, x := range v {
		out[i] = float32(x / norm)
	}
	return out
}

// embedWords lowercases text and cuts it into words: runs of letters and digits, each CJK
// character a word of its own.
func embedWords(text string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, string(cur))
			cur = cur[:0]
		}
	}
	for _, r := range strings.ToLower(text) {
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
			flush()
			out = append(out, string(r))
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			cur = append(cur, r)
		default:
			flush()
		}
	}
	flush()
	return out
}

// embeddingsRequest is an OpenAI embeddings request: input is a string or an array of
// strings.
type embeddingsRequest struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`
	EncodingFormat string          `json:"encoding_format,omitempty"`
}

// EmbeddingsRequest is the record of one embeddings request: how many inputs it carried,
// the status of the answer and the error of a refusal.
type EmbeddingsRequest struct {
	Inputs int
	Status int
	Error  string
}

// EmbeddingsRequests returns the records of the embeddings requests so far, in arrival
// order. They are kept apart from the chat requests ([Server.Requests]).
func (s *Server) EmbeddingsRequests() []EmbeddingsRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]EmbeddingsRequest(nil), s.embedRequests...)
}

// embeddings answers POST /embeddings: one [Embed] vector per input, in OpenAI's format
// ({"object": "list", "data": [{"object": "embedding", "index", "embedding"}], "model",
// "usage"}), after the same authentication as chat completions; a refusal has the status
// and error body of the chat completions' refusals.
func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	rec := EmbeddingsRequest{Status: http.StatusOK}
	defer func() {
		s.mu.Lock()
		s.embedRequests = append(s.embedRequests, rec)
		s.mu.Unlock()
	}()
	refuse := func(status int, msg, typ string) {
		rec.Status, rec.Error = status, msg
		if s.tb != nil && !s.opts.ExpectRejections {
			s.tb.Errorf("modeltest: embeddings request rejected with %d: %s", status, msg)
		}
		writeError(w, status, msg, typ, "")
	}
	if msg, ok := s.authorize(r); !ok {
		refuse(http.StatusUnauthorized, msg, "authentication_error")
		return
	}
	var req embeddingsRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<20)).Decode(&req); err != nil {
		refuse(http.StatusBadRequest, "Failed to deserialize the JSON body into the target type: "+err.Error(), "invalid_request_error")
		return
	}
	if req.Model != EmbeddingModel {
		refuse(http.StatusBadRequest, fmt.Sprintf("Model Not Exist: %q (the embedding model is %q)", req.Model, EmbeddingModel), "invalid_request_error")
		return
	}
	if req.EncodingFormat != "" && req.EncodingFormat != "float" {
		refuse(http.StatusBadRequest, fmt.Sprintf("encoding_format %q: only \"float\" is served", req.EncodingFormat), "invalid_request_error")
		return
	}
	var inputs []string
	var one string
	if json.Unmarshal(req.Input, &one) == nil {
		inputs = []string{one}
	} else if json.Unmarshal(req.Input, &inputs) != nil {
		refuse(http.StatusBadRequest, "input: expected a string or an array of strings", "invalid_request_error")
		return
	}
	rec.Inputs = len(inputs)
	if len(inputs) == 0 || len(inputs) > MaxEmbeddingInputs {
		refuse(http.StatusBadRequest, fmt.Sprintf("input: %d items, expected 1 to %d", len(inputs), MaxEmbeddingInputs), "invalid_request_error")
		return
	}
	type datum struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	out := struct {
		Object string  `json:"object"`
		Data   []datum `json:"data"`
		Model  string  `json:"model"`
		Usage  struct {
			PromptTokens int `json:"prompt_tokens"`
			TotalTokens  int `json:"total_tokens"`
		} `json:"usage"`
	}{Object: "list", Model: req.Model}
	for i, in := range inputs {
		if in == "" {
			refuse(http.StatusBadRequest, fmt.Sprintf("input[%d] is empty", i), "invalid_request_error")
			return
		}
		out.Data = append(out.Data, datum{Object: "embedding", Index: i, Embedding: Embed(in)})
		out.Usage.PromptTokens += len(embedWords(in))
	}
	out.Usage.TotalTokens = out.Usage.PromptTokens
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}
