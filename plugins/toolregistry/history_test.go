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

// The ring wraps and keeps the newest records in order, under both bounds and resizes.
func TestHistoryRing(t *testing.T) {
	h := &history{size: 4}
	want := []string{}
	for i := range 23 {
		id := string(rune('a' + i))
		h.add(&Record{CallID: id})
		want = append(want, id)
		if len(want) > 4 {
			want = want[1:]
		}
		got := []string{}
		for _, r := range h.records() {
			got = append(got, r.CallID)
		}
		if strings.Join(got, "") != strings.Join(want, "") {
			t.Fatalf("after %d adds: %v, want %v", i+1, got, want)
		}
		if len(h.ring) > h.size {
			t.Fatalf("ring of %d for size %d", len(h.ring), h.size)
		}
	}
	h.resize(6)
	h.add(&Record{CallID: "X"})
	h.add(&Record{CallID: "Y"})
	h.add(&Record{CallID: "Z"})
	got := ""
	for _, r := range h.records() {
		got += r.CallID
	}
	if got != "uvwXYZ" {
		t.Fatalf("after growing to 6: %q", got)
	}
}
