package profiles

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/v2"
	yamlv3 "go.yaml.in/yaml/v3"

	"github.com/cordisgo/harness/internal/suggest"
	"github.com/cordisgo/harness/internal/yamlnode"
)

// LoadOptions say which profile to load and what to layer on top of it.
type LoadOptions struct {
	// Name is a built-in profile name (see BuiltinNames) or the path of a
	// profile file; "" means "default". A name is a path when it contains
	// a path separator or ends in .yaml, .yml, .json or .toml; write ./NAME
	// for a file without such an ending. The file may also be another host's
	// server document, when Servers reads it: it loads as the profile
	// [ImportServers] makes of it.
	Name string
	// Data, when non-nil, is the profile document itself (read by the
	// caller, from stdin say); Name then only labels it in messages
	// (default "<input>"), and a relative extends is resolved against
	// Name's directory when Name is a path, else the working directory.
	Data []byte
	// Sets are --set overlays, KEY=VALUE each, applied in order. KEY is a
	// dotted key path matched exactly (plugins.demo.config.url); VALUE is
	// parsed as YAML (5000 is a number, true a boolean, [a, b] a list,
	// {k: v} a map merged into the map at KEY; quote to force a string).
	Sets []string
	// Environ is the environment to take HARNESS_* overlays from, usually
	// os.Environ(); nil means no environment overlays. See the package
	// documentation for the mapping.
	Environ []string
	// Catalog reports whether a plugin name exists; nil accepts every name.
	Catalog func(use string) bool
	// Self is the path of the running binary, substituted for
	// ${HARNESS_SELF} in configuration strings. A profile that uses
	// ${HARNESS_SELF} fails to load when Self is empty.
	Self string
	// Servers reads other hosts' server documents ({"mcpServers": …}, VS Code's
	// mcp.json, Codex's config.toml) given as the profile; nil reads profiles only, and
	// such a document is refused with an error that says a reader is needed.
	Servers ServerReader
}

// EnvPrefix starts the names of the environment variables that overlay a
// profile.
const EnvPrefix = "HARNESS_"

// SelfVar is the only variable the loader expands: it stands for the path
// of the running harness binary (LoadOptions.Self).
const SelfVar = "${HARNESS_SELF}"

const (
	maxFileSize  = 1 << 20 // profiles are small; this stops -p /dev/zero
	maxExtends   = 8       // length of an extends chain
	maxNesting   = 32      // depth of nested plugin rows
	defaultName  = "default"
	dataLabel    = "<input>"
	keySeparator = "\x00" // joins key paths in lookup maps; not expected inside keys
)

// The keys of a profile's top level and of a plugin row, as unknown-key errors list them.
var (
	topKeys = []string{"description", "extends", "elicitation", "fleet", "plugins"}
	rowKeys = []string{"use", "enabled", "config", "plugins"}
)

// orList is "a, b or c".
func orList(keys []string) string {
	return strings.Join(keys[:len(keys)-1], ", ") + " or " + keys[len(keys)-1]
}

// unknownKey is the message of an unknown key: the keys expected there, and the nearest
// of them when key looks mistyped; note, when not "", follows in the parentheses.
func unknownKey(key string, keys []string, note string) string {
	msg := "unknown key: expected " + orList(keys)
	hint := suggest.Phrase(suggest.Closest(key, keys, suggest.Options{Max: 1}))
	switch {
	case hint != "" && note != "":
		return msg + " (" + hint + " " + note + ")"
	case hint != "":
		return msg + " (" + hint + ")"
	case note != "":
		return msg + " (" + note + ")"
	}
	return msg
}

// Load reads a profile, layers its extends chain, the --set overlays and
// the HARNESS_* environment over it, validates the result strictly and
// returns it. Every error is an [*Error] naming the source, the key path
// and what was expected.
func Load(opts LoadOptions) (*Profile, error) {
	l := &loader{
		opts:  opts,
		k:     koanf.New("."),
		order: map[string]int{},
	}
	top, err := l.top()
	if err != nil {
		return nil, err
	}
	if foreign := opts.Servers != nil && opts.Servers.IsForeign(top.name, top.data); !top.builtin &&
		(foreign || opts.Servers == nil && strings.EqualFold(filepath.Ext(top.name), ".toml")) {
		// Another host's document (mcpServers, VS Code, Codex): read directly, as the
		// profile "mcp import" would write for it. (Without a reader, a .toml file can
		// only be Codex's: ImportServers says a reader is needed.)
		im, err := ImportServers(top.data, ImportOptions{Source: l.source, Op: "profile", Servers: opts.Servers})
		if err != nil {
			return nil, err
		}
		top.data, l.warnings = im.YAML, im.Warnings
		if slices.Contains(baseRowIDs(), "manager") {
			// Whoever points -p at their editor's server list may expect those servers
			// alone: say that the profile it becomes runs the settings file's too.
			l.warnings = append(l.warnings, `the servers of your own settings file run too (the profile extends the built-in `+
				ImportBase+` profile, whose MCP server manager runs them); --set plugins.manager.enabled=false runs only this file's`)
		}
	}
	docs, err := l.chain(top)
	if err != nil {
		return nil, err
	}
	for i := len(docs) - 1; i >= 0; i-- {
		if err := l.merge(docs[i]); err != nil {
			return nil, err
		}
	}
	for _, set := range opts.Sets {
		if err := l.applySet(set); err != nil {
			return nil, err
		}
	}
	if err := l.applyEnv(); err != nil {
		return nil, err
	}
	p, err := l.build(top.name)
	if err != nil {
		return nil, err
	}
	for _, d := range docs {
		if file, ok := strings.CutPrefix(d.key, "file:"); ok {
			p.Files = append(p.Files, file)
		}
	}
	return p, nil
}

// loader carries one Load call.
type loader struct {
	opts   LoadOptions
	source string
	k      *koanf.Koanf
	layers []*layer       // merged so far, base first
	order  map[string]int // first-seen position of every key path
	// warnings of a server document read as the profile
	warnings []string
}

// A layer is one source of values: a profile document, one --set or one
// environment variable. It answers whether it wrote a key path, so that an
// error in the merged profile can name the layer responsible.
type layer struct {
	label string         // Error.Layer; "" for the Source document
	desc  string         // for the dump header
	lines map[string]int // documents: key path → line
	tree  map[string]any // overlays: the overlay's own value tree
}

func (ly *layer) has(path []string) bool {
	if ly.lines != nil {
		_, ok := ly.lines[pathKey(path)]
		return ok
	}
	_, ok := lookup(ly.tree, path)
	return ok
}

// line returns the line of path, or of its nearest ancestor in the
// document, or 0.
func (ly *layer) line(path []string) int {
	for n := len(path); n > 0 && ly.lines != nil; n-- {
		if line, ok := ly.lines[pathKey(path[:n])]; ok {
			return line
		}
	}
	return 0
}

// A doc is one profile document of an extends chain.
type doc struct {
	name    string // as given or as written in extends
	key     string // identity, for cycle detection
	builtin bool
	dir     string // directory for relative extends
	data    []byte
	label   string // Error.Layer
	root    *yamlv3.Node
	lines   map[string]int
	extends string
	extLine int
}

// top resolves the profile named by the options.
func (l *loader) top() (*doc, error) {
	if l.opts.Data != nil {
		name := l.opts.Name
		if name == "" {
			name = dataLabel
		}
		l.source = name
		d := &doc{name: name, key: "input", data: l.opts.Data}
		if isPath(l.opts.Name) {
			d.dir = filepath.Dir(l.opts.Name)
		}
		return d, nil
	}
	name := l.opts.Name
	if name == "" {
		name = defaultName
	}
	l.source = name
	d, lerr := resolve(name, "")
	if lerr != nil {
		return nil, l.fail(nil, nil, lerr.kind, lerr.msg, lerr.cause)
	}
	return d, nil
}

// chain parses top and the profiles it extends, top first.
func (l *loader) chain(top *doc) ([]*doc, error) {
	docs := []*doc{top}
	seen := map[string]bool{top.key: true}
	for d := top; ; {
		if err := l.parse(d); err != nil {
			return nil, err
		}
		if d.extends == "" {
			return docs, nil
		}
		at := &layer{label: d.label, lines: map[string]int{pathKey([]string{"extends"}): d.extLine}}
		if len(docs) > maxExtends {
			return nil, l.fail(at, []string{"extends"}, ErrInvalid,
				fmt.Sprintf("more than %d levels of extends", maxExtends), nil)
		}
		next, lerr := resolve(d.extends, d.dir)
		if lerr != nil {
			return nil, l.fail(at, []string{"extends"}, lerr.kind, lerr.msg, lerr.cause)
		}
		if seen[next.key] {
			names := make([]string, 0, len(docs)+1)
			for _, d := range docs {
				names = append(names, d.name)
			}
			names = append(names, d.extends)
			return nil, l.fail(at, []string{"extends"}, ErrInvalid,
				"extends cycle: "+strings.Join(names, " → "), nil)
		}
		seen[next.key] = true
		next.label = fmt.Sprintf("extends %q", d.extends)
		docs = append(docs, next)
		d = next
	}
}

// A lookupError says why a profile could not be found or read.
type lookupError struct {
	kind  error // ErrNotFound or ErrInvalid
	msg   string
	cause error
}

// resolve finds a built-in profile or reads a profile file; relative paths
// are taken relative to dir.
func resolve(name, dir string) (*doc, *lookupError) {
	if !isPath(name) {
		data, ok := Builtin(name)
		if !ok {
			msg := fmt.Sprintf("unknown built-in profile %q: expected one of %s, or a path to a .yaml file",
				name, strings.Join(BuiltinNames(), ", "))
			if hint := suggest.Phrase(suggest.Closest(name, BuiltinNames(), suggest.Options{Max: 1})); hint != "" {
				msg += " (" + hint + ")"
			}
			return nil, &lookupError{kind: ErrNotFound, msg: msg}
		}
		return &doc{name: name, key: "builtin:" + name, builtin: true, data: data}, nil
	}
	path := name
	if !filepath.IsAbs(path) && dir != "" {
		path = filepath.Join(dir, path)
	}
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	abs, aerr := filepath.Abs(path)
	if aerr != nil {
		abs = path
	}
	return &doc{name: name, key: "file:" + abs, dir: filepath.Dir(path), data: data}, nil
}

func isPath(name string) bool {
	if strings.ContainsAny(name, `/\`) {
		return true
	}
	ext := strings.ToLower(filepath.Ext(name))
	return ext == ".yaml" || ext == ".yml" || ext == ".json" || ext == ".toml"
}

// readFile reads a regular file of at most maxFileSize bytes.
func readFile(path string) ([]byte, *lookupError) {
	fail := func(kind error, msg string, cause error) *lookupError {
		return &lookupError{kind: kind, msg: msg, cause: cause}
	}
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fail(ErrNotFound, "cannot read profile: "+err.Error(), err)
		}
		return nil, fail(ErrInvalid, "cannot read profile: "+err.Error(), err)
	}
	defer func() { _ = f.Close() }()
	info, err := f.Stat()
	if err != nil {
		return nil, fail(ErrInvalid, "cannot read profile: "+err.Error(), err)
	}
	if !info.Mode().IsRegular() {
		return nil, fail(ErrInvalid, fmt.Sprintf("cannot read profile %q: not a regular file", path), nil)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, fail(ErrInvalid, "cannot read profile: "+err.Error(), err)
	}
	if len(data) > maxFileSize {
		return nil, fail(ErrInvalid, fmt.Sprintf("profile %q is larger than %d bytes", path, maxFileSize), nil)
	}
	return data, nil
}

// parse checks a document's structure on its YAML node tree: one document,
// a map at the top, no duplicate keys, an extends that is a string. It
// records the line of every key.
func (l *loader) parse(d *doc) error {
	ly := &layer{label: d.label, lines: map[string]int{}}
	dec := yamlv3.NewDecoder(bytes.NewReader(d.data))
	var node yamlv3.Node
	err := yamlnode.Safely(func() error { return dec.Decode(&node) })
	if errors.Is(err, io.EOF) {
		return l.fail(ly, nil, ErrInvalid, `empty document: expected a map with "plugins"`, nil)
	}
	if err != nil {
		return l.syntaxError(ly, d.data, err)
	}
	var extra yamlv3.Node
	switch err := yamlnode.Safely(func() error { return dec.Decode(&extra) }); {
	case err == nil:
		ly.lines[""] = extra.Line
		return l.fail(ly, []string{""}, ErrSyntax, "more than one YAML document: expected one", nil)
	case !errors.Is(err, io.EOF):
		return l.syntaxError(ly, d.data, err)
	}
	root := &node
	if root.Kind == yamlv3.DocumentNode {
		if len(root.Content) == 0 {
			return l.fail(ly, nil, ErrInvalid, `empty document: expected a map with "plugins"`, nil)
		}
		root = root.Content[0]
	}
	if root.Kind != yamlv3.MappingNode {
		ly.lines[""] = root.Line
		return l.fail(ly, []string{""}, ErrType,
			`expected a map with "plugins", got `+yamlnode.Describe(root), nil)
	}
	if err := l.walk(ly, root, nil); err != nil {
		return err
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Value != "extends" {
			continue
		}
		if v.Kind != yamlv3.ScalarNode || v.ShortTag() != "!!str" || v.Value == "" {
			return l.fail(ly, []string{"extends"}, ErrType,
				"expected the name or path of a profile to extend, got "+yamlnode.Describe(v), nil)
		}
		d.extends, d.extLine = v.Value, k.Line
	}
	d.root, d.lines = root, ly.lines
	return nil
}

// walk records the line of every key under n and rejects duplicate keys.
// Aliases are not followed.
func (l *loader) walk(ly *layer, n *yamlv3.Node, path []string) error {
	switch n.Kind {
	case yamlv3.MappingNode:
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.ShortTag() == "!!merge" {
				continue
			}
			if k.Kind != yamlv3.ScalarNode || k.ShortTag() == "!!null" {
				p := append(slices.Clip(path), "")
				ly.lines[pathKey(p)] = k.Line
				return l.fail(ly, p, ErrType, "expected a string key, got "+yamlnode.Describe(k), nil)
			}
			p := append(slices.Clip(path), k.Value)
			if first, dup := seen[k.Value]; dup {
				ly.lines[pathKey(p)] = k.Line
				return l.fail(ly, p, ErrDuplicate, fmt.Sprintf("duplicate key (first defined on line %d)", first), nil)
			}
			seen[k.Value] = k.Line
			ly.lines[pathKey(p)] = k.Line
			if err := l.walk(ly, v, p); err != nil {
				return err
			}
		}
	case yamlv3.SequenceNode:
		for i, c := range n.Content {
			p := append(slices.Clip(path), strconv.Itoa(i))
			ly.lines[pathKey(p)] = c.Line
			if err := l.walk(ly, c, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// merge loads a parsed document into koanf.
func (l *loader) merge(d *doc) error {
	ly := &layer{label: d.label, desc: d.name, lines: d.lines}
	if d.builtin {
		ly.desc = "built-in " + d.name
	}
	l.noteNode(d.root, nil)
	var tree map[string]any
	err := yamlnode.Safely(func() error {
		var err error
		tree, err = yaml.Parser().Unmarshal(d.data)
		return err
	})
	if err != nil {
		return l.syntaxError(ly, d.data, err)
	}
	keepTimestamps(d.root, tree)
	return l.load(ly, tree)
}

// noteNode records the first-seen position of every key under n, in
// document order.
func (l *loader) noteNode(n *yamlv3.Node, path []string) {
	switch n.Kind {
	case yamlv3.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Kind == yamlv3.ScalarNode && k.ShortTag() != "!!merge" {
				p := append(slices.Clip(path), k.Value)
				l.note(p)
				l.noteNode(n.Content[i+1], p)
			}
		}
	case yamlv3.SequenceNode:
		for i, c := range n.Content {
			p := append(slices.Clip(path), strconv.Itoa(i))
			l.note(p)
			l.noteNode(c, p)
		}
	}
}

// load merges one layer's tree into the profile.
func (l *loader) load(ly *layer, tree map[string]any) error {
	tree, _ = yamlnode.Normalize(tree).(map[string]any)
	pruneNulls(tree)
	if err := l.k.Load(confmap.Provider(tree, ""), nil); err != nil {
		return l.fail(ly, nil, ErrInvalid, err.Error(), err)
	}
	l.layers = append(l.layers, ly)
	return nil
}

// pruneNulls drops null plugins and config maps, which mean "nothing
// here" and must not wipe what a lower layer set.
func pruneNulls(tree map[string]any) {
	if v, ok := tree["plugins"]; ok && v == nil {
		delete(tree, "plugins")
	}
	rows, _ := tree["plugins"].(map[string]any)
	for _, row := range rows {
		r, ok := row.(map[string]any)
		if !ok {
			continue
		}
		if v, ok := r["config"]; ok && v == nil {
			delete(r, "config")
		}
		pruneNulls(r)
	}
}

// syntaxError turns a YAML parser error about data into an *Error at the line that is
// broken (see yamlnode.SyntaxError).
func (l *loader) syntaxError(ly *layer, data []byte, err error) *Error {
	e := l.fail(ly, nil, ErrSyntax, "", err)
	line, msg := yamlnode.SyntaxError(data, err)
	e.Line, e.Msg = line, "invalid YAML: "+msg
	return e
}

// fail builds an *Error at path, attributed to ly (nil: the source).
func (l *loader) fail(ly *layer, path []string, kind error, msg string, cause error) *Error {
	e := &Error{Source: l.source, Path: joinPath(path), Msg: msg, Err: kind}
	if cause != nil && !errors.Is(cause, kind) {
		e.Err = fmt.Errorf("%w: %w", kind, cause)
	} else if cause != nil {
		e.Err = cause
	}
	if ly != nil {
		e.Layer = ly.label
		e.Line = ly.line(path)
	}
	return e
}

// origin returns the last layer that wrote path, or nil.
func (l *loader) origin(path []string) *layer {
	for i := len(l.layers) - 1; i >= 0; i-- {
		if l.layers[i].has(path) {
			return l.layers[i]
		}
	}
	return nil
}

// failAt builds an *Error about a merged value, attributed to the layer
// that wrote it.
func (l *loader) failAt(path []string, kind error, msg string) *Error {
	return l.fail(l.origin(path), path, kind, msg, nil)
}

// note records the first-seen position of a key path.
func (l *loader) note(path []string) {
	k := pathKey(path)
	if _, ok := l.order[k]; !ok {
		l.order[k] = len(l.order)
	}
}

// noteTree records the key paths of an overlay value, maps in sorted order.
func (l *loader) noteTree(path []string, v any) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := append(slices.Clip(path), k)
			l.note(p)
			l.noteTree(p, v[k])
		}
	case []any:
		for i, e := range v {
			p := append(slices.Clip(path), strconv.Itoa(i))
			l.note(p)
			l.noteTree(p, e)
		}
	}
}

func pathKey(path []string) string { return strings.Join(path, keySeparator) }

// lookup finds path in a value tree; list elements are addressed by index.
func lookup(v any, path []string) (any, bool) {
	for _, seg := range path {
		switch c := v.(type) {
		case map[string]any:
			next, ok := c[seg]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// parseValue parses the YAML text of an overlay value.
func parseValue(text string) (any, error) {
	var (
		n yamlv3.Node
		v any
	)
	err := yamlnode.Safely(func() error {
		if err := yamlv3.Unmarshal([]byte(text), &n); err != nil || n.Kind == 0 {
			return err
		}
		return n.Decode(&v)
	})
	if err != nil {
		return nil, err
	}
	return yamlnode.Normalize(keepTimestamps(&n, v)), nil
}

// keepTimestamps puts back the text of timestamp-like scalars, which the
// YAML decoder turns into time.Time values inside maps and lists: a
// setting such as protocolVersion: 2025-11-25 must stay the string it is.
// It returns v, changed in place where possible.
func keepTimestamps(n *yamlv3.Node, v any) any {
	switch n.Kind {
	case yamlv3.DocumentNode:
		if len(n.Content) > 0 {
			return keepTimestamps(n.Content[0], v)
		}
	case yamlv3.MappingNode:
		if m, ok := v.(map[string]any); ok {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if e, ok := m[n.Content[i].Value]; ok {
					m[n.Content[i].Value] = keepTimestamps(n.Content[i+1], e)
				}
			}
		}
	case yamlv3.SequenceNode:
		if list, ok := v.([]any); ok {
			for i, c := range n.Content {
				if i < len(list) {
					list[i] = keepTimestamps(c, list[i])
				}
			}
		}
	case yamlv3.ScalarNode:
		if _, ok := v.(time.Time); ok {
			return n.Value
		}
	}
	return v
}
