package remote_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/remote"
)

func TestConfigDefaults(t *testing.T) {
	v, err := remote.Plugin.DecodeConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := v.(remote.Config)
	if cfg.Addr != remote.DefaultAddr || cfg.MaxBodyBytes != remote.DefaultMaxBodyBytes || cfg.TokenFile != "" || cfg.EndpointFile != "" {
		t.Fatalf("defaults %+v", cfg)
	}
	tok, err := remote.DefaultTokenFile()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no user config dir (CI is set: this test must run, not skip): %v", err)
		}
		t.Skipf("no user config dir: %v", err)
	}
	if filepath.Base(tok) != "remote.token" || filepath.Base(filepath.Dir(tok)) != "harness" {
		t.Fatalf("default token file %s", tok)
	}
	ep, err := remote.DefaultEndpointFile()
	if err != nil || ep != filepath.Join(filepath.Dir(tok), "remote.endpoint.json") {
		t.Fatalf("default endpoint file %s %v", ep, err)
	}
	if got := remote.EndpointFileFor("/run/h/api"); got != "/run/h/api.endpoint.json" {
		t.Fatalf("EndpointFileFor without .token: %s", got)
	}
}

func TestConfigValidation(t *testing.T) {
	abs := filepath.Join(t.TempDir(), "remote.token")
	for _, addr := range []string{"127.0.0.1:0", "127.0.0.1:8080", "127.1.2.3:0", "localhost:0", "LocalHost:9", "[::1]:0", "[::ffff:127.0.0.1]:0"} {
		if _, err := remote.Plugin.DecodeConfig(map[string]any{"addr": addr}); err != nil {
			t.Errorf("addr %q refused: %v", addr, err)
		}
	}
	// Not a loopback host and port: the error names the key and the value given.
	for _, addr := range []string{":8080", "192.168.1.10:80", "8.8.8.8:53", "example.com:80", "localhost.example.com:80", "[fe80::1%lo]:0", "127.0.0.1", "127.0.0.1:http", "127.0.0.1:70000", ""} {
		if _, err := remote.Plugin.DecodeConfig(map[string]any{"addr": addr}); err == nil || !strings.Contains(err.Error(), `key "addr"`) || !strings.Contains(err.Error(), strconv.Quote(addr)) {
			t.Errorf("addr %q: error %v, want one naming the key and the value", addr, err)
		}
	}
	for _, tc := range []struct {
		cfg  map[string]any
		want string
	}{
		{map[string]any{"addr": "0.0.0.0:0"}, `key "addr": got "0.0.0.0:0"`},
		{map[string]any{"addr": "[::]:0"}, `key "addr": got "[::]:0"`},
		{map[string]any{"tokenFile": "relative/remote.token"}, "tokenFile"},
		{map[string]any{"endpointFile": "ep.json"}, "endpointFile"},
		{map[string]any{"tokenFile": abs, "endpointFile": abs}, "endpointFile"},
		{map[string]any{"maxBodyBytes": 0}, "maxBodyBytes"},
		{map[string]any{"adress": "127.0.0.1:0"}, "adress"},
		{map[string]any{"addr": 8080}, "addr"},
	} {
		_, err := remote.Plugin.DecodeConfig(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("config %v: error %v, want one naming %s", tc.cfg, err, tc.want)
		}
	}
	if _, err := remote.Plugin.DecodeConfig(remote.Config{Addr: "0.0.0.0:1", MaxBodyBytes: 1}); err == nil {
		t.Error("a typed config with a public addr was accepted")
	}
}

// Beyond the loopback only with allowRemote, and then only IP literals.
func TestConfigAllowRemote(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "[::]:7100", "192.168.1.10:80", "[2001:db8::1]:0", "127.0.0.1:0", "localhost:0"} {
		if _, err := remote.Plugin.DecodeConfig(map[string]any{"addr": addr, "allowRemote": true}); err != nil {
			t.Errorf("addr %q with allowRemote refused: %v", addr, err)
		}
	}
	_, err := remote.Plugin.DecodeConfig(map[string]any{"addr": "0.0.0.0:7100"})
	if err == nil || !strings.Contains(err.Error(), `key "addr"`) || !strings.Contains(err.Error(), "allowRemote") {
		t.Errorf("a public addr without allowRemote: %v, want an error naming addr and allowRemote", err)
	}
	for _, tc := range []struct {
		cfg  map[string]any
		want string
	}{
		{map[string]any{"addr": "example.com:80", "allowRemote": true}, "not a name"},
		{map[string]any{"addr": ":80", "allowRemote": true}, "not a name"},
		{map[string]any{"addr": "[fe80::1%eth0]:80", "allowRemote": true}, "addr"},
		{map[string]any{"addr": "0.0.0.0", "allowRemote": true}, "addr"},
		{map[string]any{"allowedHosts": []any{"devbox.lan"}}, `key "allowedHosts": needs allowRemote`},
		{map[string]any{"addr": "0.0.0.0:0", "allowRemote": true, "allowedHosts": []any{"devbox.lan:80"}}, `allowedHosts[0]`},
		{map[string]any{"addr": "0.0.0.0:0", "allowRemote": true, "allowedHosts": []any{"ok.lan", "10.0.0.1"}}, `allowedHosts[1]`},
		{map[string]any{"addr": "0.0.0.0:0", "allowRemote": true, "allowedHosts": []any{"*.lan"}}, `allowedHosts[0]`},
	} {
		_, err := remote.Plugin.DecodeConfig(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("config %v: error %v, want one with %s", tc.cfg, err, tc.want)
		}
	}
}

func TestMountRefusesPublicAddr(t *testing.T) {
	root := ctxtest.New(t)
	s := ctxtest.Mount(t, root, remote.Plugin, map[string]any{"addr": "0.0.0.0:0", "tokenFile": filepath.Join(t.TempDir(), "remote.token")})
	ctxtest.Settle(t, root)
	ctxtest.RequireState(t, s, ctx.Failed)
	if !strings.Contains(s.Err().Error(), "loopback") {
		t.Fatalf("error %v does not explain the refusal", s.Err())
	}
}
