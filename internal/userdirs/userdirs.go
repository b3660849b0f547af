// Package userdirs is the one place the user's directories are found: configuration, state,
// cache and home, each by the conventions of the operating system, read from an environment
// given as a lookup function. The binary passes the environment a command was invoked with,
// a plugin the process's, a test a map of its own; nothing here reads or changes the process
// environment unless asked to.
//
// On Linux and the other Unix systems the XDG Base Directory rule applies: $XDG_CONFIG_HOME,
// $XDG_STATE_HOME or $XDG_CACHE_HOME when it holds an absolute path (a relative one is
// ignored, as the specification says), else ~/.config, ~/.local/state or ~/.cache. macOS,
// Windows and Plan 9 have their own places (see each method). The harness keeps its files in
// a "harness" directory inside them.
package userdirs

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Env is an environment the user's directories are read from. The zero value is the
// process's environment on the system the binary runs on.
//
// An Env is a value: its methods are safe for concurrent use when Getenv is (os.Getenv is).
type Env struct {
	// Getenv returns a variable's value, "" when it is not set; nil means os.Getenv.
	Getenv func(key string) string
	// GOOS is the operating system whose conventions apply, as runtime.GOOS names it;
	// "" means runtime.GOOS. Tests set it to check another system's rule.
	GOOS string
}

// ErrNotSet is matched (errors.Is) by the error of a directory the environment does not
// name; the error is a [*NotSetError].
var ErrNotSet = errors.New("user directory not set")

// NotSetError says that a user directory could not be found: none of the variables it is
// derived from is set (an XDG variable holding a relative path counts as not set). It is a
// value, safe to share.
type NotSetError struct {
	// Vars are the variables read, in the platform's notation ("$HOME", "%AppData%").
	Vars []string
}

func (e *NotSetError) Error() string {
	if len(e.Vars) == 1 {
		return e.Vars[0] + " is not set"
	}
	return "neither " + strings.Join(e.Vars, " nor ") + " is set"
}

// Is reports whether target is [ErrNotSet].
func (e *NotSetError) Is(target error) bool { return target == ErrNotSet }

// layout says where one of the user's directories is on each system: the variable that
// names it on Windows, its path under $HOME on Darwin and under $home on Plan 9 (empty: Plan
// 9 follows the Unix rule), else the XDG variable and its path under $HOME.
type layout struct {
	windows, darwin, plan9, xdg, dot string
}

var (
	config = layout{windows: "AppData", darwin: "Library/Application Support", plan9: "lib",
		xdg: "XDG_CONFIG_HOME", dot: ".config"}
	cache = layout{windows: "LocalAppData", darwin: "Library/Caches", plan9: "lib/cache",
		xdg: "XDG_CACHE_HOME", dot: ".cache"}
	state = layout{windows: "LocalAppData", darwin: "Library/Application Support",
		xdg: "XDG_STATE_HOME", dot: ".local/state"}
)

// Config returns the user's configuration directory: on Unix $XDG_CONFIG_HOME when
// absolute, else ~/.config; on macOS ~/Library/Application Support; on Windows %AppData%;
// on Plan 9 $home/lib. The answer agrees with os.UserConfigDir except that a relative
// $XDG_CONFIG_HOME is ignored rather than an error.
func (e Env) Config() (string, error) { return e.dir(config) }

// Cache returns the user's cache directory: on Unix $XDG_CACHE_HOME when absolute, else
// ~/.cache; on macOS ~/Library/Caches; on Windows %LocalAppData%; on Plan 9
// $home/lib/cache. The answer agrees with os.UserCacheDir except that a relative
// $XDG_CACHE_HOME is ignored rather than an error.
func (e Env) Cache() (string, error) { return e.dir(cache) }

// State returns the user's state directory (logs and history worth keeping, not
// configuration): on Unix and Plan 9 $XDG_STATE_HOME when absolute, else ~/.local/state;
// on macOS ~/Library/Application Support; on Windows %LocalAppData%.
func (e Env) State() (string, error) { return e.dir(state) }

// XDGState returns the XDG state directory on every system, macOS and Windows included:
// $XDG_STATE_HOME when absolute, else .local/state in [Env.Home]. It is where the
// credentials file has always been (docs/authorization.md), so that moving between
// systems' conventions never loses a login.
func (e Env) XDGState() (string, error) {
	if d := e.get("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return d, nil
	}
	home, err := e.Home()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "state"), nil
}

// Home returns the user's home directory as os.UserHomeDir finds it: $HOME (on Windows
// %USERPROFILE%, on Plan 9 $home); when it is not set, "/sdcard" on Android and "/" on iOS.
func (e Env) Home() (string, error) {
	v := "HOME"
	switch e.goos() {
	case "windows":
		v = "USERPROFILE"
	case "plan9":
		v = "home"
	}
	if home := e.get(v); home != "" {
		return home, nil
	}
	switch e.goos() {
	case "android":
		return "/sdcard", nil
	case "ios":
		return "/", nil
	}
	return "", &NotSetError{Vars: []string{e.notation(v)}}
}

// dir is the directory of l in e.
func (e Env) dir(l layout) (string, error) {
	var dir string
	var vars []string
	switch goos := e.goos(); {
	case goos == "windows":
		dir, vars = e.get(l.windows), []string{l.windows}
	case goos == "darwin" || goos == "ios":
		dir, vars = e.under("HOME", l.darwin), []string{"HOME"}
	case goos == "plan9" && l.plan9 != "":
		dir, vars = e.under("home", l.plan9), []string{"home"}
	default:
		dir, vars = e.get(l.xdg), []string{l.xdg, "HOME"}
		if !filepath.IsAbs(dir) {
			dir = e.under("HOME", l.dot)
		}
	}
	if dir == "" {
		for i, v := range vars {
			vars[i] = e.notation(v)
		}
		return "", &NotSetError{Vars: vars}
	}
	return dir, nil
}

// under is rel (slash-separated) under the directory variable v names, "" when v is not set.
func (e Env) under(v, rel string) string {
	base := e.get(v)
	if base == "" {
		return ""
	}
	return filepath.Join(base, filepath.FromSlash(rel))
}

// notation writes variable v as the platform's shell does.
func (e Env) notation(v string) string {
	if e.goos() == "windows" {
		return "%" + v + "%"
	}
	return "$" + v
}

func (e Env) get(k string) string {
	if e.Getenv == nil {
		return os.Getenv(k)
	}
	return e.Getenv(k)
}

func (e Env) goos() string {
	if e.GOOS == "" {
		return runtime.GOOS
	}
	return e.GOOS
}
