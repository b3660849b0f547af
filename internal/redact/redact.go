// Package redact is the module's one rule for showing configuration values that may be
// secrets: one marker ([Marker]), one test for secret-looking names ([SecretName]), and the
// reference-aware masking of values ([Value]) and URLs ([URL]) used by profile dumps, MCP
// server views, the client's logs and the CLI, and the lexer of the ${…} references
// ([Refs]) that package secrets parses.
//
// The rule: redaction hides values, not references. "${secret:evtoken}" and
// "Bearer ${GITHUB_TOKEN}" say where a value comes from and are shown as written; a literal
// token is replaced by the marker; a URL shows everything but its password and the values
// of query parameters with secret-looking names.
//
// Every function is pure and safe for concurrent use.
package redact

import "strings"

// Marker replaces a hidden value everywhere: in dumps, views, logs and scrubbed text.
const Marker = "[redacted]"

// secretWords are parts of names whose values are secrets (compared in lower case,
// ignoring '-' and '_').
var secretWords = []string{"token", "secret", "password", "passwd", "credential", "cookie", "session"}

// SecretName reports whether a key, variable, header or query parameter name looks like it
// holds a secret: it contains token, secret, password, passwd, credential, cookie, session,
// key (API_KEY, privateKey) or auth (Authorization, X-Auth-Token; not oauth or author),
// case-insensitively, ignoring '-' and '_'; a name that ends in file or dir names where a
// secret is kept (tokenFile, credentialsFile), not a secret. It errs on the side of hiding.
func SecretName(name string) bool {
	n := strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(name))
	if strings.HasSuffix(n, "file") || strings.HasSuffix(n, "dir") {
		return false // a location (tokenFile, credentialsFile), not the secret itself
	}
	if strings.Contains(n, "key") {
		return true
	}
	// auth, Authorization, X-Auth-Token, GH_AUTH — but not an oauth block or an author.
	if i := strings.Index(n, "auth"); i >= 0 && !strings.HasPrefix(n[i:], "author") || n == "authorization" {
		if !strings.HasPrefix(n, "oauth") {
			return true
		}
	}
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// minSecretWord is the length from which a literal word next to a reference is taken for a
// credential ("Bearer" is shown, "ghp_abcdef0123" is not).
const minSecretWord = 8

// Value returns s as it may be shown when it may be a secret: unchanged when it is empty or
// made of ${…} references with at most short literal words around them
// ("${secret:gh}", "Bearer ${GITHUB_TOKEN}"), [Marker] otherwise.
func Value(s string) string {
	if s == "" || IsReference(s) {
		return s
	}
	return Marker
}

// IsReference reports whether s holds a ${…} reference and no literal word of
// [minSecretWord] or more characters outside its references: the plain text of paths,
// hosts and key=value lists around references ("${HOME}/.config/memory.json",
// "https://${HOST}/api/v1") is shown, a long literal (a token) is not.
func IsReference(s string) bool {
	rest, found := stripRefs(s)
	if !found {
		return false
	}
	for _, w := range strings.FieldsFunc(rest, func(r rune) bool { return strings.ContainsRune(" :=,/.@?&;", r) }) {
		if len(w) >= minSecretWord {
			return false
		}
	}
	return true
}

// stripRefs removes the ${…} references of s (a "$${" escape is literal text) and reports
// whether there was one.
func stripRefs(s string) (string, bool) {
	var b strings.Builder
	found := false
	rest, _ := Refs(s, func(text string, ref bool) {
		if ref {
			found = true
			text = " "
		}
		b.WriteString(text)
	})
	b.WriteString(rest) // a "${" not closed is literal text
	return b.String(), found
}

// Refs is the lexer of the ${…} reference syntax (package secrets parses what it finds;
// [IsReference] reads it): it passes the pieces of s to fn in order, each run of literal
// text with ref false (a "$${" escape is the literal "${") and the body of each reference,
// between "${" and "}", with ref true. At a "${" without a closing "}" it stops and
// returns the rest of s from there, with ok false.
func Refs(s string, fn func(text string, ref bool)) (rest string, ok bool) {
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], "${")
		if j < 0 {
			fn(s[i:], false)
			break
		}
		j += i
		if j > i && s[j-1] == '$' { // "$${"
			if j-1 > i {
				fn(s[i:j-1], false)
			}
			fn("${", false)
			i = j + 2
			continue
		}
		if j > i {
			fn(s[i:j], false)
		}
		end := strings.IndexByte(s[j+2:], '}')
		if end < 0 {
			return s[j:], false
		}
		fn(s[j+2:j+2+end], true)
		i = j + 2 + end + 1
	}
	return "", true
}

// URL returns raw with its credentials hidden: the password of the user information and
// the values of query parameters with secret-looking names ([SecretName]) become [Marker],
// unless they are references. Anything else, a URL without credentials included, comes
// back as written; a string that is not a URL comes back unchanged.
func URL(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok || scheme == "" || strings.ContainsAny(scheme, " /") {
		return raw
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if at := strings.LastIndexByte(rest[:end], '@'); at >= 0 {
		if user, pass, hasPass := strings.Cut(rest[:at], ":"); hasPass && pass != "" && !IsReference(pass) {
			rest = user + ":" + Marker + rest[at:]
		}
	}
	base, query, ok := strings.Cut(rest, "?")
	if !ok {
		return scheme + "://" + rest
	}
	query, frag, hasFrag := strings.Cut(query, "#")
	params := strings.Split(query, "&")
	for i, p := range params {
		if name, v, ok := strings.Cut(p, "="); ok && v != "" && SecretName(name) && !IsReference(v) {
			params[i] = name + "=" + Marker
		}
	}
	out := scheme + "://" + base + "?" + strings.Join(params, "&")
	if hasFrag {
		out += "#" + frag
	}
	return out
}
