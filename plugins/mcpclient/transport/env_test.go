package transport

import (
	"slices"
	"testing"
)

func TestBuildEnv(t *testing.T) {
	parent := []string{
		"PATH=/usr/bin", "HOME=/home/u", "LANG=C.UTF-8",
		"GITHUB_TOKEN=ghp_secret", "AWS_SECRET_ACCESS_KEY=aws", "NODE_EXTRA_CA_CERTS=/ca.pem",
		"HTTPS_PROXY=http://proxy", "FOO=parent", "malformed", "HOME=/home/later",
	}
	tests := []struct {
		name     string
		goos     string
		parent   []string
		inherit  Inherit
		explicit map[string]string
		want     []string
	}{
		{name: "scrubbed default", goos: "linux", parent: append(slices.Clone(parent), "KUBECONFIG=/k", "db_password=p", "MonkeyPath=/m",
			"harness_log=debug", "HARNESS_PLUGINS__X__ENABLED=false", "AWS_PROFILE=dev"), inherit: Inherit{Mode: InheritScrubbed},
			want: []string{"AWS_PROFILE=dev", "FOO=parent", "HOME=/home/later", "HTTPS_PROXY=http://proxy", "KUBECONFIG=/k", "LANG=C.UTF-8",
				"NODE_EXTRA_CA_CERTS=/ca.pem", "PATH=/usr/bin"}},
		{name: "scrubbed plus extra and explicit", goos: "linux", parent: []string{"GITHUB_TOKEN=ghp", "API_KEY=k", "X=1"},
			inherit: Inherit{Mode: InheritScrubbed, Extra: []string{"GITHUB_TOKEN"}}, explicit: map[string]string{"SECRET": "s"},
			want: []string{"GITHUB_TOKEN=ghp", "SECRET=s", "X=1"}},
		{name: "minimal", goos: "linux", parent: parent, inherit: Inherit{Mode: InheritMinimal},
			want: []string{"HOME=/home/later", "LANG=C.UTF-8", "PATH=/usr/bin"}},
		{name: "minimal plus extra", goos: "linux", parent: parent,
			inherit: Inherit{Mode: InheritMinimal, Extra: []string{"HTTPS_PROXY", "NOT_SET"}},
			want:    []string{"HOME=/home/later", "HTTPS_PROXY=http://proxy", "LANG=C.UTF-8", "PATH=/usr/bin"}},
		{name: "explicit wins and re-adds secrets", goos: "linux", parent: parent, inherit: Inherit{Mode: InheritMinimal},
			explicit: map[string]string{"PATH": "/opt/bin", "GITHUB_TOKEN": "explicit", "FOO": "child"},
			want:     []string{"FOO=child", "GITHUB_TOKEN=explicit", "HOME=/home/later", "LANG=C.UTF-8", "PATH=/opt/bin"}},
		{name: "none", goos: "linux", parent: parent, inherit: Inherit{Mode: InheritNone},
			explicit: map[string]string{"A": "1"}, want: []string{"A=1"}},
		{name: "none plus extra", goos: "linux", parent: parent, inherit: Inherit{Mode: InheritNone, Extra: []string{"FOO"}},
			want: []string{"FOO=parent"}},
		{name: "all", goos: "linux", parent: parent, inherit: Inherit{Mode: InheritAll},
			explicit: map[string]string{"FOO": "child"},
			want: []string{"AWS_SECRET_ACCESS_KEY=aws", "FOO=child", "GITHUB_TOKEN=ghp_secret", "HOME=/home/later",
				"HTTPS_PROXY=http://proxy", "LANG=C.UTF-8", "NODE_EXTRA_CA_CERTS=/ca.pem", "PATH=/usr/bin"}},
		{name: "case sensitive on unix", goos: "linux", parent: []string{"Path=/x", "home=/h"}, inherit: Inherit{Mode: InheritMinimal},
			want: []string{}},
		{name: "windows folds case and keeps spelling", goos: "windows",
			parent:   []string{"Path=C:\\Windows", "SystemRoot=C:\\Windows", "=C:=C:\\dir", "API_KEY=k"},
			inherit:  Inherit{Mode: InheritMinimal},
			explicit: map[string]string{"PATH": "C:\\bin"},
			want:     []string{"PATH=C:\\bin", "SystemRoot=C:\\Windows"}},
		{name: "windows drive entries with all", goos: "windows", parent: []string{"=C:=C:\\dir"}, inherit: Inherit{Mode: InheritAll},
			want: []string{"=C:=C:\\dir"}},
		{name: "nil parent", goos: "linux", inherit: Inherit{Mode: InheritMinimal}, explicit: map[string]string{"X": ""},
			want: []string{"X="}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := buildEnv(tt.parent, tt.goos, tt.inherit, tt.explicit)
			if !slices.Equal(got, tt.want) {
				t.Errorf("buildEnv =\n %q\nwant\n %q", got, tt.want)
			}
		})
	}
}

func TestMinimalEnvNames(t *testing.T) {
	for _, goos := range []string{"linux", "darwin", "freebsd", "windows"} {
		names := MinimalEnvNames(goos)
		if !slices.Contains(names, "PATH") {
			t.Errorf("%s: PATH missing", goos)
		}
		for _, leak := range []string{"NODE_EXTRA_CA_CERTS", "GITHUB_TOKEN", "HTTPS_PROXY", "SSH_AUTH_SOCK"} {
			if slices.Contains(names, leak) {
				t.Errorf("%s: %s must not be inherited by default", goos, leak)
			}
		}
		names[0] = "mutated"
		if MinimalEnvNames(goos)[0] == "mutated" {
			t.Errorf("%s: MinimalEnvNames shares its slice", goos)
		}
	}
}
