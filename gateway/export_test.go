package gateway

import (
	"net/http"
	"time"
)

// ReapIdle runs the idle-session reaper of h (made by Gateway.Handler) as if its clock
// read now, and returns how many sessions it closed: the tests' injected clock.
func ReapIdle(h http.Handler, now time.Time) int { return h.(*httpFront).reaper.reap(now) }

// BeginDrain does the first step of g's Drain: the health check fails from now on.
func BeginDrain(g *Gateway) { g.drain.begin() }

// OnRequest has g call f inside its handling of each request, before the request's handler
// runs (f may panic: a bug met there). Call it before any session connects.
func OnRequest(g *Gateway, f func(method string)) { g.onRequest = f }
