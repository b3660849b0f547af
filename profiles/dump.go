package profiles

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"

	"github.com/cordisgo/harness/internal/redact"
	"github.com/cordisgo/harness/internal/yamlnode"
)

// Redacted stands in for a secret value in a profile dump: the module's one marker, the
// same in MCP server views, logs and probe results.
const Redacted = redact.Marker

// YAML renders the merged profile as one YAML document that Load accepts,
// for `harness profile show`: no extends (everything is merged in), keys
// in document order, ${HARNESS_SELF} expanded, enabled written only when
// false.
//
// redact, when not nil, is called for every value inside a row's config,
// top down, with the value's full key path (plugins.gh.config.env.TOKEN,
// list elements by index); its result is printed instead, and the maps and
// lists it returns are visited in turn. Pass [Redact] for the default.
func (p *Profile) YAML(redact func(path string, v any) any) ([]byte, error) {
	d := dumper{order: p.order, redact: redact}
	root := &yamlv3.Node{Kind: yamlv3.MappingNode}
	var head []string
	if p.Name != "" {
		head = append(head, fmt.Sprintf("Profile %q, merged.", p.Name))
	}
	if len(p.layers) > 0 {
		layers := make([]string, len(p.layers))
		for i, l := range p.layers {
			layers[i] = yamlnode.Printable(l)
		}
		head = append(head, "Layers: "+strings.Join(layers, ", ")+".")
	}
	root.HeadComment = strings.Join(head, "\n")
	if p.Description != "" {
		root.Content = append(root.Content, yamlnode.Str("description"), yamlnode.Str(p.Description))
	}
	if p.Elicitation != "" {
		root.Content = append(root.Content, yamlnode.Str("elicitation"), yamlnode.Str(p.Elicitation))
	}
	if p.Fleet != (Fleet{}) {
		fleet := &yamlv3.Node{Kind: yamlv3.MappingNode}
		if p.Fleet.Startup != "" {
			fleet.Content = append(fleet.Content, yamlnode.Str("startup"), yamlnode.Str(p.Fleet.Startup))
		}
		if p.Fleet.IdleTimeoutMs != 0 {
			fleet.Content = append(fleet.Content, yamlnode.Str("idleTimeoutMs"), &yamlv3.Node{Kind: yamlv3.ScalarNode, Tag: "!!int", Value: strconv.Itoa(p.Fleet.IdleTimeoutMs)})
		}
		root.Content = append(root.Content, yamlnode.Str("fleet"), fleet)
	}
	plugins, err := d.rows(p.Rows)
	if err != nil {
		return nil, &Error{Source: p.Source, Msg: "cannot render YAML: " + err.Error(), Err: fmt.Errorf("%w: %w", ErrInvalid, err)}
	}
	root.Content = append(root.Content, yamlnode.Str("plugins"), plugins)

	var buf bytes.Buffer
	enc := yamlv3.NewEncoder(&buf)
	enc.SetIndent(2)
	err = yamlnode.Safely(func() error {
		if err := enc.Encode(&yamlv3.Node{Kind: yamlv3.DocumentNode, Content: []*yamlv3.Node{root}}); err != nil {
			return err
		}
		return enc.Close()
	})
	if err != nil {
		return nil, &Error{Source: p.Source, Msg: "cannot render YAML: " + err.Error(), Err: fmt.Errorf("%w: %w", ErrInvalid, err)}
	}
	return buf.Bytes(), nil
}

type dumper struct {
	order  map[string]int
	redact func(path string, v any) any
}

func (d *dumper) rows(rows []Row) (*yamlv3.Node, error) {
	m := &yamlv3.Node{Kind: yamlv3.MappingNode}
	if len(rows) == 0 {
		m.Style = yamlv3.FlowStyle
	}
	for _, r := range rows {
		n := &yamlv3.Node{Kind: yamlv3.MappingNode}
		if r.Use != "" {
			n.Content = append(n.Content, yamlnode.Str("use"), yamlnode.Str(r.Use))
		}
		if !r.Enabled {
			n.Content = append(n.Content, yamlnode.Str("enabled"), &yamlv3.Node{Kind: yamlv3.ScalarNode, Tag: "!!bool", Value: "false"})
		}
		if len(r.Config) > 0 {
			path := append(splitPath(r.Path), "config")
			c, err := d.value(map[string]any(r.Config), path, false)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, yamlnode.Str("config"), c)
		}
		if r.AgentScope() {
			sub, err := d.rows(r.Rows)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, yamlnode.Str("plugins"), sub)
		}
		m.Content = append(m.Content, yamlnode.Str(r.ID), n)
	}
	return m, nil
}

// value renders a config value; redactHere says whether the redactor sees
// this value (it sees everything below the config map).
func (d *dumper) value(v any, path []string, redactHere bool) (*yamlv3.Node, error) {
	v, err := plain(v, path)
	if err != nil {
		return nil, err
	}
	if redactHere && d.redact != nil {
		if v, err = plain(d.redact(joinPath(path), v), path); err != nil {
			return nil, err
		}
	}
	switch v := v.(type) {
	case map[string]any:
		n := &yamlv3.Node{Kind: yamlv3.MappingNode}
		if len(v) == 0 {
			n.Style = yamlv3.FlowStyle
		}
		for _, k := range sortKeys(v, path, d.order) {
			c, err := d.value(v[k], append(slices.Clip(path), k), true)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, yamlnode.Str(k), c)
		}
		return n, nil
	case []any:
		n := &yamlv3.Node{Kind: yamlv3.SequenceNode}
		if len(v) == 0 {
			n.Style = yamlv3.FlowStyle
		}
		for i, e := range v {
			c, err := d.value(e, append(slices.Clip(path), strconv.Itoa(i)), true)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, c)
		}
		return n, nil
	default:
		n := &yamlv3.Node{}
		if err := yamlnode.Safely(func() error { return n.Encode(v) }); err != nil {
			return nil, fmt.Errorf("key %q: %w", joinPath(path), err)
		}
		return n, nil
	}
}

// plain returns v as the plain maps, lists and scalars Load produces.
// Other types (a map[string]string in a hand-built Profile, say) go
// through YAML once.
func plain(v any, path []string) (any, error) {
	switch v.(type) {
	case map[string]any, []any, nil, string, bool, int, int8, int16, int32, int64,
		uint, uint8, uint16, uint32, uint64, float32, float64:
		return v, nil
	}
	var out any
	err := yamlnode.Safely(func() error {
		b, err := yamlv3.Marshal(v)
		if err != nil {
			return err
		}
		return yamlv3.Unmarshal(b, &out)
	})
	if err != nil {
		return nil, fmt.Errorf("key %q: %w", joinPath(path), err)
	}
	return yamlnode.Normalize(out), nil
}

func splitPath(p string) []string {
	if p == "" {
		return nil
	}
	return strings.Split(p, ".")
}

// Redact is the default redactor for [Profile.YAML]. Redaction hides values, not
// references: a value made of ${…} references ("${secret:evtoken}",
// "Bearer ${GITHUB_TOKEN}") is shown as written. Otherwise it replaces with [Redacted], at
// any depth:
//   - the values of maps under keys named env or headers (the keys, which
//     name variables and headers, stay visible);
//   - values under keys whose name looks secret (token, secret, password,
//     passwd, credential, cookie, session, key or auth in it, compared
//     case-insensitively, ignoring '-' and '_');
//   - the password of a URL's user information and the values of URL query
//     parameters with such names (a URL without credentials is shown as
//     written).
//
// Empty strings and nulls stay visible, so a dump still shows what is unset.
func Redact(path string, v any) any {
	key := path[strings.LastIndexByte(path, '.')+1:]
	switch norm := strings.ToLower(key); {
	case norm == "env" || norm == "headers":
		if m, ok := v.(map[string]any); ok {
			out := make(map[string]any, len(m))
			for k, e := range m {
				out[k] = mask(e)
			}
			return out
		}
		return mask(v)
	case redact.SecretName(key):
		return mask(v)
	}
	if s, ok := v.(string); ok {
		return redact.URL(s)
	}
	return v
}

// mask replaces every non-empty scalar in v that is not a reference.
func mask(v any) any {
	switch v := v.(type) {
	case nil:
		return nil
	case string:
		return redact.Value(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = mask(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = mask(e)
		}
		return out
	default:
		return Redacted
	}
}
