package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/cordisgo/harness"

// rule says which project packages a package (and its subpackages, unless listed
// separately) may import, and whether it may import anything outside the standard library.
// never lists modules the package must not reach at all, through the project packages it
// imports either (go list -deps shows none of them).
type rule struct {
	project []string
	stdOnly bool
	never   []string
	// not lists project packages below an allowed one that the package still may not
	// import (the agent takes the model interface, never a provider).
	not []string
}

// rules mirrors docs/design.md. The longest matching prefix applies.
var rules = map[string]rule{
	"ctx":         {project: []string{"internal/suggest"}, stdOnly: true},
	"ctx/ctxtest": {project: []string{"ctx", "internal/suggest"}, stdOnly: true},
	// The one vocabulary of permissions (allow/ask/deny, rules, approvals), below the
	// registry whose policy chain speaks it.
	"permission":           {project: []string{"ctx"}},
	"plugins/toolregistry": {project: []string{"ctx", "permission", "internal/jsoncheck", "internal/schemawalk", "internal/suggest"}},
	"plugins/sysprompt":    {project: []string{"ctx"}, stdOnly: true},
	// The ranking over plain data knows no registry; the deferral stands between the two.
	"toolsearch":                    {project: []string{"ctx", "internal/suggest", "internal/jsonstr"}},
	"plugins/toolregistry/deferral": {project: []string{"plugins/toolregistry", "toolsearch"}},
	"plugins/mcpresources":          {project: []string{"ctx", "plugins/toolregistry", "plugins/sysprompt", "internal/jsonstr"}},
	"plugins/mcpprompts":            {project: []string{"ctx", "plugins/mcpclient", "plugins/remote", "internal/suggest"}},
	"mcpauth":                       {project: []string{"internal/atomicfile", "internal/userdirs"}},
	"elicitation":                   {project: []string{"ctx", "internal/redact", "internal/schemawalk"}},
	"sampling":                      {project: []string{"ctx"}},
	"plugins/mcpclient/catalog":     {project: []string{"ctx", "internal/atomicfile", "internal/userdirs"}},
	"plugins/mcpclient":             {project: []string{"ctx", "secrets", "permission", "plugins/toolregistry", "plugins/sysprompt", "plugins/mcpresources", "plugins/mcpclient/catalog", "mcpauth", "elicitation", "sampling", "internal/redact", "internal/yamlnode", "internal/jsonstr", "internal/jsoncheck", "internal/userdirs", "internal/syncio", "internal/version"}},
	"plugins/mcpmanager":            {project: []string{"ctx", "secrets", "plugins/mcpclient", "plugins/mcpclient/serverdoc", "mcpauth", "plugins/toolregistry", "plugins/remote", "internal/redact", "internal/yamlnode", "internal/filewatch", "internal/atomicfile", "internal/words"}},
	// Server documents sit on top of the client's configuration types; the client never
	// imports them back.
	"plugins/mcpclient/serverdoc": {project: []string{"ctx", "plugins/mcpclient", "internal/yamlnode", "internal/atomicfile", "internal/words"}},
	// The ${…} references and the secrets they read, below the client (and the model
	// service, which needs only them).
	"secrets": {project: []string{"ctx", "internal/redact", "internal/yamlnode", "internal/userdirs", "internal/words"}, never: []string{"github.com/modelcontextprotocol/go-sdk"}},
	// A stdio server's process (group, stderr ring, environment), below the client's
	// sessions; it imports nothing of the project.
	"plugins/mcpclient/transport": {project: []string{"internal/procfs"}},
	"plugins/remote":              {project: []string{"ctx", "internal/loopback", "internal/userdirs"}},
	// The model interface and service; its provider (and the plugin that configures models)
	// is the subpackage openaicompat, which the interface never imports.
	"plugins/model":              {project: []string{"ctx", "internal/suggest"}, not: []string{"plugins/model/openaicompat"}, never: []string{"github.com/modelcontextprotocol/go-sdk"}},
	"plugins/model/openaicompat": {project: []string{"ctx", "plugins/model", "secrets", "internal/suggest", "internal/jsonstr", "internal/words"}, never: []string{"github.com/modelcontextprotocol/go-sdk"}},
	"plugins/ptc":                {project: []string{"ctx", "permission", "plugins/toolregistry", "plugins/sysprompt", "internal/schemawalk", "internal/words"}},
	// The agent takes models through the interface only, never the provider.
	"plugins/agent":          {project: []string{"ctx", "secrets", "permission", "plugins/model", "plugins/toolregistry", "plugins/toolregistry/deferral", "toolsearch", "plugins/sysprompt", "plugins/ptc", "sampling", "elicitation", "plugins/remote", "internal/redact", "internal/suggest", "internal/userdirs"}, not: []string{"plugins/model/openaicompat"}},
	"plugins/agent/agentapi": {project: []string{"ctx", "permission", "plugins/agent/session", "plugins/remote"}},
	"plugins/agent/session":  {project: []string{"permission", "plugins/model", "internal/jsonl", "internal/suggest", "internal/userdirs", "internal/words"}, not: []string{"plugins/model/openaicompat"}},
	"gateway":                {project: []string{"ctx", "plugins/toolregistry", "plugins/toolregistry/deferral", "toolsearch", "plugins/mcpclient", "plugins/mcpclient/catalog", "plugins/mcpresources", "plugins/mcpmanager", "plugins/remote", "elicitation", "sampling", "internal/loopback", "internal/redact", "permission", "gateway/access", "gateway/audit", "mcpauth"}},
	// The gateway's shared state in Redis, behind gateway.Store.
	"gateway/redisstore": {project: []string{"gateway", "gateway/audit"}},
	// A team's gateway: who signs in and what each may do; the audit trail.
	"gateway/access":  {project: []string{"ctx", "secrets"}},
	"gateway/audit":   {project: []string{"internal/jsonl", "internal/words"}, stdOnly: true},
	"plugins/console": {project: []string{"ctx", "plugins/toolregistry", "plugins/sysprompt", "elicitation", "plugins/mcpresources", "plugins/mcpclient", "plugins/remote"}},

	// The tool-search evaluation set's format and scores, for the retrieval test and
	// bench/bleveeval.
	"toolsearch/searcheval": {stdOnly: true},

	// Profiles depend on ctx and the configuration libraries only: other hosts' server
	// documents come through a reader the host installs (host.ServerDocuments), so loading a
	// profile links nothing of MCP.
	"profiles": {project: []string{"ctx", "internal/redact", "internal/suggest", "internal/yamlnode"}, never: []string{"github.com/modelcontextprotocol/go-sdk"}},
	// The host library: what an embedder calls to run a host; the binary (cmd) sits on it,
	// never the other way. It lists the workspace server in process to seed the catalog
	// entry of the workspace it adds (the host lists it in process).
	"host": {project: []string{"ctx", "elicitation", "sampling", "plugins", "profiles", "secrets", "toolsearch", "workspace", "internal/filewatch", "internal/suggest", "internal/termsafe", "internal/words"}},
	// The turn driver (an agent's session over its remote methods, in process or on a host)
	// and the terminal chat on it.
	"host/adhoc":       {project: []string{"ctx", "host", "host/mcpsettings", "profiles", "plugins/mcpclient", "plugins/mcpclient/serverdoc", "internal/redact", "internal/shellwords"}},
	"host/mcpsettings": {project: []string{"host", "profiles", "plugins/mcpclient", "plugins/mcpclient/serverdoc"}},
	"hostgateway":      {project: []string{"gateway", "gateway/access", "gateway/audit", "gateway/redisstore", "host", "mcpauth", "internal/loopback", "internal/userdirs"}},
	"hostclient":       {project: []string{"host", "plugins/mcpmanager", "plugins/remote", "plugins/toolregistry"}},
	"hostview":         {project: []string{"host", "hostclient", "plugins/agent", "plugins/model", "plugins/mcpclient", "plugins/mcpmanager", "plugins/mcpprompts", "plugins/mcpresources", "plugins/toolregistry", "toolsearch", "internal/termsafe", "termui", "internal/words"}},
	"termui":           {project: []string{"ctx", "host", "plugins/mcpclient", "internal/termsafe", "internal/words"}},
	"termform":         {project: []string{"ctx", "elicitation", "internal/termsafe"}},
	"turn":             {project: []string{"permission", "plugins/agent/agentapi", "plugins/agent/session", "plugins/remote"}},
	"termchat":         {project: []string{"host", "hostview", "turn", "termform", "permission", "plugins/agent", "plugins/model", "plugins/remote", "plugins/toolregistry", "internal/suggest", "internal/termsafe", "internal/words"}},
	// internal/: the ground floor, leaf libraries that everything may import. They import
	// the standard library, third-party modules and each other, never ctx, plugins/,
	// profiles, cmd/, testkit/, tests/ or examples/ (TestGroundFloor checks it too).
	"internal/demoserver":  {project: []string{"internal/loopback", "internal/mcpserve"}},
	"internal/mcpserve":    {project: []string{"internal/loopback", "internal/procpolicy"}},
	"internal/archtest":    {},
	"internal/gcpolicy":    {stdOnly: true},
	"internal/doccheck":    {stdOnly: true},
	"internal/grammartest": {stdOnly: true},
	"internal/jsoncheck":   {project: []string{"internal/schemawalk", "internal/jsonstr"}},
	"internal/schemawalk":  {},
	"internal/jsonstr":     {stdOnly: true},
	"internal/loopback":    {project: []string{"internal/atomicfile"}, stdOnly: true},
	"internal/atomicfile":  {stdOnly: true},
	"internal/jsonl":       {stdOnly: true},
	"internal/npmci":       {stdOnly: true},
	"internal/oauthtest":   {project: []string{"internal/npmci", "internal/syncio"}},
	"internal/procpolicy":  {stdOnly: true},
	"internal/syncio":      {stdOnly: true},
	"internal/version":     {stdOnly: true},
	"internal/redact":      {stdOnly: true},
	"internal/suggest":     {stdOnly: true},
	"internal/words":       {stdOnly: true},
	"internal/termsafe":    {stdOnly: true},
	"internal/userdirs":    {stdOnly: true},
	"internal/procfs":      {stdOnly: true},
	"internal/shellwords":  {stdOnly: true},
	"internal/yamlnode":    {},
	"internal/filewatch":   {},
	"internal/ptytest":     {},
	"internal/modeltest":   {stdOnly: true},

	// The test rig of the embedded servers' tests (only tests import it).
	"internal/mcpserve/mcpservetest": {},

	// The binary's own packages, which nothing outside cmd/harness imports.
	// testkit/: rigs that tests import (only _test.go files may import them).
	"testkit/mcptest":     {project: []string{"ctx", "ctx/ctxtest"}},
	"testkit/demotree":    {project: []string{"ctx", "internal/demoserver", "plugins/mcpclient", "plugins/toolregistry"}},
	"testkit/regtest":     {project: []string{"ctx", "plugins/mcpclient", "plugins/toolregistry", "toolsearch"}},
	"testkit/gatewaytest": {project: []string{"ctx", "ctx/ctxtest", "gateway", "plugins/toolregistry"}},
	"testkit/proctest":    {project: []string{"internal/procfs"}, stdOnly: true},
	"testkit/harnessbin":  {stdOnly: true},
	"testkit/screentest":  {stdOnly: true},
	"testkit/agenttest":   {project: []string{"ctx", "ctx/ctxtest", "internal/modeltest", "plugins/agent", "plugins/model", "plugins/sysprompt", "plugins/toolregistry"}},
	"testkit/redistest":   {stdOnly: true},
	"testkit/benchtest":   {stdOnly: true},
	"testkit/elicittest":  {project: []string{"elicitation"}},
	// tests/: the integration suites that run the plugins against other implementations.
	"tests/interop":        {project: []string{""}},
	"tests/ptcinterop":     {project: []string{""}},
	"tests/conformance":    {project: []string{"ctx", "plugins/toolregistry", "plugins/mcpclient", "mcpauth", "elicitation", "gateway", "testkit/gatewaytest"}},
	"tests/gatewayinterop": {project: []string{""}},
	"tests/faults":         {project: []string{""}},
	// examples/: the examples of docs/plugins.md (one of them a binary built on cmd/harness/app).
	"examples": {project: []string{""}},
	"bench":    {project: []string{""}},
	// The workspace server (files, edits, search, a sandboxed shell), served by `harness
	// workspace-server`: an MCP server that nothing of the host imports; its stdio
	// processes' groups and environment rule are the stdio transport's.
	"workspace":           {project: []string{"internal/mcpserve", "internal/loopback", "internal/suggest", "internal/userdirs", "plugins/mcpclient/transport", "workspace/gitignore", "workspace/sandbox", "internal/words"}},
	"workspace/gitignore": {},
	"workspace/sandbox":   {},
	"cmd":                 {project: []string{""}},
}

// testOnly is the folder whose packages only _test.go files may import.
const testOnly = module + "/testkit"

// shellOnly are the third-party modules the design reserves for the binary.
var shellOnly = []string{"go.uber.org/fx", "github.com/lmittmann/tint", "github.com/spf13/cobra", "github.com/spf13/pflag"}

func ruleFor(rel string) (rule, bool) {
	best, found := "", false
	for prefix := range rules {
		if (rel == prefix || strings.HasPrefix(rel, prefix+"/")) && len(prefix) >= len(best) {
			best, found = prefix, true
		}
	}
	return rules[best], found
}

// goFile is one parsed .go file of the module, as walkGoFiles hands it over.
type goFile struct {
	top  string // the module's root
	path string // the file's path
	rel  string // its package's folder, relative to top, with slashes
	fset *token.FileSet
	f    *ast.File
}

// imports returns the paths the file imports, unquoted.
func (g goFile) imports() []string {
	out := make([]string, len(g.f.Imports))
	for i, spec := range g.f.Imports {
		out[i], _ = strconv.Unquote(spec.Path.Value)
	}
	return out
}

// importName returns the name under which the file imports path ("" when it does not,
// or imports it as _ or .).
func (g goFile) importName(path string) string {
	for _, spec := range g.f.Imports {
		if p, _ := strconv.Unquote(spec.Path.Value); p != path {
			continue
		}
		if spec.Name == nil {
			return path[strings.LastIndex(path, "/")+1:]
		}
		if n := spec.Name.Name; n != "_" && n != "." {
			return n
		}
	}
	return ""
}

// line returns the file's path relative to the module's root and the line of pos.
func (g goFile) line(pos token.Pos) string {
	rel, _ := filepath.Rel(g.top, g.path)
	return fmt.Sprintf("%s:%d", filepath.ToSlash(rel), g.fset.Position(pos).Line)
}

// walkGoFiles parses, with mode, every .go file of the module (test files included) that
// keep accepts (nil: all), skipping hidden directories, node_modules and testdata, and
// calls fn with it. It returns the module's root.
func walkGoFiles(mode parser.Mode, keep func(rel, path string) bool, fn func(goFile) error) (string, error) {
	top, err := filepath.Abs("../..")
	if err != nil {
		return "", err
	}
	return top, filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != top && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(top, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		if keep != nil && !keep(rel, path) {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, mode)
		if err != nil {
			return err
		}
		return fn(goFile{top: top, path: path, rel: rel, fset: fset, f: f})
	})
}

func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

func TestImportRules(t *testing.T) {
	checked := 0
	notTest := func(_, path string) bool { return !strings.HasSuffix(path, "_test.go") }
	imports := map[string][]string{} // package folder → what its files import
	top, err := walkGoFiles(parser.ImportsOnly, notTest, func(g goFile) error {
		rel, path := g.rel, g.path
		imports[rel] = append(imports[rel], g.imports()...)
		r, ok := ruleFor(rel)
		if !ok {
			t.Errorf("%s: package %q has no import rule; add one to rules and docs/design.md", path, rel)
			return nil
		}
		checked++
		for _, imp := range g.imports() {
			switch {
			case isStd(imp):
			case (imp == testOnly || strings.HasPrefix(imp, testOnly+"/")) && rel != "testkit" && !strings.HasPrefix(rel, "testkit/"):
				t.Errorf("%s: %s imports %s, which only tests may import", rel, filepath.Base(path), imp)
			case imp == module || strings.HasPrefix(imp, module+"/"):
				target := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
				if slices.ContainsFunc(r.not, func(p string) bool { return target == p || strings.HasPrefix(target, p+"/") }) {
					t.Errorf("%s: %s may not import %s", rel, filepath.Base(path), target)
					continue
				}
				if target == rel || strings.HasPrefix(target, rel+"/") {
					continue
				}
				if !slices.ContainsFunc(r.project, func(p string) bool {
					return p == "" || target == p || strings.HasPrefix(target, p+"/")
				}) {
					t.Errorf("%s: %s may not import %s", rel, filepath.Base(path), target)
				}
			case r.stdOnly:
				t.Errorf("%s: %s imports %s, but this package may use only the standard library", rel, filepath.Base(path), imp)
			case !strings.HasPrefix(rel, "cmd") && slices.ContainsFunc(shellOnly, func(m string) bool { return strings.HasPrefix(imp, m) }):
				t.Errorf("%s: %s imports %s, which belongs to the application shell (cmd/harness) only", rel, filepath.Base(path), imp)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no Go files checked")
	}
	if _, err := os.Stat(filepath.Join(top, "go.mod")); err != nil {
		t.Fatalf("not at the module root: %v", err)
	}
	for pkg, r := range rules {
		for _, m := range r.never {
			if chain := reaches(imports, pkg, m); chain != nil {
				t.Errorf("%s reaches %s (%s), which its rule forbids", pkg, m, strings.Join(chain, " → "))
			}
		}
	}
}

// reaches returns the chain of imports by which the package folder pkg reaches a package
// of the module m through the project's packages (their non-test files), or nil.
func reaches(imports map[string][]string, pkg, m string) []string {
	seen := map[string]bool{}
	var walk func(rel string, chain []string) []string
	walk = func(rel string, chain []string) []string {
		if seen[rel] {
			return nil
		}
		seen[rel] = true
		for _, imp := range imports[rel] {
			switch {
			case imp == m || strings.HasPrefix(imp, m+"/"):
				return append(chain, imp)
			case imp == module || strings.HasPrefix(imp, module+"/"):
				target := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
				if found := walk(target, append(chain, target)); found != nil {
					return found
				}
			}
		}
		return nil
	}
	return walk(pkg, []string{pkg})
}

// TestGroundFloor checks that internal/ stays the ground floor of the house: every file
// under it (tests included) imports only the standard library, third-party modules and
// other packages of internal/, so that no import runs back up from internal/ to ctx,
// plugins/, profiles, cmd/ or the rigs, suites and examples built on them.
func TestGroundFloor(t *testing.T) {
	checked := 0
	underInternal := func(rel, _ string) bool { return rel == "internal" || strings.HasPrefix(rel, "internal/") }
	_, err := walkGoFiles(parser.ImportsOnly, underInternal, func(g goFile) error {
		checked++
		for _, imp := range g.imports() {
			if imp != module && !strings.HasPrefix(imp, module+"/") {
				continue // the standard library or a third-party module
			}
			target := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
			if !strings.HasPrefix(target, "internal/") {
				t.Errorf("%s: %s imports %s, but internal/ is the ground floor: its packages import only the standard library, third-party modules and other internal/ packages. Move the package that needs %s out of internal/ (cmd/harness/internal, testkit/, tests/ or examples/), or cut the import", g.rel, filepath.Base(g.path), target, target)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no Go files under internal/ checked")
	}
}
