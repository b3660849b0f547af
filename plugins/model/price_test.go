package model_test

import (
	"fmt"
	"testing"

	"github.com/cordisgo/harness/plugins/model"
)

func ExamplePrice_Cost() {
	flash := model.Price{InputCacheHit: 0.0028, InputCacheMiss: 0.14, Output: 0.28}
	u := model.Usage{PromptTokens: 100_000, CacheHitTokens: 96_000, CompletionTokens: 2_000}
	fmt.Println(model.FormatCost(flash.Cost(u)))
	// Output: $0.0014
}

func TestPrice(t *testing.T) {
	p := model.Price{InputCacheHit: 1, InputCacheMiss: 10, Output: 100}
	for _, c := range []struct {
		u    model.Usage
		want float64
	}{
		{model.Usage{PromptTokens: 1e6}, 10}, // no cache report: every prompt token missed
		{model.Usage{PromptTokens: 1e6, CacheHitTokens: 1e6}, 1},
		{model.Usage{PromptTokens: 2e6, CacheHitTokens: 1e6, CacheMissTokens: 1e6, CompletionTokens: 1e6}, 111},
		{model.Usage{PromptTokens: 1e6, CacheHitTokens: 3e6}, 1}, // hits beyond the prompt are not billed
	} {
		if got := p.Cost(c.u); got != c.want {
			t.Errorf("Cost(%+v) = %g, want %g", c.u, got, c.want)
		}
	}
	for v, want := range map[float64]string{0: "$0", 0.00001: "<$0.0001", 0.01234: "$0.0123", 12.345: "$12.35"} {
		if got := model.FormatCost(v); got != want {
			t.Errorf("FormatCost(%g) = %q, want %q", v, got, want)
		}
	}
}
