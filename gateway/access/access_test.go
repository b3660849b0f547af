package access_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cordisgo/harness/gateway/access"
	"github.com/cordisgo/harness/secrets"
)

func load(t *testing.T, yaml string) (*access.Policy, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "access.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"INTROSPECT": "s3cret"}
	return access.Load(path, &secrets.Resolver{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
}

const file = `
resource: https://mcp.example.com/mcp
issuer: https://login.example.com
introspection: {clientId: gw, clientSecret: "${INTROSPECT}"}
groups:
  platform: [alice]
rules:
  - who: ["*"]
    allow: [demo]
  - who: [group:platform]
    allow: ["github/*"]
    deny: [github/delete_repository]
  - who: [group:interns]
    deny: [demo/add, secrets]
`

// Rules: a deny wins, groups come from the token and the file, and what no rule allows is
// refused with a reason that names the person and the tool.
func TestRules(t *testing.T) {
	p, err := load(t, file)
	if err != nil {
		t.Fatal(err)
	}
	if p.Config().Introspection.ClientSecret != "s3cret" {
		t.Fatal("the secret reference was not expanded")
	}
	alice := access.Person{ID: "alice"}
	bob := access.Person{ID: "bob", Groups: []string{"interns"}}
	for _, c := range []struct {
		who          access.Person
		server, tool string
		ok           bool
		why          string
	}{
		{alice, "demo", "add", true, ""},
		{bob, "demo", "echo", true, ""},
		{bob, "demo", "add", false, "bob may not call demo/add (the gateway's access rules deny demo/add)"},
		{alice, "github", "create_issue", false, "no access rule allows it"}, // alice's groups come from Person(): not here
		{bob, "github", "create_issue", false, "no access rule allows it"},
		{alice, access.Builtin, "read_mcp_resource", false, "alice may not call harness/read_mcp_resource"},
	} {
		d := p.MayCall(c.who, c.server, c.tool)
		if d.Allowed != c.ok || !strings.Contains(d.Reason, c.why) {
			t.Errorf("%s %s/%s: %+v, want allowed=%v (%s)", c.who.ID, c.server, c.tool, d, c.ok, c.why)
		}
	}
	// The file's groups join the token's.
	platform := p.Person(tokenInfo("alice"))
	if d := p.MayCall(platform, "github", "create_issue"); !d.Allowed {
		t.Errorf("alice of platform: %+v", d)
	}
	if d := p.MayCall(platform, "github", "delete_repository"); d.Allowed {
		t.Error("the deny of delete_repository did not win")
	}
	// Servers: a tool pattern shows its server but does not open its resources.
	if !p.MaySee(platform, "github") || p.MayUseServer(platform, "github").Allowed {
		t.Error("github: shown for its tools, but its resources are not allowed")
	}
	if p.MaySee(bob, "secrets") || p.MayUseServer(bob, "secrets").Allowed {
		t.Error("a whole-server deny hides it")
	}
	if !p.MayUseServer(bob, "demo").Allowed {
		t.Error("demo is allowed to everyone")
	}
	if got := p.MetadataURL(); got != "https://mcp.example.com/.well-known/oauth-protected-resource/mcp" {
		t.Errorf("metadata URL %s", got)
	}
}

// A bad file is refused with its path and the key at fault.
func TestLoadErrors(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"issuer: x\n", "resource"},
		{"resource: r\nissuer: i\nrules:\n  - who: [a]\n    allow: ['[']\n", "rules[0].pattern[0]"},
		{"resource: r\nissuer: i\nrules:\n  - allow: [demo]\n", "rules[0].who"},
		{"resource: r\nissuer: i\notherwise: maybe\n", "otherwise"},
		{"resource: r\nissuer: i\nrulez: []\n", "rulez"},
		{"resource: r\nissuer: i\nintrospection: {clientId: gw, clientSecret: '${MISSING}'}\n", "introspection.clientSecret"},
	} {
		_, err := load(t, c.yaml)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "access.yaml") {
			t.Errorf("%q: %v, want an error naming the file and %s", c.yaml, err, c.want)
		}
	}
}
