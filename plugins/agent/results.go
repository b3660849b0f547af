package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/cordisgo/harness/plugins/agent/session"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// readResultTool is the name of the tool that reads saved results in pieces.
const readResultTool = "read_tool_result"

// toolMessage turns a registry result into the tool message the model gets: the
// model-facing text; images as images for a model that accepts them, else described; a
// text over the agent's largeResultBytes saved whole, with a head-and-tail preview.
func (s *Session) toolMessage(d *agentDef, info model.Info, callID string, res *toolregistry.Result, err error) (model.Message, session.ResultInfo) {
	ri := session.ResultInfo{Outcome: string(toolregistry.CodeOK)}
	var te *toolregistry.ToolError
	if errors.As(err, &te) {
		ri.Outcome = string(te.Code)
	} else if err != nil {
		ri.Outcome = string(toolregistry.CodeToolError)
	}
	msg := model.Message{Role: model.RoleTool, ToolCallID: callID}
	if res == nil {
		res = toolregistry.ErrorResult("Error: " + err.Error())
	}
	ri.IsError = res.IsError
	var b strings.Builder
	for i, blk := range res.Content {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(blk.ModelText())
		if blk.Type != toolregistry.ContentImage || blk.Attachment == nil {
			continue
		}
		if info.ImageInput {
			if data, mt, ok := d.tools.Attachments().Get(blk.Attachment.ID); ok {
				msg.Images = append(msg.Images, model.Image{MIMEType: mt, Data: data})
				continue
			}
			b.WriteString(" (not shown: the image is no longer stored)")
			continue
		}
		fmt.Fprintf(&b, " (not shown: the model %s does not accept image input)", info.ID)
	}
	text := b.String()
	ri.Bytes = len(text)
	if limit := d.cfg.LargeResultBytes; len(text) > limit {
		where, err := s.saveResult(callID, text)
		if err != nil {
			s.svc.log.Warn("agent: large result not saved; the model gets it cut", "call", callID, "err", err)
			where = ""
		}
		text = preview(text, limit, callID, where)
		ri.Saved = where
	}
	msg.Content = text
	return msg, ri
}

// preview is the head and the tail of text, with a note in between saying where the whole
// is and how to read it.
func preview(text string, limit int, callID, where string) string {
	head, tail := limit/5, limit/10
	h := cutRunes(text, head, true)
	t := cutRunes(text, tail, false)
	omitted := len(text) - len(h) - len(t)
	var note string
	if where != "" {
		note = fmt.Sprintf("\n[… %d bytes omitted: the whole result (%d bytes) is saved as %s; read it in pieces with %s {\"id\": %q, \"offset\": %d}]\n",
			omitted, len(text), where, readResultTool, callID, len(h))
	} else {
		note = fmt.Sprintf("\n[… %d bytes omitted of %d]\n", omitted, len(text))
	}
	return h + note + t
}

// cutRunes returns the first (or last) at most n bytes of s, cut at a rune boundary.
func cutRunes(s string, n int, head bool) string {
	if n >= len(s) {
		return s
	}
	if head {
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		return s[:n]
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

// resultFile names the file of callID's saved result.
func resultFile(callID string) string {
	if session.ValidID(callID) {
		return callID + ".txt"
	}
	sum := sha256.Sum256([]byte(callID))
	return hex.EncodeToString(sum[:8]) + ".txt"
}

// saveResult keeps text whole: in the session's directory, or in memory for a session
// that is not stored. It returns where it is.
func (s *Session) saveResult(callID, text string) (string, error) {
	if s.dir == "" {
		s.mu.Lock()
		s.saved[callID] = text
		s.mu.Unlock()
		return "memory:" + callID, nil
	}
	dir := filepath.Join(s.dir, "results")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	p := filepath.Join(dir, resultFile(callID))
	if err := os.WriteFile(p, []byte(s.svc.scrub.Replace(text)), 0o600); err != nil {
		return "", err
	}
	return p, nil
}

// savedResult returns the saved text of callID.
func (s *Session) savedResult(callID string) (string, error) {
	s.mu.Lock()
	text, ok := s.saved[callID]
	s.mu.Unlock()
	if ok {
		return text, nil
	}
	if s.dir == "" {
		return "", fmt.Errorf("no saved result for call %q in this session", callID)
	}
	b, err := os.ReadFile(filepath.Join(s.dir, "results", resultFile(callID)))
	if err != nil {
		return "", fmt.Errorf("no saved result for call %q in this session", callID)
	}
	return string(b), nil
}

var readResultSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"id":{"type":"string","description":"The id of the tool call whose result was saved."},` +
	`"offset":{"type":"integer","minimum":0,"description":"The byte offset to read from (default 0)."},` +
	`"limit":{"type":"integer","minimum":1,"description":"How many bytes to read (default and maximum: 20% of the saved-result threshold)."}},` +
	`"required":["id"],"additionalProperties":false}`)

// readResultTool is the tool that reads a saved result in pieces.
func (d *agentDef) readResultTool() toolregistry.Tool {
	return toolregistry.Tool{
		Name: readResultTool,
		Description: "Reads a piece of a tool result that was too large to show whole: give the call id " +
			"from the preview's note and a byte offset.",
		Parameters: readResultSchema,
		Meta:       map[string]string{"harness": "agent", "readOnlyHint": "true"},
		Execute: func(cx context.Context, call *toolregistry.Call) (*toolregistry.Result, error) {
			var in struct {
				ID     string `json:"id"`
				Offset int    `json:"offset"`
				Limit  int    `json:"limit"`
			}
			if err := json.Unmarshal(call.Args, &in); err != nil {
				return nil, err
			}
			s, ok := call.Session.(*Session)
			if !ok {
				return nil, errors.New("no agent session: saved results belong to a session")
			}
			text, err := s.savedResult(in.ID)
			if err != nil {
				return nil, err
			}
			max := d.cfg.LargeResultBytes / 5
			if in.Limit <= 0 || in.Limit > max {
				in.Limit = max
			}
			if in.Offset >= len(text) {
				return toolregistry.TextResult(fmt.Sprintf("[offset %d is at or past the end: the result has %d bytes]", in.Offset, len(text))), nil
			}
			start := in.Offset
			for start > 0 && !utf8.RuneStart(text[start]) {
				start--
			}
			end := min(start+in.Limit, len(text))
			for end < len(text) && !utf8.RuneStart(text[end]) {
				end--
			}
			if end <= start { // a rune longer than the limit
				end = min(start+utf8.UTFMax, len(text))
			}
			note := fmt.Sprintf("\n[bytes %d–%d of %d", start, end, len(text))
			if end < len(text) {
				note += fmt.Sprintf("; next offset %d]", end)
			} else {
				note += "; the end]"
			}
			return toolregistry.TextResult(text[start:end] + note), nil
		},
	}
}
