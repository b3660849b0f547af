package userdirs_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cordisgo/harness/internal/userdirs"
)

// env is a test environment: a map read as Getenv reads variables.
func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestDirs(t *testing.T) {
	j := filepath.Join
	xdg := env("HOME", "/home/u", "XDG_CONFIG_HOME", "/cfg", "XDG_CACHE_HOME", "/cache", "XDG_STATE_HOME", "/state",
		"AppData", `C:\Users\u\AppData\Roaming`, "LocalAppData", `C:\Users\u\AppData\Local`, "USERPROFILE", `C:\Users\u`, "home", "/usr/u")
	relative := env("HOME", "/home/u", "XDG_CONFIG_HOME", "cfg", "XDG_CACHE_HOME", "./cache", "XDG_STATE_HOME", "state")
	homeOnly := env("HOME", "/home/u", "home", "/usr/u", "USERPROFILE", `C:\Users\u`)
	none := env()
	// want holds config, cache, state, XDG state and home; "!" followed by the error's text
	// is a NotSetError.
	for _, c := range []struct {
		name, goos string
		getenv     func(string) string
		want       [5]string
	}{
		{"linux XDG", "linux", xdg, [5]string{"/cfg", "/cache", "/state", "/state", "/home/u"}},
		{"linux relative XDG ignored", "linux", relative,
			[5]string{j("/home/u", ".config"), j("/home/u", ".cache"), j("/home/u", ".local", "state"), j("/home/u", ".local", "state"), "/home/u"}},
		{"linux HOME", "freebsd", homeOnly,
			[5]string{j("/home/u", ".config"), j("/home/u", ".cache"), j("/home/u", ".local", "state"), j("/home/u", ".local", "state"), "/home/u"}},
		{"linux nothing", "linux", none, [5]string{"!neither $XDG_CONFIG_HOME nor $HOME is set", "!neither $XDG_CACHE_HOME nor $HOME is set",
			"!neither $XDG_STATE_HOME nor $HOME is set", "!$HOME is not set", "!$HOME is not set"}},
		{"darwin ignores XDG but for XDGState", "darwin", xdg, [5]string{j("/home/u", "Library", "Application Support"),
			j("/home/u", "Library", "Caches"), j("/home/u", "Library", "Application Support"), "/state", "/home/u"}},
		{"darwin HOME", "darwin", homeOnly, [5]string{j("/home/u", "Library", "Application Support"),
			j("/home/u", "Library", "Caches"), j("/home/u", "Library", "Application Support"), j("/home/u", ".local", "state"), "/home/u"}},
		{"darwin nothing", "darwin", none, [5]string{"!$HOME is not set", "!$HOME is not set", "!$HOME is not set", "!$HOME is not set", "!$HOME is not set"}},
		{"ios nothing", "ios", none, [5]string{"!$HOME is not set", "!$HOME is not set", "!$HOME is not set", j("/", ".local", "state"), "/"}},
		{"android nothing", "android", none, [5]string{"!neither $XDG_CONFIG_HOME nor $HOME is set", "!neither $XDG_CACHE_HOME nor $HOME is set",
			"!neither $XDG_STATE_HOME nor $HOME is set", j("/sdcard", ".local", "state"), "/sdcard"}},
		{"windows", "windows", xdg, [5]string{`C:\Users\u\AppData\Roaming`, `C:\Users\u\AppData\Local`, `C:\Users\u\AppData\Local`, "/state", `C:\Users\u`}},
		{"windows home only", "windows", homeOnly, [5]string{"!%AppData% is not set", "!%LocalAppData% is not set", "!%LocalAppData% is not set",
			j(`C:\Users\u`, ".local", "state"), `C:\Users\u`}},
		{"plan9", "plan9", homeOnly, [5]string{j("/usr/u", "lib"), j("/usr/u", "lib", "cache"), j("/home/u", ".local", "state"),
			j("/usr/u", ".local", "state"), "/usr/u"}},
		{"plan9 nothing", "plan9", none, [5]string{"!$home is not set", "!$home is not set", "!neither $XDG_STATE_HOME nor $HOME is set",
			"!$home is not set", "!$home is not set"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := userdirs.Env{Getenv: c.getenv, GOOS: c.goos}
			for i, f := range []func() (string, error){e.Config, e.Cache, e.State, e.XDGState, e.Home} {
				got, err := f()
				if err != nil {
					var nse *userdirs.NotSetError
					if !errors.Is(err, userdirs.ErrNotSet) || !errors.As(err, &nse) {
						t.Errorf("%d: error %v is not a NotSetError", i, err)
					}
					got = "!" + err.Error()
				}
				if got != c.want[i] {
					t.Errorf("%d: got %q, want %q", i, got, c.want[i])
				}
			}
		})
	}
}

// TestZeroValue checks that the zero Env reads the process's environment.
func TestZeroValue(t *testing.T) {
	t.Setenv("HOME", "/home/zero")
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_STATE_HOME", "/zero/state")
	if got, err := (userdirs.Env{}).XDGState(); err != nil || got != "/zero/state" {
		t.Errorf("XDGState: %q, %v", got, err)
	}
	if got, err := (userdirs.Env{}).Home(); err != nil || got != "/home/zero" {
		t.Errorf("Home: %q, %v", got, err)
	}
	want, err := userdirs.Env{Getenv: env("HOME", "/home/zero")}.Config()
	if got, err2 := (userdirs.Env{}).Config(); err != nil || err2 != nil || got != want {
		t.Errorf("Config: %q, %v; want %q, %v", got, err2, want, err)
	}
}

// Example resolves the harness's configuration directory in a command's environment
// rather than the process's.
func Example() {
	invocation := map[string]string{"HOME": "/home/ada", "XDG_CONFIG_HOME": "/etc/ada"}
	e := userdirs.Env{Getenv: func(k string) string { return invocation[k] }, GOOS: "linux"}
	cfg, _ := e.Config()
	state, _ := e.State()
	fmt.Println(filepath.ToSlash(filepath.Join(cfg, "harness")))
	fmt.Println(filepath.ToSlash(filepath.Join(state, "harness", "sessions")))

	_, err := userdirs.Env{Getenv: func(string) string { return "" }, GOOS: "linux"}.Cache()
	fmt.Println(err)
	// Output:
	// /etc/ada/harness
	// /home/ada/.local/state/harness/sessions
	// neither $XDG_CACHE_HOME nor $HOME is set
}
