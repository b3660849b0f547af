package serverdoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/atomicfile"
	"github.com/cordisgo/harness/internal/yamlnode"
	"github.com/cordisgo/harness/plugins/mcpclient"
)

// ErrEdit is matched (errors.Is) by the failures of an edit that leave the file as it
// was because the edit cannot be made: no such entry, an entry that is not a mapping, a
// file that is invalid as it is, or a result that would not validate.
var ErrEdit = errors.New("settings file not edited")

// ErrForeign is matched by the failure to edit another host's server document: the
// editor edits the harness's own settings files only.
var ErrForeign = errors.New(`the file is another host's document (mcpServers, servers with inputs, …): mcp add, remove, enable and disable edit harness settings files ("servers:" of name to entry)`)

// An Editor edits a settings file of the harness's own format (servers: of name to
// entry) in memory and saves it atomically. Edits keep what they do not touch: comments,
// key order and style (SetEnabled keeps every other byte); a .json file stays JSON, in
// its order.
//
// An Editor is not safe for concurrent use; edits of one file by several editors or
// processes at once may be lost (the last save wins).
type Editor struct {
	path string
	opts EditOptions
	json bool
	mode fs.FileMode
	data []byte // the document as edited so far
}

// EditOptions say how an [Editor] checks what it saves.
type EditOptions struct {
	// Loose saves a document the MCP manager loads ([ReadSettings]) even when one of its
	// entries does not validate ([CheckFile], the default check): the manager's own
	// edits, which must be able to disable a server whose entry is broken.
	Loose bool
}

// Open reads the settings file at path for editing; a file that does not exist is an
// empty one (created, mode 0600, by Save). Another host's document fails with
// [ErrForeign].
func Open(path string, opts EditOptions) (*Editor, error) {
	e := &Editor{path: path, opts: opts, json: strings.EqualFold(filepath.Ext(path), ".json"), mode: 0o600}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("settings file %s: %w", path, err)
	default:
		e.data = data
		if fi, err := os.Stat(path); err == nil {
			e.mode = fi.Mode().Perm()
		}
	}
	if _, _, err := e.tree(); err != nil {
		return nil, err
	}
	return e, nil
}

// Path returns the file's path.
func (e *Editor) Path() string { return e.path }

// tree parses the document as edited: its document node and the mapping under servers
// (both made when missing).
func (e *Editor) tree() (*yaml.Node, *yaml.Node, error) {
	var doc yaml.Node
	if len(bytes.TrimSpace(e.data)) > 0 {
		if err := yaml.Unmarshal(e.data, &doc); err != nil {
			line, text := yamlnode.SyntaxError(e.data, err)
			return nil, nil, fmt.Errorf("settings file %s: line %d: not valid YAML: %s", e.path, line, text)
		}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("settings file %s: expected a mapping with a servers key", e.path)
	}
	var servers *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		switch k, v := root.Content[i], root.Content[i+1]; k.Value {
		case "servers":
			if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
				*v = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			}
			if v.Kind != yaml.MappingNode {
				return nil, nil, fmt.Errorf("settings file %s: line %d: servers: expected a mapping of name to entry", e.path, v.Line)
			}
			servers = v
		default:
			return nil, nil, fmt.Errorf("settings file %s: %w", e.path, ErrForeign)
		}
	}
	if servers == nil {
		servers = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		root.Content = append(root.Content, yamlnode.Str("servers"), servers)
	}
	return &doc, servers, nil
}

// edit applies fn to the document's tree and renders the result.
func (e *Editor) edit(fn func(servers *yaml.Node) error) error {
	doc, servers, err := e.tree()
	if err != nil {
		return err
	}
	if err := fn(servers); err != nil {
		return err
	}
	data, err := e.encode(doc)
	if err != nil {
		return fmt.Errorf("settings file %s: encoding: %w", e.path, err)
	}
	e.data = data
	return nil
}

// Names lists the file's server names in order.
func (e *Editor) Names() []string {
	_, servers, err := e.tree()
	if err != nil {
		return nil
	}
	var out []string
	for i := 0; i+1 < len(servers.Content); i += 2 {
		out = append(out, servers.Content[i].Value)
	}
	return out
}

// Has reports whether the file has an entry called name.
func (e *Editor) Has(name string) bool {
	_, servers, err := e.tree()
	return err == nil && mapValue(servers, name) != nil
}

// Entry decodes the entry called name (as [ReadSettings] would). Problems are
// [*ctx.ConfigError] values naming the file and the key path.
func (e *Editor) Entry(name string) (Entry, error) {
	_, servers, err := e.tree()
	if err != nil {
		return Entry{}, err
	}
	n := mapValue(servers, name)
	if n == nil {
		return Entry{}, fmt.Errorf("%w: %q: no server %q in the file", ErrEdit, e.path, name)
	}
	key := "servers." + name
	lines := keyLines(n, key)
	entry, err := parseEntry(name, n)
	if err != nil {
		return Entry{}, ctx.JoinConfigErrors(place(err, e.path, key, func(k string) int { return lineOfKey(lines, k, n.Line) }))
	}
	entry.Path, entry.lines = key, lines
	return entry, nil
}

// Add appends the entry called name: the keys of cfg that differ from the defaults (see
// [EntryNode]); enabled false adds enabled: false. An entry of that name must not exist.
func (e *Editor) Add(name string, cfg mcpclient.Config, enabled bool) error {
	return e.edit(func(servers *yaml.Node) error {
		if mapValue(servers, name) != nil {
			return fmt.Errorf("%w: %q: server %q is in the file already", ErrEdit, e.path, name)
		}
		servers.Style = 0 // "servers: {}" becomes a block mapping
		servers.Content = append(servers.Content, yamlnode.Str(name), EntryNode(cfg, enabled))
		return nil
	})
}

// Remove deletes the entry called name (with the comments attached to it); it reports
// whether there was one.
func (e *Editor) Remove(name string) (bool, error) {
	found := false
	err := e.edit(func(servers *yaml.Node) error {
		for i := 0; i+1 < len(servers.Content); i += 2 {
			if servers.Content[i].Value == name {
				servers.Content = append(servers.Content[:i:i], servers.Content[i+2:]...)
				found = true
				return nil
			}
		}
		return nil
	})
	return found, err
}

// ResetEnabled drops the enabled key of the entry called name, which is then enabled (the
// default).
func (e *Editor) ResetEnabled(name string) error {
	return e.edit(func(servers *yaml.Node) error {
		n := mapValue(servers, name)
		if n == nil || n.Kind != yaml.MappingNode {
			return fmt.Errorf("%w: %q: server %q is not a mapping", ErrEdit, e.path, name)
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "enabled" {
				n.Content = append(n.Content[:i:i], n.Content[i+2:]...)
				return nil
			}
		}
		return nil
	})
}

// SetEnabled sets the enabled flag of the entry called name, keeping every other byte of
// the document: it rewrites the value of the entry's enabled key, or adds
// "enabled: <value>" as the entry's first key. The document must be valid as it is
// ([ReadSettings]); otherwise, and when there is no such entry, the error wraps [ErrEdit].
// changed is false when the flag already had that value.
func (e *Editor) SetEnabled(name string, enabled bool) (changed bool, err error) {
	fail := func(format string, args ...any) (bool, error) {
		return false, fmt.Errorf("%w: %q: %s", ErrEdit, e.path, fmt.Sprintf(format, args...))
	}
	if _, err := ReadSettings(e.path, e.data); err != nil {
		return false, fmt.Errorf("%w: %q is invalid as it is (fix it first): %w", ErrEdit, e.path, err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(e.data, &doc); err != nil || len(doc.Content) == 0 {
		return fail("not a YAML document")
	}
	var entry *yaml.Node
	if servers := mapValue(doc.Content[0], "servers"); servers != nil {
		entry = mapValue(servers, name)
	}
	if entry == nil {
		return fail("no server %q in the file", name)
	}
	if entry.Kind != yaml.MappingNode {
		return fail("server %q is not a mapping", name)
	}
	value := strconv.FormatBool(enabled)
	data := e.data
	if v := mapValue(entry, "enabled"); v != nil {
		if v.Value == value {
			return false, nil
		}
		start, ok := offset(data, v.Line, v.Column)
		if !ok {
			return fail("cannot locate the enabled key of %q", name)
		}
		end := start
		for end < len(data) && bytes.IndexByte([]byte(" \t\r\n,}#"), data[end]) < 0 {
			end++
		}
		e.data = splice(data, start, end, value)
		return true, nil
	}
	if entry.Style&yaml.FlowStyle != 0 {
		start, ok := offset(data, entry.Line, entry.Column) // at "{"
		if !ok || start >= len(data) || data[start] != '{' {
			return fail("cannot locate the entry of %q", name)
		}
		ins := "enabled: " + value
		if e.json {
			ins = `"enabled": ` + value
		}
		if len(entry.Content) > 0 {
			ins += ", "
		}
		e.data = splice(data, start+1, start+1, ins)
		return true, nil
	}
	first := entry.Content[0]
	start, ok := offset(data, first.Line, first.Column)
	if !ok {
		return fail("cannot locate the entry of %q", name)
	}
	indent := string(bytes.Repeat([]byte(" "), first.Column-1))
	e.data = splice(data, start, start, "enabled: "+value+"\n"+indent)
	return true, nil
}

// Save checks the edited document ([CheckFile], or with [EditOptions.Loose]
// [ReadSettings]) and replaces the file atomically, keeping its mode (a new file is 0600,
// its directory made 0700). A document that does not pass is not written: the file stays
// as it was, and the error matches [ErrEdit] and [ErrInvalidSettings] and says why.
func (e *Editor) Save() error {
	err := atomicfile.Write(e.path, e.data, atomicfile.Options{
		Mode:    e.mode,
		DirMode: 0o700,
		Check: func(tmp string) error {
			var err error
			if e.opts.Loose {
				_, err = ReadSettings(tmp, e.data)
			} else {
				_, err = CheckFile(tmp)
			}
			if err != nil {
				return fmt.Errorf("the change does not validate: %w", err)
			}
			return nil
		},
	})
	if errors.Is(err, atomicfile.ErrCheck) {
		return fmt.Errorf("%w: %w", ErrEdit, err)
	}
	return err
}

// mapValue returns the value of key in the mapping node m.
func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// offset converts a 1-based line and column (in characters) to a byte offset.
func offset(data []byte, line, col int) (int, bool) {
	at := 0
	for l := 1; l < line; l++ {
		i := bytes.IndexByte(data[at:], '\n')
		if i < 0 {
			return 0, false
		}
		at += i + 1
	}
	for c := 1; c < col; c++ {
		if at >= len(data) || data[at] == '\n' {
			return 0, false
		}
		_, n := utf8.DecodeRune(data[at:])
		at += n
	}
	return at, true
}

func splice(data []byte, start, end int, s string) []byte {
	out := make([]byte, 0, len(data)+len(s))
	out = append(out, data[:start]...)
	out = append(out, s...)
	return append(out, data[end:]...)
}

// encode renders the document: YAML with two-space indentation, or JSON for a .json file.
func (e *Editor) encode(doc *yaml.Node) ([]byte, error) {
	var b bytes.Buffer
	if e.json {
		if err := writeNodeJSON(&b, doc.Content[0], ""); err != nil {
			return nil, err
		}
		b.WriteByte('\n')
		return b.Bytes(), nil
	}
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// jsonString renders s as a JSON string, without escaping <, > and &.
func jsonString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// writeItemsJSON writes n items of an object or array between open and end: each on a line
// of its own, one step deeper than indent, written by item(i) and followed by a comma unless
// it is the last; no lines at all when n is 0.
func writeItemsJSON(b *bytes.Buffer, open, end string, n int, indent string, item func(i int) error) error {
	if n == 0 {
		b.WriteString(open + end)
		return nil
	}
	b.WriteString(open + "\n")
	for i := range n {
		b.WriteString(indent + "  ")
		if err := item(i); err != nil {
			return err
		}
		if i+1 < n {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(indent + end)
	return nil
}

// writeNodeJSON writes a YAML node tree (as decoded from JSON, or edited) as indented
// JSON, keeping the order of mapping keys.
func writeNodeJSON(b *bytes.Buffer, n *yaml.Node, indent string) error {
	switch n.Kind {
	case yaml.AliasNode:
		return writeNodeJSON(b, n.Alias, indent)
	case yaml.MappingNode:
		return writeItemsJSON(b, "{", "}", len(n.Content)/2, indent, func(i int) error {
			b.Write(jsonString(n.Content[2*i].Value))
			b.WriteString(": ")
			return writeNodeJSON(b, n.Content[2*i+1], indent+"  ")
		})
	case yaml.SequenceNode:
		return writeItemsJSON(b, "[", "]", len(n.Content), indent, func(i int) error {
			return writeNodeJSON(b, n.Content[i], indent+"  ")
		})
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			b.WriteString("null")
		case "!!bool":
			v, err := strconv.ParseBool(n.Value)
			if err != nil {
				return err
			}
			b.WriteString(strconv.FormatBool(v))
		case "!!int", "!!float":
			var v any
			if err := n.Decode(&v); err != nil {
				return err
			}
			out, err := json.Marshal(v)
			if err != nil {
				return err
			}
			b.Write(out)
		default:
			b.Write(jsonString(n.Value))
		}
	default:
		return fmt.Errorf("line %d: cannot write this YAML node as JSON", n.Line)
	}
	return nil
}
