package mcpmanager

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/mcpclient"
)

// ownerPlugin registers one server for its lifetime and hands out the disposer.
func ownerPlugin(name string, cfg mcpclient.Config, out chan<- ctx.Disposer) ctx.PluginDef {
	return ctx.Define(ctx.Meta{Name: "owner-" + name, Inject: []ctx.Dependency{Key}}, func(c *ctx.Context, _ struct{}) error {
		d, err := Key.Use(c).Register(c, name, cfg)
		if err != nil {
			return err
		}
		if out != nil {
			out <- d
		}
		return nil
	})
}

func TestRegister(t *testing.T) {
	t.Parallel()
	settings := "servers:\n" + stdioEntry(t, "conf", "normal", "")
	h := newHost(t, hostOptions{settings: &settings})
	disposers := make(chan ctx.Disposer, 1)
	ctxtest.Mount(t, h.root, ownerPlugin("reg", stdioConfig(t, "normal"), disposers), nil)
	snap := h.waitStatus(StateConnected, "conf", "reg")
	if got := names(snap); !slices.Equal(got, []string{"conf", "reg"}) {
		t.Fatalf("list %v: configured, then registered", got)
	}
	v, _ := find(snap, "reg")
	if v.Source != SourceRegistered || v.Owner != "owner-reg" || !v.Enabled || !slices.Contains(v.Tools, "mcp__reg__echo") {
		t.Fatalf("reg: %s", dump(v))
	}

	// Names are unique across configured and registered servers.
	_, err := h.m.Register(h.root, "conf", stdioConfig(t, "normal"))
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "settings file") {
		t.Fatalf("configured name: %v", err)
	}
	_, err = h.m.Register(h.root, "reg", stdioConfig(t, "normal"))
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "owner-reg") {
		t.Fatalf("registered name: %v", err)
	}
	for name, cfg := range map[string]mcpclient.Config{
		"bad.name":  stdioConfig(t, "normal"),
		"nocommand": func() mcpclient.Config { c := stdioConfig(t, "normal"); c.Command = ""; return c }(),
		"badtmpl":   func() mcpclient.Config { c := stdioConfig(t, "normal"); c.Args = []string{"${"}; return c }(),
		"othername": func() mcpclient.Config { c := stdioConfig(t, "normal"); c.ServerName = "x"; return c }(),
	} {
		if _, err := h.m.Register(h.root, name, cfg); !errors.Is(err, ErrBadRequest) {
			t.Fatalf("%s: %v", name, err)
		}
	}

	// A settings entry that takes a registered name is shown failed; the registration keeps
	// its server.
	pid := h.whoami("reg")
	h.write(settings + stdioEntry(t, "reg", "normal", ""))
	h.waitSnap("conflicting settings entry", func(s Snapshot) bool {
		for _, v := range s.Servers {
			if v.Name == "reg" && v.Source == SourceSettings {
				return v.Status == StateFailed && strings.Contains(v.Error, "owner-reg")
			}
		}
		return false
	})
	if h.whoami("reg") != pid {
		t.Fatal("the registered server was replaced by a conflicting settings entry")
	}

	// The disposer returns once the server's tools are gone; it is idempotent. The settings
	// entry then takes the name over.
	d := <-disposers
	if err := d(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	if got, err := h.tryWhoami("reg"); err == nil && got == pid {
		t.Fatal("the registered server's tools outlived its disposer")
	}
	if err := d(ctxtest.Wait(t)); err != nil {
		t.Fatalf("second dispose: %v", err)
	}
	h.waitSnap("settings entry took the name", func(s Snapshot) bool {
		v, ok := find(s, "reg")
		return ok && v.Source == SourceSettings && v.Status == StateConnected
	})
	if h.whoami("reg") == pid {
		t.Fatal("the settings entry runs the registration's process")
	}
}

// Unloading the registering plugin removes its server; the unload completes only once the
// server's tools are gone.
func TestRegisterOwnerUnload(t *testing.T) {
	t.Parallel()
	fc := newFakeClients()
	h := newHost(t, hostOptions{noSettings: true, hooks: &hooks{client: fc.def}})
	cfg := stdioConfig(t, "normal")
	owner := ctxtest.Mount(t, h.root, ownerPlugin("svc", cfg, nil), nil)
	h.waitStatus(StateConnected, "svc")
	if !slices.Contains(h.tools(), "mcp__svc__ping") {
		t.Fatal("no tool")
	}
	if err := owner.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	if tools := h.tools(); slices.Contains(tools, "mcp__svc__ping") || fc.count(fc.live, "svc") != 0 {
		t.Fatalf("after the owner's unload: tools %v, live %d", tools, fc.count(fc.live, "svc"))
	}
	if got := h.m.List(); len(got) != 0 {
		t.Fatalf("list: %s", dump(got))
	}
}

// Registrations and disposals racing with each other, with restarts, probes and lists:
// every registration ends with its instance gone, and nothing is left over.
func TestRegisterDisposeRace(t *testing.T) {
	t.Parallel()
	fc := newFakeClients()
	probe := func(ccx context.Context, cfg mcpclient.Config, _ ProbeOptions) mcpclient.ProbeResult {
		return mcpclient.ProbeResult{Stage: mcpclient.ProbeOK}
	}
	h := newHost(t, hostOptions{noSettings: true, hooks: &hooks{client: fc.def, probe: probe}})
	const workers, rounds = 6, 25
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			name := fmt.Sprintf("s%d", w%3) // two workers share each name
			for range rounds {
				d, err := h.m.Register(h.root, name, stdioConfig(t, "normal"))
				if err != nil {
					if !errors.Is(err, ErrConflict) {
						t.Errorf("register %s: %v", name, err)
					}
					continue
				}
				_ = h.m.Restart(ctxtest.Wait(t), name)
				_, _ = h.m.Probe(ctxtest.Wait(t), name, ProbeOptions{})
				_ = h.m.List()
				var inner sync.WaitGroup
				for range 2 { // concurrent disposer calls
					inner.Go(func() {
						if err := d(ctxtest.Wait(t)); err != nil {
							t.Errorf("dispose %s: %v", name, err)
						}
					})
				}
				inner.Wait()
				if n := fc.count(fc.live, name); n > 1 {
					t.Errorf("%s: %d live instances", name, n)
				}
			}
		})
	}
	wg.Wait()
	h.waitSnap("empty list", func(s Snapshot) bool { return len(s.Servers) == 0 })
	for _, name := range []string{"s0", "s1", "s2"} {
		if n := fc.count(fc.live, name); n != 0 {
			t.Fatalf("%s: %d live instances left", name, n)
		}
	}
	if tools := h.tools(); len(tools) != 0 {
		t.Fatalf("tools left: %v", tools)
	}
	h.m.mu.Lock()
	left := len(h.m.records) + len(h.m.regs) + len(h.m.open)
	h.m.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d records or registrations left", left)
	}
}
