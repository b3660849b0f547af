package toolregistry

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/jsoncheck"
	"github.com/cordisgo/harness/permission"
)

// Tool is a tool definition handed to [Registry.Register] or [Set.Replace]. The registry
// copies what it keeps (Meta included); the schemas' bytes must not be modified afterwards.
//
// A Tool is a plain value; its Execute and Project functions are called concurrently, once
// per execution, and must be safe for that.
type Tool struct {
	// Name is the name the model calls the tool by: 1 to 64 characters of A–Z, a–z, 0–9,
	// '_' and '-'.
	Name string
	// Description tells the model what the tool does.
	Description string
	// Parameters is the JSON schema of the arguments (draft 2020-12 or draft-07). It must be
	// a JSON object; nil means {"type":"object"}. Arguments are always a JSON object.
	Parameters json.RawMessage
	// OutputSchema, when set, is the JSON schema that [Result.Structured] must satisfy on
	// success; a result without Structured then fails with [CodeInvalidOutput].
	OutputSchema json.RawMessage
	// Timeout bounds one execution: 0 means the registry's default (defaultTimeoutMs), a
	// negative value means no timeout.
	Timeout time.Duration
	// Execute runs the tool. It runs on the goroutine that called [Registry.Execute] and must
	// return promptly once ctx is done: the registry does not abandon a running call. A
	// returned error is a tool error ([CodeToolError]), and so is a *Result with IsError set.
	// The returned *Result must not be modified afterwards: the registry hands it to callers
	// and keeps it in its history. cx and call are the execution's: work that outlives the
	// call must not use them (nor read cx's values), since the registry reuses them.
	Execute func(cx context.Context, call *Call) (*Result, error)
	// Project, when set, computes the model-facing content of a successful result (for
	// example from [Result.Raw]). It runs once per execution, right after Execute, and its
	// return value replaces Content in the result the pipeline carries on.
	Project func(*Result) []Content
	// Meta is free-form metadata shown in listings (for example "server": "gh").
	Meta map[string]string
	// Preview, when set, says what a call with args would do without doing it — the diff
	// of a write, the command of a shell call — for an approval to show before the person
	// answers ([PolicyRequest.Preview]). It must change nothing, and may be called
	// concurrently.
	Preview func(cx context.Context, args json.RawMessage) (*permission.Preview, error)
}

// Call is one execution as the tool sees it.
//
// A Call is owned by the execution: the tool must not use it, nor the context it was
// handed with it, after Execute returns. The registry reuses both for later calls.
type Call struct {
	// ID identifies the execution: [ExecOptions.CallID], or "call_<n>" when none was given.
	ID string
	// Tool is the tool's name.
	Tool string
	// Args are the validated arguments, a JSON object ("{}" when the caller passed none).
	Args json.RawMessage
	// Caller is the context the call was made from; its scope is the caller's scope.
	Caller *ctx.Context
	// Session is [ExecOptions].Session: who the call is made for (nil: nobody in
	// particular). An agent's tools read their session here.
	Session any
	// Attachments is the registry's attachment store, for tools that return images.
	Attachments *Attachments

	cc *callContext // the context the tool runs under
}

// Cancel ends the context the tool runs under, with cause, as if the caller had cancelled
// the call. It is for a tool whose work depends on something with a lifetime of its own,
// such as a connection that can close while the call is in flight: cancelling through the
// call costs nothing per call, where deriving a context from the call's to cancel would
// cost several allocations. The registry treats the tool's result as it would any other.
// Cancel is safe to call concurrently and more than once (the first cause wins) while the
// call runs, and a no-op on a Call the registry did not make. It must not be called once
// the call has returned: the Call may then be another call's.
func (c *Call) Cancel(cause error) {
	if c.cc != nil {
		c.cc.end(cause)
	}
}

// ContentType is the kind of a [Content] block, a plain value.
type ContentType string

// Content types.
const (
	ContentText  ContentType = "text"  // Text holds the text
	ContentJSON  ContentType = "json"  // JSON holds a JSON value shown to the model verbatim
	ContentImage ContentType = "image" // Attachment refers to bytes in the attachment store
)

// Content is one model-facing block of a result. Images are never inline: the bytes live in
// the [Attachments] store and the block only refers to them.
//
// A Content is a plain value; treat its JSON bytes as immutable.
type Content struct {
	Type       ContentType     `json:"type"`
	Text       string          `json:"text,omitempty"`
	JSON       json.RawMessage `json:"json,omitempty"`
	Attachment *Attachment     `json:"attachment,omitempty"`
}

// Text returns a text block.
func Text(s string) Content { return Content{Type: ContentText, Text: s} }

// JSON returns a block carrying the JSON value v verbatim.
func JSON(v json.RawMessage) Content { return Content{Type: ContentJSON, JSON: v} }

// Image returns a block referring to a stored attachment (see [Attachments.Put]).
func Image(a Attachment) Content { return Content{Type: ContentImage, Attachment: &a} }

// ModelText renders the block as the model sees it in text form: text as is, JSON
// verbatim, an image as "[image: image/png, 1234 bytes, id att_3]" (never base64).
func (c Content) ModelText() string {
	switch c.Type {
	case ContentText:
		return c.Text
	case ContentJSON:
		return string(c.JSON)
	case ContentImage:
		if c.Attachment == nil {
			return "[image unavailable]"
		}
		return c.Attachment.String()
	default:
		return "[unsupported content type: " + string(c.Type) + "]"
	}
}

// Result is what a tool returns, and what [Registry.Execute] hands back.
//
// A Result is immutable once returned by a tool or by Execute: the same value may be read by
// the caller, PostExecute listeners and the history concurrently.
type Result struct {
	// Content is the model-facing content, block by block.
	Content []Content `json:"content"`
	// Structured is an optional machine-readable value, validated against the tool's
	// OutputSchema.
	Structured json.RawMessage `json:"structured,omitempty"`
	// IsError marks a failed call. Execute sets it on every non-ok outcome, with Content
	// reporting the failure to the model.
	IsError bool `json:"isError,omitempty"`
	// Raw keeps the canonical protocol JSON (for example an MCP CallToolResult) for
	// programmatic callers. It is never shown to the model and never truncated.
	Raw json.RawMessage `json:"raw,omitempty"`
}

// TextResult returns a successful result with one text block.
func TextResult(s string) *Result { return &Result{Content: []Content{Text(s)}} }

// ErrorResult returns a failed result whose one text block is msg.
func ErrorResult(msg string) *Result {
	return &Result{Content: []Content{Text(msg)}, IsError: true}
}

// Text renders the model-facing content as one string: the blocks' [Content.ModelText]
// joined with "\n".
func (r *Result) Text() string {
	if r == nil {
		return ""
	}
	switch len(r.Content) {
	case 0:
		return ""
	case 1:
		return r.Content[0].ModelText()
	}
	var b strings.Builder
	for i, c := range r.Content {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(c.ModelText())
	}
	return b.String()
}

// Info describes a registered tool in listings. It is a plain value, safe to copy and read
// concurrently; its byte slices and map are shared with the registry and must not be
// modified.
type Info struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	// OutputSchema is nil when the tool declares none.
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// Owner is the registering scope's name for [Registry.Register], or the owner given to
	// [Registry.NewSet].
	Owner string `json:"owner"`
	// Scope is the scope whose layer holds the registration.
	Scope *ctx.Scope `json:"-"`
	// Meta is the tool's free-form metadata.
	Meta map[string]string `json:"meta,omitempty"`
}

// defaultParameters is the schema of a tool that declares no parameters.
var defaultParameters = json.RawMessage(`{"type":"object"}`)

// MaxNameLen is the longest tool name accepted.
const MaxNameLen = 64

// ReservedRunCode is the name of PTC mode's program tool (package ptc): the agent offers it
// to the model itself, so no tool may be registered under it, in any layer: a registration
// or a [Set.Replace] naming it fails with [ErrReservedName], and so it can never shadow, or
// be shadowed by, a plugin's or a server's tool.
const ReservedRunCode = "run_code"

// ValidName reports whether name is a valid tool name: 1 to [MaxNameLen] characters of
// A–Z, a–z, 0–9, '_' and '-'.
func ValidName(name string) bool {
	if len(name) == 0 || len(name) > MaxNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch b := name[i]; {
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9', b == '_', b == '-':
		default:
			return false
		}
	}
	return true
}

// entry is one registered tool, compiled. Immutable once published, except for the fields
// marked as guarded by Registry.mu.
type entry struct {
	tool    Tool
	info    Info
	args    *jsoncheck.Schema // nil: any JSON object is accepted
	out     *jsoncheck.Schema // nil: no output schema
	timeout time.Duration     // as declared; 0 = registry default

	// set before the entry is published, immutable afterwards
	set *Set
	grp *group
	src *ctx.Context // context the change events of this entry are emitted from
}

// compile validates t and prepares it for registration by owner.
func compile(t Tool, owner string) (*entry, error) {
	if !ValidName(t.Name) {
		return nil, fmt.Errorf("%w: name %s must be 1 to %d characters of A-Z, a-z, 0-9, '_' and '-'",
			ErrInvalidTool, strconv.Quote(t.Name), MaxNameLen)
	}
	if t.Name == ReservedRunCode {
		return nil, fmt.Errorf("%w: %q is reserved for PTC mode's program tool; register the tool under another name", ErrReservedName, t.Name)
	}
	if t.Execute == nil {
		return nil, fmt.Errorf("%w: tool %q has no Execute function", ErrInvalidTool, t.Name)
	}
	e := &entry{tool: t, timeout: t.Timeout}
	e.tool.Meta = maps.Clone(t.Meta)
	params := t.Parameters
	if len(bytes.TrimSpace(params)) == 0 {
		params = defaultParameters
	} else {
		rs, trivial, err := jsoncheck.Compile(params)
		if err != nil {
			return nil, fmt.Errorf("%w: tool %q: parameters: %w", ErrInvalidTool, t.Name, err)
		}
		if !trivial {
			e.args = rs
		}
	}
	if len(bytes.TrimSpace(t.OutputSchema)) > 0 {
		rs, _, err := jsoncheck.Compile(t.OutputSchema)
		if err != nil {
			return nil, fmt.Errorf("%w: tool %q: output schema: %w", ErrInvalidTool, t.Name, err)
		}
		e.out = rs
	} else {
		e.tool.OutputSchema = nil
	}
	e.info = Info{
		Name:         t.Name,
		Description:  t.Description,
		Parameters:   params,
		OutputSchema: e.tool.OutputSchema,
		Owner:        owner,
		Meta:         e.tool.Meta,
	}
	return e, nil
}

// objectStart reports whether the first non-space byte of raw opens an object.
func objectStart(raw []byte) bool {
	for _, b := range raw {
		switch b {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return b == '{'
	}
	return false
}

// isObject reports whether raw is one valid JSON object.
func isObject(raw json.RawMessage) bool { return objectStart(raw) && json.Valid(raw) }
