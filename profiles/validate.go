package profiles

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cordisgo/harness/internal/yamlnode"
)

// validID reports whether id is a row id: ^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$. Dots would make
// key paths ambiguous; the length keeps ids usable in names derived from them.
func validID(id string) bool {
	return isWord(id, 64) && id[0] != '_' && id[0] != '-'
}

// validServerName reports whether name is the mcpclient plugin's serverName:
// ^[A-Za-z0-9_-]{1,32}$.
func validServerName(name string) bool { return isWord(name, 32) }

// isWord reports whether s is 1 to max bytes of A–Z, a–z, 0–9, '_' and '-'. (These checks
// are written out: compiling their regular expressions, with counted repetitions, cost every
// process that links this package over a millisecond at start.)
func isWord(s string, max int) bool {
	if len(s) == 0 || len(s) > max {
		return false
	}
	for i := range len(s) {
		switch b := s[i]; {
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9', b == '_', b == '-':
		default:
			return false
		}
	}
	return true
}

// build validates the merged profile and turns it into a Profile.
func (l *loader) build(name string) (*Profile, error) {
	merged, _ := yamlnode.Normalize(l.k.Raw()).(map[string]any)
	p := &Profile{Name: name, Source: l.source, order: l.order, Warnings: l.warnings}
	for _, ly := range l.layers {
		p.layers = append(p.layers, ly.desc)
	}
	for _, key := range l.sorted(merged, nil) {
		path := []string{key}
		switch v := merged[key]; key {
		case "description":
			s, ok := v.(string)
			if !ok && v != nil {
				return nil, l.failAt(path, ErrType, "expected a string, got "+yamlnode.Value(v))
			}
			p.Description = s
		case "elicitation":
			switch v := v.(type) {
			case string:
				if !slices.Contains(ElicitationPolicies, v) {
					return nil, l.failAt(path, ErrInvalid, fmt.Sprintf("unknown policy %q: expected %s", v, strings.Join(ElicitationPolicies, ", ")))
				}
				p.Elicitation = v
			case nil:
			default:
				return nil, l.failAt(path, ErrType, "expected a policy name ("+strings.Join(ElicitationPolicies, ", ")+"), got "+yamlnode.Value(v))
			}
		case "fleet":
			f, err := l.fleet(v, path)
			if err != nil {
				return nil, err
			}
			p.Fleet = f
		case "extends":
			// Resolved while reading the documents.
		case "plugins":
			rows, err := l.rows(v, path, 0)
			if err != nil {
				return nil, err
			}
			p.Rows = rows
		default:
			note := ""
			switch {
			case !slices.Contains([]string{"mcpServers", "mcp_servers", "servers", "mcp"}, key):
			case l.opts.Servers == nil:
				note = `another host's server document is read as a profile only through a server-document reader, ` +
					`and none is installed: the harness binary installs one, a program passes host.ServerDocuments ` +
					`as LoadOptions.Servers; or convert it with "harness mcp import"`
			default:
				note = `convert an mcpServers document with "harness mcp import"`
			}
			return nil, l.failAt(path, ErrUnknownKey, unknownKey(key, topKeys, note))
		}
	}
	if l.origin([]string{"plugins"}) == nil {
		var top *layer
		if len(l.layers) > 0 {
			top = l.layers[0]
		}
		return nil, l.fail(top, nil, ErrInvalid, `missing key "plugins": expected a map of plugin rows`, nil)
	}
	return p, nil
}

// rows validates a plugins map.
func (l *loader) rows(v any, path []string, depth int) ([]Row, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, l.failAt(path, ErrType, "expected a map of plugin rows keyed by id, got "+yamlnode.Value(v))
	}
	if depth >= maxNesting {
		return nil, l.failAt(path, ErrInvalid, fmt.Sprintf("plugin rows nested more than %d deep", maxNesting))
	}
	var (
		rows  []Row
		folds = map[string]string{}
	)
	for _, id := range l.sorted(m, path) {
		rp := append(slices.Clip(path), id)
		if !validID(id) {
			return nil, l.failAt(rp, ErrInvalid, fmt.Sprintf(
				"invalid id %q: expected 1 to 64 letters, digits, '-' or '_', starting with a letter or digit", id))
		}
		fold := strings.ToLower(id)
		if other, dup := folds[fold]; dup {
			return nil, l.failAt(rp, ErrDuplicate, fmt.Sprintf(
				"duplicate id: %q and %q differ only in case (ids are compared case-insensitively)", other, id))
		}
		folds[fold] = id
		row, err := l.row(m[id], rp, depth)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// row validates one plugin row.
func (l *loader) row(v any, path []string, depth int) (Row, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return Row{}, l.failAt(path, ErrType, "expected a map with "+orList(rowKeys)+", got "+yamlnode.Value(v))
	}
	row := Row{ID: path[len(path)-1], Enabled: true, Config: map[string]any{}, Path: joinPath(path)}
	for _, key := range l.sorted(m, path) {
		kp := append(slices.Clip(path), key)
		switch v := m[key]; key {
		case "use":
			s, ok := v.(string)
			if !ok || s == "" {
				return Row{}, l.failAt(kp, ErrType, "expected the name of a plugin, got "+yamlnode.Value(v))
			}
			if l.opts.Catalog != nil && !l.opts.Catalog(s) {
				return Row{}, l.failAt(kp, ErrUnknownPlugin, fmt.Sprintf(
					"unknown plugin %q: expected a plugin compiled into this binary", s))
			}
			row.Use = s
		case "enabled":
			b, ok := v.(bool)
			if !ok {
				return Row{}, l.failAt(kp, ErrType, "expected a boolean, got "+yamlnode.Value(v))
			}
			row.Enabled = b
		case "config":
			c, ok := v.(map[string]any)
			if !ok && v != nil {
				return Row{}, l.failAt(kp, ErrType, "expected a map of plugin settings, got "+yamlnode.Value(v))
			}
			if c == nil {
				break
			}
			expanded, err := l.expand(c, kp)
			if err != nil {
				return Row{}, err
			}
			row.Config = expanded.(map[string]any)
		case "plugins":
			rows, err := l.rows(v, kp, depth+1)
			if err != nil {
				return Row{}, err
			}
			row.Rows, row.Scope = rows, true
		default:
			return Row{}, l.failAt(kp, ErrUnknownKey, unknownKey(key, rowKeys, "plugin settings go under config"))
		}
	}
	// A row that only switches something off (a row the host would add, such as the agent's
	// workspace, or one of a base profile named so) needs no plugin.
	if row.Use == "" && m["plugins"] == nil && row.Enabled {
		return Row{}, l.failAt(path, ErrInvalid,
			`missing key "use": expected the name of a plugin, or nested "plugins" for a plain scope (or "enabled: false" to switch the row off)`)
	}
	return row, nil
}

// expand copies a config value, replacing ${HARNESS_SELF} in strings.
func (l *loader) expand(v any, path []string) (any, error) {
	switch v := v.(type) {
	case string:
		if !strings.Contains(v, SelfVar) {
			return v, nil
		}
		if l.opts.Self == "" {
			return nil, l.failAt(path, ErrInvalid, SelfVar+" needs the path of the running binary (LoadOptions.Self)")
		}
		return strings.ReplaceAll(v, SelfVar, l.opts.Self), nil
	case map[string]any:
		out := make(map[string]any, len(v))
		for _, k := range slices.Sorted(maps.Keys(v)) {
			e, err := l.expand(v[k], append(slices.Clip(path), k))
			if err != nil {
				return nil, err
			}
			out[k] = e
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			x, err := l.expand(e, append(slices.Clip(path), fmt.Sprint(i)))
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	default:
		return v, nil
	}
}

// sorted returns the keys of m in first-seen order (document order, then
// overlays in the order given); keys never seen come last, sorted.
func (l *loader) sorted(m map[string]any, path []string) []string {
	return sortKeys(m, path, l.order)
}

func sortKeys(m map[string]any, path []string, order map[string]int) []string {
	keys := slices.Collect(maps.Keys(m))
	pos := func(k string) (int, bool) {
		i, ok := order[pathKey(append(slices.Clip(path), k))]
		return i, ok
	}
	slices.SortFunc(keys, func(a, b string) int {
		ia, oka := pos(a)
		ib, okb := pos(b)
		switch {
		case oka && okb:
			return ia - ib
		case oka:
			return -1
		case okb:
			return 1
		}
		return strings.Compare(a, b)
	})
	return keys
}
