// Package access is who may use a team's gateway, and what each person may do: the
// gateway as an OAuth-protected MCP resource (the MCP authorization specification: its
// protected-resource metadata, bearer tokens of the team's identity provider checked for
// this gateway's audience), the people and groups those tokens name, and the rules that say
// which servers and tools each of them may see and call.
//
// A [Policy] is read from an access file (YAML, [Load]):
//
//	resource: https://mcp.example.com/mcp    # the gateway's URL: the audience of its tokens
//	issuer: https://login.example.com        # the team's identity provider
//	scopes: [mcp]                            # every token must carry these
//	introspection:                           # RFC 7662 (else the issuer's JWKS: JWT access tokens)
//	  clientId: harness-gateway
//	  clientSecret: ${secret:gateway-introspection}
//	groups:                                  # memberships besides the token's groups claim
//	  platform: [alice]
//	rules:
//	  - who: ["*"]
//	    allow: [demo]                        # every tool, resource and prompt of the server demo
//	  - who: [group:platform]
//	    allow: ["github/*"]                  # every tool of github
//	    deny: [github/delete_repository]
//
// A rule applies to a person when its who names them (their token's subject), one of their
// groups ("group:NAME") or everyone ("*"). Across the rules that apply, a deny wins over an
// allow; what no rule allows is refused (otherwise: deny, the default, or allow). A pattern is a server's
// name (all of it: its tools, resources and prompts) or server/tool, with path.Match globs;
// the tools of no MCP server are "harness/<name>".
//
// A Policy is immutable and safe for concurrent use.
package access

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"os"
	"path"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/secrets"
)

// Builtin is the server name of the tools that belong to no MCP server, in patterns.
const Builtin = "harness"

// Config is the access file. Its keys are those of the json tags.
type Config struct {
	// Resource is the gateway's canonical URL (https://host/mcp): the audience every token
	// must name (RFC 8707), and the resource of its protected-resource metadata.
	Resource string `json:"resource"`
	// Issuer is the authorization server of the team's identity provider.
	Issuer string `json:"issuer"`
	// Scopes must all be granted to a token.
	Scopes []string `json:"scopes,omitempty"`
	// ScopesSupported is the metadata's scopes_supported (default: Scopes).
	ScopesSupported []string `json:"scopesSupported,omitempty"`
	// Introspection verifies tokens at the issuer's introspection endpoint (RFC 7662) with
	// this client; without it, tokens must be JWTs signed with a key of the issuer's JWKS.
	Introspection *Introspection `json:"introspection,omitempty"`
	// UserClaim names the claim that identifies a person (default "sub"); GroupsClaim the
	// claim that lists their groups (default "groups").
	UserClaim   string `json:"userClaim,omitempty"`
	GroupsClaim string `json:"groupsClaim,omitempty"`
	// Groups are memberships by group name, besides those of the token.
	Groups map[string][]string `json:"groups,omitempty"`
	// Rules say what each person may see and call.
	Rules []Rule `json:"rules,omitempty"`
	// Otherwise is what happens to what no rule allows: "deny" (the default) or "allow".
	Otherwise string `json:"otherwise,omitempty"`
	// Personal are the hosted servers each person signs in to with their own account
	// (`harness mcp login NAME --gateway URL`): calls of their tools use the caller's own
	// credentials, which the gateway keeps encrypted (AES-256-GCM with Key).
	Personal *Personal `json:"personal,omitempty"`
}

// Personal configures the people's own logins to hosted servers.
type Personal struct {
	// Key encrypts the credentials: 32 bytes, base64 (standard encoding); a ${secret:NAME}
	// reference. Changing it makes everyone sign in again.
	Key string `json:"key"`
	// Servers are the hosted servers, by the name their tools are listed under
	// (mcp__<name>__<tool>).
	Servers map[string]PersonalServer `json:"servers"`
}

// PersonalServer is one hosted MCP server people sign in to.
type PersonalServer struct {
	// URL is its Streamable HTTP endpoint.
	URL string `json:"url"`
	// ClientID and ClientSecret are a client registered with its authorization server
	// (optional: most hosted servers register clients dynamically). The secret may be a
	// reference.
	ClientID     string `json:"clientId,omitempty"`
	ClientSecret string `json:"clientSecret,omitempty"`
	// Scopes, when set, are asked for instead of the server's.
	Scopes []string `json:"scopes,omitempty"`
}

// Introspection is the client the gateway authenticates as at the introspection endpoint.
type Introspection struct {
	// Endpoint is the introspection endpoint (default: the issuer's metadata).
	Endpoint string `json:"endpoint,omitempty"`
	// ClientID and ClientSecret authenticate the gateway (client_secret_basic). The secret
	// may be a ${secret:NAME} or ${VAR} reference.
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret"`
}

// Rule is one rule of the access file.
type Rule struct {
	// Who are the people ("alice"), groups ("group:eng") or everyone ("*") it applies to.
	Who []string `json:"who"`
	// Allow and Deny are server names or server/tool patterns (path.Match).
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// Default implements ctx.Defaulter.
func (c *Config) Default() {
	c.UserClaim, c.GroupsClaim, c.Otherwise = "sub", "groups", "deny"
}

// Validate implements ctx.Validator.
func (c Config) Validate() error {
	var p ctx.Problems
	p.Require("resource", c.Resource, "the gateway's URL (https://host/mcp), the audience of its tokens")
	p.Require("issuer", c.Issuer, "the identity provider's issuer URL")
	if c.Otherwise != "deny" && c.Otherwise != "allow" {
		p.Add("otherwise", "must be deny or allow, got %q", c.Otherwise)
	}
	if in := c.Introspection; in != nil {
		p.Require("introspection.clientId", in.ClientID, "the gateway's client at the introspection endpoint")
		p.Require("introspection.clientSecret", in.ClientSecret, "its secret (a ${secret:NAME} reference)")
	}
	if pe := c.Personal; pe != nil {
		p.Require("personal.key", pe.Key, "32 random bytes, base64: a ${secret:NAME} reference")
		if len(pe.Servers) == 0 {
			p.Add("personal.servers", "names no server")
		}
		for name, s := range pe.Servers {
			if _, err := url.Parse(s.URL); err != nil || !strings.HasPrefix(s.URL, "http") {
				p.Add("personal.servers."+name+".url", "must be the server's http(s) URL, got %q", s.URL)
			}
		}
	}
	for i, r := range c.Rules {
		key := fmt.Sprintf("rules[%d]", i)
		if len(r.Who) == 0 {
			p.Add(key+".who", "names nobody: give people, group:NAME or *")
		}
		if len(r.Allow)+len(r.Deny) == 0 {
			p.Add(key, "allows and denies nothing: give allow or deny")
		}
		for j, pat := range slices.Concat(r.Allow, r.Deny) {
			if _, err := path.Match(pat, ""); err != nil || pat == "" || strings.Count(pat, "/") > 1 {
				p.Add(fmt.Sprintf("%s.pattern[%d]", key, j), "%q is not a server or server/tool pattern", pat)
			}
		}
	}
	return p.Err()
}

// Load reads the access file at path: YAML, decoded strictly (an unknown key, or a value of
// the wrong kind, is an error naming the file and the key), its references (${VAR},
// ${secret:NAME}) expanded by resolve (nil: the environment and the default credentials
// file).
func Load(file string, resolve *secrets.Resolver) (*Policy, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("access file: %w", err)
	}
	var raw any
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("access file %s: %w", file, err)
	}
	if raw == nil {
		raw = map[string]any{}
	}
	cfg, err := ctx.Decode[Config](raw)
	if err != nil {
		return nil, fmt.Errorf("access file %s: %w", file, err)
	}
	if resolve == nil {
		resolve = &secrets.Resolver{Secrets: secrets.DefaultCredentials}
	}
	if in := cfg.Introspection; in != nil {
		if in.ClientSecret, err = resolve.Expand(in.ClientSecret); err != nil {
			return nil, fmt.Errorf("access file %s: introspection.clientSecret: %w", file, err)
		}
	}
	if pe := cfg.Personal; pe != nil {
		if pe.Key, err = resolve.Expand(pe.Key); err != nil {
			return nil, fmt.Errorf("access file %s: personal.key: %w", file, err)
		}
		if k, err := base64.StdEncoding.DecodeString(pe.Key); err != nil || len(k) != 32 {
			return nil, fmt.Errorf("access file %s: personal.key: want 32 bytes in base64 (openssl rand -base64 32)", file)
		}
		for name, s := range pe.Servers {
			if s.ClientSecret, err = resolve.Expand(s.ClientSecret); err != nil {
				return nil, fmt.Errorf("access file %s: personal.servers.%s.clientSecret: %w", file, name, err)
			}
			pe.Servers[name] = s
		}
	}
	return New(cfg), nil
}

// Policy is a compiled access file. It is immutable and safe for concurrent use.
type Policy struct {
	cfg      Config
	memberOf map[string][]string // person → groups, from Config.Groups
}

// New compiles a validated configuration.
func New(cfg Config) *Policy {
	p := &Policy{cfg: cfg, memberOf: map[string][]string{}}
	for g, people := range cfg.Groups {
		for _, who := range people {
			p.memberOf[who] = append(p.memberOf[who], g)
		}
	}
	for who := range p.memberOf {
		slices.Sort(p.memberOf[who])
	}
	return p
}

// Config returns the configuration the policy was made from.
func (p *Policy) Config() Config { return p.cfg }

// Person is one signed-in person: the subject of their token and their groups (the token's
// and the access file's). It is a plain value.
type Person struct {
	ID     string   `json:"id"`
	Groups []string `json:"groups,omitempty"`
}

// String names the person.
func (p Person) String() string { return p.ID }

// personKey carries the Person of a call in a context.
type personKey struct{}

// WithPerson returns cx carrying p: the person a call is made for.
func WithPerson(cx context.Context, p Person) context.Context {
	return context.WithValue(cx, personKey{}, p)
}

// PersonFrom returns the person cx carries, if any.
func PersonFrom(cx context.Context) (Person, bool) {
	p, ok := cx.Value(personKey{}).(Person)
	return p, ok
}

// applies reports whether r applies to who.
func (r Rule) applies(who Person) bool {
	for _, w := range r.Who {
		switch {
		case w == "*" || w == who.ID:
			return true
		case strings.HasPrefix(w, "group:") && slices.Contains(who.Groups, w[len("group:"):]):
			return true
		}
	}
	return false
}

// matches reports whether pattern names server's tool (tool "" asks about the server as a
// whole: its resources and prompts, and whether it is shown at all).
func matches(pattern, server, tool string) bool {
	ps, pt, hasTool := strings.Cut(pattern, "/")
	if ok, _ := path.Match(ps, server); !ok {
		return false
	}
	if !hasTool || tool == "" {
		// A whole-server pattern covers its tools; a tool pattern shows its server.
		return !hasTool || tool == ""
	}
	ok, _ := path.Match(pt, tool)
	return ok
}

// Decision is the policy's answer, a plain value.
type Decision struct {
	Allowed bool
	// Reason says why a refusal was made, for the person refused.
	Reason string
}

// MayCall decides whether who may call server's tool (server Builtin for the tools of no
// MCP server). A deny wins over an allow; what no rule allows follows Otherwise.
func (p *Policy) MayCall(who Person, server, tool string) Decision {
	call := func(pat string) bool { return matches(pat, server, tool) }
	switch ok, deny := p.decide(who, call, call); {
	case deny != "":
		return Decision{Reason: fmt.Sprintf("%s may not call %s/%s (the gateway's access rules deny %s)", who.ID, server, tool, deny)}
	case !ok:
		return Decision{Reason: fmt.Sprintf("%s may not call %s/%s (no access rule allows it)", who.ID, server, tool)}
	}
	return Decision{Allowed: true}
}

// MaySee reports whether who is shown server (and its resources and prompts): a rule
// allows the server, or one of its tools, and no rule denies the whole server.
func (p *Policy) MaySee(who Person, server string) bool {
	ok, deny := p.decide(who, wholeServer(server), func(pat string) bool { return matches(pat, server, "") })
	return ok && deny == ""
}

// MayUseServer reports whether who may read server's resources and get its prompts: the
// whole server is allowed (not only some of its tools) and not denied.
func (p *Policy) MayUseServer(who Person, server string) Decision {
	switch ok, deny := p.decide(who, wholeServer(server), wholeServer(server)); {
	case deny != "":
		return Decision{Reason: fmt.Sprintf("%s may not use server %s (the gateway's access rules deny %s)", who.ID, server, deny)}
	case !ok:
		return Decision{Reason: fmt.Sprintf("%s may not use server %s (no access rule allows it)", who.ID, server)}
	}
	return Decision{Allowed: true}
}

// decide applies the rules that apply to who: the first of their deny patterns that denies
// matches is returned (a deny wins); otherwise ok says whether one of their allow patterns
// that allows matches, or what no rule allows is allowed (Otherwise).
func (p *Policy) decide(who Person, denies, allows func(pattern string) bool) (ok bool, deny string) {
	for _, r := range p.cfg.Rules {
		if !r.applies(who) {
			continue
		}
		for _, pat := range r.Deny {
			if denies(pat) {
				return false, pat
			}
		}
		for _, pat := range r.Allow {
			if allows(pat) {
				ok = true
			}
		}
	}
	return ok || p.cfg.Otherwise == "allow", ""
}

// wholeServer returns whether a pattern names the whole of server (not only some of its
// tools).
func wholeServer(server string) func(pattern string) bool {
	return func(pat string) bool { return !strings.Contains(pat, "/") && matches(pat, server, "") }
}

// withGroups returns who with the access file's groups added.
func (p *Policy) withGroups(who Person) Person {
	extra := p.memberOf[who.ID]
	if len(extra) == 0 {
		return who
	}
	groups := slices.Clone(who.Groups)
	for _, g := range extra {
		if !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
	}
	slices.Sort(groups)
	who.Groups = groups
	return who
}

// PersonalKey returns the key that encrypts the people's credentials (nil without
// personal servers).
func (p *Policy) PersonalKey() []byte {
	if p.cfg.Personal == nil {
		return nil
	}
	k, _ := base64.StdEncoding.DecodeString(p.cfg.Personal.Key)
	return k
}
