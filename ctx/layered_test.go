package ctx_test

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
)

func noopPlugin(name string) ctx.PluginDef {
	return ctx.Define(ctx.Meta{Name: name}, func(*ctx.Context, struct{}) error { return nil })
}

// agentIn mounts an agent scope under parent and returns its layered context.
func agentIn(t *testing.T, parent *ctx.Context, name string) *ctx.Context {
	t.Helper()
	return ctxtest.MountActive(t, parent, noopPlugin(name), nil).Context().Layered()
}

// seen renders what s sees as "name=value@layer" strings.
func seen(ls *ctx.Layers[string], s *ctx.Scope) []string {
	var out []string
	for _, e := range ls.Visible(s) {
		out = append(out, e.Name+"="+e.Value+"@"+e.Layer.Name())
	}
	return out
}

func mustAdd(t *testing.T, ls *ctx.Layers[string], c *ctx.Context, name, v string) ctx.Disposer {
	t.Helper()
	d, err := ls.Add(c, name, v, nil)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The visibility rule: own layer and enclosing layers, nearest wins, siblings and
// descendants never; plain sub-scopes register into the enclosing layer.
func TestLayersVisibility(t *testing.T) {
	root := ctxtest.New(t)
	ls := ctx.NewLayers[string]("thing")
	a := agentIn(t, root, "a")
	b := agentIn(t, root, "b")
	inner := agentIn(t, a, "inner")
	// A plain plugin mounted in agent a (not layered itself) registers into a's layer.
	plain := ctxtest.MountActive(t, a, noopPlugin("plain"), nil).Context()
	if plain.Layer() != a.Scope() {
		t.Fatalf("plain plugin's layer %v, want %v", plain.Layer(), a.Scope())
	}

	mustAdd(t, ls, root, "x", "root")
	mustAdd(t, ls, root, "y", "root")
	mustAdd(t, ls, plain, "x", "a")
	mustAdd(t, ls, inner, "z", "inner")
	mustAdd(t, ls, b, "y", "b")

	for _, tc := range []struct {
		from *ctx.Scope
		want []string
	}{
		{root.Scope(), []string{"x=root@root", "y=root@root"}},
		{a.Scope(), []string{"x=a@a", "y=root@root"}},
		{plain.Scope(), []string{"x=a@a", "y=root@root"}},
		{inner.Scope(), []string{"x=a@a", "y=root@root", "z=inner@inner"}},
		{b.Scope(), []string{"x=root@root", "y=b@b"}},
	} {
		if got := seen(ls, tc.from); !slices.Equal(got, tc.want) {
			t.Errorf("from %s: %v, want %v", tc.from.Name(), got, tc.want)
		}
		for _, w := range tc.want {
			name := w[:1]
			if e, ok := ls.Get(tc.from, name); !ok || e.Name+"="+e.Value+"@"+e.Layer.Name() != w {
				t.Errorf("Get(%s, %s) = %v %v, want %s", tc.from.Name(), name, e, ok, w)
			}
		}
	}
	if _, ok := ls.Get(root.Scope(), "z"); ok {
		t.Error("the root sees a descendant layer's value")
	}
	if got := ls.Nearest(plain.Scope()); got != a.Scope() {
		t.Errorf("Nearest(plain) = %v, want the agent", got)
	}
	if got := ls.Nearest(b.Scope()); got != b.Scope() {
		t.Errorf("Nearest(b) = %v, want b", got)
	}
	if got := ls.In(root.Scope()); len(got) != 2 || got[0].Name != "x" || got[1].Name != "y" {
		t.Errorf("In(root) = %v", got)
	}
	if n := ls.Len(); n != 5 {
		t.Errorf("Len = %d, want 5", n)
	}
}

func TestLayersDuplicate(t *testing.T) {
	root := ctxtest.New(t)
	ls := ctx.NewLayers[string]("thing")
	a := agentIn(t, root, "a")
	mustAdd(t, ls, root, "x", "first")
	v := ls.Version()
	// Same layer, from another scope of it: refused, the holder keeps it.
	other := ctxtest.MountActive(t, root, noopPlugin("other"), nil).Context()
	_, err := ls.Add(other, "x", "second", func() { t.Error("removed called for a refused value") })
	var de *ctx.DuplicateError[string]
	if !errors.Is(err, ctx.ErrDuplicateName) || !errors.As(err, &de) || de.Existing != "first" || de.Layer != root.Scope() || de.Name != "x" {
		t.Fatalf("err %v (%+v), want a DuplicateError naming the holder", err, de)
	}
	if want := `thing "x" is already registered in layer "root"`; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	if ls.Version() != v {
		t.Error("a refused Add changed the version")
	}
	// Another layer may reuse the name.
	mustAdd(t, ls, a, "x", "agent")
	if e, _ := ls.Get(root.Scope(), "x"); e.Value != "first" {
		t.Errorf("holder lost its value: %v", e)
	}
}

func TestLayersDisposal(t *testing.T) {
	root := ctxtest.New(t)
	ls := ctx.NewLayers[string]("thing")
	agent := ctxtest.MountActive(t, root, noopPlugin("agent"), nil)
	ac := agent.Context().Layered()
	removed := make(chan string, 4)
	add := func(c *ctx.Context, name, v string) ctx.Disposer {
		d, err := ls.Add(c, name, v, func() { removed <- name })
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	dr := add(root, "x", "root")
	add(ac, "x", "agent")
	add(ac, "y", "agent")
	v := ls.Version()

	// The agent's unload removes its values: the root's shows through again.
	if err := agent.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	got := []string{<-removed, <-removed}
	slices.Sort(got)
	if !slices.Equal(got, []string{"x", "y"}) {
		t.Errorf("removed %v", got)
	}
	if ls.Version() == v {
		t.Error("removal did not bump the version")
	}
	if e, ok := ls.Get(agent, "x"); !ok || e.Value != "root" {
		t.Errorf("after unload: %v %v", e, ok)
	}
	if ls.Nearest(agent) != root.Scope() || ls.Len() != 1 {
		t.Errorf("the disposed layer is retained: nearest %v, len %d", ls.Nearest(agent), ls.Len())
	}
	// The disposer is idempotent and calls removed once.
	for range 2 {
		if err := dr(ctxtest.Wait(t)); err != nil {
			t.Fatal(err)
		}
	}
	if got := <-removed; got != "x" {
		t.Errorf("removed %q", got)
	}
	select {
	case n := <-removed:
		t.Errorf("removed called again for %q", n)
	default:
	}
	if ls.Len() != 0 {
		t.Errorf("Len %d after every value went", ls.Len())
	}
	// The name is free again.
	mustAdd(t, ls, root, "x", "again")
}

func TestLayersAddInactive(t *testing.T) {
	root := ctxtest.New(t)
	ls := ctx.NewLayers[string]("thing")
	s := ctxtest.MountActive(t, root, noopPlugin("gone"), nil)
	c := s.Context()
	if err := s.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := ls.Add(c, "x", "v", nil); !errors.Is(err, ctx.ErrInactive) {
		t.Fatalf("err %v, want ErrInactive", err)
	}
	if ls.Len() != 0 {
		t.Fatal("an inactive context's value was kept")
	}
}

func TestLayersReplace(t *testing.T) {
	root := ctxtest.New(t)
	ls := ctx.NewLayers[string]("thing")
	layer := root.Scope()
	setA, setB := new(int), new(int)
	old, err := ls.Replace(layer, setA, map[string]string{"a": "1", "b": "1"})
	if err != nil || len(old) != 0 {
		t.Fatal(old, err)
	}
	old, err = ls.Replace(layer, setA, map[string]string{"b": "2", "c": "2"})
	if err != nil || !maps(old, "a=1", "b=1") {
		t.Fatal(old, err)
	}
	if got := seen(ls, layer); !slices.Equal(got, []string{"b=2@root", "c=2@root"}) {
		t.Fatalf("after replace: %v", got)
	}
	// Another owner's name fails the whole call, nothing changes.
	v := ls.Version()
	_, err = ls.Replace(layer, setB, map[string]string{"d": "3", "c": "3"})
	var de *ctx.DuplicateError[string]
	if !errors.As(err, &de) || de.Name != "c" || de.Existing != "2" {
		t.Fatalf("err %v", err)
	}
	if ls.Version() != v || ls.Len() != 2 {
		t.Fatal("a refused Replace changed something")
	}
	// An Add value collides with a set too, and the other way round.
	if _, err := ls.Add(root, "b", "x", nil); !errors.Is(err, ctx.ErrDuplicateName) {
		t.Fatalf("Add over a set's name: %v", err)
	}
	mustAdd(t, ls, root, "e", "single")
	if _, err := ls.Replace(layer, setA, map[string]string{"e": "4"}); !errors.Is(err, ctx.ErrDuplicateName) {
		t.Fatalf("Replace over an Add's name: %v", err)
	}
	// Emptying the set removes its values.
	if old, err = ls.Replace(layer, setA, nil); err != nil || !maps(old, "b=2", "c=2") {
		t.Fatal(old, err)
	}
	if got := seen(ls, layer); !slices.Equal(got, []string{"e=single@root"}) {
		t.Fatalf("after clearing: %v", got)
	}
}

func maps(m map[string]string, want ...string) bool {
	var got []string
	for k, v := range m {
		got = append(got, k+"="+v)
	}
	slices.Sort(got)
	return slices.Equal(got, want)
}

func TestLayersRemoveFunc(t *testing.T) {
	root := ctxtest.New(t)
	ls := ctx.NewLayers[string]("thing")
	called := false
	d, err := ls.Add(root, "a", "drop", func() { called = true })
	if err != nil {
		t.Fatal(err)
	}
	mustAdd(t, ls, root, "b", "keep")
	mustAdd(t, ls, root, "c", "drop")
	got := ls.RemoveFunc(root.Scope(), func(e ctx.Entry[string]) bool { return e.Value == "drop" })
	if len(got) != 2 || got[0].Name != "a" || got[1].Name != "c" {
		t.Fatalf("removed %v", got)
	}
	if err := d(ctxtest.Wait(t)); err != nil || called {
		t.Fatalf("disposer after RemoveFunc: err %v, removed called %v", err, called)
	}
	if got := seen(ls, root.Scope()); !slices.Equal(got, []string{"b=keep@root"}) {
		t.Fatalf("left %v", got)
	}
}

// Two trees never see each other's values, through one Layers or one TreeLayers.
func TestLayersTreesIsolated(t *testing.T) {
	one, two := ctxtest.New(t), ctxtest.New(t)
	ls := ctx.NewLayers[string]("thing")
	mustAdd(t, ls, one, "x", "one")
	mustAdd(t, ls, two, "x", "two") // no collision: another tree's root is another layer
	if e, _ := ls.Get(two.Scope(), "x"); e.Value != "two" {
		t.Fatalf("tree two sees %v", e)
	}
	key := ctx.NewTreeLayers[string]("name")
	if key.In(one) == key.In(two) {
		t.Fatal("two trees share one TreeLayers set")
	}
	agent := agentIn(t, one, "agent")
	if key.In(agent) != key.In(one) {
		t.Fatal("one tree has two TreeLayers sets")
	}
	mustAdd(t, key.In(one), one, "n", "1")
	if key.In(two).Len() != 0 {
		t.Fatal("a value leaked into another tree")
	}
}

// AddAnnounced emits its event with the value's name and layer when the value comes and
// when it goes; a refused value announces nothing, and a failing listener is logged.
func TestTreeLayersAddAnnounced(t *testing.T) {
	root, log := ctxtest.NewLogged(t)
	changed := ctx.NewEvent[ctx.LayerChange]("test/changed")
	changes := ctxtest.Record(t, root, changed)
	if _, err := changed.On(root, func(ctx.LayerChange) error { return errors.New("listener broke") }); err != nil {
		t.Fatal(err)
	}
	key := ctx.NewTreeLayers[string]("responder")
	agent := agentIn(t, root, "agent")
	dispose, err := key.AddAnnounced(agent, "r", "one", changed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := key.AddAnnounced(agent, "r", "two", changed); !errors.Is(err, ctx.ErrDuplicateName) {
		t.Fatalf("second value under one name: %v", err)
	}
	if e, ok := key.In(agent).Get(agent.Scope(), "r"); !ok || e.Value != "one" {
		t.Fatalf("agent sees %+v", e)
	}
	if err := dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	want := ctx.LayerChange{Name: "r", Layer: agent.Layer()}
	if ch := changes.Events(); len(ch) != 2 || ch[0] != want || ch[1] != want {
		t.Fatalf("changes %+v, want r in the agent's layer coming and going", ch)
	}
	if !strings.Contains(log.String(), "change listener failed") {
		t.Fatalf("the failing listener is not logged:\n%s", log)
	}
}

// AddAnnouncedLater's value is in place at once and announced when the caller says; its
// going is announced as AddAnnounced's is.
func TestTreeLayersAddAnnouncedLater(t *testing.T) {
	root := ctxtest.New(t)
	changed := ctx.NewEvent[ctx.LayerChange]("test/changed")
	changes := ctxtest.Record(t, root, changed)
	key := ctx.NewTreeLayers[string]("responder")
	dispose, announce, err := key.AddAnnouncedLater(root, "r", "one", changed)
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := key.In(root).Get(root.Scope(), "r"); !ok || e.Value != "one" || len(changes.Events()) != 0 {
		t.Fatalf("before the announcement: %+v, changes %+v", e, changes.Events())
	}
	announce()
	if err := dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	want := ctx.LayerChange{Name: "r", Layer: root.Layer()}
	if ch := changes.Events(); len(ch) != 2 || ch[0] != want || ch[1] != want {
		t.Fatalf("changes %+v, want r coming (announced) and going", ch)
	}
}

func TestLayerCache(t *testing.T) {
	root := ctxtest.New(t)
	ls := ctx.NewLayers[string]("thing")
	var cache ctx.LayerCache[[]string]
	builds := 0
	view := func(s *ctx.Scope) []string {
		return cache.Get(s, ls.Version(), func() []string { builds++; return seen(ls, s) })
	}
	d := mustAdd(t, ls, root, "x", "1")
	view(root.Scope())
	view(root.Scope())
	if builds != 1 {
		t.Fatalf("%d builds for one version", builds)
	}
	if err := d(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	if got := view(root.Scope()); len(got) != 0 || builds != 2 {
		t.Fatalf("stale view %v after a change (%d builds)", got, builds)
	}
	// A view built from an older version is returned but not kept.
	cache.Get(root.Scope(), 0, func() []string { return []string{"old"} })
	if got := view(root.Scope()); len(got) != 0 {
		t.Fatalf("old view kept: %v", got)
	}
	if cache.Len() != 1 {
		t.Fatalf("cache holds %d views", cache.Len())
	}
}

// Concurrent adds, removals, replaces and reads of overlapping names in nested layers (run
// with -race): every read sees a consistent nearest value and no value outlives its scope.
func TestLayersConcurrent(t *testing.T) {
	root := ctxtest.New(t)
	ls := ctx.NewLayers[string]("thing")
	agent := agentIn(t, root, "agent")
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			owner := new(int)
			for i := range 200 {
				name := fmt.Sprintf("n%d", i%5)
				c := root
				if g%2 == 1 {
					c = agent
				}
				switch i % 4 {
				case 0:
					if d, err := ls.Add(c, name, "v", nil); err == nil {
						_ = d(context.Background())
					} else if !errors.Is(err, ctx.ErrDuplicateName) {
						t.Error(err)
					}
				case 1:
					_, _ = ls.Replace(c.Layer(), owner, map[string]string{name: "set"})
				case 2:
					for _, e := range ls.Visible(agent.Scope()) {
						if e.Layer != root.Scope() && e.Layer != agent.Scope() || e.Value != "v" && e.Value != "set" {
							t.Errorf("visible %+v", e)
						}
					}
					if e, ok := ls.Get(root.Scope(), name); ok && e.Layer != root.Scope() {
						t.Errorf("the root sees %+v", e)
					}
				case 3:
					_, _ = ls.Replace(c.Layer(), owner, nil)
				}
			}
			_, _ = ls.Replace(root.Scope(), owner, nil)
			_, _ = ls.Replace(agent.Scope(), owner, nil)
		}()
	}
	wg.Wait()
	if n := ls.Len(); n != 0 {
		t.Fatalf("%d values left: %v", n, seen(ls, agent.Scope()))
	}
}

// A service keeps one Layers of its registrations; callers register into their own layer
// and see the nearest value of each name.
func ExampleLayers() {
	root := ctx.New(ctx.Options{})
	defer func() { _ = root.Scope().Dispose(context.Background()) }()
	greetings := ctx.NewLayers[string]("greeting")

	_, _ = greetings.Add(root, "hello", "Hello from the root", nil)
	_, _ = greetings.Add(root, "bye", "Goodbye from the root", nil)

	agentScope, _ := root.Plugin(ctx.Define(ctx.Meta{Name: "agent"}, func(*ctx.Context, struct{}) error { return nil }), nil)
	_ = agentScope.Wait(context.Background())
	agent := agentScope.Context().Layered()
	_, _ = greetings.Add(agent, "hello", "Hello from the agent", func() { fmt.Println("agent greeting removed") })

	for _, e := range greetings.Visible(agentScope) {
		fmt.Printf("%s: %s (layer %s)\n", e.Name, e.Value, e.Layer.Name())
	}
	_, err := greetings.Add(root, "hello", "again", nil)
	fmt.Println(err)
	_ = agentScope.Dispose(context.Background())
	e, _ := greetings.Get(agentScope, "hello")
	fmt.Println(e.Value)
	// Output:
	// bye: Goodbye from the root (layer root)
	// hello: Hello from the agent (layer agent)
	// greeting "hello" is already registered in layer "root"
	// agent greeting removed
	// Hello from the root
}
