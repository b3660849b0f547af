package toolregistry

import (
	"strings"
	"testing"
)

// The history is bounded by bytes as well as by count: huge results cannot pin memory.
func TestHistoryByteBound(t *testing.T) {
	h := &history{size: 1000}
	big := strings.Repeat("x", 10<<20)
	for i := range 20 {
		h.add(&Record{CallID: string(rune('a' + i)), Result: &Result{Raw: []byte(big)}})
	}
	recs := h.records()
	if len(recs) == 0 || len(recs) > historyMaxBytes/(10<<20) {
		t.Fatalf("kept %d records of 10 MiB, want at most %d", len(recs), historyMaxBytes/(10<<20))
	}
	if recs[len(recs)-1].CallID != string(rune('a'+19)) {
		t.Fatal("the newest record must be kept")
	}
	if h.bytes > historyMaxBytes {
		t.Fatalf("retained %d bytes", h.bytes)
	}
	// A single record larger than the bound is still kept: the newest always is.
	h.add(&Record{CallID: "huge", Result: &Result{Raw: []byte(strings.Repeat("y", historyMaxBytes+1))}})
	if recs := h.records(); len(recs) != 1 || recs[0].CallID != "huge" {
		t.Fatalf("records %d", len(recs))
	}
	// Count bound and resize keep the newest.
	h2 := &history{size: 3}
	for i := range 10 {
		h2.add(&Record{CallID: string(rune('0' + i))})
	}
	if recs := h2.records(); len(recs) != 3 || recs[0].CallID != "7" || recs[2].CallID != "9" {
		t.Fatalf("count bound: %v", recs)
	}
	h2.resize(2)
	if recs := h2.records(); len(recs) != 2 || recs[0].CallID != "8" {
		t.Fatalf("resize: %v", recs)
	}
	h2.resize(0)
	h2.add(&Record{CallID: "x"})
	if len(h2.records()) != 0 {
		t.Fatal("size 0 keeps nothing")
	}
}
