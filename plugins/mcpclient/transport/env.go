package transport

import (
	"maps"
	"slices"
	"strings"
)

// Environment inheritance modes for [Inherit.Mode].
const (
	// InheritScrubbed (the default) passes the parent's whole environment except the
	// names that look like credentials (see [Scrubbed]): KUBECONFIG, HTTPS_PROXY,
	// AWS_PROFILE or a server's data path reach the server, API keys and tokens do not.
	InheritScrubbed = "scrubbed"
	// InheritMinimal passes an allow-list of harmless variables (PATH, HOME,
	// locale, temp dir, …; see [MinimalEnvNames]).
	InheritMinimal = "minimal"
	// InheritAll passes the parent's whole environment. It leaks every
	// secret the parent holds; use only for trusted servers.
	InheritAll = "all"
	// InheritNone passes nothing but [Inherit.Extra] and the explicit variables.
	InheritNone = "none"
)

// Inherit decides which variables of the parent's environment a stdio child inherits
// before its explicit variables are applied on top (the client's inheritEnv key). It is a
// plain value.
type Inherit struct {
	// Mode is InheritScrubbed ("" too), InheritMinimal, InheritAll or InheritNone.
	Mode string
	// Extra names further variables passed through in any mode when the parent has them.
	Extra []string
}

// unixMinimalEnv is what a stdio server needs to find programs, its home
// and temp directories, and to pick a locale and time zone. Nothing here
// is a credential; proxies, NODE_* and tokens must be named explicitly.
var unixMinimalEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM",
	"LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ",
}

// windowsMinimalEnv is the Windows equivalent: without SYSTEMROOT and
// friends many programs (and Go's own net package) fail to start.
var windowsMinimalEnv = []string{
	"PATH", "PATHEXT", "SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC",
	"TEMP", "TMP", "USERPROFILE", "USERNAME", "USERDOMAIN", "HOMEDRIVE", "HOMEPATH",
	"APPDATA", "LOCALAPPDATA", "PROGRAMDATA", "PROGRAMFILES", "PROGRAMFILES(X86)",
	"COMMONPROGRAMFILES", "NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE", "OS", "TZ",
}

// MinimalEnvNames returns the variables a stdio server inherits in the
// "minimal" mode ([InheritMinimal]) on the given GOOS (runtime.GOOS in
// production). The result is a fresh slice.
func MinimalEnvNames(goos string) []string {
	if goos == "windows" {
		return slices.Clone(windowsMinimalEnv)
	}
	return slices.Clone(unixMinimalEnv)
}

// scrubbedWords are the substrings that make a variable's name credential-shaped, compared
// in upper case; scrubbedPrefix the prefix of the harness's own variables.
var scrubbedWords = []string{"KEY", "PASSWORD", "SECRET", "TOKEN"}

const scrubbedPrefix = "HARNESS_"

// Scrubbed reports whether the "scrubbed" mode ([InheritScrubbed]) keeps the variable called name
// from a stdio server: its name contains KEY, PASSWORD, SECRET or TOKEN in any case
// (GITHUB_TOKEN, OPENAI_API_KEY, db_password, MonkeyPath), or starts with HARNESS_ in any
// case (the harness's own settings and overlays).
func Scrubbed(name string) bool {
	up := strings.ToUpper(name)
	if strings.HasPrefix(up, scrubbedPrefix) {
		return true
	}
	for _, w := range scrubbedWords {
		if strings.Contains(up, w) {
			return true
		}
	}
	return false
}

// buildEnv returns the environment of a stdio child: the variables of
// parent (an os.Environ()-style slice, later entries winning) admitted by
// inherit, then explicit on top. Names compare case-insensitively on
// Windows, exactly elsewhere. The result is sorted by name so it is
// deterministic; malformed parent entries (no '=') are skipped.
func buildEnv(parent []string, goos string, inherit Inherit, explicit map[string]string) []string {
	fold := func(name string) string { return name }
	if goos == "windows" {
		fold = strings.ToUpper
	}
	admit := func(string) bool { return true }
	switch inherit.Mode {
	case InheritAll:
	case InheritScrubbed:
		extra := make(map[string]bool)
		for _, name := range inherit.Extra {
			extra[fold(name)] = true
		}
		admit = func(key string) bool { return extra[key] || !Scrubbed(key) }
	default:
		allowed := make(map[string]bool)
		if inherit.Mode != InheritNone {
			for _, name := range MinimalEnvNames(goos) {
				allowed[fold(name)] = true
			}
		}
		for _, name := range inherit.Extra {
			allowed[fold(name)] = true
		}
		admit = func(key string) bool { return allowed[key] }
	}

	type entry struct{ name, value string }
	vars := make(map[string]entry)
	for _, kv := range parent {
		name, value, ok := splitEnv(kv, goos)
		if !ok {
			continue
		}
		if key := fold(name); admit(key) {
			vars[key] = entry{name, value}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(explicit)) { // sorted: deterministic if names fold alike
		vars[fold(name)] = entry{name, explicit[name]}
	}

	keys := make([]string, 0, len(vars))
	for k := range vars {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	env := make([]string, 0, len(keys))
	for _, k := range keys {
		env = append(env, vars[k].name+"="+vars[k].value)
	}
	return env
}

// splitEnv splits "NAME=value". On Windows a leading '=' belongs to the
// name (cmd.exe keeps per-drive directories as "=C:=C:\dir").
func splitEnv(kv, goos string) (name, value string, ok bool) {
	from := 0
	if goos == "windows" && strings.HasPrefix(kv, "=") {
		from = 1
	}
	i := strings.IndexByte(kv[from:], '=')
	if i < 0 {
		return "", "", false
	}
	i += from
	if i == 0 {
		return "", "", false
	}
	return kv[:i], kv[i+1:], true
}
