package gateway

import (
	"context"
	"net/http"
	"sync"
)

// PathHealth is the gateway's health check, for a load balancer: 200 "ok" while it serves,
// 503 "draining" once [Gateway.Drain] has begun (and once it is closed). It needs no token
// and passes no Host or Origin check: it tells nothing but that.
const PathHealth = "/healthz"

// drainState is a gateway's drain: once begun, the health check fails, and the drain ends
// once the load balancer has been told and no request is in flight. Safe for concurrent
// use.
type drainState struct {
	mu      sync.Mutex
	begun   bool
	checked chan struct{} // closed once a health check has answered "draining"
	idle    chan struct{} // closed once, draining, no request is in flight
}

// Drain readies the gateway to stop without failing a request, for a replica that restarts
// behind a load balancer: from now on the health check answers 503, so that the balancer
// sends new sessions, and the requests of this replica's sessions, to the other replicas
// (which take the sessions over from the [Store]); requests already here are served.
// Drain returns nil once a health check has been answered so and no request is in flight,
// or cx's error when cx ends first. Close the gateway afterwards: its sessions end here, and
// their records stay in the store for the other replicas.
func (g *Gateway) Drain(cx context.Context) error {
	d := &g.drain
	d.mu.Lock()
	if !d.begun {
		d.begun = true
		d.checked = make(chan struct{})
		d.idle = make(chan struct{})
	}
	checked, idle := d.checked, d.idle
	d.mu.Unlock()
	g.callsMu.Lock()
	g.idleIfDrainingLocked()
	g.callsMu.Unlock()
	for _, ch := range []chan struct{}{checked, idle} {
		select {
		case <-ch:
		case <-cx.Done():
			return cx.Err()
		}
	}
	return nil
}

// idleIfDrainingLocked ends the drain's wait for requests when none is in flight. The
// caller holds g.callsMu.
func (g *Gateway) idleIfDrainingLocked() {
	d := &g.drain
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.begun && len(g.calls) == 0 {
		select {
		case <-d.idle:
		default:
			close(d.idle)
		}
	}
}

// health answers the load balancer's health check.
func (g *Gateway) health(w http.ResponseWriter) {
	d := &g.drain
	d.mu.Lock()
	draining := d.begun
	if draining {
		select {
		case <-d.checked:
		default:
			close(d.checked)
		}
	}
	d.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if draining || g.life.Err() != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("draining\n"))
		return
	}
	_, _ = w.Write([]byte("ok\n"))
}
