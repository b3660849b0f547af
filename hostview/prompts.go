package hostview

import (
	"cmp"
	"fmt"
	"io"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/plugins/mcpprompts"
)

// PromptMessages prints a prompt's messages for people: a header line per message
// with its role, then its content.
func PromptMessages(w io.Writer, res *mcp.GetPromptResult) error {
	var b strings.Builder
	for i, m := range res.Messages {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "--- %s ---\n", m.Role)
		b.WriteString(Content(m.Content))
		if !strings.HasSuffix(b.String(), "\n") {
			b.WriteString("\n")
		}
	}
	if len(res.Messages) == 0 {
		b.WriteString("(no messages)\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Content renders one content block: text as it is, binary data described.
func Content(c mcp.Content) string {
	switch c := c.(type) {
	case *mcp.TextContent:
		return c.Text
	case *mcp.ImageContent:
		return fmt.Sprintf("[image %s, %s]", Dash(c.MIMEType), ByteSize(int64(len(c.Data))))
	case *mcp.AudioContent:
		return fmt.Sprintf("[audio %s, %s]", Dash(c.MIMEType), ByteSize(int64(len(c.Data))))
	case *mcp.EmbeddedResource:
		r := c.Resource
		if r == nil {
			return "[resource without contents]"
		}
		if r.Blob != nil {
			return fmt.Sprintf("[resource %s, %s, %s binary]", r.URI, Dash(r.MIMEType), ByteSize(int64(len(r.Blob))))
		}
		head := "[resource " + r.URI
		if r.MIMEType != "" {
			head += ", " + r.MIMEType
		}
		return head + "]\n" + r.Text
	case *mcp.ResourceLink:
		s := "[resource link " + c.URI
		if name := cmp.Or(c.Title, c.Name); name != "" {
			s += " " + fmt.Sprintf("%q", name)
		}
		if c.MIMEType != "" {
			s += ", " + c.MIMEType
		}
		if c.Size != nil {
			s += ", " + ByteSize(*c.Size)
		}
		s += "]"
		if c.Description != "" {
			s += "\n" + c.Description
		}
		return s
	case nil:
		return "[empty content]"
	}
	return "[content of an unknown type]"
}

// PromptRows is the table of prompts (the header first): server, prompt, arguments
// (<required> [optional]), description (else title).
func PromptRows(ps []mcpprompts.Prompt) [][]string {
	rows := [][]string{{"SERVER", "PROMPT", "ARGUMENTS", "DESCRIPTION"}}
	for _, p := range ps {
		var args []string
		for _, arg := range p.Arguments {
			if arg.Required {
				args = append(args, "<"+arg.Name+">")
			} else {
				args = append(args, "["+arg.Name+"]")
			}
		}
		desc := p.Description
		if desc == "" {
			desc = p.Title
		}
		rows = append(rows, []string{p.Server, p.Name, Dash(strings.Join(args, " ")), Dash(host.JoinLines(desc))})
	}
	return rows
}

// Prompts prints prompts as a table (PromptRows), or "no prompts" on Notes.
func (o Output) Prompts(ps []mcpprompts.Prompt) error {
	if len(ps) == 0 {
		fmt.Fprintln(o.Notes, "no prompts")
		return nil
	}
	return o.Table(PromptRows(ps))
}
