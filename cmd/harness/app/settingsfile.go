package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cordisgo/harness/internal/atomicfile"
	"github.com/cordisgo/harness/internal/yamlnode"
	"github.com/cordisgo/harness/plugins/mcpmanager"
	"github.com/cordisgo/harness/profiles"
)

// The MCP server manager's settings files, as the CLI lays them out: the user's file in the
// harness directory of the user's configuration directory, and a project file, found in the
// current directory or its nearest ancestor that has one, layered on top (an entry there
// replaces the user's entry of the same name).
const (
	settingsFileName   = "mcp-servers.yaml"
	projectSettingsDir = ".harness"
)

// workDir is where the project settings file is looked for from: the current directory
// (tests use a directory of their own).
var workDir = os.Getwd

// userSettingsFile is the user's settings file.
func (a *invocation) userSettingsFile() (string, error) {
	dir, err := a.harnessDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, settingsFileName), nil
}

// projectSettingsFile is .harness/mcp-servers.yaml in the current directory or its
// nearest ancestor that has one; else in the nearest that has a .harness directory; else
// in the current directory (where mcp add --scope project creates it).
func projectSettingsFile() (string, error) {
	wd, err := workDir()
	if err != nil {
		return "", fmt.Errorf("the current directory: %w", err)
	}
	withDir := ""
	for dir := wd; ; {
		p := filepath.Join(dir, projectSettingsDir, settingsFileName)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		if fi, err := os.Stat(filepath.Dir(p)); withDir == "" && err == nil && fi.IsDir() {
			withDir = p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	if withDir != "" {
		return withDir, nil
	}
	return filepath.Join(wd, projectSettingsDir, settingsFileName), nil
}

// addSettingsDefaults gives every manager row that names no settings file the user's file
// and the project file (see userSettingsFile and projectSettingsFile), and every remote row
// that names no token file the one in harnessDir, all from the invocation's environment.
func (a *invocation) addSettingsDefaults(rows []profiles.Row) {
	for i := range rows {
		r := &rows[i]
		a.addSettingsDefaults(r.Rows)
		if r.Use == remoteUse && r.Enabled {
			// The remote API's files go where this command's environment says, where the
			// other commands look for them (see endpointFile).
			if _, ok := r.Config["tokenFile"]; !ok {
				if dir, err := a.harnessDir(); err == nil {
					cfg := maps.Clone(r.Config)
					if cfg == nil {
						cfg = map[string]any{}
					}
					cfg["tokenFile"] = filepath.Join(dir, "remote.token")
					r.Config = cfg
				}
			}
			continue
		}
		if r.Use != managerUse || !r.Enabled {
			continue
		}
		_, hasUser := r.Config["settingsFile"]
		_, hasProject := r.Config["projectSettingsFile"]
		if hasUser && hasProject {
			continue
		}
		cfg := make(map[string]any, len(r.Config)+2)
		for k, v := range r.Config {
			cfg[k] = v
		}
		if !hasUser {
			if p, err := a.userSettingsFile(); err == nil {
				cfg["settingsFile"] = p
			}
		}
		if !hasProject && !hasUser {
			// A profile that points at its own settings file gets no project layer.
			if p, err := projectSettingsFile(); err == nil {
				cfg["projectSettingsFile"] = p
			}
		}
		r.Config = cfg
	}
}

// settingsDoc is a settings file being edited as a YAML node tree, so that comments, key
// order and style survive; a .json file is written back as JSON, in its order.
type settingsDoc struct {
	path    string
	json    bool
	exists  bool
	mode    fs.FileMode
	doc     *yaml.Node // the document node
	servers *yaml.Node // the mapping under "servers"
}

// errNotNative is a settings file in another host's dialect, which the commands do not edit.
var errNotNative = errors.New(`the file is another host's document (mcpServers, servers with inputs, …): mcp add, remove, enable and disable edit harness settings files ("servers:" of name to entry)`)

// loadSettingsDoc reads path for editing; a file that does not exist is an empty one.
func loadSettingsDoc(path string) (*settingsDoc, error) {
	d := &settingsDoc{path: path, json: strings.EqualFold(filepath.Ext(path), ".json"), mode: 0o600}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("settings file %s: %w", path, err)
	default:
		d.exists = true
		if fi, err := os.Stat(path); err == nil {
			d.mode = fi.Mode().Perm()
		}
	}
	var doc yaml.Node
	if len(bytes.TrimSpace(data)) > 0 {
		if err := yaml.Unmarshal(data, &doc); err != nil {
			line, text := yamlnode.SyntaxError(data, err)
			return nil, fmt.Errorf("settings file %s: line %d: not valid YAML: %s", path, line, text)
		}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("settings file %s: expected a mapping with a servers key", path)
	}
	d.doc = &doc
	for i := 0; i+1 < len(root.Content); i += 2 {
		switch k, v := root.Content[i], root.Content[i+1]; k.Value {
		case "servers":
			if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
				*v = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			}
			if v.Kind != yaml.MappingNode {
				return nil, fmt.Errorf("settings file %s: line %d: servers: expected a mapping of name to entry", path, v.Line)
			}
			d.servers = v
		default:
			return nil, fmt.Errorf("settings file %s: %w", path, errNotNative)
		}
	}
	if d.servers == nil {
		d.servers = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		root.Content = append(root.Content, scalar("servers"), d.servers)
	}
	return d, nil
}

func scalar(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

// entry returns the entry node of name, or nil.
func (d *settingsDoc) entry(name string) *yaml.Node {
	for i := 0; i+1 < len(d.servers.Content); i += 2 {
		if d.servers.Content[i].Value == name {
			return d.servers.Content[i+1]
		}
	}
	return nil
}

// names lists the file's server names in order.
func (d *settingsDoc) names() []string {
	var out []string
	for i := 0; i+1 < len(d.servers.Content); i += 2 {
		out = append(out, d.servers.Content[i].Value)
	}
	return out
}

// add appends the entry of name.
func (d *settingsDoc) add(name string, entry *yaml.Node) {
	d.servers.Style = 0 // "servers: {}" becomes a block mapping
	d.servers.Content = append(d.servers.Content, scalar(name), entry)
}

// remove deletes the entry of name (with the comments attached to it).
func (d *settingsDoc) remove(name string) bool {
	for i := 0; i+1 < len(d.servers.Content); i += 2 {
		if d.servers.Content[i].Value == name {
			d.servers.Content = append(d.servers.Content[:i:i], d.servers.Content[i+2:]...)
			return true
		}
	}
	return false
}

// setKey sets key of mapping m to value (a new key goes last); a nil value deletes it.
func setKey(m *yaml.Node, key string, value *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			if value == nil {
				m.Content = append(m.Content[:i:i], m.Content[i+2:]...)
			} else {
				m.Content[i+1] = value
			}
			return
		}
	}
	if value != nil {
		m.Content = append(m.Content, scalar(key), value)
	}
}

// encode renders the document: YAML with two-space indentation, or JSON for a .json file.
func (d *settingsDoc) encode() ([]byte, error) {
	if d.json {
		var b bytes.Buffer
		if err := writeNodeJSON(&b, d.doc.Content[0], ""); err != nil {
			return nil, err
		}
		b.WriteByte('\n')
		return b.Bytes(), nil
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(d.doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// save validates the edited document with the manager's own checks and replaces the file
// atomically (a temporary file in the same directory, with the file's mode, renamed over
// it). A document that does not validate is not written: the file stays as it was.
func (d *settingsDoc) save() error {
	data, err := d.encode()
	if err != nil {
		return fmt.Errorf("settings file %s: encoding: %w", d.path, err)
	}
	return atomicfile.Write(d.path, data, atomicfile.Options{
		Mode:    d.mode,
		DirMode: 0o700,
		Check: func(tmp string) error {
			if _, err := mcpmanager.CheckSettingsFile(tmp); err != nil {
				return fmt.Errorf("the change does not validate: %w", err)
			}
			return nil
		},
	})
}

// writeNodeJSON writes a YAML node tree (as decoded from JSON, or edited) as indented
// JSON, keeping the order of mapping keys.
func writeNodeJSON(b *bytes.Buffer, n *yaml.Node, indent string) error {
	switch n.Kind {
	case yaml.AliasNode:
		return writeNodeJSON(b, n.Alias, indent)
	case yaml.MappingNode:
		if len(n.Content) == 0 {
			b.WriteString("{}")
			return nil
		}
		b.WriteString("{\n")
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, _ := marshalJSON(n.Content[i].Value, "")
			b.WriteString(indent + "  ")
			b.Write(k)
			b.WriteString(": ")
			if err := writeNodeJSON(b, n.Content[i+1], indent+"  "); err != nil {
				return err
			}
			if i+2 < len(n.Content) {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "}")
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteString("[\n")
		for i, c := range n.Content {
			b.WriteString(indent + "  ")
			if err := writeNodeJSON(b, c, indent+"  "); err != nil {
				return err
			}
			if i+1 < len(n.Content) {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "]")
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
			out, _ := marshalJSON(n.Value, "")
			b.Write(out)
		}
	default:
		return fmt.Errorf("line %d: cannot write this YAML node as JSON", n.Line)
	}
	return nil
}
