package session

import (
	"github.com/cordisgo/harness/plugins/model"
)

// Compaction is how a session's history was made smaller to fit the model's context
// window: the event of type [EventCompaction]. The raw events before it stay in the log;
// [History] applies it, so a resumed session loads the compacted view.
//
// A Compaction is a plain value.
type Compaction struct {
	// Trigger is what started it: "auto" (the next request would pass the agent's share of
	// the window), "overflow" (the provider refused a request as too long; the turn went
	// on after it) or "manual" (/compact, agent/compact).
	Trigger string `json:"trigger"`
	// Focus is what the person asked the summary to keep (/compact FOCUS).
	Focus string `json:"focus,omitempty"`
	// Pruned are the old tool results replaced by a pointer to their saved text, by call.
	Pruned []Pruned `json:"pruned,omitempty"`
	// Summary is the model's summary of the messages before Keep; "" when pruning was
	// enough.
	Summary string `json:"summary,omitempty"`
	// Keep is the sequence number of the first event whose message stays verbatim after
	// the summary (0 without a summary).
	Keep int64 `json:"keep,omitempty"`
	// Summarized counts the messages the summary replaced.
	Summarized int `json:"summarized,omitempty"`
	// TokensBefore and TokensAfter estimate the prompt's tokens before and after.
	TokensBefore int `json:"tokensBefore"`
	TokensAfter  int `json:"tokensAfter"`
}

// Pruned is one tool result replaced by Content (a pointer to its saved text).
type Pruned struct {
	CallID  string `json:"callId"`
	Content string `json:"content"`
}

// SummaryMessage is the user message that stands for the summarised part of a
// conversation.
func SummaryMessage(summary string) model.Message {
	return model.Message{Role: model.RoleUser, Content: "The earlier part of this conversation was summarised to fit the context window:\n<compacted-summary>\n" +
		summary + "\n</compacted-summary>"}
}

// Apply returns the history hist (seqs[i] the sequence number of the event hist[i] came
// from) after the compaction c, whose own event has sequence number seq: pruned results
// replaced, then — with a summary — the messages before Keep replaced by
// [SummaryMessage]. The slices returned are new when anything changed.
func (c *Compaction) Apply(hist []model.Message, seqs []int64, seq int64) ([]model.Message, []int64) {
	if len(c.Pruned) > 0 {
		by := make(map[string]string, len(c.Pruned))
		for _, p := range c.Pruned {
			by[p.CallID] = p.Content
		}
		hist = append([]model.Message(nil), hist...)
		for i := range hist {
			if text, ok := by[hist[i].ToolCallID]; ok && hist[i].Role == model.RoleTool {
				hist[i].Content = text
				hist[i].Images = nil
			}
		}
	}
	if c.Summary == "" {
		return hist, seqs
	}
	i := 0
	for i < len(seqs) && seqs[i] < c.Keep {
		i++
	}
	nh := make([]model.Message, 0, len(hist)-i+1)
	nh = append(nh, SummaryMessage(c.Summary))
	nh = append(nh, hist[i:]...)
	ns := make([]int64, 0, len(nh))
	ns = append(ns, seq)
	ns = append(ns, seqs[i:]...)
	return nh, ns
}
