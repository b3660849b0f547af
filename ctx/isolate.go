package ctx

// realm is an isolation realm for one service name. nil is the shared default realm.
type realm struct{ label string }

type isoLayer struct {
	name  string
	realm *realm
	next  *isoLayer
}

type icpLayer struct {
	name string
	cfg  any
	next *icpLayer
}

// realm returns the isolation realm in which c sees the service name.
func (c *Context) realm(name string) *realm {
	for l := c.iso; l != nil; l = l.next {
		if l.name == name {
			return l.realm
		}
	}
	return nil
}

// Isolate returns a derived context in which the service name lives in its own realm:
// services named name provided or injected through it (and through plugins mounted on it)
// never meet those of other realms. Contexts isolated with the same non-empty label share a
// realm; with no label the realm is private to this call.
func (c *Context) Isolate(name string, label string) *Context {
	var rl *realm
	if label == "" {
		rl = &realm{}
	} else {
		r := c.scope.r
		r.mu.Lock()
		rl = r.labels[label]
		if rl == nil {
			rl = &realm{label: label}
			r.labels[label] = rl
		}
		r.mu.Unlock()
	}
	d := *c
	d.iso = &isoLayer{name: name, realm: rl, next: c.iso}
	return &d
}

// Intercept returns a derived context carrying cfg as per-caller configuration for the
// service name. A service reads it with [Context.Intercepts] on the caller's context.
func (c *Context) Intercept(name string, cfg any) *Context {
	d := *c
	d.icp = &icpLayer{name: name, cfg: cfg, next: c.icp}
	return &d
}

// Intercepts returns the intercept configurations for the service name seen from c,
// outermost first, for the service to merge.
func (c *Context) Intercepts(name string) []any {
	var out []any
	for l := c.icp; l != nil; l = l.next {
		if l.name == name {
			out = append(out, l.cfg)
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// SameRealm reports whether a and b see the service name in the same isolation realm: use it
// in a [Target] filter so a service's events reach only its own realm.
func SameRealm(a, b *Context, name string) bool { return a.realm(name) == b.realm(name) }
