package catalog_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/plugins/mcpclient/catalog"
)

func TestSaveLoad(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	st, err := catalog.Open(catalog.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Load("gh", "abc"); !errors.Is(err, catalog.ErrNotCached) {
		t.Fatalf("empty store: %v", err)
	}
	hash, _ := catalog.Hash(map[string]string{"command": "gh-mcp"})
	e := &catalog.Server{ConfigHash: hash, Tools: []*mcp.Tool{{Name: "search_issues", Description: "Search issues"}}}
	if err := st.Save("gh", e); err != nil {
		t.Fatal(err)
	}
	got, err := st.Load("gh", hash)
	if err != nil || len(got.Tools) != 1 || got.Tools[0].Name != "search_issues" || got.UpdatedAt.IsZero() {
		t.Fatalf("load: %v %+v", err, got)
	}
	fi, err := os.Stat(filepath.Join(dir, "gh."+hash[:16]+".json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("file: %v %v", fi, err)
	}
	if _, err := st.Load("gh", strings.Repeat("0", 64)); !errors.Is(err, catalog.ErrNotCached) {
		t.Errorf("another hash: %v", err)
	}
	// A file under the right name with another configuration inside is unusable.
	other := strings.Repeat("f", 16) + hash[16:]
	data, _ := os.ReadFile(filepath.Join(dir, "gh."+hash[:16]+".json"))
	if err := os.WriteFile(filepath.Join(dir, "gh."+other[:16]+".json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Load("gh", other); !errors.Is(err, catalog.ErrUnusable) {
		t.Errorf("mismatched file: %v", err)
	}
	cat, err := st.Catalog()
	if err != nil || len(cat.Servers) != 1 || cat.Servers["gh"] == nil {
		t.Fatalf("catalog: %v %+v", err, cat)
	}
}

func TestParseErrors(t *testing.T) {
	for doc, want := range map[string]string{
		`[]`:                                    "not a catalog",
		`{}`:                                    `no "servers" object`,
		`{"servers": {"a": {}}}`:                `servers.a: no "tools" array`,
		`{"servers": {"a": {"tools": [{}]}}}`:   "servers.a.tools[0]: a tool needs a name",
		`{"servers": {"a": {"tools": "x"}}}`:    "servers.a:",
		`{"servers": {"a": {"tools": [null]}}}`: "servers.a.tools[0]",
	} {
		if _, err := catalog.Parse([]byte(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", doc, err, want)
		}
	}
	if _, err := catalog.Open(catalog.Options{Dir: t.TempDir(), Startup: "soon"}); err == nil {
		t.Error("startup soon accepted")
	}
}

func TestSecretHash(t *testing.T) {
	a, b := catalog.SecretHash("token-1"), catalog.SecretHash("token-2")
	if a == b || strings.Contains(a, "token") {
		t.Errorf("%s %s", a, b)
	}
}

// A catalog file of other servers' tools/list results.
func ExampleParse() {
	f, err := catalog.Parse([]byte(`{"servers": {
		"fs": {"tools": [{"name": "read_file", "description": "Read a file", "inputSchema": {"type": "object"}}]},
		"gh": {"tools": [{"name": "search_issues", "inputSchema": {"type": "object"}}]}
	}}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, name := range []string{"fs", "gh"} {
		for _, t := range f.Servers[name].Tools {
			fmt.Println(name, t.Name)
		}
	}
	// Output:
	// fs read_file
	// gh search_issues
}
