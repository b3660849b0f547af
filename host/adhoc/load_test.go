package adhoc_test

import (
	"errors"
	"testing"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/host/adhoc"
)

// Load adds the command line's servers to the profile and checks them; what the flags get
// wrong is a *FlagError, what the profile gets wrong is not.
func TestLoad(t *testing.T) {
	o := adhoc.LoadOptions{Catalog: host.Catalog(), Flags: adhoc.Flags{Stdio: []string{"extra=/bin/true"}}, ConfigDir: t.TempDir(), Environ: []string{}, Self: "/bin/true"}
	p, err := adhoc.Load(o)
	if err != nil {
		t.Fatal(err)
	}
	if last := p.Rows[len(p.Rows)-1]; last.Use != host.UseClient || last.Config["serverName"] != "extra" {
		t.Fatalf("the --stdio row: %+v", last)
	}
	isFlag := func(err error) bool { _, ok := errors.AsType[*adhoc.FlagError](err); return ok }
	bad := o
	bad.Flags = adhoc.Flags{Stdio: []string{"no-command"}}
	if _, err := adhoc.Load(bad); !isFlag(err) {
		t.Errorf("a --stdio without a command line: %v, want a *FlagError", err)
	}
	bad = o
	bad.Name = "no-such-profile"
	if _, err := adhoc.Load(bad); err == nil || isFlag(err) {
		t.Errorf("an unknown profile: %v, want the profile's error", err)
	}
}
