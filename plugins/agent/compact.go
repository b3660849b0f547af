package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cordisgo/harness/plugins/agent/session"
	"github.com/cordisgo/harness/plugins/model"
)

// ErrNothingToCompact: the history is too short to be made smaller (one exchange, or
// nothing before the messages kept verbatim).
var ErrNothingToCompact = errors.New("agent: nothing to compact")

// The triggers of a compaction (session.Compaction.Trigger).
const (
	// CompactAuto: the next request would pass the agent's share of the window.
	CompactAuto = "auto"
	// CompactOverflow: the provider refused a request as too long for its window.
	CompactOverflow = "overflow"
	// CompactManual: a person asked (/compact, agent/compact).
	CompactManual = "manual"
)

// defaultBytesPerToken is the estimate of a request's bytes per token until the API has
// reported a request's prompt tokens (JSON and English text run at 3–4).
const defaultBytesPerToken = 3

// estimate tracks the size of a session's history, and the ratio of tokens to bytes the
// API reported for the last request, so the tokens of the next request can be estimated
// before it is sent: the usage reported, scaled by what was added since.
type estimate struct {
	histBytes int // the estimated bytes of the history's messages
	// lastBytes and lastTokens are the bytes and reported prompt tokens of the last request
	// answered (0: none yet).
	lastBytes, lastTokens int
}

// messageBytes estimates the bytes a message takes in a request.
func messageBytes(m *model.Message) int {
	n := 24 + len(m.Content) + len(m.ToolCallID)
	if m.Reasoning != nil {
		n += len(*m.Reasoning) + 24
	}
	for _, tc := range m.ToolCalls {
		n += 48 + len(tc.ID) + len(tc.Name) + len(tc.Arguments)
	}
	for _, im := range m.Images {
		n += len(im.Data) * 4 / 3
	}
	return n
}

func (e *estimate) add(m model.Message) { e.histBytes += messageBytes(&m) }

// reset recomputes the history's size (after a compaction, or when resumed).
func (e *estimate) reset(hist []model.Message) {
	e.histBytes = 0
	for i := range hist {
		e.histBytes += messageBytes(&hist[i])
	}
}

// requestBytes estimates the bytes of a request with the history's messages and req's
// system prompt and tools.
func (e *estimate) requestBytes(req *model.Request) int {
	n := len(req.System) + e.histBytes
	for _, t := range req.Tools {
		n += 48 + len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	return n
}

// tokens converts bytes to tokens at the ratio the API reported last.
func (e *estimate) tokens(bytes int) int {
	if e.lastBytes > 0 && e.lastTokens > 0 {
		return int(int64(bytes) * int64(e.lastTokens) / int64(e.lastBytes))
	}
	return bytes / defaultBytesPerToken
}

// reported records the prompt tokens the API reported for a request of bytes bytes.
func (e *estimate) reported(bytes, promptTokens int) {
	if bytes > 0 && promptTokens > 0 {
		e.lastBytes, e.lastTokens = bytes, promptTokens
	}
}

// compactLimit is the estimated prompt tokens above which a request is compacted first
// (0: never automatically).
func (d *agentDef) compactLimit(info model.Info) int {
	t := d.cfg.Compaction.Threshold
	if t <= 0 || info.ContextWindow <= 0 {
		return 0
	}
	return int(t * float64(info.ContextWindow))
}

// summaryPrompt asks for the summary that replaces the older messages.
const summaryPrompt = "Summarise the conversation so far for yourself: the summary will replace the messages above, " +
	"and you will go on from it with the latest messages kept as they are. Keep the user's requests and constraints " +
	"(the latest in their own words), what was decided and why, the facts learned from tool results that are still " +
	"needed (names, paths, ids, numbers, errors), what is done and what remains to do. Be concise. " +
	"Do not call tools; answer with the summary only."

// isCut reports whether the history may be cut before message m: a user message or an
// assistant message (a tool result stays with its call).
func isCut(m *model.Message) bool { return m.Role == model.RoleUser || m.Role == model.RoleAssistant }

// compact makes the history smaller: old tool results longer than pruneBytes are
// replaced by a pointer to their saved text (read_tool_result reads it) and, unless that
// is enough, the messages before the latest ones (about keep of the window, never
// splitting a call from its result) are summarised by the session's model in a request
// that re-sends the conversation's own prompt, tools and messages, so the provider's
// prefix cache serves it. The compaction is logged (session.EventCompaction) and the
// history replaced by the compacted view. It runs inside the turn slot (a turn, or
// [Session.Compact]).
func (s *Session) compact(cx context.Context, d *agentDef, m model.Model, info model.Info, trigger, focus string) (*session.Compaction, error) {
	base, err := s.request(d, info)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	hist := base.Messages
	est := s.est
	s.mu.Unlock()
	cfg := d.cfg.Compaction
	before := est.tokens(est.requestBytes(base))
	window := info.ContextWindow
	if window <= 0 {
		window = before
	}
	ratio := func(bytes int) int { return est.tokens(bytes) }
	sizes := make([]int, len(hist))
	for i := range hist {
		sizes[i] = messageBytes(&hist[i])
	}
	// The cut: the earliest point at which the messages after it fit keep; at least the
	// last exchange stays.
	keepTokens := int(cfg.Keep * float64(window))
	cut, acc := 0, 0
	for i := len(hist) - 1; i > 0; i-- {
		acc += sizes[i]
		if !isCut(&hist[i]) {
			continue
		}
		if cut == 0 || ratio(acc) <= keepTokens {
			cut = i
		}
		if ratio(acc) > keepTokens {
			break
		}
	}
	if trigger == CompactManual {
		// Asked for: at most the latest exchange stays verbatim, however large the window.
		for i := len(hist) - 1; i > cut; i-- {
			if hist[i].Role == model.RoleUser {
				cut = i
				break
			}
		}
	}
	if cut == 0 {
		return nil, ErrNothingToCompact
	}
	s.emit(session.Event{Type: session.EventCompacting, Text: trigger})

	// Pruning first: old long results become pointers to their saved text.
	pruned := append([]model.Message(nil), hist...)
	var prunes []session.Pruned
	for i := range cut {
		msg := &pruned[i]
		if msg.Role != model.RoleTool || len(msg.Content) <= cfg.PruneBytes || msg.ToolCallID == "" {
			continue
		}
		text, err := s.pointer(msg.ToolCallID, msg.Content)
		if err != nil {
			s.svc.log.Warn("agent: an old result not pruned", "session", s.header.ID, "call", msg.ToolCallID, "err", err)
			continue
		}
		sizes[i] += len(text) - len(msg.Content)
		msg.Content, msg.Images = text, nil
		prunes = append(prunes, session.Pruned{CallID: msg.ToolCallID, Content: text})
	}
	prunedBytes := est.requestBytes(base) - est.histBytes
	for _, n := range sizes {
		prunedBytes += n
	}
	c := &session.Compaction{Trigger: trigger, Focus: focus, Pruned: prunes, TokensBefore: before}
	if len(prunes) > 0 && trigger != CompactManual && ratio(prunedBytes) <= int(0.5*float64(window)) {
		// Pruning gave room enough: nothing is summarised.
		c.TokensAfter = ratio(prunedBytes)
		return c, s.applyCompaction(c)
	}

	// The summary. The request is the conversation's own prefix (system prompt, tools and
	// the messages to summarise as sent before) plus the question, so the provider's cache
	// serves all but the question; when that does not fit the window, the pruned messages,
	// then fewer of them.
	maxOut := min(cfg.SummaryTokens, max(window/8, 256))
	room := int(0.9*float64(window)) - maxOut
	fixed := est.requestBytes(base) - est.histBytes
	fits := func(msgs []model.Message, end int) bool {
		n := fixed
		for i := range end {
			n += messageBytes(&msgs[i])
		}
		return ratio(n) <= room
	}
	in := hist
	if !fits(in, cut) {
		in = pruned
		for cut > 0 && !fits(in, cut) {
			cut--
			for cut > 0 && !isCut(&in[cut]) {
				cut--
			}
		}
		if cut == 0 {
			return nil, fmt.Errorf("compacting: the first message alone does not fit the model's context window (%d tokens)", window)
		}
	}
	question := summaryPrompt
	if focus = strings.TrimSpace(focus); focus != "" {
		question += "\nGive particular attention to: " + focus
	}
	req := *base
	req.Messages = append(in[:cut:cut], model.Message{Role: model.RoleUser, Content: question})
	req.ToolChoice = model.ToolChoiceNone
	req.MaxTokens = maxOut
	resp, err := m.Generate(cx, &req, nil)
	if err != nil {
		return nil, fmt.Errorf("compacting: %w", err)
	}
	u := priced(m.Info(), resp.Usage)
	s.emit(session.Event{Type: session.EventUsage, Usage: &u})
	summary := strings.TrimSpace(resp.Message.Content)
	if summary == "" {
		return nil, errors.New("compacting: the model answered the summary request with no text")
	}
	s.mu.Lock()
	c.Keep = s.seqs[cut]
	s.mu.Unlock()
	c.Summary, c.Summarized = summary, cut
	// Only the pruned results that stay in the view are recorded.
	kept := map[string]bool{}
	for i := cut; i < len(hist); i++ {
		if hist[i].Role == model.RoleTool {
			kept[hist[i].ToolCallID] = true
		}
	}
	c.Pruned = c.Pruned[:0]
	for _, p := range prunes {
		if kept[p.CallID] {
			c.Pruned = append(c.Pruned, p)
		}
	}
	after := fixed + messageBytes(new(session.SummaryMessage(summary)))
	for i := cut; i < len(hist); i++ {
		after += sizes[i]
	}
	c.TokensAfter = ratio(after)
	return c, s.applyCompaction(c)
}

// applyCompaction logs c and replaces the history by the compacted view.
func (s *Session) applyCompaction(c *session.Compaction) error {
	ev := s.emit(session.Event{Type: session.EventCompaction, Compaction: c})
	s.mu.Lock()
	defer s.mu.Unlock()
	s.history, s.seqs = c.Apply(s.history, s.seqs, ev.Seq)
	s.est.reset(s.history)
	return nil
}

// pointer saves a result's text (unless it was saved already) and returns the text that
// stands for it in the history.
func (s *Session) pointer(callID, content string) (string, error) {
	text, err := s.savedResult(callID)
	if err != nil {
		text = content
		if _, err := s.saveResult(callID, content); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("[This tool result (%d bytes) was removed from the conversation to save context. Read it with %s {\"id\": %q, \"offset\": 0} if it is needed again.]",
		len(text), readResultTool, callID), nil
}

// Compact makes the conversation smaller now (/compact): old long tool results pruned and
// the older messages summarised by the model, focus (if not "") saying what the summary
// must keep. It fails with [ErrBusy] while a turn runs and with [ErrNothingToCompact]
// when the history is too short.
func (s *Session) Compact(cx context.Context, focus string) (*session.Compaction, error) {
	cx, release, err := s.claim(cx)
	if err != nil {
		return nil, err
	}
	defer release()
	d, err := s.def()
	if err != nil {
		return nil, err
	}
	m, err := d.models.Get(s.modelName)
	if err != nil {
		return nil, err
	}
	c, err := s.compact(cx, d, m, m.Info(), CompactManual, focus)
	if err != nil && !errors.Is(err, ErrNothingToCompact) {
		s.emit(session.Event{Type: session.EventError, Error: err.Error()})
	}
	return c, err
}
