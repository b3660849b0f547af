package gateway

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// PathHealth is the gateway's health check, for a load balancer: 200 "ok" while it serves,
// 503 "draining" once [Gateway.Drain] has begun (and once it is closed). It needs no token
// and passes no Host or Origin check: it tells nothing but that.
const PathHealth = "/healthz"

// DefaultDrainQuiet is the quiet period of a drain when [Options.DrainQuiet] is zero.
const DefaultDrainQuiet = time.Second

// stoppingRetryAfter is the Retry-After, in seconds, of the 503 that a stopping gateway
// answers a request with.
const stoppingRetryAfter = "1"

// drainState is a gateway's drain (see [Gateway.Drain]) and its count of the requests in
// flight. Safe for concurrent use.
type drainState struct {
	mu       sync.Mutex
	inFlight int       // requests being served, but for streams (GET) and health checks
	arrived  int       // requests that came while draining
	late     int       // of which after the first failed health check
	begun    bool      // the health check answers 503
	checked  bool      // a health check has answered so
	last     time.Time // draining: when the last request arrived (or the first check failed)
	refusing bool      // the drain is over: requests are refused (refuse)
	// wake is closed, draining, when the health check first fails and when the last request
	// in flight ends: what Drain waits for besides time. Then it is made anew.
	wake chan struct{}
}

// admit counts a request in until done is called, or returns false once the drain is over:
// the caller refuses the request. A stream (GET) is not waited for.
func (d *drainState) admit(stream bool) (done func(), ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.refusing {
		return nil, false
	}
	if d.begun {
		d.last = time.Now()
		d.arrived++
		if d.checked {
			d.late++
		}
	}
	if stream {
		return func() {}, true
	}
	d.inFlight++
	return func() {
		d.mu.Lock()
		d.inFlight--
		if d.begun && d.inFlight == 0 {
			d.wakeLocked()
		}
		d.mu.Unlock()
	}, true
}

// begin fails the health check from now on.
func (d *drainState) begin() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.begun {
		d.begun = true
		d.wake = make(chan struct{})
	}
}

// wakeLocked wakes Drain. The caller holds d.mu.
func (d *drainState) wakeLocked() {
	close(d.wake)
	d.wake = make(chan struct{})
}

// Drain readies the gateway to stop without failing a request, for a replica that restarts
// behind a load balancer:
//
//  1. From now on the health check ([PathHealth]) answers 503, so that the balancer sends new
//     sessions, and the requests of this replica's sessions, to the other replicas (which
//     take the sessions over from the [Store]). Requests that still come are served.
//  2. Once a health check has been answered so, Drain waits for a quiet period
//     ([Options.DrainQuiet]) in which no request arrives and none is in flight (streams
//     aside): the balancer may still send what it dispatched before it saw the check fail.
//  3. Then every new request is refused with 503 and a Retry-After (a balancer retries it
//     elsewhere; HAProxy with retry-on 503), and Drain returns nil.
//
// When cx ends first, Drain refuses new requests from then on too and returns cx's error;
// requests still in flight go on until the gateway is closed, which answers each with a
// JSON-RPC error that says to retry it. Close the gateway afterwards
// (and stop accepting connections first): its sessions end here, and their records stay
// in the store for the other replicas.
func (g *Gateway) Drain(cx context.Context) error {
	quiet := g.opts.DrainQuiet
	if quiet == 0 {
		quiet = DefaultDrainQuiet
	}
	d := &g.drain
	d.begin()
	start := time.Now()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		d.mu.Lock()
		if d.refusing { // by a concurrent Drain
			d.mu.Unlock()
			return nil
		}
		if d.checked && d.inFlight == 0 {
			left := quiet - time.Since(d.last)
			if left <= 0 {
				d.refusing = true
				arrived, late := d.arrived, d.late
				d.mu.Unlock()
				g.log.Info("drained: the load balancer has stopped sending, new requests are refused", "requests_while_draining", arrived,
					"after_failed_check", late,
					"took", time.Since(start).Round(time.Millisecond).String())
				return nil
			}
			timer.Reset(left)
		}
		wake := d.wake
		d.mu.Unlock()
		select {
		case <-wake:
		case <-timer.C:
		case <-cx.Done():
			d.mu.Lock()
			d.refusing = true
			d.mu.Unlock()
			return cx.Err()
		}
	}
}

// closeAnswerWait bounds how long a gateway's close waits for the answers of the requests
// it ended (awaitAnswers).
const closeAnswerWait = 5 * time.Second

// awaitAnswers waits, at most closeAnswerWait, until no request is in flight (streams
// aside): a closing gateway has ended its requests (errStopped), and each answer must be
// written on its POST before the sessions close, which would cut it.
func (g *Gateway) awaitAnswers() {
	d := &g.drain
	d.begin() // the health check fails already (closed); an ending request now wakes d
	timeout := time.NewTimer(closeAnswerWait)
	defer timeout.Stop()
	for {
		d.mu.Lock()
		n, wake := d.inFlight, d.wake
		d.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-wake:
		case <-timeout.C:
			return
		}
	}
}

// refuse answers a request that comes once the gateway has drained or closed: 503, to be
// sent again (to another replica).
func refuse(w http.ResponseWriter) {
	w.Header().Set("Retry-After", stoppingRetryAfter)
	http.Error(w, "gateway: this replica is stopping: send the request again (another replica serves the session)", http.StatusServiceUnavailable)
}

// health answers the load balancer's health check.
func (g *Gateway) health(w http.ResponseWriter) {
	d := &g.drain
	d.mu.Lock()
	draining := d.begun
	if draining && !d.checked {
		d.checked = true
		d.last = time.Now()
		d.wakeLocked()
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
