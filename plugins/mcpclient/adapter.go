package mcpclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/internal/jsonstr"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// Image media types admitted as attachments. Anything else is described, not stored.
var imageMagic = map[string]func([]byte) bool{
	"image/png":  func(b []byte) bool { return bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) },
	"image/jpeg": func(b []byte) bool { return bytes.HasPrefix(b, []byte("\xff\xd8\xff")) },
	"image/gif": func(b []byte) bool {
		return bytes.HasPrefix(b, []byte("GIF87a")) || bytes.HasPrefix(b, []byte("GIF89a"))
	},
	"image/webp": func(b []byte) bool {
		return len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP"
	},
}

// AdaptResult turns an MCP tools/call result into a registry result:
//
//   - Raw is the canonical MCP result JSON, for programmatic callers (base64 included);
//   - Structured is structuredContent, which the registry validates against the tool's
//     output schema;
//   - Content is the model's view, block by block: text as is (consecutive text-like blocks
//     joined with "\n"); images stored in store as attachments when every image of the result
//     has a PNG, JPEG, WebP or GIF media type matching its bytes (the SDK decoded the base64
//     once; a bad image refuses the whole batch, with a diagnostic per image); audio, embedded
//     resources, resource links and content types this client does not know as explicit text
//     diagnostics; "(<tool> returned no model-visible content)" when nothing is left;
//   - IsError mirrors isError, and then images are described, not stored.
//
// The model-facing text is capped at maxOutputBytes (0: no cap) with a marker saying how
// much was dropped. tool is the raw tool name, used in diagnostics. store may be nil (images
// are then described). AdaptResult never fails: whatever cannot be shown becomes a diagnostic.
func AdaptResult(tool string, res *mcp.CallToolResult, store *toolregistry.Attachments, maxOutputBytes int) *toolregistry.Result {
	if len(res.Content) == 1 && plainText(res) {
		if text := res.Content[0].(*mcp.TextContent).Text; text != "" {
			return adaptText(res, text, maxOutputBytes)
		}
	}
	return adaptBlocks(tool, res, store, maxOutputBytes, canonicalJSON(res))
}

// adaptBlocks is AdaptResult past its fast path, with raw as the canonical JSON.
func adaptBlocks(tool string, res *mcp.CallToolResult, store *toolregistry.Attachments, maxOutputBytes int, raw json.RawMessage) *toolregistry.Result {
	out := &toolregistry.Result{IsError: res.IsError, Raw: raw}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			out.Structured = b
		}
	}
	out.Content = project(tool, res, store, out.Structured)
	if maxOutputBytes > 0 {
		out.Content = capContent(out.Content, maxOutputBytes)
	}
	return out
}

// plainTextResult is the adapted form of the most common result, one text block and nothing
// else, in one allocation: the result, its content and (when it is short) its canonical
// JSON.
type plainTextResult struct {
	res     toolregistry.Result
	content [1]toolregistry.Content
	raw     [96]byte
}

// adaptText is AdaptResult for a plain result whose only block is text (not empty).
func adaptText(res *mcp.CallToolResult, text string, maxOutputBytes int) *toolregistry.Result {
	t := new(plainTextResult)
	t.res.IsError = res.IsError
	raw := appendPlainText(t.raw[:0], res)
	t.res.Raw = raw[:len(raw):len(raw)] // an append by a caller copies instead of writing into t
	t.content[0] = toolregistry.Text(text)
	t.res.Content = t.content[:]
	if maxOutputBytes > 0 {
		t.res.Content = capContent(t.res.Content, maxOutputBytes)
	}
	return &t.res
}

// project computes the model-facing blocks of res.
func project(tool string, res *mcp.CallToolResult, store *toolregistry.Attachments, structured json.RawMessage) []toolregistry.Content {
	// The common case, one text block, costs one slice.
	if len(res.Content) == 1 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok && tc.Text != "" {
			return []toolregistry.Content{toolregistry.Text(tc.Text)}
		}
	}
	images := admitImages(res, store)
	var (
		blocks []toolregistry.Content
		run    strings.Builder
		inRun  bool
		img    int
	)
	line := func(s string) {
		if inRun {
			run.WriteByte('\n')
		}
		run.WriteString(s)
		inRun = true
	}
	flush := func() {
		if inRun {
			blocks = append(blocks, toolregistry.Text(run.String()))
			run.Reset()
			inRun = false
		}
	}
	for _, c := range res.Content {
		switch b := c.(type) {
		case *mcp.TextContent:
			if b.Text != "" {
				line(b.Text)
			}
		case *mcp.ImageContent:
			a := images[img]
			img++
			if a.err != "" {
				line(fmt.Sprintf("[image unavailable: %s; %s; raw image data remains available to programmatic callers]", mediaOrUnknown(b.MIMEType), a.err))
				continue
			}
			flush()
			blocks = append(blocks, toolregistry.Image(a.att))
		case *mcp.AudioContent:
			line(fmt.Sprintf("[audio result unsupported: %s; raw audio data remains available to programmatic callers]", mediaOrUnknown(b.MIMEType)))
		case *mcp.ResourceLink:
			if b.Name == "" || b.URI == "" {
				line("[resource link unavailable: the MCP block is missing its name or URI]")
			} else {
				line("Resource link: " + b.Name + " (" + b.URI + ")")
			}
		case *mcp.EmbeddedResource:
			what := "embedded resource unsupported"
			if b.Resource != nil && b.Resource.URI != "" {
				what += ": " + b.Resource.URI
			}
			line("[" + what + "; raw resource data remains available to programmatic callers]")
		case nil:
			line("[unsupported MCP content block: expected an object]")
		default:
			line("[unsupported MCP content type: " + contentType(c) + "]")
		}
	}
	flush()
	if len(blocks) == 0 {
		if len(structured) > 0 && !res.IsError {
			return []toolregistry.Content{toolregistry.JSON(structured)}
		}
		return []toolregistry.Content{toolregistry.Text("(" + tool + " returned no model-visible content)")}
	}
	return blocks
}

// admission is the fate of one image block: an attachment, or the reason it was refused.
type admission struct {
	att toolregistry.Attachment
	err string
}

// admitImages validates every image of res and stores them all, or none: one bad image
// refuses the batch.
func admitImages(res *mcp.CallToolResult, store *toolregistry.Attachments) []admission {
	var imgs []*mcp.ImageContent
	for _, c := range res.Content {
		if ic, ok := c.(*mcp.ImageContent); ok {
			imgs = append(imgs, ic)
		}
	}
	if len(imgs) == 0 {
		return nil
	}
	out := make([]admission, len(imgs))
	refuse := func(reason string) []admission {
		for i := range out {
			if out[i].err == "" {
				out[i].err = reason
			}
		}
		return out
	}
	switch {
	case res.IsError:
		return refuse("the tool reported an error")
	case store == nil:
		return refuse("no attachment store is available")
	}
	media := make([]string, len(imgs))
	bad := false
	for i, ic := range imgs {
		mt, _, err := mime.ParseMediaType(ic.MIMEType)
		check := imageMagic[mt]
		switch {
		case err != nil || check == nil:
			out[i].err = "the declared media type is not PNG, JPEG, WebP or GIF"
		case len(ic.Data) == 0:
			out[i].err = "the image has no data"
		case !check(ic.Data):
			out[i].err = "the image data does not match its declared media type"
		}
		media[i] = mt
		bad = bad || out[i].err != ""
	}
	if bad {
		return refuse("another image in the same result was invalid")
	}
	for i, ic := range imgs {
		a, err := store.Put(media[i], ic.Data)
		if err != nil {
			return refuse("the attachment store refused the image: " + err.Error())
		}
		out[i].att = a
	}
	return out
}

func mediaOrUnknown(mt string) string {
	if mt == "" {
		return "unknown media type"
	}
	return mt
}

// contentType names a content block this client does not project, from its wire form.
func contentType(c mcp.Content) string {
	raw, err := c.MarshalJSON()
	if err == nil {
		var head struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(raw, &head) == nil && head.Type != "" {
			return head.Type
		}
	}
	return fmt.Sprintf("%T", c)
}

// capContent cuts the text and JSON of blocks to max bytes: blocks that fit are kept, the
// first text block that does not is cut at a UTF-8 boundary, a JSON block that does not is
// dropped, later blocks are dropped, and a marker saying how much was dropped ends the
// content. Images are references and count nothing. blocks is not modified.
func capContent(blocks []toolregistry.Content, max int) []toolregistry.Content {
	size := func(c toolregistry.Content) int {
		switch c.Type {
		case toolregistry.ContentText:
			return len(c.Text)
		case toolregistry.ContentJSON:
			return len(c.JSON)
		}
		return 0
	}
	total := 0
	for _, c := range blocks {
		total += size(c)
	}
	if total <= max {
		return blocks
	}
	out := make([]toolregistry.Content, 0, len(blocks)+1)
	// The marker counts against the cap, so that text and marker together fit in max and a
	// registry cap of the same size never cuts (and re-labels) the result again. Its
	// longest form (dropped == total) bounds its length.
	budget := max - 1 - len(capMarker(total, total, max))
	if budget < 0 {
		budget = 0
	}
	room := budget
	for _, c := range blocks {
		n := size(c)
		if n <= budget {
			out = append(out, c)
			budget -= n
			continue
		}
		if c.Type == toolregistry.ContentText && budget > 0 {
			k := budget
			for k > 0 && !utf8.RuneStart(c.Text[k]) {
				k--
			}
			if k > 0 {
				out = append(out, toolregistry.Text(c.Text[:k]))
				budget -= k
			}
		}
		break
	}
	marker := capMarker(total-(room-budget), total, max)
	if last := len(out) - 1; last >= 0 && out[last].Type == toolregistry.ContentText {
		out[last].Text += "\n" + marker
	} else {
		out = append(out, toolregistry.Text(marker))
	}
	return out
}

// capMarker says how much of the output was dropped.
func capMarker(dropped, total, max int) string {
	return "[output truncated by the MCP client: " + strconv.Itoa(dropped) + " of " +
		strconv.Itoa(total) + " bytes dropped (maxOutputBytes " + strconv.Itoa(max) + ")]"
}

// canonicalJSON returns the MCP JSON of res, as the SDK marshals it. Results made only of
// plain text blocks, the common case, are encoded directly, byte for byte what
// json.Marshal produces, at a fraction of its cost.
func canonicalJSON(res *mcp.CallToolResult) json.RawMessage {
	if plainText(res) {
		return appendPlainText(nil, res)
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return nil
	}
	return raw
}

// appendPlainText appends the canonical JSON of res, a plainText result, to b, growing it
// once when it is too short.
func appendPlainText(b []byte, res *mcp.CallToolResult) []byte {
	n := len(`{"content":[],"isError":true}`)
	for _, c := range res.Content {
		n += len(`{"type":"text","text":""},`) + len(c.(*mcp.TextContent).Text) + 8
	}
	if cap(b)-len(b) < n {
		b = slices.Grow(b, n)
	}
	b = append(b, `{"content":[`...)
	for i, c := range res.Content {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":"text","text":`...)
		b = jsonstr.Append(b, c.(*mcp.TextContent).Text, true)
		b = append(b, '}')
	}
	b = append(b, ']')
	if res.IsError {
		b = append(b, `,"isError":true`...)
	}
	return append(b, '}')
}

// plainText reports whether res has nothing but text blocks without metadata.
func plainText(res *mcp.CallToolResult) bool {
	if res.Meta != nil || res.StructuredContent != nil || res.InputRequests != nil || res.RequestState != "" ||
		res.NeedsInput() || res.Content == nil {
		return false
	}
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok || tc.Meta != nil || tc.Annotations != nil {
			return false
		}
	}
	return true
}
